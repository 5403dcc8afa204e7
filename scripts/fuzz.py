"""The longer fuzz run behind tests/test_hostile.py: random hostile texts through lint and fix.

    python scripts/fuzz.py [--seconds 600] [--seed 1] [--max-case-seconds 10] [--kinds shell,fix]
    python scripts/fuzz.py --replay fuzz-failures/case-1-17.yaml   # one saved case again

Three families of cases, for every file kind the linter reads (Python, shell, Makefile,
Dockerfile, YAML, notebook, Markdown):

- **texts**: mutations of the bundled fixtures (byte deletions, insertions of quotes,
  brackets, escapes, NULs, control characters, invalid UTF-8) and generated shapes (deep
  nesting, long operator chains, long lines, many launches; and the shapes of issue 20 that
  once grew faster than linearly: long runs of braces, spaces, template actions, ``case``
  arms and ``elif`` branches, commands built step by step, many notebook cells, documents
  nested in block scalars, blank-line runs, BuildKit flags, many ENVs and RUNs), each linted
  and fixed twice in memory (the second fix must change nothing);
- **fix writes** (``fix``): a fixture, sometimes mutated, with CRLF line ends, a byte order
  mark, Latin-1 bytes or a ``coding`` declaration, written to a file with a random mode
  (setuid/setgid and read-only ones too), owner (as root), extended attribute, hard link,
  symlink inside the project or symlink out of it, then fixed by the real CLI (``fix``,
  sometimes ``--force``, sometimes as the file's non-root owner).  After it: the exit code
  is 0 or 1; the file is either as it was or exactly the fixed bytes, and then every line the
  fix did not edit is byte for byte the line that was read; mode, owner, group, extended
  attributes, the inode and every hard link are kept; a symlink is still the same symlink, a
  file out of the project untouched; no temporary file is left; a second ``fix`` changes
  nothing;
- **trees**: folders thousands of levels deep and file names that look like options, hold
  newlines, terminal escapes, workflow commands or bytes that are not UTF-8, run through
  the CLI's check (every output format), ``fix --diff`` and ``fix``.

Each case runs in a worker process forked from a parent that has imported the linter once;
the parent watches it, so a crash (a segfault in a native parser), an exception, a case
slower than ``--max-case-seconds``, a fix that does not converge, a broken invariant of a
fix write or a CLI run that ends in an internal error is reported with the case written to
``--out`` (``fuzz-failures/``) for ``--replay``.  The run ends with counts per family and
per kind of problem; exit 1 when anything failed.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import difflib
import io
import json
import multiprocessing
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

KINDS = ("python", "shell", "makefile", "dockerfile", "yaml", "notebook", "markdown")
#: the families of cases that are not one text (their saved file is the JSON spec)
SPECS = ("fix", "tree")
NOISE = [b'"', b"'", b"\\", b"{", b"}", b"[", b"]", b"(", b")", b"\n", b"\x00", b"\x1b[2J", b"\xff\xfe",
         b"$(", b"${X:-", b"<<EOF\n", b"```", b"--", b"=", b"\t", b"\xe9", b"\r\n", b" # noqa", b"*"]
LAUNCH = "vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm --mamba-backend flashinfer"
#: a file name per kind, for the cases written to disk
FILE_NAME = {"python": "launch.py", "shell": "serve.sh", "makefile": "Makefile", "dockerfile": "Dockerfile",
             "yaml": "deploy.yaml", "notebook": "serve.ipynb", "markdown": "README.md"}


# ---------------------------------------------------------------------------------------------
# texts
# ---------------------------------------------------------------------------------------------

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
        ("makefile", "serve:\n" + "".join(f"\tA{i}=x {LAUNCH} \\\n" for i in range(n // 20)) + "\t--port 1\n"),
        ("makefile", "F0 = --use-replayssm\n"  # each variable doubles the last
         + "".join(f"F{i} = $(F{i - 1}) $(F{i - 1})\n" for i in range(1, 40)) + f"s:\n\t{LAUNCH} $(F39)\n"),
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
    steps = n // 20
    return [
        ("shell", f"{LAUNCH} " + "{" * n + "\n"),
        ("shell", f"{LAUNCH}" + " " * n + "--port 1\n"),
        ("shell", "case $X in\n" + "".join(f"  a{i}) B=b{i} ;;\n" for i in range(steps))
         + f"esac\n{LAUNCH} --x $B\n"),
        ("shell", "if a; then M=x\n" + "".join(f"elif b{i}; then M=m{i}\n" for i in range(steps)) + "fi\n"
         + LAUNCH.replace("nvidia/NVIDIA-Nemotron-Nano-9B-v2", "$M") + "\n"),
        # (fixing Python goes through libcst, about 1 s per 1,000 lines: at most 3,000 lines here)
        ("python", "import subprocess\n" + "x = 1\n" * min(n, 2000) + f"c = '{LAUNCH}'\n"
         + "c += ' --port 1'\n" * min(steps, 1000) + "subprocess.run(c, shell=True)\n"),
        ("python", "import subprocess\n" + "x = 1\n" * min(n, 2000) + f"c = {LAUNCH.split()!r}\n"
         + "c.append('-x')\n" * min(steps, 1000) + "subprocess.run(c)\n"),
        ("yaml", f"args: [{args}]\nx: '" + "{" * n + "'\n"),
        ("yaml", f"args: [{args}]\nx: " + "{{ " * (n // 3) + "\n"),
        ("yaml", "jobs:\n  a:\n    steps:\n    - run: " + LAUNCH + " " + "${{ " * (n // 4) + "\n"),
        ("yaml", "guide: |\n  vllm\n" + "\n" * n + f"  x\nargs: [{args}]\n"),
        ("yaml", nested_blocks(rng.choice([3, 9, 30, 120]))),
        ("notebook", json.dumps({"cells": [{"cell_type": "code", "source": "x = 1\n"}] * (n // 10)
                                 + [{"cell_type": "code", "source": "!" + LAUNCH}], "metadata": {}})),
        ("markdown", "```\n" + "\n" * min(n, 5000) + f"x\n```\n\n```bash\n{LAUNCH}\n```\n"),
        ("dockerfile", "FROM x\n" + "".join(f"ENV A{i}=x\n" for i in range(steps))
         + "".join(f"RUN echo $A{i}\n" for i in range(steps)) + f"CMD {LAUNCH}\n"),
        ("dockerfile", "FROM x\nRUN " + "--a" * min(n, 5000) + f"\nCMD {LAUNCH}\n"),
    ]


def fixtures() -> list[tuple[str, Path]]:
    """The bundled fixtures with their kind, as the linter detects it (a ``Dockerfile.x`` is a
    Dockerfile, a ``Makefile`` a Makefile, a script with no suffix a shell script)."""
    from flake8_replayssm.lint import detect_kind

    out = []
    for path in sorted((REPO / "fixtures").rglob("*")):
        if path.is_file():
            kind = detect_kind(str(path), path.read_text(errors="replace"))
            if kind is not None:
                out.append((kind, path))
    return out


def mutate(rng: random.Random, data: bytes, edits: int) -> bytes:
    """``data`` with ``edits`` random deletions, noise insertions or repeated heads."""
    out = bytearray(data)
    for _ in range(edits):
        pos = rng.randrange(len(out) or 1)
        op = rng.random()
        if op < 0.35 and out:
            del out[pos:pos + rng.randint(1, 40)]
        elif op < 0.85:
            out[pos:pos] = rng.choice(NOISE) * rng.randint(1, 3)
        else:
            out[pos:pos] = out[:rng.randint(0, 400)]  # a repeated head
    return bytes(out)


def seed(rng: random.Random, seeds: list[tuple[str, Path]]) -> tuple[str, Path]:
    """A fixture: its kind drawn first, so that kinds with few fixtures are drawn as often."""
    kind = rng.choice(sorted({k for k, _ in seeds}))
    return rng.choice([s for s in seeds if s[0] == kind])


def mutated(rng: random.Random, seeds: list[tuple[str, Path]]) -> tuple[str, bytes]:
    kind, path = seed(rng, seeds)
    return kind, mutate(rng, path.read_bytes(), rng.randint(1, 12))


def run_text(kind: str, data: bytes) -> str | None:
    """Lint and fix one text twice; a problem as text, or None."""
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
        return "exception: " + traceback.format_exc(limit=8)
    if twice.text != once.text:
        return "fix does not converge: a second run changes the text again"
    return None


# ---------------------------------------------------------------------------------------------
# fix writes
# ---------------------------------------------------------------------------------------------

MODES = [0o644, 0o600, 0o640, 0o664, 0o755, 0o700, 0o444, 0o400, 0o2755, 0o4755, 0o6750, 0o1777]
LINKS = [None, None, "hard", "symlink", "outside"]
#: owners a file gets when the fuzz runs as root (uid, gid); the last runs the fix as that user
OWNERS = [None, (4242, 4243), (0, 4243)]


def fix_case(rng: random.Random, seeds: list[tuple[str, Path]]) -> tuple[str, bytes]:
    """A fixture (sometimes mutated, re-encoded) and how its file is written, as a JSON spec."""
    kind, path = seed(rng, seeds)
    data = path.read_bytes()
    if rng.random() < 0.3:
        data = mutate(rng, data, rng.randint(1, 3))
    for variant in rng.sample(["crlf", "bom", "latin1", "coding", "no-final-newline"], rng.randint(0, 2)):
        if variant == "crlf":
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        elif variant == "bom" and not data.startswith(b"\xef\xbb\xbf"):
            data = b"\xef\xbb\xbf" + data
        elif variant == "latin1":  # a Latin-1 byte on a line of its own, in a comment the kinds share
            lines = data.split(b"\n")
            lines.insert(rng.randrange(len(lines)), b"# caf\xe9 \xff")
            data = b"\n".join(lines)
        elif variant == "coding" and kind == "python":
            data = b"# -*- coding: latin-1 -*-\n" + data.replace(b"\xef\xbb\xbf", b"")
        elif variant == "no-final-newline":
            data = data.rstrip(b"\r\n")
    owner = rng.choice(OWNERS) if os.geteuid() == 0 else None
    spec = {"kind": kind, "data": data.decode("latin-1"), "mode": rng.choice(MODES), "link": rng.choice(LINKS),
            "xattr": rng.random() < 0.5, "owner": owner, "as_owner": bool(owner and owner[0] and rng.random() < 0.5),
            "force": rng.random() < 0.3, "unsafe": rng.random() < 0.5}
    return "fix", json.dumps(spec).encode()


def _state(path: str) -> dict[str, Any]:
    info = os.lstat(path)
    xattrs = {}
    if hasattr(os, "listxattr") and not stat.S_ISLNK(info.st_mode):
        with contextlib.suppress(OSError):
            xattrs = {a: os.getxattr(path, a) for a in os.listxattr(path)}
    return {"mode": stat.S_IMODE(info.st_mode), "uid": info.st_uid, "gid": info.st_gid, "ino": info.st_ino,
            "nlink": info.st_nlink, "xattrs": xattrs, "link": os.readlink(path) if stat.S_ISLNK(info.st_mode)
            else None}


def _cli(args: list[str]) -> tuple[int, str, str]:
    from flake8_replayssm.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def _untouched_lines(before: bytes, after: bytes, old_text: str, new_text: str, encoding: str) -> str | None:
    """Every line the fix did not edit (the text diff's equal lines) is, in the bytes written,
    the line that was read, byte for byte (line ends, a BOM, undecodable bytes included)."""
    if "\n".encode(encoding) != b"\n":
        return None  # UTF-16/32: lines are not cut at the byte 0x0A
    old_raw, new_raw = before.split(b"\n"), after.split(b"\n")
    old_lines, new_lines = old_text.split("\n"), new_text.split("\n")
    if len(old_raw) != len(old_lines) or len(new_raw) != len(new_lines):
        return "the decoded text does not have the file's lines"
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            continue
        for i, j in zip(range(i1, i2), range(j1, j2)):
            # the first line keeps the BOM, which the text does not have
            if old_raw[i] != new_raw[j]:
                return f"line {i + 1} was not edited but its bytes changed: {old_raw[i][:80]!r} -> {new_raw[j][:80]!r}"
    return None


def run_fix(data: bytes, workdir: str) -> str | None:
    """Write a file as the spec says, fix it with the CLI, and check what fix promises."""
    from flake8_replayssm.config import LintConfig
    from flake8_replayssm.files import decode
    from flake8_replayssm.fix.command import fix_file
    from flake8_replayssm.fix.writing import TEMP_PREFIX

    spec = json.loads(data)
    kind, content = spec["kind"], spec["data"].encode("latin-1")
    root = tempfile.mkdtemp(prefix="fix-", dir=workdir)
    project, outside = os.path.join(root, "project"), os.path.join(root, "outside")
    os.makedirs(os.path.join(project, ".git"))
    os.mkdir(outside)
    name = FILE_NAME[kind]
    real = os.path.join(outside if spec["link"] == "outside" else project, name)
    with open(real, "wb") as fh:
        fh.write(content)
    named = real
    if spec["link"] == "hard":
        os.link(real, os.path.join(project, "twin.bak"))
    elif spec["link"] in ("symlink", "outside"):
        named = os.path.join(project, "link-" + name)
        os.symlink(os.path.relpath(real, project), named)
    if spec["xattr"] and hasattr(os, "setxattr"):
        with contextlib.suppress(OSError):
            os.setxattr(real, "user.fuzz", b"kept")
    if spec["owner"]:
        os.chown(real, *spec["owner"])
        if spec["as_owner"]:
            for folder in (root, project, outside, os.path.join(project, ".git")):
                os.chown(folder, *spec["owner"])
    os.chmod(real, spec["mode"])
    before, state = content, _state(real)
    listing = sorted(os.listdir(project)), sorted(os.listdir(outside))
    config = LintConfig(vllm_version="0.33.0", project_root=Path(project))
    here = os.getcwd()
    os.chdir(project)
    try:
        # in memory, before the privileges are dropped (it imports what the run will need: the
        # interpreter's own files may not be readable by the file's owner)
        expected = fix_file(os.path.relpath(named, project), config, unsafe=spec["unsafe"])
        if spec["as_owner"]:
            os.chmod(workdir, 0o755)
            os.setgroups([])
            os.setgid(spec["owner"][1])
            os.setuid(spec["owner"][0])
        args = ["fix", "--vllm-version", "0.33.0"] + ["--unsafe"] * spec["unsafe"] + ["--force"] * spec["force"]
        code, out, err = _cli(args + ["--", os.path.relpath(named, project)])
        if code not in (0, 1) or "internal error" in err or "Traceback" in err:
            return f"fix: exit {code}: {(out + err)[-800:]}"
        after = open(real, "rb").read()
        if spec["link"] == "hard" and open(os.path.join(project, "twin.bak"), "rb").read() != after:
            return "the hard link and the file differ after the fix"
        problem = _fix_kept(spec, before, after, state, _state(real), expected, decode(before, kind), out)
        if problem is None and (sorted(os.listdir(project)), sorted(os.listdir(outside))) != listing:
            left = sorted(set(os.listdir(project)) - set(listing[0]))
            problem = f"files appeared or vanished: {left}" if not any(n.startswith(TEMP_PREFIX) for n in left) \
                else f"a temporary file was left: {left}"
        if problem is None and spec["link"] in ("symlink", "outside") and os.readlink(named) != \
                os.path.relpath(real, project):
            problem = "the symlink was replaced"
        if problem is None and after != before:  # fixed: a second fix changes nothing
            code, out, err = _cli(args + ["--", os.path.relpath(named, project)])
            if open(real, "rb").read() != after:
                problem = f"a second fix changed the file again: {out[-400:]}"
        return problem
    except Exception:
        return "exception: " + traceback.format_exc(limit=8)
    finally:
        os.chdir(here)


def _fix_kept(spec: dict[str, Any], before: bytes, after: bytes, old: dict[str, Any], new: dict[str, Any],
              expected: Any, decoded: Any, out: str) -> str | None:
    """What a fix write must keep (None: all of it)."""
    keep = ["mode", "uid", "gid", "xattrs"] + (["ino", "nlink"] if spec["link"] == "hard" else [])
    changed = {k: (old[k], new[k]) for k in keep if old[k] != new[k]}
    if changed:
        return f"the file's {', '.join(changed)} changed: {changed}"
    writable = bool(old["mode"] & stat.S_IWUSR or spec["force"])
    if after == before:
        if expected is not None and expected.changed and writable and spec["link"] != "outside":
            return f"the file was not fixed: {out[-400:]}"
        return None
    if spec["link"] == "outside":
        return "a file outside the project was written"
    if not writable:
        return "a read-only file was written without --force"
    if expected is None or not expected.changed:
        return "the file changed, but fixing it in memory changes nothing"
    want = expected.decoded.encode(expected.outcome.text)
    if after != want:
        return "the bytes written are not the fixed text"
    if "fixed " not in out:
        return "the file was fixed, but the run does not say so"
    return _untouched_lines(before, after, expected.outcome.original, expected.outcome.text, decoded.encoding)


# ---------------------------------------------------------------------------------------------
# trees
# ---------------------------------------------------------------------------------------------

#: file names a pull request may add: options, line breaks, terminal escapes, workflow
#: commands, bytes that are not UTF-8 (written with surrogateescape)
HOSTILE_NAMES = ["--ignore=RSM.sh", "--exclude=*.sh", "-.sh", "a\nb.sh", "\x1b[2Jx.sh", "::stop-commands::x.sh",
                 "%0A::error::x.sh", "\u202ex.sh", b"\xff\xfe.sh".decode("utf-8", "surrogateescape"), " .sh", "é.sh",
                 "--unsafe", "-\n::error::Dockerfile", "Makefile\r", "x.ipynb\x1b]8;;"]


def tree_case(rng: random.Random) -> tuple[str, bytes]:
    """A hostile tree, as the JSON spec :func:`run_tree` builds it from."""
    spec = {"depth": rng.choice([1, 40, 300, 1000]),  # tests/test_bounds.py checks 1,500 levels
            "names": rng.sample(range(len(HOSTILE_NAMES)), rng.randint(1, len(HOSTILE_NAMES)))}
    return "tree", json.dumps(spec).encode()


def run_tree(data: bytes, workdir: str) -> str | None:
    """Build the tree, then check it in every format, ``fix --diff`` and ``fix`` it; a problem
    as text, or None."""
    spec = json.loads(data)
    root = tempfile.mkdtemp(prefix="tree-", dir=workdir)
    os.mkdir(os.path.join(root, ".git"))
    deep = root
    for _ in range(spec["depth"]):  # one level at a time: os.makedirs recurses once per level
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    with open(os.path.join(deep, "serve.sh"), "w") as fh:
        fh.write(LAUNCH + "\n")
    names = [HOSTILE_NAMES[k] for k in spec["names"]]
    for name in names:
        with open(os.path.join(root, name), "w") as fh:
            fh.write(LAUNCH + "\n")
    here = os.getcwd()
    os.chdir(root)
    try:
        for args in (["check", "--format", "json", "."], ["check", "--format", "sarif", "."],
                     ["check", "--format", "github", "."], ["check", "."], ["fix", "--diff", "."], ["fix", "."]):
            code, out, err = _cli(args)
            if code not in (0, 1) or "internal error" in err:
                return f"{' '.join(args)}: exit {code}: {err[-500:]}"
            if args[2:3] in (["json"], ["sarif"]):
                json.loads(out)
        left = sorted(set(os.listdir(root)) - set(names) - {".git", "d"})
        if left:
            return f"fix left files behind: {left}"
        if not all(os.path.isfile(name) and not os.path.islink(name) for name in names):
            return "fix turned a file into something else"
    except Exception:
        return "exception: " + traceback.format_exc(limit=8)
    finally:
        os.chdir(here)
    return None


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------

def run_case(kind: str, data: bytes, workdir: str) -> str | None:
    """One case of any family; a problem as text, or None."""
    if kind == "tree":
        return run_tree(data, workdir)
    if kind == "fix":
        return run_fix(data, workdir)
    return run_text(kind, data)


#: wall-clock seconds a case may take per CPU second it may use (a busy shared machine)
WALL_PER_CPU = 6


def _worker(kind: str, data: bytes, workdir: str, seconds: float, queue: multiprocessing.Queue) -> None:
    """One case, limited to ``seconds`` of CPU time (the kernel ends it with SIGXCPU past it:
    a slow case is told from a busy machine)."""
    try:
        import resource
    except ImportError:  # not POSIX: the wall-clock bound alone
        pass
    else:  # a forked process starts with no CPU time used
        resource.setrlimit(resource.RLIMIT_CPU, (int(seconds) + 1, int(seconds) + 5))
    queue.put(run_case(kind, data, workdir))


def _watch(context: Any, kind: str, data: bytes, seconds: float) -> str | None:
    """Run one case in a worker process, in a folder of its own removed after it; the problem
    it had (None: none)."""
    import signal

    queue: multiprocessing.Queue = context.Queue()
    workdir = tempfile.mkdtemp(prefix="replayssm-fuzz-")
    child = context.Process(target=_worker, args=(kind, data, workdir, seconds, queue))
    try:
        child.start()
        child.join(seconds * WALL_PER_CPU)
        if child.is_alive():
            child.kill()
            child.join()
            return f"timeout: more than {seconds * WALL_PER_CPU:.0f} s of wall-clock time"
        if child.exitcode == -getattr(signal, "SIGXCPU", 0):
            return f"timeout: more than {seconds:.0f} s of CPU time"
        if child.exitcode != 0:
            return f"crash: the process died (exit code {child.exitcode}: a crash in native code?)"
        return queue.get(timeout=5)  # type: ignore[no-any-return]
    except Exception:  # the queue is empty: the worker ended without an answer
        return "crash: the worker ended without an answer"
    finally:
        _remove(workdir)


def _remove(folder: str) -> None:
    """Remove a case's folder, however deep (shutil.rmtree recurses once per level)."""
    if shutil.which("rm"):
        subprocess.run(["rm", "-rf", "--", folder], check=False)
    else:
        shutil.rmtree(folder, ignore_errors=True)


def _warm() -> None:
    """Import the linter and read its data once in the parent: forked workers start warm."""
    from flake8_replayssm.cli import main  # noqa: F401
    from flake8_replayssm.config import LintConfig
    from flake8_replayssm.fix.codemod import fix_text

    config = LintConfig(vllm_version="0.33.0")
    for kind, path in fixtures():  # every frontend and fixer imported, every data table read
        fix_text(path.read_text(errors="replace"), kind, config)


def draw(rng: random.Random, seeds: list[tuple[str, Path]], kinds: set[str]) -> tuple[str, bytes]:
    """The next case, of one of ``kinds`` (file kinds and families)."""
    while True:
        pick = rng.random()
        if pick < 0.05:
            kind, data = tree_case(rng)
        elif pick < 0.25:
            kind, data = fix_case(rng, [s for s in seeds if s[0] in kinds] or seeds)
        elif pick < 0.5:
            kind, data = generated(rng)
        else:
            kind, data = mutated(rng, seeds)
        if kind in kinds or kind == "fix" and json.loads(data)["kind"] in kinds:
            return kind, data


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-case-seconds", type=float, default=10, help="CPU seconds a case may use")
    ap.add_argument("--kinds", default=",".join(KINDS + SPECS),
                    help=f"comma-separated file kinds and families to draw from (default: all of {KINDS + SPECS})")
    ap.add_argument("--out", default="fuzz-failures")
    ap.add_argument("--replay", metavar="CASE", help="run one saved case (its suffix is its kind) and exit")
    args = ap.parse_args()
    _warm()
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    if args.replay:
        case = Path(args.replay)
        kind = case.suffix[1:]
        if kind not in KINDS + SPECS:
            ap.error(f"{case}: the suffix names no kind (one of {', '.join(KINDS + SPECS)})")
        problem = _watch(context, kind, case.read_bytes(), args.max_case_seconds)
        print(f"FAIL {case}: {problem}" if problem else f"ok {case}")
        return 1 if problem else 0
    kinds = set(args.kinds.split(","))
    if kinds - set(KINDS + SPECS):
        ap.error(f"--kinds: unknown {', '.join(sorted(kinds - set(KINDS + SPECS)))}")
    rng = random.Random(args.seed)
    seeds = fixtures()
    started = time.monotonic()
    cases: collections.Counter[str] = collections.Counter()
    problems: collections.Counter[str] = collections.Counter()
    while time.monotonic() - started < args.seconds:
        kind, data = draw(rng, seeds, kinds)
        family = f"fix/{json.loads(data)['kind']}" if kind == "fix" else kind
        t0 = time.monotonic()
        problem = _watch(context, kind, data, args.max_case_seconds)
        cases[family] += 1
        if problem:
            problems[problem.split(":", 1)[0]] += 1
            out = Path(args.out)
            out.mkdir(exist_ok=True)
            name = out / f"case-{args.seed}-{sum(cases.values())}.{kind}"
            name.write_bytes(data)
            print(f"FAIL {name} ({time.monotonic() - t0:.1f} s): {problem}", file=sys.stderr)
    total, failed = sum(cases.values()), sum(problems.values())
    print(f"{total} cases in {time.monotonic() - started:.0f} s, {failed} failed")
    print("cases: " + ", ".join(f"{k} {n}" for k, n in sorted(cases.items())))
    if problems:
        print("problems: " + ", ".join(f"{k} {n}" for k, n in sorted(problems.items())))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
