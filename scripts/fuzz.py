"""The longer fuzz run behind tests/test_hostile.py: random hostile texts through lint and fix.

    python scripts/fuzz.py [--seconds 600] [--seed 1] [--max-case-seconds 10]

Cases are mutations of the bundled fixtures (byte deletions, insertions of quotes,
brackets, escapes, NULs, control characters, invalid UTF-8) and generated shapes
(deep nesting, long operator chains, long lines, many launches) for every file kind.
Each case is linted and fixed in a worker process; the parent watches it, so a
crash (a segfault in a native parser), an exception, a case slower than
``--max-case-seconds`` or a fix that does not converge is reported with the case
written to ``fuzz-failures/`` for replay.  Exit 1 when anything failed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

KIND_OF = {".py": "python", ".sh": "shell", ".sbatch": "shell", ".yaml": "yaml", ".yml": "yaml",
           ".ipynb": "notebook", ".md": "markdown"}
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
    ]
    kind, text = rng.choice(shapes)
    return kind, text.encode()


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
    """Lint and fix one case; a problem as text, or None."""
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-case-seconds", type=float, default=10)
    ap.add_argument("--out", default="fuzz-failures")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    fixtures = [p for p in (REPO / "fixtures").rglob("*") if p.is_file()]
    started, cases, failures = time.monotonic(), 0, 0
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    while time.monotonic() - started < args.seconds:
        kind, data = generated(rng) if rng.random() < 0.3 else mutated(rng, fixtures)
        queue: multiprocessing.Queue = context.Queue()
        child = context.Process(target=_worker, args=(kind, data, queue))
        t0 = time.monotonic()
        child.start()
        child.join(args.max_case_seconds)
        problem = None
        if child.is_alive():
            child.kill()
            child.join()
            problem = f"slower than {args.max_case_seconds} s"
        elif child.exitcode != 0:
            problem = f"the process died (exit code {child.exitcode}: a crash in native code?)"
        else:
            problem = queue.get() if not queue.empty() else None
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
