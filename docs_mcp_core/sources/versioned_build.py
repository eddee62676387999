"""Every version of a versioned corpus built from docs-mcp.yaml: resolve the versions, remove those the
config no longer names, then stage and build each one (indexing/versioned.py). A version that cannot be
resolved, staged or built is one line; the other versions still build."""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..embedding import EmbeddingProvider
from ..errors import DocsMcpError
from ..fsutil import read_json
from ..indexing.build import BuildSummary
from ..indexing.versioned import build_version, remove_versions
from ..output.layout import OutputLayout, page_state
from ..output.versions_manifest import manifest_entries
from ..progress import NullReporter, Reporter
from .config import Config
from .git import git, stage_git
from .local import StagedDocs, stage_local
from .versions import CorpusVersion, ResolvedVersions, resolve_versions


@dataclass
class VersionsBuild:
    """What a build of every version did: built, failed (label → the one line), removed."""

    corpus: str
    resolved: ResolvedVersions
    built: dict[str, BuildSummary] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)


def stage_version(
    config: Config, name: str, version: CorpusVersion, out: Path, reporter: Reporter | None = None
) -> StagedDocs:
    """Stage one version of corpus `name` into OUT/.docs-mcp/staged/<label>/docs: a git ref at the commit it
    was resolved to (one mirror for every version), a version's URL, or a version's folder."""
    dest = OutputLayout(out).version_staged(version.label)
    staged = _stage(config, name, version, dest, out, reporter)
    staged.ref, staged.source_url = version.ref, version.url
    staged.source_date = source_date(version, staged, out)
    return staged


def _utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def source_date(version: CorpusVersion, staged: StagedDocs, out: Path) -> str | None:
    """When the version's docs were last changed, for freshness: the commit's date (git), the newest
    Last-Modified a page was served with (a website), the newest file modification (a folder)."""
    try:
        if version.ref is not None and staged.source_commit:
            stamp = str(git("show", "-s", "--format=%cI", staged.source_commit, cwd=OutputLayout(out).mirror))
            return _utc(dt.datetime.fromisoformat(stamp.strip()))
        if version.url is not None:
            state = read_json(page_state(OutputLayout(out).version_staged(version.label))) or {}
            dates = [
                email.utils.parsedate_to_datetime(p["last_modified"])
                for p in state.get("pages", {}).values()
                if isinstance(p, dict) and p.get("last_modified")
            ]
            return _utc(max(dates)) if dates else None
        if version.path is not None:
            stamps = [(version.path / rel).stat().st_mtime for rel in staged.files if not rel.startswith("../")]
            return _utc(dt.datetime.fromtimestamp(max(stamps), dt.UTC)) if stamps else None
    except (DocsMcpError, OSError, ValueError, TypeError):
        return None  # freshness is a hint: a date that cannot be read is left out
    return None


def _stage(
    config: Config, name: str, version: CorpusVersion, dest: Path, out: Path, reporter: Reporter | None
) -> StagedDocs:
    corpus = config.get(name)
    if version.url is not None:
        from .web.stage import stage_url  # the web extra is imported only for website corpora

        web = dataclasses.replace(config.web_source(name), url=version.url, path_prefix=None)
        return stage_url(web, dest, reporter)
    if version.ref is not None:
        repo = config.git_source(name)
        assert repo is not None
        return stage_git(
            repo,
            version.ref,
            corpus.source.subdir,
            dest,
            commit=version.commit,
            mirror=OutputLayout(out).mirror,
            exclude=corpus.exclude,
        )
    assert version.path is not None
    return stage_local(version.path, dest, exclude=corpus.exclude)


def wanted_labels(config: Config, name: str, resolved: ResolvedVersions) -> set[str]:
    """The versions whose index stays: those resolved now, and those the config names but could not be
    found this time (a ref or folder gone for a moment keeps its last index; a tag out of `keep` goes)."""
    spec = config.get(name).versions
    assert spec is not None
    return set(resolved.labels) | (set(spec.labels()) if spec.tags is None else set())


def resolve_and_prune(
    config: Config, name: str, reporter: Reporter | None = None
) -> tuple[ResolvedVersions, list[str]]:
    """The corpus's versions as its source has them now (what was left out: a line each on `reporter`), and
    the versions removed from its output because the config no longer names them."""
    reporter = reporter or NullReporter()
    resolved = resolve_versions(config, name)
    if resolved is None:
        raise DocsMcpError(f"corpus {name!r} has no 'versions' in {config.path}")
    for note in resolved.notes:
        reporter.warn(note)
    out = config.out_dir(name)
    listed = {e["label"] for e in manifest_entries(out)}
    return resolved, remove_versions(out, listed - wanted_labels(config, name, resolved), reporter)


def build_versions(
    config: Config,
    name: str,
    provider: EmbeddingProvider,
    *,
    labels: list[str] | None = None,
    reporter: Reporter | None = None,
    **options: Any,
) -> VersionsBuild:
    """Build every version of corpus `name` (or only `labels`), oldest first; `options` are build's."""
    reporter = reporter or NullReporter()
    resolved, removed = resolve_and_prune(config, name, reporter)
    out = config.out_dir(name)
    result = VersionsBuild(name, resolved, removed=removed)
    corpus = config.get(name)
    package = corpus.package.model_dump() if corpus.package else None
    todo = [v for v in reversed(resolved.versions) if labels is None or v.label in labels]
    for missing in sorted(set(labels or ()) - set(resolved.labels)):
        result.failed[missing] = f"corpus {name!r} has no version {missing!r}; it has: {', '.join(resolved.labels)}"
        reporter.warn(result.failed[missing])
    for version in todo:
        try:
            staged = stage_version(config, name, version, out, reporter)
            for line in staged.warnings:
                reporter.warn(line)
            result.built[version.label] = build_version(
                Path(staged.path),
                out,
                version.label,
                provider,
                ref=version.ref,
                source_url=version.url,
                source_date=staged.source_date,
                configured_default=corpus.versions.default if corpus.versions else None,
                package=package,
                reporter=reporter,
                corpus=name,
                description=corpus.description,
                source_commit=staged.source_commit,
                pages=staged.crawl.get("events"),
                cache_dir=config.resolve(corpus.cache_dir) if corpus.cache_dir else None,
                trust=config.trust(name),
                **options,
            )
        except DocsMcpError as exc:
            result.failed[version.label] = f"corpus {name!r} version {version.label!r}: {exc}".splitlines()[0]
            reporter.warn(result.failed[version.label])
    return result
