"""Tune the search weights on every shipped eval suite at once, text-only and hybrid.

Each suite's corpus is built once with a provider (default: local) into --work-dir, which is
kept: a rerun reuses its chunks and embedding cache, so only changed code costs time. For each
setting of the full-text field boosts, of the full-text length prior and of term proximity (heading,
breadcrumb, sub-words, text_short, proximity: these change the full-text lists, so each is queried once per case), it
gets every case's ranked lists, then scores a grid of fusion parameters (hybrid fusion by scores
or ranks, phrase and vector weight, k, depth, language boost, short-chunk threshold, navigation and bare-code
priors, the exact phrase and table rows in passing mentions, headings that name the query) with the engine's own
`fuse`: MRR@5 per suite and per category, for text-only (no vector list) and hybrid.
The best settings are those with the highest mean MRR@5 over suites and both modes among
those that keep every suite's lexical MRR@5 at the baseline's level or better.

    .venv/bin/python benchmarks/tune.py [--provider local] [--suites example,dub-ts,uv-docs] [--work-dir DIR]
        [--text-short 0,150] [--proximity 0,0.25,0.5] [--set navigation=0,0.75 --set k=10 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# Every shipped suite and the corpus it is about (tests/eval/test_suites.py checks that this
# lists every file in benchmarks/suites/ and that each case's chunk IDs exist in its corpus).
SUITES = {
    "example": (REPO / "benchmarks/suites/example.json", REPO / "examples/parcelly-docs"),
    "dub-ts": (REPO / "benchmarks/suites/dub-ts.json", REPO / "tests/fixtures/dub-ts"),
    "uv-docs": (REPO / "benchmarks/suites/uv-docs.json", REPO / "tests/fixtures/uv-docs"),
    "httpx-site": (REPO / "benchmarks/suites/httpx-site.json", REPO / "tests/fixtures/httpx-site"),
    "sqlmodel-docs": (REPO / "benchmarks/suites/sqlmodel-docs.json", REPO / "tests/fixtures/sqlmodel-docs/docs"),
    "vite-docs": (REPO / "benchmarks/suites/vite-docs.json", REPO / "tests/fixtures/vite-docs/docs"),
    "starlight-docs": (
        REPO / "benchmarks/suites/starlight-docs.json",
        REPO / "tests/fixtures/starlight-docs/docs/src/content/docs",
    ),
    "requests-docs": (REPO / "benchmarks/suites/requests-docs.json", REPO / "tests/fixtures/requests-docs/docs"),
}
# Never used to choose defaults (not run unless --suites names them): how chosen settings do on docs
# they were not chosen on.
HELD_OUT = ("httpx-site",)
# Full-text field boosts (heading, breadcrumb, subwords): each one re-queries every case.
FIELDS = [
    ("max", 3.0, 0.0, 0.0),
    ("max", 1.0, 1.0, 0.5),
    ("max", 1.0, 1.0, 0.0),
    ("max", 1.0, 1.0, 1.0),
    ("max", 1.5, 1.0, 0.5),
    ("sum", 1.0, 0.5, 0.5),
]
GRID = {
    "hybrid": ["rrf", "scores"],
    "phrase": [1.25, 2.0],
    "vector": [1.0, 1.25, 1.5, 2.0, 3.0],
    "k": [10, 20, 60],
    "depth": [100],
    "language": [0.0, 1.0, 3.0],
    "short": [0, 50, 100, 200],
    "navigation": [0.0, 0.5, 0.75, 1.0],
    "bare_code": [0.0, 0.5],
    "passing": [False, True],
    "tables": [0.0, 0.15],
    "tables_named": [0.0, 1.0],
    "headed": [0.0, 0.5],
}
# The full-text length prior (Weights.text_short) scales full-text scores before the lists are cut: re-queried too.
TEXT_SHORT = [0, 100, 150, 200, 300]
# The weight of neighbouring query words found together (Weights.proximity) is part of the full-text query: re-queried.
PROXIMITY = [0.0, 0.25]
BASELINE = {
    "fields": "max",
    "heading": 3.0,
    "breadcrumb": 0.0,
    "subwords": 0.0,
    "text_short": 0,
    "proximity": 0.0,
    "hybrid": "rrf",
    "phrase": 1.25,
    "vector": 2.0,
    "k": 60,
    "depth": 100,
    "language": 0.0,
    "short": 0,
    "navigation": 0.0,
    "bare_code": 0.0,
    "passing": False,
    "tables": 0.0,
    "tables_named": 0.0,
    "headed": 0.0,
}
MODES = ("text", "hybrid")


async def ranked_lists(index_dir: Path, cases: list[dict], weights: Any, embedder_factory: Any) -> tuple[list, Any]:
    """Each case with its ranked lists by signal (at the largest depth), and the opened index."""
    from docs_mcp_core.search.engine import SearchEngine
    from docs_mcp_core.search.filters import prefilter, validate_filters

    engine = SearchEngine(index_dir, weights, embedder_factory=embedder_factory)
    index = await engine.index()
    out = []
    for case in cases:
        filters = validate_filters(case.get("filters", {}), index.taxonomy)
        out.append((case, filters, await engine.ranked(index, case["query"], prefilter(filters, index.taxonomy))))
    engine.close()
    return out, index


def score(prepared: list, index: Any, weights: Any, mode: str) -> dict[str, float]:
    """MRR@5 overall and per category, for one suite and one mode."""
    from docs_mcp_core.search.fusion import fuse
    from docs_mcp_eval import metrics

    per_case: list[tuple[str, float]] = []
    for case, filters, lists in prepared:
        used = {n: ids for n, ids in lists.items() if mode == "hybrid" or n != "vector"}
        ids = [cid for cid, _ in fuse(index, used, weights, filters, case["query"])][:5]
        relevant = [case["expectedChunkId"], *case.get("alsoRelevant", [])]
        per_case.append((case["category"], metrics.reciprocal_rank(ids, relevant)))
    out = {"mrr": sum(rr for _, rr in per_case) / len(per_case)}
    for category in sorted({c for c, _ in per_case}):
        values = [rr for c, rr in per_case if c == category]
        out[category] = sum(values) / len(values)
    return out


def build_suites(names: list[str], provider_name: str, work: Path) -> dict[str, Path]:
    from docs_mcp_core.embedding import ProviderSettings, make_provider
    from docs_mcp_core.indexing.build import build

    built = {}
    for name in names:
        _, docs = SUITES[name]
        if (docs / "sitemap.xml").is_file():  # a built docs website: staged as `docs-mcp build --url` stages it
            docs = stage_site(docs, work / f"{name}-staged")
        provider = make_provider(ProviderSettings(provider_name))
        try:
            build(docs, work / name, provider, cache_dir=work / f"{name}-cache")
        finally:
            provider.close()
        built[name] = work / name
    return built


def stage_site(folder: Path, dest: Path) -> Path:
    """The website in `folder`, served on 127.0.0.1 and staged into `dest` as Markdown (its docs folder)."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from docs_mcp_core.sources.web.stage import WebSource, stage_url

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        return Path(stage_url(WebSource(url), dest / "docs").path)
    finally:
        server.shutdown()
        server.server_close()


class _Shared:
    """One loaded query embedder for every engine of the run (closed once, at the end)."""

    def __init__(self) -> None:
        self.embedder: Any = None

    def __call__(self, meta: dict) -> Any:
        from docs_mcp_core.search.library import loaded_embedder

        if self.embedder is None:
            self.embedder = loaded_embedder(meta)
        return _Borrowed(self.embedder)


@dataclasses.dataclass
class _Borrowed:
    inner: Any

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def close(self) -> None:
        pass


def evaluate(
    built: dict[str, Path],
    fields: list[tuple[float, float, float]],
    grid: dict[str, list],
    text_short: list[int],
    proximity: list[float],
) -> list[dict]:
    from docs_mcp_core.search import Weights

    loaded_embedder = _Shared()
    rows = []
    for (combine, heading, breadcrumb, subwords), short_text, near in itertools.product(fields, text_short, proximity):
        base = Weights(
            fields=combine,
            heading=heading,
            breadcrumb=breadcrumb,
            subwords=subwords,
            text_short=short_text,
            proximity=near,
            depth=max(grid["depth"]),
        )
        prepared = {
            name: asyncio.run(
                ranked_lists(out, json.loads(SUITES[name][0].read_text())["cases"], base, loaded_embedder)
            )
            for name, out in built.items()
        }
        for values in itertools.product(*grid.values()):
            setting = dict(zip(grid, values))
            weights = dataclasses.replace(base, **setting)
            row: dict[str, Any] = {
                "fields": combine,
                "heading": heading,
                "breadcrumb": breadcrumb,
                "subwords": subwords,
                "text_short": short_text,
                "proximity": near,
                **setting,
            }
            for name, (cases, index) in prepared.items():
                for mode in MODES:
                    row[(name, mode)] = score(cases, index, weights, mode)
            row["mean"] = sum(row[(n, m)]["mrr"] for n in prepared for m in MODES) / (len(prepared) * len(MODES))
            rows.append(row)
    return rows


def _fields(row: dict) -> tuple:
    return row["fields"], row["heading"], row["breadcrumb"], row["subwords"]


def _worst_drop(base: dict, row: dict, names: list[str]) -> float:
    """The largest fall of any suite/mode/category MRR@5 from the baseline (0 when none fell)."""
    return max(0.0, *(base[(n, m)][c] - row[(n, m)][c] for n in names for m in MODES for c in base[(n, m)]))


def report(rows: list[dict], names: list[str], top: int) -> None:
    params = list(BASELINE)
    base = next((r for r in rows if all(r[p] == v for p, v in BASELINE.items())), None)
    floor = {(n, m): base[(n, m)].get("lexical", 0.0) for n in names for m in MODES} if base else {}
    allowed = [r for r in rows if all(r[key].get("lexical", 0.0) >= f - 1e-9 for key, f in floor.items())]
    allowed.sort(key=lambda r: -r["mean"])
    print(
        " ".join(f"{p:>10}" for p in params), " ".join(f"{n + '/' + m:>16}" for n in names for m in MODES), "      mean"
    )
    for row in ([base] if base else []) + allowed[:top]:
        print(
            " ".join(f"{row[p]:>10}" for p in params),
            " ".join(f"{row[(n, m)]['mrr']:>16.3f}" for n in names for m in MODES),
            f"{row['mean']:>10.3f}",
            " worst category drop",
            f"{_worst_drop(base, row, names):.3f}" if base else "-",
        )
    print("(first row: the baseline; then the best that keep every lexical MRR@5 at the baseline's or better)")
    from docs_mcp_core.search import Weights

    default = Weights()
    mine = [r for r in rows if all(r[p] == getattr(default, p) for p in params)]
    if mine:
        row = mine[0]
        print("the shipped defaults (search.Weights):")
        print(
            " ".join(f"{row[p]:>10}" for p in params),
            " ".join(f"{row[(n, m)]['mrr']:>16.3f}" for n in names for m in MODES),
            f"{row['mean']:>10.3f}",
            " worst category drop",
            f"{_worst_drop(base, row, names):.3f}" if base else "-",
        )
    for limit in (0.05, 0.02):
        within = [r for r in allowed if _worst_drop(base, r, names) <= limit + 1e-9] if base else []
        if within:
            row = within[0]
            print(f"best with no category more than {limit} below the baseline:")
            print(
                " ".join(f"{row[p]:>10}" for p in params),
                " ".join(f"{row[(n, m)]['mrr']:>16.3f}" for n in names for m in MODES),
                f"{row['mean']:>10.3f}",
            )
    print("\nbest fusion for each full-text field setting (measures the fields on their own):")
    for fields in sorted({_fields(r) for r in rows}):
        mine = [r for r in rows if _fields(r) == fields]
        row = max(mine, key=lambda r: r["mean"])
        print(
            " ".join(f"{row[p]:>10}" for p in params),
            " ".join(f"{row[(n, m)]['mrr']:>16.3f}" for n in names for m in MODES),
            f"{row['mean']:>10.3f}",
            " worst category drop",
            f"{_worst_drop(base, row, names):.3f}" if base else "-",
        )
    if base and allowed:
        best = allowed[0]
        print("\nper category, baseline -> best:")
        for n in names:
            for m in MODES:
                cats = [c for c in best[(n, m)] if c != "mrr"]
                print(
                    f"  {n:8} {m:6} "
                    + "  ".join(f"{c} {base[(n, m)][c]:.3f}->{best[(n, m)][c]:.3f}" for c in ["mrr", *cats])
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--provider", default="local")
    parser.add_argument(
        "--suites",
        default=",".join(n for n in SUITES if n not in HELD_OUT),
        help=f"comma separated (default: all but the held-out {', '.join(HELD_OUT)})",
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path("/tmp/docs-mcp-tune"),
        help="Kept between runs: builds there reuse their chunks and embedding cache.",
    )
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument(
        "--fields",
        help="max|sum:heading:breadcrumb:subwords settings to try, comma separated (default: a built-in list)",
    )
    parser.add_argument(
        "--text-short",
        help=f"full-text length prior thresholds to try, comma separated (default: {','.join(map(str, TEXT_SHORT))})",
    )
    parser.add_argument(
        "--proximity",
        help="weights of neighbouring query words found together to try, comma "
        f"separated (default: {','.join(map(str, PROXIMITY))})",
    )
    parser.add_argument(
        "--baseline",
        choices=["original", "current", "shipped"],
        default="original",
        help="what rows are compared with: the weights before tuning began, or the shipped defaults "
        "(search.Weights) without the priors and term proximity (text_short, navigation, bare_code, proximity), "
        "or the shipped defaults as they are (to see what a change would cost any category today)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help=f"values to try for one fusion parameter instead of the built-in grid ({', '.join(GRID)})",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    names = args.suites.split(",")
    if args.baseline != "original":
        from docs_mcp_core.search import Weights

        BASELINE.update({key: getattr(Weights(), key) for key in BASELINE})
        if args.baseline == "current":  # without the priors and term proximity
            BASELINE.update(
                text_short=0,
                navigation=0.0,
                bare_code=0.0,
                proximity=0.0,
                passing=False,
                tables=0.0,
                tables_named=0.0,
                headed=0.0,
            )
    built = build_suites(names, args.provider, args.work_dir)
    fields = (
        [(f.split(":")[0], *(float(v) for v in f.split(":")[1:])) for f in args.fields.split(",")]
        if args.fields
        else FIELDS
    )
    if _fields(BASELINE) not in fields:
        fields.insert(0, _fields(BASELINE))
    text_short = [int(v) for v in args.text_short.split(",")] if args.text_short else list(TEXT_SHORT)
    if BASELINE["text_short"] not in text_short:
        text_short.insert(0, BASELINE["text_short"])
    proximity = [float(v) for v in args.proximity.split(",")] if args.proximity else list(PROXIMITY)
    if BASELINE["proximity"] not in proximity:
        proximity.insert(0, BASELINE["proximity"])
    grid = dict(GRID)
    for item in args.set:
        key, values = item.split("=", 1)
        if key not in grid:
            parser.error(f"--set {key}: not a fusion parameter ({', '.join(grid)})")
        cast = (lambda v: v.lower() in ("1", "true")) if isinstance(grid[key][0], bool) else type(grid[key][0])
        grid[key] = sorted({cast(v) for v in values.split(",")} | {BASELINE[key]})  # the baseline stays comparable
    report(evaluate(built, fields, grid, text_short, proximity), names, args.top)


if __name__ == "__main__":
    main()
