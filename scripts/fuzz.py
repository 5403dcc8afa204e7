"""The longer fuzz run behind tests/test_hostile.py: random hostile texts through lint and fix.

    python scripts/fuzz.py [--seconds 600] [--seed 1] [--max-case-seconds 10]
    python scripts/fuzz.py --replay fuzz-failures/case-1-17.yaml   # one saved case again

Cases are mutations of the bundled fixtures (byte deletions, insertions of quotes,
brackets, escapes, NULs, control characters, invalid UTF-8) and generated shapes
(deep nesting, long operator chains, long lines, many launches; and the shapes of issue
20 that once grew faster than linearly: long runs of braces, spaces, template actions and
``case`` arms, many notebook cells, documents nested in block scalars, blank-line runs,
BuildKit flags, many ENVs and RUNs) for every file kind, and hostile trees (folders
thousands of levels deep, file names that look like options, hold newlines, terminal
escapes, workflow commands or bytes that are not UTF-8) run through the CLI's check (every
output format) and ``fix --diff``.  Each case runs in a worker process; the parent watches
it, so a crash (a segfault in a native parser), an exception, a case slower than
``--max-case-seconds``, a fix that does not converge or a CLI run that ends in an internal
error is reported with the case written to ``fuzz-failures/`` for replay.  Exit 1 when
anything failed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

KIND_OF = {".py": "python", ".sh": "shell", ".sbatch": "shell", ".yaml": "yaml", ".yml": "yaml",
           ".ipynb": "notebook", ".md": "markdown", ".dockerfile": "dockerfile", ".tree": "tree"}
NOISE = [b'"', b"'", b"\\", b"{", b"}", b"[", b"]", b"(", b")", b"\n", b"\x00", b"\x1b[2J", b"\xff\xfe",
         b"$(", b"${X:-", b"<<EOF\n", b"```", b"--", b"=", b"\t", b"\xe9", b"\r\n", b" # noqa", b"*"]
LAUNCH = "vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm --mamba-backend flashinfer"


def generated(rng: random.Random) -> tuple[str, bytes]:
    """A shape that once broke a parser: nesting, chains, long lines, many launches."""
    n = rng.choice([50, 150, 400, 1500, 8000])
    shapes = [
        ("python", f'from vllm import LLM\nLLM("m", use_replayssm=True)\nx = {"[" * n}{"]" * n}\n'),
        ("python", f'from vllm import LLM\nLLM("m", use_replayssm=True)\nx = {"+".join(["1"] * n)}\n'),
        ("python", f'from vllm import LLM\nLLM("m", use_replayssm=True)\nx = {"-" * n}1\n'),
        ("shell", f"{'$(' * (n // 10)}{LAUNCH}{')' * (n // 10)}\n"),
        ("shell", "".join(f"{'  ' * i}if true; then\n" for i in range(n // 20)) + LAUNCH + "\n"),
        ("shell", (LAUNCH + " \\\n  --port 1") * (n // 50 + 1) + "\n"),
        ("yaml", "a: " + "[" * n + "]" * n + f"\nargs: [{LAUNCH.replace(' ', ', ')}]\n"),
        ("yaml", "a0: &a0 [--use-replayssm]\n"  # an alias bomb: each level doubles the last
         + "".join(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]\n" for i in range(1, min(n, 30)))),
        ("notebook", json.dumps({"cells": [{"cell_type": "code", "source": "!" + LAUNCH}] * (n // 10 + 1)})),
        ("markdown", "```bash\n" + (LAUNCH + "\n") * (n // 10 + 1) + "```\n"),
    ] + linear_shapes(rng, n * 10)
    kind, text = rng.choice(shapes)
    return kind, text.encode()


def nested_blocks(depth: int) -> str:
    """Manifests written in block scalars of manifests, ``depth`` levels down."""
    lines = []
    for level in range(depth):
        pad = "    " * level
        lines += [f"{pad}containers:", f"{pad}- command: [sh, -c, '{LAUNCH}']", f"{pad}  image: x",
                  f"{pad}  next: |"]
    return "\n".join(lines + ["    " * depth + "x: 1"]) + "\n"


def linear_shapes(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """Shapes whose work once grew faster than their size (issue 20): each must stay within
    ``--max-case-seconds`` at any of the sizes drawn."""
    args = ", ".join(LAUNCH.split())
    return [
        ("shell", f"{LAUNCH} " + "{" * n + "\n"),
        ("shell", f"{LAUNCH}" + " " * n + "--port 1\n"),
        ("shell", "case $X in\n" + "".join(f"  a{i}) B=b{i} ;;\n" for i in range(n // 20))
         + f"esac\n{LAUNCH} --x $B\n"),
        ("shell", "if a; then M=x\n" + "".join(f"elif b{i}; then M=m{i}\n" for i in range(n // 20)) + "fi\n"
         + LAUNCH.replace("nvidia/NVIDIA-Nemotron-Nano-9B-v2", "$M") + "\n"),
        ("yaml", f"args: [{args}]\nx: '" + "{" * n + "'\n"),
        ("yaml", f"args: [{args}]\nx: " + "{{ " * (n // 3) + "\n"),
        ("yaml", "jobs:\n  a:\n    steps:\n    - run: " + LAUNCH + " " + "${{ " * (n // 4) + "\n"),
        ("yaml", "guide: |\n  vllm\n" + "\n" * n + f"  x\nargs: [{args}]\n"),
        ("yaml", nested_blocks(rng.choice([3, 9, 30, 120]))),
        ("notebook", json.dumps({"cells": [{"cell_type": "code", "source": "x = 1\n"}] * (n // 10)
                                 + [{"cell_type": "code", "source": "!" + LAUNCH}], "metadata": {}})),
        ("markdown", "```\n" + "\n" * min(n, 5000) + f"x\n```\n\n```bash\n{LAUNCH}\n```\n"),
        ("dockerfile", "FROM x\n" + "".join(f"ENV A{i}=x\n" for i in range(n // 20))
         + "".join(f"RUN echo $A{i}\n" for i in range(n // 20)) + f"CMD {LAUNCH}\n"),
        ("dockerfile", "FROM x\nRUN " + "--a" * min(n, 5000) + f"\nCMD {LAUNCH}\n"),
    ]


#: file names a pull request may add: options, line breaks, terminal escapes, workflow
#: commands, bytes that are not UTF-8 (written with surrogateescape)
HOSTILE_NAMES = ["--ignore=RSM.sh", "--exclude=*.sh", "-.sh", "a\nb.sh", "\x1b[2Jx.sh", "::stop-commands::x.sh",
                 "%0A::error::x.sh", "\u202ex.sh", b"\xff\xfe.sh".decode("utf-8", "surrogateescape"), " .sh", "é.sh"]


def tree_case(rng: random.Random) -> tuple[str, bytes]:
    """A hostile tree, as the JSON spec :func:`run_tree` builds it from."""
    spec = {"depth": rng.choice([1, 40, 300, 1500]),
            "names": rng.sample(range(len(HOSTILE_NAMES)), rng.randint(1, len(HOSTILE_NAMES)))}
    return "tree", json.dumps(spec).encode()


def run_tree(data: bytes) -> str | None:
    """Build the tree, then check it in every format and ``fix --diff`` it; a problem as text, or None."""
    from flake8_replayssm.cli import main

    spec = json.loads(data)
    with tempfile.TemporaryDirectory(prefix="replayssm-fuzz-") as root:
        os.mkdir(os.path.join(root, ".git"))
        deep = os.path.join(root, *(["d"] * spec["depth"]))
        os.makedirs(deep)
        with open(os.path.join(deep, "serve.sh"), "w") as fh:
            fh.write(LAUNCH + "\n")
        for k in spec["names"]:
            with open(os.path.join(root, HOSTILE_NAMES[k]), "w") as fh:
                fh.write(LAUNCH + "\n")
        here = os.getcwd()
        os.chdir(root)
        try:
            for args in (["check", "--format", "json", "."], ["check", "--format", "sarif", "."],
                         ["check", "--format", "github", "."], ["check", "."], ["fix", "--diff", "."]):
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = main(args)
                if code not in (0, 1) or "internal error" in err.getvalue():
                    return f"{' '.join(args)}: exit {code}: {err.getvalue()[-500:]}"
                if args[2:3] in (["json"], ["sarif"]):
                    json.loads(out.getvalue())
        except Exception:
            return traceback.format_exc(limit=8)
        finally:
            os.chdir(here)
    return None


def mutated(rng: random.Random, fixtures: list[Path]) -> tuple[str, bytes]:
    path = rng.choice(fixtures)
    data = bytearray(path.read_bytes())
    for _ in range(rng.randint(1, 12)):
        pos = rng.randrange(len(data) or 1)
        op = rng.random()
        if op < 0.35 and data:
            del data[pos:pos + rng.randint(1, 40)]
        elif op < 0.85:
            data[pos:pos] = rng.choice(NOISE) * rng.randint(1, 3)
        else:
            data[pos:pos] = data[:rng.randint(0, 400)]  # a repeated head
    return KIND_OF.get(path.suffix, "shell"), bytes(data)


def run_case(kind: str, data: bytes) -> str | None:
    """Lint and fix one case (or check a hostile tree); a problem as text, or None."""
    if kind == "tree":
        return run_tree(data)
    from flake8_replayssm.config import LintConfig
    from flake8_replayssm.files import decode
    from flake8_replayssm.fix.codemod import fix_text
    from flake8_replayssm.lint import lint_text

    config = LintConfig(vllm_version="0.33.0", enable=("RSM201",))
    text = decode(data, kind).text
    try:
        lint_text(text, kind, config, path=f"fuzz.{kind}")
        once = fix_text(text, kind, config, unsafe=True)
        twice = fix_text(once.text, kind, config, unsafe=True)
    except Exception:
        return traceback.format_exc(limit=8)
    if twice.text != once.text:
        return "fix does not converge: a second run changes the text again"
    return None


def _worker(kind: str, data: bytes, queue: multiprocessing.Queue) -> None:
    queue.put(run_case(kind, data))


def _watch(context: Any, kind: str, data: bytes, seconds: float) -> str | None:
    """Run one case in a worker process; the problem it had (None: none)."""
    queue: multiprocessing.Queue = context.Queue()
    child = context.Process(target=_worker, args=(kind, data, queue))
    child.start()
    child.join(seconds)
    if child.is_alive():
        child.kill()
        child.join()
        return f"slower than {seconds} s"
    if child.exitcode != 0:
        return f"the process died (exit code {child.exitcode}: a crash in native code?)"
    return queue.get() if not queue.empty() else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-case-seconds", type=float, default=10)
    ap.add_argument("--out", default="fuzz-failures")
    ap.add_argument("--replay", metavar="CASE", help="run one saved case (its suffix is its kind) and exit")
    args = ap.parse_args()
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    if args.replay:
        case = Path(args.replay)
        kind = case.suffix[1:] if case.suffix[1:] in set(KIND_OF.values()) else KIND_OF.get(case.suffix, "shell")
        problem = _watch(context, kind, case.read_bytes(), args.max_case_seconds)
        print(f"FAIL {case}: {problem}" if problem else f"ok {case}")
        return 1 if problem else 0
    rng = random.Random(args.seed)
    fixtures = [p for p in (REPO / "fixtures").rglob("*") if p.is_file()]
    started, cases, failures = time.monotonic(), 0, 0
    while time.monotonic() - started < args.seconds:
        draw = rng.random()
        kind, data = tree_case(rng) if draw < 0.05 else generated(rng) if draw < 0.35 else mutated(rng, fixtures)
        t0 = time.monotonic()
        problem = _watch(context, kind, data, args.max_case_seconds)
        cases += 1
        if problem:
            failures += 1
            out = Path(args.out)
            out.mkdir(exist_ok=True)
            name = out / f"case-{args.seed}-{cases}.{kind}"
            name.write_bytes(data)
            print(f"FAIL {name} ({time.monotonic() - t0:.1f} s): {problem}", file=sys.stderr)
    print(f"{cases} cases in {time.monotonic() - started:.0f} s, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
