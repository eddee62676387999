"""`docs-mcp fix`: propose `.docs-mcp.json` manifests from what the corpus shows.

Bootstrap: a manifest that governs files without setting a strategy (or no manifest at
all) gets a `chunk_by` level chosen from the heading structure, a `max_chunk_size`, and
taxonomy where the corpus shows it (language folders, code-fence languages).
Repair: a file whose sections outgrow `max_chunk_size` at its level gets an override for
a deeper level where that fits; overrides that match no file are reported.
Under a docs framework, pages that would index nothing a reader could use (empty after their
frontmatter, only API stubs, only headings because their includes do not resolve) are excluded, and
code languages named by tab labels count like fence languages.
Everything is derived from the files alone, so a second run over the result proposes
nothing. `--llm` only writes descriptions and server instructions the offline pass left
empty (docs_mcp_core/authoring/llm.py).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..chunking.chunker import chunk_markdown
from ..corpus.beneath import WriteRefusedError, replace_beneath
from ..corpus.globs import glob_match
from ..corpus.manifest import (
    DEFAULT_MAX_CHUNK_SIZE,
    MANIFEST_NAME,
    LoadedManifest,
    Manifest,
    Strategy,
    nearest_manifest,
    resolve_manifest_rules,
)
from ..corpus.walk import CorpusScan, read_source, read_text, scan_corpus, show_path
from ..diagnostics import has_errors
from ..errors import DocsMcpError

LEVELS: tuple[Literal["h1", "h2", "h3"], ...] = ("h1", "h2", "h3")
TARGET_SIZE = 4_000  # characters per chunk that search ranks well: one method, one concept, one how-to step
MIN_USEFUL = 200  # a chunk smaller than this says little on its own
UNBOUNDED = 10**9
MIN_GROUP = 3  # a folder needs this many files before it gets a level of its own
LEVEL_MARGIN = 0.5  # ... and its level must beat the inherited one by this much (or the inherited one cuts examples)
EXAMPLE_SHARE = 0.2  # a level whose sections are this often code examples would cut examples from their method
_EXAMPLE_HEADING = re.compile(r"\b(examples?|usage|sample|snippet)\b", re.IGNORECASE)

# Folder-name tokens that mark an SDK language folder, and the language they stand for.
LANGUAGE_FOLDERS = {
    "python": "python",
    "py": "python",
    "typescript": "typescript",
    "ts": "typescript",
    "javascript": "javascript",
    "js": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
    "go": "go",
    "golang": "go",
    "java": "java",
    "kotlin": "kotlin",
    "ruby": "ruby",
    "rb": "ruby",
    "csharp": "csharp",
    "dotnet": "csharp",
    "cs": "csharp",
    "php": "php",
    "rust": "rust",
    "swift": "swift",
    "cpp": "cpp",
    "scala": "scala",
    "elixir": "elixir",
    "dart": "dart",
}
# Code-fence info strings that are programming languages (shells, data and markup are not evidence).
FENCE_LANGUAGES = {
    "python": "python",
    "py": "python",
    "python3": "python",
    "pycon": "python",
    "typescript": "typescript",
    "ts": "typescript",
    "tsx": "typescript",
    "javascript": "javascript",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "go": "go",
    "golang": "go",
    "java": "java",
    "kotlin": "kotlin",
    "kt": "kotlin",
    "ruby": "ruby",
    "rb": "ruby",
    "csharp": "csharp",
    "cs": "csharp",
    "c#": "csharp",
    "php": "php",
    "rust": "rust",
    "rs": "rust",
    "swift": "swift",
    "cpp": "cpp",
    "c++": "cpp",
    "scala": "scala",
    "elixir": "elixir",
    "dart": "dart",
}
FENCE_DOMINANCE = 0.8  # share of programming-language fences one language needs to tag a whole corpus
MIN_FENCES = 5

LANGUAGE_DESCRIPTION = "Programming language of the SDK or code a page documents"
SCOPE_DESCRIPTION = (
    "sdk-specific: reference and guides for one language's SDK; "
    "global-guide: concepts and guides that apply whatever the language"
)


@dataclass
class FileStats:
    """One Markdown file as fix sees it: chunk sizes per level, example sections, fence languages."""

    relpath: str
    size: int
    sizes: dict[str, list[int]]  # level -> chunk sizes with no size bound
    split_examples: dict[str, tuple[int, int]]  # level -> (example sections, heading sections)
    fences: Counter[str]
    headings: list[str]
    first_text: str
    hinted: bool  # a frontmatter or inline hint sets its strategy: manifests cannot change it
    empty: str | None = None  # why the page indexes nothing a reader could use, when it does not
    tab_languages: Counter[str] = field(default_factory=Counter)  # languages its tab labels name


@dataclass
class Proposal:
    path: str  # the manifest's relpath
    old: str | None  # its current text, None if it is new
    new: str
    reasons: list[str] = field(default_factory=list)

    def diff(self) -> str:
        old = (self.old or "").splitlines(keepends=True)
        return "".join(
            difflib.unified_diff(
                old,
                self.new.splitlines(keepends=True),
                "/dev/null" if self.old is None else f"a/{self.path}",
                f"b/{self.path}",
            )
        )


@dataclass
class FixReport:
    proposals: list[Proposal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # findings fix cannot repair by itself
    summary: dict[str, Any] = field(default_factory=dict)  # compact corpus summary (what --llm sends)

    def to_json(self) -> dict[str, Any]:
        return {
            "proposals": [
                {
                    "path": p.path,
                    "action": "update" if p.old is not None else "create",
                    "content": json.loads(p.new),
                    "text": p.new,
                    "reasons": p.reasons,
                }
                for p in self.proposals
            ],
            "notes": self.notes,
        }


def _fences(tokens: list[Any]) -> Counter[str]:
    langs: Counter[str] = Counter()
    for tok in tokens:
        if tok.type == "fence":
            info = (tok.info or "").strip().split()
            name = FENCE_LANGUAGES.get(info[0].lower().strip("{}.")) if info else None
            if name:
                langs[name] += 1
    return langs


def file_stats(relpath: str, body: str, tokens: list[Any], hinted: bool, stubs: bool = False) -> FileStats:
    """Chunk sizes at every level, from the real chunker with no size bound."""
    sizes: dict[str, list[int]] = {}
    examples: dict[str, tuple[int, int]] = {}
    for level in LEVELS:
        chunks = chunk_markdown(relpath, body, Strategy(chunk_by=level, max_chunk_size=UNBOUNDED), tokens=tokens)
        sizes[level] = [len(c.content) for c in chunks]
        # Sections cut off from a section (h2 and deeper) above them; an H1 is a page title, and cutting
        # a page below its title is the ordinary h2 chunking, not cutting an example from its method.
        headed = [(prev, c) for prev, c in zip(chunks, chunks[1:]) if c.heading_level >= 3 and prev.heading_level >= 2]
        example = sum(
            1
            for prev, c in headed
            if (_EXAMPLE_HEADING.search(c.heading) or _mostly_code(c.content)) and _has_text(prev.content)
        )
        examples[level] = (example, len(headed))
    headings = [
        tok_next.content
        for tok, tok_next in zip(tokens, tokens[1:])
        if tok.type == "heading_open" and tok.tag in ("h1", "h2")
    ][:8]
    first = next((t.content for t, prev in zip(tokens[1:], tokens) if prev.type == "paragraph_open"), "")
    stats = FileStats(relpath, len(body), sizes, examples, _fences(tokens), headings, first[:300], hinted)
    stats.empty = _empty(body, tokens, chunk_markdown(relpath, body, Strategy(chunk_by="h2"), tokens=tokens), stubs)
    stats.tab_languages = _tab_label_languages(tokens)
    return stats


EMPTY_TEXT = 20  # characters of text besides headings under which a page says nothing


def _empty(body: str, tokens: list[Any], chunks: list[Any], stubs: bool) -> str | None:
    """Why a page indexes nothing a reader could use, or None."""
    if not body.strip():
        return "it has no content after its frontmatter"
    from ..corpus.markdown import inline_text

    headings = {c.heading for c in chunks} | {
        " ".join(inline_text(nxt).split()) for tok, nxt in zip(tokens, tokens[1:]) if tok.type == "heading_open"
    }
    text = sum(len(ln.strip()) for c in chunks for ln in c.content_text.split("\n") if ln.strip() not in headings)
    if text >= EMPTY_TEXT:
        return None
    if stubs or any(t.type == "api_stub" for t in tokens):
        return "it is only API stubs (mkdocstrings `:::`, autodoc), whose text comes from the code"
    return (
        f"it has {text} characters of text besides its headings (a placeholder, or a page that components "
        "or includes docs-mcp cannot read make)"
    )


def _tab_label_languages(tokens: list[Any]) -> Counter[str]:
    from ..corpus.dialects import label_language

    found: Counter[str] = Counter()
    for tok in tokens:
        label = (tok.meta or {}).get("label") if tok.type in ("content_tab_open", "container_block_open") else None
        name = FENCE_LANGUAGES.get(label_language(label) or "") if label else None
        if name:
            found[name] += 1
    return found


def _has_text(content: str) -> bool:
    """Whether a chunk says something besides its heading: the description an example would be cut from."""
    return any(line.strip() and not line.lstrip().startswith("#") for line in content.split("\n"))


def _mostly_code(content: str) -> bool:
    """A section that is little more than a heading and a code fence: an example, not a topic."""
    lines = content.split("\n")[1:]
    in_fence, code = False, 0
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            code += len(line) + 1
        elif in_fence:
            code += len(line) + 1
    body = sum(len(line) + 1 for line in lines)
    return body > 0 and code / body >= 0.6


def size_cost(size: int) -> float:
    """0 for a chunk between MIN_USEFUL and TARGET_SIZE characters; log2 of how far outside it is otherwise.

    Small focused chunks rank well, so only chunks too big to be one topic (or too small to
    say anything) cost something.
    """
    if size > TARGET_SIZE:
        return math.log2(size / TARGET_SIZE)
    if size < MIN_USEFUL:
        return math.log2(MIN_USEFUL / max(size, 1))
    return 0.0


def level_cost(stats: list[FileStats], level: str) -> float:
    """Mean size_cost of the chunks at this level, weighted by their size."""
    total = weight = 0.0
    for s in stats:
        for size in s.sizes[level]:
            total += size * size_cost(size)
            weight += size
    return total / weight if weight else 0.0


def cuts_examples(stats: list[FileStats], level: str) -> bool:
    example = sum(s.split_examples[level][0] for s in stats)
    headed = sum(s.split_examples[level][1] for s in stats)
    return headed > 0 and example / headed >= EXAMPLE_SHARE


def choose_level(stats: list[FileStats]) -> tuple[str, str]:
    """The level whose chunks come closest to TARGET_SIZE without cutting examples off; h2 on a tie."""
    costs = {level: level_cost(stats, level) for level in LEVELS}
    allowed = [lv for lv in LEVELS if not cuts_examples(stats, lv)] or ["h1"]
    best = min(allowed, key=lambda lv: (costs[lv], lv != "h2"))
    if "h2" in allowed and costs["h2"] - costs[best] < LEVEL_MARGIN:
        best = "h2"  # the default, and the level most docs are written around: changed only on clear evidence
    shown = ", ".join(f"{lv} {costs[lv]:.2f}" for lv in LEVELS)
    cut = [lv for lv in LEVELS if lv not in allowed]
    why = f"chunk_by {best}: size cost (0 = every chunk {MIN_USEFUL}-{TARGET_SIZE} characters) {shown}"
    if cut:
        why += f"; {', '.join(cut)} would split code examples from the section they illustrate"
    return best, why


def choose_max_size(stats: list[FileStats], level: str) -> tuple[int, str]:
    """A bound that cuts only sections a deeper heading level could not split anyway.

    1.5 x the 95th percentile section at the level, raised to the biggest section that has
    sub-headings (so what the authors structured stays whole today; one outgrowing the bound
    later gets a deeper-level override from the repair pass), within [4000, 20000].
    """
    sizes = sorted(size for s in stats for size in s.sizes[level])
    if not sizes:
        return DEFAULT_MAX_CHUNK_SIZE, "the default"
    p95 = sizes[min(len(sizes) - 1, int(len(sizes) * 0.95))]
    bound = math.ceil(p95 * 1.5 / 1000) * 1000
    why = f"1.5 x the 95th percentile section ({p95} characters)"
    deeper = [lv for lv in LEVELS if lv > level] if level != "file" else list(LEVELS)
    structured = max(
        (
            max(s.sizes[level])
            for s in stats
            if s.sizes[level] and any(max(s.sizes[lv] or [0]) < max(s.sizes[level]) for lv in deeper)
        ),
        default=0,
    )
    if structured > bound:
        bound = math.ceil(structured / 1000) * 1000
        why = f"the biggest section with sub-headings ({structured} characters)"
    bound = max(4_000, min(DEFAULT_MAX_CHUNK_SIZE, bound))
    return bound, why + "; only longer sections without sub-headings are cut between blocks"


def language_folders(files: list[str]) -> dict[str, str]:
    """Folder relpath -> language for folders named after an SDK language (outermost wins)."""
    found: dict[str, str] = {}
    for rel in files:
        parts = rel.split("/")[:-1]
        for depth, name in enumerate(parts):
            tokens = [t for t in re.split(r"[-_.\s]+", name.lower()) if t]
            lang = next((LANGUAGE_FOLDERS[t] for t in tokens if t in LANGUAGE_FOLDERS), None)
            if lang:
                found.setdefault("/".join(parts[: depth + 1]), lang)
                break
    return found


def dominant_language(stats: list[FileStats]) -> str | None:
    fences: Counter[str] = Counter()
    for s in stats:
        fences.update(s.fences)
    total = sum(fences.values())
    if total < MIN_FENCES:
        return None
    lang, n = fences.most_common(1)[0]
    return lang if n / total >= FENCE_DOMINANCE else None


def _local(relpath: str, folder: str) -> str:
    return relpath[len(folder) + 1 :] if folder else relpath


def _governed(scan: CorpusScan, folder: str | None) -> list[str]:
    """The files whose governing manifest is the one in `folder` (None: files no manifest governs)."""
    out = []
    for rel in scan.markdown:
        loaded = nearest_manifest(rel, scan.manifests)
        if (loaded.folder if loaded else None) == folder:
            out.append(rel)
    return out


def analyze(docs_dir: Path) -> tuple[CorpusScan, dict[str, FileStats]]:
    scan = scan_corpus(Path(docs_dir))
    errors = [d for d in scan.diagnostics if d.severity == "error"]
    if has_errors(errors):
        first = errors[0]
        raise DocsMcpError(
            f"{first.format()}\nfix this first (`docs-mcp validate --docs-dir {docs_dir}` lists every "
            "error); fix proposes manifests only for a corpus whose manifests load"
        )
    stats: dict[str, FileStats] = {}
    for rel in scan.markdown:
        source, _ = read_source(scan, rel)
        if source is None:  # unreadable: validate and build report it
            continue
        if source.left_out is not None:  # a draft: its framework leaves it out already
            continue
        hinted = source.strategy_source.endswith(("frontmatter", "inline hint"))
        stubs = any(c.startswith(("API stub", "Sphinx directive auto")) for c, _ in source.constructs)
        stats[rel] = file_stats(rel, source.body, source.tokens, hinted, stubs)
        if scan.framework is None:
            stats[rel].empty = None  # without a framework nothing says the page is not meant to be read
    return scan, stats


def _dump(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def _bootstrap(folder: str, raw: dict[str, Any], stats: list[FileStats], reasons: list[str]) -> dict[str, Any]:
    """Strategy and taxonomy for the files a strategy-less (or missing) manifest governs."""
    out: dict[str, Any] = dict(raw) if raw else {"version": "1"}
    local = {_local(s.relpath, folder): s for s in stats}
    direct = [s for rel, s in local.items() if "/" not in rel]
    level, why = choose_level(direct if len(direct) >= MIN_GROUP else stats)
    max_size, max_why = choose_max_size(stats, level)
    out["strategy"] = {"chunk_by": level, "max_chunk_size": max_size}
    reasons.append(f"{why}; max_chunk_size {max_size}: {max_why}")
    overrides = list(out.get("overrides") or [])
    overrides.extend(_folder_levels(local, "", level, reasons))
    folders = language_folders(list(local))
    taxonomy = dict(out.get("taxonomy") or {})
    if folders:
        metadata = dict(out.get("metadata") or {})
        metadata.setdefault("scope", "global-guide")
        out["metadata"] = metadata
        for sub, lang in sorted(folders.items()):
            overrides.append({"pattern": f"{sub}/**", "metadata": {"language": lang, "scope": "sdk-specific"}})
        taxonomy.setdefault("language", {"description": LANGUAGE_DESCRIPTION})
        taxonomy.setdefault("scope", {"description": SCOPE_DESCRIPTION})
        reasons.append(
            "language folders "
            + ", ".join(f"{f}/ ({lang})" for f, lang in sorted(folders.items()))
            + ": language and scope sdk-specific there, scope global-guide elsewhere"
        )
    elif (dominant := dominant_language(stats)) is not None:
        metadata = dict(out.get("metadata") or {})
        metadata.setdefault("language", dominant)
        out["metadata"] = metadata
        taxonomy.setdefault("language", {"description": LANGUAGE_DESCRIPTION})
        reasons.append(
            f"language {dominant}: at least {int(FENCE_DOMINANCE * 100)}% of the code fences in a "
            "programming language are " + dominant
        )
    if taxonomy:
        out["taxonomy"] = taxonomy
    if overrides:
        out["overrides"] = overrides
    return out


def _folder_levels(local: dict[str, FileStats], prefix: str, level: str, reasons: list[str]) -> list[dict[str, Any]]:
    """Overrides for subfolders (of MIN_GROUP files or more) whose own best level differs from the one in effect."""
    children: dict[str, list[FileStats]] = {}
    for rel, s in local.items():
        rest = rel[len(prefix) :] if rel.startswith(prefix) else None
        if rest and "/" in rest:
            children.setdefault(prefix + rest.split("/", 1)[0], []).append(s)
    overrides: list[dict[str, Any]] = []
    for child, stats in sorted(children.items()):
        if len(stats) < MIN_GROUP:
            continue
        best, why = choose_level(stats)
        if (
            best != level
            and not cuts_examples(stats, level)
            and level_cost(stats, level) - level_cost(stats, best) < LEVEL_MARGIN
        ):
            best = level  # not different enough to be worth an override
        why = why if best != level else ""
        if best != level:
            max_size, _ = choose_max_size(stats, best)
            overrides.append({"pattern": f"{child}/**", "strategy": {"chunk_by": best, "max_chunk_size": max_size}})
            reasons.append(f"{child}/ ({len(stats)} files): {why}")
        overrides.extend(_folder_levels(local, child + "/", best, reasons))
    return overrides


def _repairs(
    folder: str,
    manifest: dict[str, Any],
    stats: list[FileStats],
    loaded_relpath: str,
    reasons: list[str],
    notes: list[str],
) -> dict[str, Any]:
    """Per-file overrides to a deeper level for files whose sections outgrow max_chunk_size at theirs."""
    loaded = LoadedManifest(loaded_relpath, folder, Manifest.model_validate(manifest))
    added = []
    unfixable: list[str] = []
    for s in stats:
        rules = resolve_manifest_rules(s.relpath, loaded)
        strategy = rules.strategy
        level = strategy.chunk_by
        limit = strategy.max_size
        sizes = s.sizes.get(level) if level != "file" else [s.size]
        biggest = max(sizes or [0])
        if biggest <= limit:
            continue
        if s.hinted:
            notes.append(
                f"{s.relpath}: a section of {biggest} characters is over max_chunk_size {limit}; its "
                "mcp_chunking_hint sets the strategy, so change chunk_by there"
            )
            continue
        deeper = [lv for lv in LEVELS if level == "file" or lv > level]
        fit = next((lv for lv in deeper if max(s.sizes[lv] or [0]) <= limit and not cuts_examples([s], lv)), None)
        if fit is None:
            unfixable.append(s.relpath)
            continue
        added.append({"pattern": _local(s.relpath, folder), "strategy": {"chunk_by": fit, "max_chunk_size": limit}})
        reasons.append(
            f"{s.relpath}: its largest section at chunk_by {level} is {biggest} characters (over "
            f"max_chunk_size {limit}); chunk_by {fit} keeps every section under it"
        )
    if unfixable:
        more = f" and {len(unfixable) - 3} more" if len(unfixable) > 3 else ""
        notes.append(
            f"{len(unfixable)} file(s) have a section over their max_chunk_size that no deeper heading level "
            f"fixes ({', '.join(unfixable[:3])}{more}); build cuts those sections between blocks, which is "
            "fine for long tables and code; add sub-headings to choose the cuts yourself"
        )
    if added:
        manifest = dict(manifest)
        manifest["overrides"] = list(manifest.get("overrides") or []) + added
    return manifest


def _unmatched_overrides(loaded: LoadedManifest, governed: list[str]) -> list[str]:
    notes = []
    for i, override in enumerate(loaded.manifest.overrides):
        if not any(glob_match(override.pattern, _local(rel, loaded.folder)) for rel in governed):
            line = loaded.lines.get(("overrides", i), 1)
            notes.append(
                f"{loaded.relpath}:{line}: overrides[{i}] pattern {override.pattern!r} matches no file it "
                "governs; fix the pattern or remove the override"
            )
    return notes


def propose(docs_dir: Path) -> tuple[FixReport, dict[str, FileStats]]:
    """Every manifest change fix would make, with the reasons, and what it cannot fix."""
    scan, stats = analyze(docs_dir)
    report = FixReport()
    targets: dict[str | None, LoadedManifest | None] = {None: None}
    targets.update({folder: loaded for folder, loaded in scan.manifests.items()})
    for folder, loaded in sorted(targets.items(), key=lambda kv: (kv[0] is not None, kv[0] or "")):
        governed = _governed(scan, folder)
        if not governed:
            continue
        files = [stats[rel] for rel in governed if rel in stats]
        where = folder if folder is not None else ""
        relpath = f"{where}/{MANIFEST_NAME}" if where else MANIFEST_NAME
        old_text = None
        raw: dict[str, Any] = {}
        if loaded is not None:
            old_text, _, _ = read_text(scan.root, loaded.relpath)
            raw = json.loads(old_text or "{}")
            report.notes.extend(_unmatched_overrides(loaded, governed))
        reasons: list[str] = []
        new = raw
        if loaded is None or loaded.manifest.strategy is None:
            new = _bootstrap(where, raw, files, reasons)
        new = _repairs(where, new, files, relpath, reasons, report.notes)
        new = _exclusions(where, new, files, reasons)
        if new != raw:
            report.proposals.append(Proposal(relpath, old_text, _dump(new), reasons))
    report.notes.extend(_language_tabs(list(stats.values())))
    report.summary = corpus_summary(scan, stats)
    return report, stats


def _exclusions(folder: str, manifest: dict[str, Any], stats: list[FileStats], reasons: list[str]) -> dict[str, Any]:
    """`exclude` entries for the pages that would index nothing a reader could use (FileStats.empty)."""
    empty = [s for s in stats if s.empty]
    if not empty:
        return manifest
    manifest = dict(manifest)
    listed = list(manifest.get("exclude") or [])
    for s in empty:
        pattern = _local(s.relpath, folder)
        if pattern not in listed:
            listed.append(pattern)
            reasons.append(f"exclude {s.relpath}: {s.empty}")
    manifest["exclude"] = listed
    return manifest


def _language_tabs(stats: list[FileStats]) -> list[str]:
    """A note when tab labels show code in several languages: a page is not of one language then."""
    languages: Counter[str] = Counter()
    for s in stats:
        languages.update(s.tab_languages)
    if len(languages) < 2:
        return []
    ranked = sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
    shown = ", ".join(f"{lang} ({n} tabs)" for lang, n in ranked)
    return [
        f"tabs show code in several languages: {shown}; a page holds them all, so no language is set per page: "
        "each tab's code carries its language, and search_docs with language= ranks the chunks whose code is in it first"
    ]


def corpus_summary(scan: CorpusScan, stats: dict[str, FileStats], limit: int = 6_000) -> dict[str, Any]:
    """A bounded picture of the corpus for an LLM: folders, headings, a few opening lines."""
    folders = Counter(rel.rsplit("/", 1)[0] if "/" in rel else "." for rel in scan.markdown)
    summary: dict[str, Any] = {
        "files": len(scan.markdown),
        "folders": [f"{show_path(f)} ({n} files)" for f, n in folders.most_common(30)],
        "headings": [],
        "snippets": [],
    }
    fences: Counter[str] = Counter()
    for s in stats.values():
        fences.update(s.fences)
    summary["code_languages"] = dict(fences.most_common(8))
    budget = limit - len(json.dumps(summary))
    by_size = sorted(stats.values(), key=lambda s: (-len(s.headings), s.relpath))
    for s in by_size[:40]:
        entry = f"{s.relpath}: " + " | ".join(s.headings)
        if budget - len(entry) < 1_500:
            break
        summary["headings"].append(entry[:300])
        budget -= len(entry[:300]) + 4
    for s in sorted(stats.values(), key=lambda s: s.relpath.count("/"))[:6]:
        if s.first_text and budget > 400:
            summary["snippets"].append(f"{s.relpath}: {s.first_text[:300]}")
            budget -= 320
    return summary


def write_proposals(docs_dir: Path, report: FixReport) -> tuple[list[str], list[tuple[str, str]]]:
    """(manifests written, (manifest, why) of those left as they are: symlinks and read-only files)."""
    written: list[str] = []
    refused: list[tuple[str, str]] = []
    for p in report.proposals:
        try:
            replace_beneath(docs_dir, p.path, p.new.encode("utf-8"))
        except WriteRefusedError as exc:
            refused.append((p.path, str(exc)))
            continue
        written.append(p.path)
    return written, refused
