"""Trust findings on real corpora: every finding `docs-mcp validate` would report, per corpus, to judge by hand.

Each argument is a docs folder; it is chunked as a build would and every chunk is scanned with
the built-in rules (and the folder's manifests). Files the chunker does not read (for example
reStructuredText before dialect support) are scanned whole with `--whole-files GLOB`. A docs
website is checked by staging it: `docs-mcp validate --url URL` prints the same findings.

    .venv/bin/python benchmarks/trust_corpora.py ../shared/corpora/uv-docs examples/parcelly-docs
    .venv/bin/python benchmarks/trust_corpora.py ../shared/corpora/requests-docs/docs --whole-files '*.rst'
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from docs_mcp_core.indexing.chunks import analyze_corpus  # noqa: E402
from docs_mcp_core.indexing.quarantine import trust_diagnostics  # noqa: E402
from docs_mcp_core.trust.scan import scan  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--whole-files", default=None, help="also scan files matching this glob, each as one text")
    args = parser.parse_args()
    total = 0
    for folder in args.folders:
        start = time.perf_counter()
        chunkset = analyze_corpus(folder)
        chunks = chunkset.chunk_count + sum(chunkset.quarantined.values())
        found = [d.format() for d in trust_diagnostics(chunkset.flags())]
        whole = sorted(folder.rglob(args.whole_files)) if args.whole_files else []
        for path in whole:
            for f in scan(path.read_text(encoding="utf-8", errors="replace")):
                found.append(f"{path.relative_to(folder)}:{f.line}: {f.severity}: {f.describe()}")
        total += len(found)
        extra = f" and {len(whole)} whole files" if whole else ""
        print(f"{folder}: {chunks} chunks{extra}, {len(found)} finding(s) ({time.perf_counter() - start:.1f} s)")
        for line in found:
            print(f"  {line}")
    print(f"{total} finding(s) in all")


if __name__ == "__main__":
    main()
