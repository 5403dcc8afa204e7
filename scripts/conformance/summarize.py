"""Summaries of recorded conformance files (no vLLM needed).

    python scripts/conformance/summarize.py tests/conformance/*.jsonl
    python scripts/conformance/summarize.py --messages tests/conformance/0.33.0.jsonl
    python scripts/conformance/summarize.py --diff 0.32.0 0.33.0   # outcome changes by id
    python scripts/conformance/summarize.py --show grid-0000 tests/conformance/*.jsonl
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "tests", "conformance")


def load(path: str) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def key(rec: dict) -> str:
    o = rec["outcome"]
    return "ok" if o == "ok" else f"{o['stage']}: {o['error']}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--messages", action="store_true", help="histogram of errors")
    ap.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"), help="releases to compare")
    ap.add_argument("--show", help="print one launch id from every file")
    args = ap.parse_args()

    if args.diff:
        a, b = (os.path.join(CORPUS, f"{r}.jsonl") for r in args.diff)
        ra = {r["id"]: r for r in load(a)}
        rb = {r["id"]: r for r in load(b)}
        changes = collections.Counter()
        for i, r in rb.items():
            if i in ra and key(ra[i]) != key(r):
                changes[(key(ra[i]), key(r))] += 1
        for (x, y), n in changes.most_common():
            print(f"{n:5d}  {x}\n       -> {y}")
        return 0

    for path in args.files:
        recs = load(path)
        if args.show:
            for r in recs:
                if r["id"] == args.show:
                    print(json.dumps(r, indent=1, sort_keys=True))
            continue
        stages = collections.Counter(
            "ok" if r["outcome"] == "ok" else r["outcome"]["stage"] for r in recs)
        print(f"{os.path.basename(path)}: {len(recs)} records, "
              f"{os.path.getsize(path) / 1e6:.2f} MB, {dict(sorted(stages.items()))}")
        if args.messages:
            msgs = collections.Counter(key(r) for r in recs)
            for m, n in msgs.most_common():
                print(f"  {n:5d}  {m[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
