"""The partition keys: a corpus's name, or `corpus@label` for one version of a versioned corpus.

With no versioned corpus in docs-mcp.yaml the partitions are static, one per corpus, as always. With
one, they are dynamic (`docs_versions`): a version key must be added before it is materialized, which
docs_repo_sensor does when a new tag matches and `docs-mcp pipeline launch` does before it launches;
why dynamic keys rather than corpus × version, docs/decisions/.
"""

from __future__ import annotations

import dagster as dg

from docs_mcp_core.sources.config import Config

VERSIONS_PARTITIONS = "docs_versions"


def partition_key(corpus: str, label: str | None) -> str:
    """`@` never occurs in a corpus name or a version label, so the key splits back unambiguously."""
    return corpus if label is None else f"{corpus}@{label}"


def split_key(key: str) -> tuple[str, str | None]:
    corpus, at, label = key.partition("@")
    return corpus, (label if at else None)


def partitions_for(config: Config) -> dg.PartitionsDefinition:
    """Static corpus partitions as before, or the dynamic ones when a corpus is versioned."""
    if any(c.versions is not None for c in config.corpora):
        return dg.DynamicPartitionsDefinition(name=VERSIONS_PARTITIONS)
    return dg.StaticPartitionsDefinition(config.names)


def known_keys(config: Config, versioned: dict[str, list[str]]) -> list[str]:
    """Every partition key: the unversioned corpora's names, and corpus@label for each resolved version
    (`versioned`: {corpus: labels})."""
    keys = []
    for corpus in config.corpora:
        if corpus.versions is None:
            keys.append(corpus.name)
        else:
            keys += [partition_key(corpus.name, label) for label in versioned.get(corpus.name, [])]
    return keys
