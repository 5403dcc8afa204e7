"""Fix every launch SGLang refused, and ask SGLang again.

    /tmp/venv-sglang/bin/python scripts/conformance/sglang_check_fixes.py --release 0.5.23

Run with a Python that has flake8_replayssm installed; SGLang itself runs in the oracle
(``sglang_record.record``).  For each refused command-line record of
``tests/conformance/sglang/RELEASE.jsonl`` (both GPUs), the launch is written as a shell
line, fixed by ``replayssm-lint fix`` (safe, then ``--unsafe``) for that release and GPU,
and every launch the fix changed is recorded again.  The result,
``tests/conformance/sglang/fixes-RELEASE.jsonl``, holds the fixed argv, the codes the linter
still reports, and SGLang's new outcome; tests/test_sglang_conformance.py replays it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import sglang_record  # noqa: E402

HEADS = {"serve": ["sglang", "serve"], "launch_server": ["python3", "-m", "sglang.launch_server"]}


def fixed_launches(records: list[dict[str, Any]], release: str, gpu: str) -> list[dict[str, Any]]:
    from flake8_replayssm.config import LintConfig
    from flake8_replayssm.fix.codemod import FAILING_CODES, fix_text
    from flake8_replayssm.lint import lint_text

    out = []
    with tempfile.TemporaryDirectory() as work:
        for record in records:
            if record["gpu"] != gpu or record["outcome"] == "ok" or record["files"] or record["env"]:
                continue
            for folder, config in record["models"].items():
                os.makedirs(os.path.join(work, folder), exist_ok=True)
                with open(os.path.join(work, folder, "config.json"), "w", encoding="utf-8") as fh:
                    json.dump(config, fh)
            head = HEADS[record["entry"]]
            text = shlex.join(head + record["argv"]) + "\n"
            path = os.path.join(work, "serve.sh")
            config = LintConfig(sglang_version=release, gpu=gpu)
            for unsafe in (False, True):
                outcome = fix_text(text, "shell", config, path=path, unsafe=unsafe)
                if outcome.error or outcome.text == text:
                    continue
                words = shlex.split(outcome.text)
                left = sorted({f.code for f in lint_text(outcome.text, "shell", config, path=path).findings})
                out.append({"id": f"{record['id']}-{'unsafe' if unsafe else 'safe'}", "entry": record["entry"],
                            "argv": words[len(head):], "env": {}, "files": {}, "before": record["argv"],
                            "fixed": outcome.fixed, "linter_left": left,
                            "linter_refuses": sorted(FAILING_CODES.intersection(left))})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", required=True)
    ap.add_argument("--oracle-dir", default="/work/cache/sglang-oracle")
    ns = ap.parse_args()
    source = os.path.join(REPO, "tests", "conformance", "sglang", f"{ns.release}.jsonl")
    with open(source, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    results = []
    for gpu in sglang_record.GPUS:
        launches = fixed_launches(records, ns.release, gpu)
        asked = sglang_record.record(ns.release, gpu, launches, ns.oracle_dir)
        for launch, answer in zip(launches, asked):
            results.append(dict(launch, release=ns.release, gpu=gpu, outcome=answer["outcome"],
                                models=answer["models"]))
    out = os.path.join(REPO, "tests", "conformance", "sglang", f"fixes-{ns.release}.jsonl")
    with open(out, "w", encoding="utf-8") as fh:
        for rec in results:
            fh.write(json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n")
    clean = [r for r in results if not r["linter_refuses"]]
    accepted = sum(1 for r in clean if r["outcome"] == "ok")
    print(f"{ns.release}: {len(results)} fixed launches; {len(clean)} lint clean, SGLang accepted {accepted} of "
          f"them -> {out}")


if __name__ == "__main__":
    main()
