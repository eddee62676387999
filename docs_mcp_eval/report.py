"""Results as JSON and as a markdown report, with a delta table against a baseline run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docs_mcp_core.errors import DocsMcpError

# metric, label, higher is better
METRICS = [
    ("mrr@5", "MRR@5", True),
    ("ndcg@5", "NDCG@5", True),
    ("recall@5", "Recall@5", True),
    ("avg_rounds", "Avg rounds to hit", False),
    ("found_within_rounds", "Found within maxRounds", True),
    ("facet_precision", "Facet precision", True),
    ("search_p50_ms", "Search p50 (ms)", False),
    ("search_p95_ms", "Search p95 (ms)", False),
    ("get_doc_p50_ms", "get_doc p50 (ms)", False),
    ("peak_rss_mb", "Peak RSS (MB)", False),
    ("build_seconds", "Build (s)", False),
    ("answered_cases", "Answered by the first search (default limit)", True),
    ("unanswered_cases", "Not answered by the first search", False),
    ("chars_to_answer_mean", "Characters read to the answer, mean", False),
    ("chars_to_answer_median", "Characters read to the answer, median", False),
    ("follow_up_cases", "Cases with a follow-up query", True),
    ("found_first_search", "Follow-up cases found by the first search", True),
    ("found_within_two_searches", "Follow-up cases found within two searches", True),
    ("chars_within_two_mean", "Characters read within two searches, mean", False),
    ("agent_found", "Agent: found the right doc", True),
    ("agent_rounds_mean", "Agent: mean tool calls to the right doc", False),
    ("agent_rounds_median", "Agent: median tool calls to the right doc", False),
    ("chars_read_mean", "Agent: mean characters read per case", False),
    ("chars_read_median", "Agent: median characters read per case", False),
]

TWO_SEARCHES = ("found_first_search", "found_within_two_searches", "chars_within_two_mean")


def fmt(value: Any, key: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if key.startswith("chars"):
            return f"{value:,.0f}"
        if (
            key.endswith("_ms")
            or key in ("peak_rss_mb", "build_seconds", "avg_rounds", "index_mb")
            or key.startswith("agent_rounds")
        ):
            return f"{value:.1f}" if key != "avg_rounds" and not key.startswith("agent_rounds") else f"{value:.2f}"
        return f"{value:.3f}"
    return str(value)


def load_result(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DocsMcpError(f"cannot read the result file {path}: {exc}") from None
    if not isinstance(data, dict) or "summary" not in data:
        raise DocsMcpError(f"{path} is not a docs-mcp eval result (no 'summary')")
    return data


def delta_table(baseline: dict[str, Any], now: dict[str, Any]) -> str:
    rows = ["| Metric | Baseline | Now | Change |", "|---|---:|---:|---:|"]
    for key, label, higher_better in METRICS:
        before, after = baseline["summary"].get(key), now["summary"].get(key)
        if before is None and after is None:
            continue
        change = "–"
        if isinstance(before, (int, float)) and isinstance(after, (int, float)):
            diff = after - before
            better = diff > 0 if higher_better else diff < 0
            mark = "" if abs(diff) < 1e-9 else (" (better)" if better else " (worse)")
            change = f"{diff:+.3f}{mark}"
            if key.endswith("_ms") or key.startswith("chars"):
                change = f"{diff:+,.1f}{mark}" if key.endswith("_ms") else f"{diff:+,.0f}{mark}"
            elif key.endswith("_cases"):
                change = f"{diff:+.0f}{mark}"
        rows.append(f"| {label} | {fmt(before, key)} | {fmt(after, key)} | {change} |")
    return "\n".join(rows)


def markdown(result: dict[str, Any], baseline: dict[str, Any] | None = None) -> str:
    summary = result["summary"]
    lines = [f"# Eval: {result['suite']}", ""]
    lines.append(f"Server: `{' '.join(result['server_command'])}`  ")
    if result.get("build_command"):
        lines.append(
            f"Build: `{' '.join(result['build_command'])}` ({fmt(summary.get('build_seconds'), 'build_seconds')} s)  "
        )
    lines.append(f"Run: {result['started_at']}, {summary['cases']} cases, warm-up {result['warmup']}")
    if result.get("aborted"):
        lines += [
            "",
            f"**Run aborted: {result['aborted']}**",
            f"Partial report: {summary['cases']} cases ran, {summary['not_run']} did not.",
        ]
    lines += ["", "| Metric | Value |", "|---|---:|"]
    lines += [
        f"| {label} | {fmt(summary.get(key), key)} |"
        for key, label, _ in METRICS
        if key in summary
        and (not key.startswith(("agent", "chars_read")) or result.get("agent"))
        and (key not in TWO_SEARCHES or summary.get("follow_up_cases"))
    ]
    if result.get("agent"):
        options = result["agent"]
        lines += [
            "",
            f"Scripted agent (--agent): up to {options['rounds']} tool calls per case, max_chars "
            f"{options['max_chars'] or 'server default'}, get_doc context {options['context']}.",
        ]
    lines += ["", "## By category", "", "| Category | Cases | MRR@5 | NDCG@5 | Recall@5 |", "|---|---:|---:|---:|---:|"]
    for name, cat in result["by_category"].items():
        lines.append(
            f"| {name} | {cat['cases']} | {fmt(cat['mrr@5'])} | {fmt(cat['ndcg@5'])} | {fmt(cat['recall@5'])} |"
        )
    follow = [c for c in result["cases"] if c.get("found_within_two") is not None]
    if follow:
        lines += [
            "",
            "## Follow-ups",
            "",
            "Rank of the first relevant hit in each answer (default limit); the follow-up is searched only after a miss.",
            "",
            "| Case | First search | Follow-up query | Follow-up |",
            "|---|---:|---|---:|",
        ]
        for c in follow:
            then = "–" if c["answer_rank"] is not None else (c["follow_up_rank"] or "miss")
            lines.append(f"| {c['name']} | {c['answer_rank'] or 'miss'} | {c['follow_up']} | {then} |")
    misses = [c for c in result["cases"] if not c["recall"]]
    if misses:
        lines += ["", "## Not in the top 5", "", "| Case | Category | Expected | Top 3 |", "|---|---|---|---|"]
        for c in misses:
            got = ", ".join(f"`{i}`" for i in c["ranked"][:3]) or (c["error"] or "no hits")
            lines.append(f"| {c['name']} | {c['category']} | `{c['relevant'][0]}` | {got} |")
    if baseline is not None:
        lines += ["", "## Against the baseline", "", delta_table(baseline, result)]
    return "\n".join(lines) + "\n"


def comparison(rows: list[dict[str, Any]]) -> str:
    """One table per suite run across providers: quality, speed, cost to build."""
    suite = rows[0]["result"]["suite"] if rows else "suite"
    lines = [
        f"# Provider comparison: {suite}",
        "",
        "| Provider | MRR@5 | NDCG@5 | Recall@5 | Avg rounds | Search p50 ms | p95 ms | get_doc p50 ms | "
        "Build s | Index MB | Peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        s = row["result"]["summary"]
        lines.append(
            f"| {row['provider']} | {fmt(s['mrr@5'])} | {fmt(s['ndcg@5'])} | {fmt(s['recall@5'])} | "
            f"{fmt(s['avg_rounds'], 'avg_rounds')} | {fmt(s['search_p50_ms'], '_ms')} | {fmt(s['search_p95_ms'], '_ms')} | "
            f"{fmt(s['get_doc_p50_ms'], '_ms')} | {fmt(s['build_seconds'], 'build_seconds')} | "
            f"{fmt(row.get('index_mb'), 'index_mb')} | {fmt(s['peak_rss_mb'], 'peak_rss_mb')} |"
        )
    categories = sorted({c for row in rows for c in row["result"]["by_category"]})
    lines += [
        "",
        "MRR@5 by category:",
        "",
        "| Provider | " + " | ".join(categories) + " |",
        "|---|" + "---:|" * len(categories),
    ]
    for row in rows:
        cats = row["result"]["by_category"]
        lines.append(
            f"| {row['provider']} | " + " | ".join(fmt(cats.get(c, {}).get("mrr@5")) for c in categories) + " |"
        )
    lines += ["", "What an agent reads (search_docs at its default limit):", "", *reading_table(rows)]
    aborted = [f"- {row['provider']}: {row['result']['aborted']}" for row in rows if row["result"].get("aborted")]
    if aborted:
        lines += ["", "Aborted runs:", *aborted]
    return "\n".join(lines) + "\n"


def reading_table(rows: list[dict[str, Any]]) -> list[str]:
    """Per provider: cases answered by the first search, characters read to the answer, two searches."""
    lines = [
        "| Provider | Answered | Not answered | Chars to answer, mean | median | Follow-ups | "
        "Found by the first | Within two | Chars within two, mean |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        s = row["result"]["summary"]
        lines.append(
            f"| {row['provider']} | {fmt(s.get('answered_cases'))} | {fmt(s.get('unanswered_cases'))} | "
            f"{fmt(s.get('chars_to_answer_mean'), 'chars')} | {fmt(s.get('chars_to_answer_median'), 'chars')} | "
            f"{fmt(s.get('follow_up_cases'))} | {fmt(s.get('found_first_search'))} | "
            f"{fmt(s.get('found_within_two_searches'))} | {fmt(s.get('chars_within_two_mean'), 'chars')} |"
        )
    return lines
