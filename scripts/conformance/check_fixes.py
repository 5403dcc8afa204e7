"""Run fixed launches through vLLM itself: does `replayssm-lint fix` produce launches vLLM accepts?

For every launch of ``tests/conformance/RELEASE.jsonl`` that vLLM rejected
(``outcome != "ok"``), twice (safe fixes, then ``--unsafe``):

1. write it as a one-line shell script ``VAR=... vllm serve ...`` in a fresh
   folder, with its ``--config`` files and a ``pyproject.toml`` that pins the
   release and names the tiny model directories' architectures
   (``extra-models``), so the linter judges what the recorder ran;
2. run ``replayssm-lint fix [--unsafe] FOLDER`` (the CLI's ``main``, in this
   process) -- the script and the ``--config`` YAMLs are fixed;
3. read the fixed command line back (``shlex``: leading ``VAR=VALUE`` words are
   the environment, then ``vllm``, then vLLM's argv) and the fixed files, and
   lint the folder again (``check --format json``) for what is left;
4. run every launch that changed through the release's own parser and
   ``create_engine_config`` (``record.py``'s ``Oracle``, in the oracle venv), and
5. write one JSON line per launch and mode to ``tests/conformance/fixes-RELEASE.jsonl``.

Usage (the oracle environment as made by ``setup_env.sh``)::

    python3 scripts/conformance/check_fixes.py --release 0.33.0
        [--python /tmp/vllm-oracle/venv/bin/python] [--vllm-dir /tmp/vllm-oracle/vllm-0.33.0]
        [--out tests/conformance/fixes-0.33.0.jsonl] [--only REGEX] [--limit N]

Launches the fix did not change are recorded with their original outcome and
are not run again.  ``tests/test_fix_conformance.py`` replays the file without vLLM.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SCRIPT = "launch.sh"
_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


# ---------------------------------------------------------------------------
# the linter side (this interpreter)
# ---------------------------------------------------------------------------

def shell_line(argv: list[str], env: dict[str, str]) -> str:
    words = [f"{k}={shlex.quote(v)}" for k, v in env.items()] + ["vllm"] + [shlex.quote(w) for w in argv]
    return " ".join(words)


def read_line(text: str) -> tuple[list[str], dict[str, str]] | None:
    """(argv after ``vllm``, environment) of the script's command line."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if len(lines) != 1:
        return None
    words = shlex.split(lines[0])
    env: dict[str, str] = {}
    while words and _ENV_WORD.match(words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if words[:1] == ["env"]:  # `env VAR=0 vllm ...`
        words.pop(0)
        while words and _ENV_WORD.match(words[0]):
            key, _, value = words.pop(0).partition("=")
            env[key] = value
    if not words or words[0] != "vllm":
        return None
    return words[1:], env


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a TOML basic string


def write_folder(folder: str, record: dict[str, Any]) -> None:
    models = ", ".join(f"{_toml_string(k)} = {_toml_string(v)}"
                       for k, v in sorted(record.get("model_arch", {}).items()))
    with open(os.path.join(folder, "pyproject.toml"), "w", encoding="utf-8") as fh:
        fh.write("[tool.flake8-replayssm]\n"
                 f"vllm-version = {_toml_string(record['release'])}\n"
                 f"extra-models = {{{models}}}\n")
    for rel, text in record.get("files", {}).items():
        full = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(os.path.join(folder, SCRIPT), "w", encoding="utf-8") as fh:
        fh.write("#!/bin/sh\n" + shell_line(record["argv"], record.get("env", {})) + "\n")


def _cli(args: list[str]) -> tuple[int, str, str]:
    from flake8_replayssm import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    return code, out.getvalue(), err.getvalue()


def lint_codes(folder: str) -> list[str]:
    code, out, err = _cli(["check", "--format", "json", os.path.join(folder, SCRIPT)])
    if code == 2:
        raise RuntimeError(f"check failed in {folder}: {err}")
    return sorted({f["code"] for f in json.loads(out or "[]")})


def fix_one(record: dict[str, Any], unsafe: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="replayssm-fixcheck-") as folder:
        write_folder(folder, record)
        codes_before = lint_codes(folder)
        args = ["fix"] + (["--unsafe"] if unsafe else []) + [folder]
        status, said, _ = _cli(args)
        fixed = sorted({c.split(" x")[0].strip() for m in re.finditer(r"^fixed .*?: (RSM.*)$", said, re.M)
                        for c in m.group(1).split(",") if c.strip()})
        with open(os.path.join(folder, SCRIPT), encoding="utf-8") as fh:
            parsed = read_line(fh.read())
        files_after = {}
        for rel in record.get("files", {}):
            with open(os.path.join(folder, rel), encoding="utf-8") as fh:
                files_after[rel] = fh.read()
        codes_after = lint_codes(folder)
    out = {
        "release": record["release"], "id": record["id"], "mode": "unsafe" if unsafe else "safe",
        "argv_before": record["argv"], "env_before": record.get("env", {}),
        "files": record.get("files", {}), "model_arch": record.get("model_arch", {}),
        "outcome_before": record["outcome"], "codes_before": codes_before,
        "fix_status": status, "fixed_codes": fixed,
    }
    if parsed is None:
        out.update(argv_after=None, env_after=None, files_after=files_after, codes_after=codes_after,
                   changed=True, outcome_after={"stage": "fix", "error": "unreadable fixed line"})
        return out
    argv_after, env_after = parsed
    changed = argv_after != record["argv"] or env_after != record.get("env", {}) \
        or files_after != record.get("files", {})
    out.update(argv_after=argv_after, env_after=env_after, files_after=files_after,
               codes_after=codes_after, changed=changed)
    if not changed:
        out["outcome_after"] = record["outcome"]
    return out


# ---------------------------------------------------------------------------
# the vLLM side (the oracle venv): --oracle-run IN OUT
# ---------------------------------------------------------------------------

def oracle_run(release: str, vllm_dir: str, in_path: str, out_path: str) -> int:
    sys.path.insert(0, HERE)
    import record  # noqa: E402  (scripts/conformance/record.py)

    with open(in_path, encoding="utf-8") as fh:
        launches = json.load(fh)
    work = record.prepare_oracle(vllm_dir, [])
    import logging

    logging.disable(logging.WARNING)
    import vllm

    if not os.path.abspath(vllm.__file__).startswith(os.path.abspath(vllm_dir)):
        raise SystemExit(f"imported vllm from {vllm.__file__}, not from {vllm_dir}")
    oracle = record.Oracle(release)
    results = {}
    t0 = time.time()
    for i, launch in enumerate(launches):
        for rel, text in launch["files"].items():  # this launch's (fixed) files
            os.makedirs(os.path.dirname(os.path.join(work, rel)) or ".", exist_ok=True)
            with open(os.path.join(work, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        try:
            rec = oracle.run(launch)
            outcome = rec["outcome"]
        except BaseException as exc:  # never lose the batch
            if isinstance(exc, KeyboardInterrupt):
                raise
            outcome = {"stage": "recorder", "error": record.error_text(exc), "exc": type(exc).__name__}
        results[launch["id"]] = outcome
        if (i + 1) % 100 == 0:
            print(f"[oracle {release}] {i + 1}/{len(launches)} {time.time() - t0:.0f}s", file=sys.stderr)
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(results, fh)
    return 0


# ---------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--release", default="0.33.0")
    ap.add_argument("--python", default="/tmp/vllm-oracle/venv/bin/python", help="the oracle venv's Python")
    ap.add_argument("--vllm-dir", help="default /tmp/vllm-oracle/vllm-RELEASE")
    ap.add_argument("--out", help="default tests/conformance/fixes-RELEASE.jsonl")
    ap.add_argument("--only", help="regex on launch ids")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--oracle-run", nargs=2, metavar=("IN", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    vllm_dir = os.path.abspath(args.vllm_dir or f"/tmp/vllm-oracle/vllm-{args.release}")
    if args.oracle_run:
        return oracle_run(args.release, vllm_dir, *args.oracle_run)

    sys.path.insert(0, REPO)
    source = os.path.join(REPO, "tests", "conformance", f"{args.release}.jsonl")
    out_path = os.path.abspath(args.out or os.path.join(REPO, "tests", "conformance",
                                                        f"fixes-{args.release}.jsonl"))
    with open(source, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    rejected = [r for r in records if r["outcome"] != "ok"]
    if args.only:
        rejected = [r for r in rejected if re.search(args.only, r["id"])]
    if args.limit:
        rejected = rejected[:args.limit]

    t0 = time.time()
    results = [fix_one(r, unsafe) for unsafe in (False, True) for r in rejected]
    print(f"[fix {args.release}] {len(results)} fixes of {len(rejected)} rejected launches in "
          f"{time.time() - t0:.0f}s; {sum(r['changed'] for r in results)} changed", file=sys.stderr)

    todo = [r for r in results if r["changed"] and r["argv_after"] is not None]
    launches = [{"id": f"{r['id']}/{r['mode']}", "argv": r["argv_after"], "env": r["env_after"],
                 "files": r["files_after"]} for r in todo]
    if launches:
        with tempfile.TemporaryDirectory(prefix="replayssm-fixcheck-") as tmp:
            in_path, res_path = os.path.join(tmp, "in.json"), os.path.join(tmp, "out.json")
            with open(in_path, "w", encoding="utf-8") as fh:
                json.dump(launches, fh)
            subprocess.run([args.python, os.path.abspath(__file__), "--release", args.release,
                            "--vllm-dir", vllm_dir, "--oracle-run", in_path, res_path],
                           check=True, cwd=tmp)
            with open(res_path, encoding="utf-8") as fh:
                outcomes = json.load(fh)
        for r in todo:
            r["outcome_after"] = outcomes[f"{r['id']}/{r['mode']}"]

    tmp_out = out_path + ".tmp"
    with open(tmp_out, "w", encoding="utf-8") as fh:
        for r in results:
            fh.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")
    os.replace(tmp_out, out_path)
    for mode in ("safe", "unsafe"):
        changed = [r for r in results if r["mode"] == mode and r["changed"]]
        ok = [r for r in changed if r["outcome_after"] == "ok"]
        print(f"[{args.release} {mode}] {len(changed)} fixed launches run through vLLM, "
              f"{len(ok)} accepted", file=sys.stderr)
    print(f"wrote {len(results)} records to {out_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
