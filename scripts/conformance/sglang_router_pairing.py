"""Which sglang-router releases import with which SGLang release: the evidence behind
``sglang_oracle.ROUTERS``.

    python3 scripts/conformance/sglang_router_pairing.py [--oracle-dir /work/cache/sglang-oracle] \
        [--routers 0.2.0 0.3.2 ...] [--releases 0.5.19 0.5.20 ...]

``python -m sglang_router.launch_server`` imports SGLang at module level (``ServerArgs``,
``is_port_available``, in older routers the HTTP server): a pair whose imports fail never
reads an argument.  For each router release (installed in ``DIR/router-VERSION`` with the
oracle venv's pip when missing) the script reads those module-level imports from its
``launch_server.py``, and for each SGLang release runs every distinct statement in one child
process with the oracle's environment (``sglang_oracle.oracle_env``), then prints per pair
``imports`` or every statement that fails, with its error.  An error about a module the
oracle stands in for or leaves out (``soundfile``...) is the oracle's, not the pair's: the
table shows the statement, so such a row is read by the other statements.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import sglang_oracle  # noqa: E402

CHILD = r"""
import json, sys
out = {}
for statement in json.load(sys.stdin):
    try:
        exec(statement, {})
        out[statement] = None
    except BaseException as exc:  # the first line of the error: "cannot import name ..."
        out[statement] = f"{type(exc).__name__}: " + (str(exc).splitlines() or [""])[0].split(" (/")[0]
print(json.dumps(out))
"""


def install(oracle_dir: str, version: str) -> str:
    folder = os.path.join(oracle_dir, f"router-{version}")
    if not os.path.isfile(os.path.join(folder, "sglang_router", "launch_server.py")):
        pip = os.path.join(oracle_dir, "venv", "bin", "pip")
        subprocess.run([pip, "install", "-q", "--no-deps", "--target", folder, f"sglang-router=={version}"],
                       check=True)
    return folder


def sglang_imports(folder: str) -> list[str]:
    """The module-level statements of the router's launch_server.py that import SGLang."""
    with open(os.path.join(folder, "sglang_router", "launch_server.py"), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    out = []
    for node in tree.body:
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
            [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if any(name == "sglang" or name.startswith("sglang.") for name in names):
            out.append(ast.unparse(node))
    return out


def probe(release: str, oracle_dir: str, statements: list[str]) -> dict[str, str | None]:
    """{statement: None (imports) or its error} under SGLang ``release``."""
    env = sglang_oracle.oracle_env(release, oracle_dir, "hopper")
    python = os.path.join(oracle_dir, "venv", "bin", "python")
    proc = subprocess.run([python, "-c", CHILD], input=json.dumps(statements), env=env, cwd=oracle_dir,
                          capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"{release}: the probe failed:\n{proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oracle-dir", default="/work/cache/sglang-oracle")
    ap.add_argument("--routers", nargs="+", default=sorted(set(sglang_oracle.ROUTERS.values())))
    ap.add_argument("--releases", nargs="+", default=list(sglang_oracle.RELEASES + sglang_oracle.POST_RELEASES))
    ns = ap.parse_args()
    statements = {v: sglang_imports(install(ns.oracle_dir, v)) for v in ns.routers}
    distinct = sorted({s for found in statements.values() for s in found})
    print("| SGLang | " + " | ".join(f"router {v}" for v in ns.routers) + " |")
    print("|---" * (len(ns.routers) + 1) + "|")
    for release in ns.releases:
        results = probe(release, ns.oracle_dir, distinct)
        cells = []
        for v in ns.routers:
            failing = [(s, results[s]) for s in statements[v] if results[s] is not None]
            cells.append("imports" if not failing else "; ".join(f"`{s}`: {e}" for s, e in failing))
        print(f"| {release} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
