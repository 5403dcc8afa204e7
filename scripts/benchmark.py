#!/usr/bin/env python3
"""Benchmark ``replayssm-lint`` and the flake8 plugin on a real source tree.

Not a test: it prints figures to compare with DESIGN.md's speed bar ("a file
without a trigger token is never parsed; flake8 with the plugin on a large tree
costs within a few percent of flake8 alone").  It downloads nothing; give it a
vLLM source tree, for example::

    pip download --no-deps vllm==0.33.0 -d /tmp/w
    unzip -q /tmp/w/*.whl 'vllm/*' -d /tmp/vllm-tree
    python scripts/benchmark.py --vllm-tree /tmp/vllm-tree

What it measures
----------------
1. ``replayssm-lint check TREE`` beside ``grep -rlE PATTERN TREE`` (PATTERN is
   the linter's own pre-filter), on the tree and on a tree ``--scale`` times
   larger (``--scale`` full copies of it in a temporary directory): wall time,
   CPU time (user + system of the process and everything it waited for, from
   ``getrusage(RUSAGE_CHILDREN)``), and peak RSS (``/usr/bin/time -v`` if
   present, else ``ru_maxrss`` of a small wrapper process; either way the
   largest single process, not a sum over workers).  The CLI's findings on
   vLLM's own tree are printed too: DESIGN.md wants none.
2. flake8's CPU time with and without the plugin, same flake8, same checks,
   same files.  "Without" really excludes the plugin: a second environment is
   made in the temporary directory (``python -m venv --without-pip``) and the
   installed flake8 and its requirements (pyflakes, pycodestyle, mccabe) are
   copied into it file by file from their installed RECORDs, so it has exactly
   the same flake8 code and no flake8-replayssm entry point; ``flake8
   --version`` of both environments is printed to show it.  "With" is this
   interpreter's environment.  The two differ also in how many distributions
   flake8 scans for entry points at startup; the run on an empty directory
   (``startup``) shows that fixed cost.  By default flake8 runs on a
   deterministic sample (every 4th ``.py`` file, ``--flake8-fraction``) of the
   tree, to keep the whole run near ten minutes on two cores; the sample's
   share of trigger files is printed beside the tree's.

3. ``--lsp``: the language server's latency, from a ``didChange`` to the
   ``publishDiagnostics`` of that version, for a 300-line shell script and a
   300-line Python module (both with ReplaySSM launches, so they are parsed and
   judged, not rejected by the pre-filter).  The server runs as editors run it
   (``replayssm-lint server`` on stdio, driven by pygls's client), whole texts
   are sent as the server asks.  Three figures per file: the lint alone
   (``lint_text`` in this process), an isolated edit end to end (edits spaced
   more than the debounce apart: the debounce's leading edge lints at once), and
   the last edit of a burst (five edits 20 ms apart: linted once, a debounce
   after the last), each the median of ``--lsp-edits`` edits.  Needs the ``lsp``
   extra; no tree is needed (``--lsp`` alone runs only this part).

4. ``--dense N``: a generated, seeded tree of ``N`` small launch files of every kind
   (``scripts/dense_tree.py``), where nearly every file is parsed and judged: the CLI's
   CPU per file, beside semgrep (``--semgrep``, or on PATH; skipped with a note
   otherwise) running two patterns (``--use-replayssm`` and ``LLM(...,
   use_replayssm=True, ...)``, far less than the linter checks), flake8 with and
   without the plugin on the tree's Python files (the same two environments as
   section 2), and the CLI's startup on an empty directory and on one shell file.
   Needs no vLLM tree (``--dense N`` alone runs only this part).

5. ``--lsp-cold [N]``: the language server's cold start as an editor sees it: the
   process is started (the ``replayssm-lint`` console script), ``initialize`` is sent at
   once, then ``initialized`` and ``didOpen`` of a 300-line shell script with launches;
   the figures are the time to the ``initialize`` answer and to that document's first
   ``publishDiagnostics``, from the process's start (median of N starts after a discarded
   one), and the import times behind them.  Needs the ``lsp`` extra and no tree.

6. ``--releases TREE``: the cost of judging every launch of ``TREE`` (the launch-dense
   tree, e.g. ``/work/cache/dense`` or one ``--dense N --keep`` made) against every known
   vLLM release (``--vllm-version all``: eight) beside one (``--vllm-version 0.33.0``),
   and the CLI's startup on an empty directory, alternating runs; the figure is the ratio
   of the CPU medians, with and without startup.  Needs no vLLM tree.

Runs alternate (grep, CLI, ..., flake8 without/with in ABBA order) for up to
``--repeat`` rounds, and the medians are reported with their count.  Rounds
after the first run only while ``--budget`` seconds allow another round.
Every tree is read once before timing, so all tools start from a warm cache.
Load average before and after is printed: on a busy machine wall times are
noise, CPU times much less so.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Iterator

# the linter's own pre-filter (flake8_replayssm.lint.TRIGGER), as an ERE for grep
GREP_PATTERN = r"replayssm|mamba[-_](block|cache)[-_]|--config|api_server|disable[-_]prefix[-_]caching"
TIME_BIN = "/usr/bin/time"
RSS_WRAPPER = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[2:], stdout=sys.stdout, stderr=sys.stderr)\n"
    "kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "kb = kb // 1024 if sys.platform == 'darwin' else kb\n"
    "open(sys.argv[1], 'w').write(str(kb))\n"
    "sys.exit(rc)\n"
)


# ---------------------------------------------------------------- measuring


@dataclass
class Sample:
    wall: float
    cpu: float
    rss_kb: int | None
    out_lines: int


@dataclass
class Series:
    label: str
    samples: list[Sample] = field(default_factory=list)

    def median(self, attr: str) -> float | None:
        values = [getattr(s, attr) for s in self.samples if getattr(s, attr) is not None]
        return statistics.median(values) if values else None


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(cmd: list[str], workdir: Path, *, ok_codes: tuple[int, ...] = (0,), cwd: Path | None = None,
            env: dict[str, str] | None = None) -> Sample:
    """Run ``cmd`` once: wall, CPU (it and its waited-for descendants), peak RSS, stdout lines."""
    rss_file = workdir / "rss.txt"
    out_file = workdir / "stdout.txt"
    err_file = workdir / "stderr.txt"
    rss_file.unlink(missing_ok=True)
    if os.access(TIME_BIN, os.X_OK):
        full = [TIME_BIN, "-v", "-o", str(rss_file), *cmd]
    else:
        full = [sys.executable, "-c", RSS_WRAPPER, str(rss_file), *cmd]
    with open(out_file, "wb") as out, open(err_file, "wb") as err:
        cpu0, t0 = _children_cpu(), time.perf_counter()
        proc = subprocess.run(full, stdout=out, stderr=err, cwd=cwd, env=env)
        wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode not in ok_codes:
        sys.exit(f"benchmark: {' '.join(cmd)} exited {proc.returncode}:\n"
                 f"{err_file.read_text(errors='replace')[-3000:]}")
    return Sample(wall, cpu, _read_rss(rss_file), _count_lines(out_file))


def _read_rss(path: Path) -> int | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    match = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", text)
    if match:
        return int(match.group(1))
    return int(text) if text.strip().isdigit() else None


def _count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


# ---------------------------------------------------------------- trees and environments


def tree_stats(root: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            files += 1
            size += os.lstat(os.path.join(dirpath, name)).st_size
    return files, size


def make_scaled_tree(src: Path, dest: Path, scale: int, hardlink: bool) -> None:
    copy = os.link if hardlink else shutil.copy2
    for i in range(scale):
        shutil.copytree(src, dest / f"copy{i:02d}", copy_function=copy, symlinks=True)


def make_sample_tree(src: Path, dest: Path, fraction: float) -> int:
    """Every n-th ``.py`` file of ``src`` (sorted paths), copied to ``dest`` with its relative path."""
    files = sorted(p for p in src.rglob("*.py") if p.is_file())
    if fraction >= 1:
        chosen = files
    else:
        step = max(1, round(1 / fraction))
        chosen = files[::step]
    for path in chosen:
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return len(chosen)


def _requirement_names(dist: metadata.Distribution) -> list[str]:
    names = []
    for req in dist.requires or []:
        if "extra ==" in req or "extra==" in req:
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if match:
            names.append(match.group(1))
    return names


def make_flake8_only_env(dest: Path) -> Path:
    """A venv holding exactly the installed flake8 and its requirements, and nothing else."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True)
    python = dest / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    todo, done = ["flake8"], set()
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in done:
            continue
        done.add(key)
        dist = metadata.distribution(name)
        for rel in dist.files or []:
            if ".." in Path(str(rel)).parts or "__pycache__" in Path(str(rel)).parts:
                continue  # console scripts outside site-packages, bytecode
            source = Path(str(dist.locate_file(rel)))
            if source.is_file():
                target = site / str(rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        todo.extend(_requirement_names(dist))
    return python


def flake8_version(python: str | Path, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run([str(python), "-m", "flake8", "--version"], capture_output=True, text=True,
                          cwd=cwd, env=env)
    return " ".join(proc.stdout.split())


def cli_command() -> list[str]:
    script = Path(sys.executable).with_name("replayssm-lint")
    if script.exists():
        return [str(script)]
    found = shutil.which("replayssm-lint")
    return [found] if found else [sys.executable, "-m", "flake8_replayssm"]


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


# ---------------------------------------------------------------- report


def fmt_time(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f}s"


def fmt_kb(kb: float | None) -> str:
    return "-" if kb is None else f"{kb / 1024:.1f}MB"


def fmt_ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b <= 0:
        return "n/a"
    return f"{a / b:.1f}x"


def print_series(rows: list[Series]) -> None:
    print(f"  {'run':<50} {'n':>2} {'wall':>9} {'cpu':>9} {'peak RSS':>10} {'out lines':>10}")
    for s in rows:
        lines = statistics.median(x.out_lines for x in s.samples) if s.samples else 0
        print(f"  {s.label:<50} {len(s.samples):>2} {fmt_time(s.median('wall')):>9} "
              f"{fmt_time(s.median('cpu')):>9} {fmt_kb(s.median('rss_kb')):>10} {int(lines):>10}")


# ---------------------------------------------------------------- main


def warm_bytecode() -> None:
    """Measure the tools as users run them: with their bytecode cached.

    An environment with ``PYTHONDONTWRITEBYTECODE`` set (some CI images and sandboxes)
    would make every run compile the package's sources again, which is start-up cost
    users do not pay; the variable is dropped for the measured runs and the package's
    bytecode is written once here.
    """
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        print("note: PYTHONDONTWRITEBYTECODE unset for the measured runs (users run with bytecode caches)")
    import compileall

    import flake8_replayssm

    compileall.compile_dir(str(Path(flake8_replayssm.__file__).parent), quiet=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm-tree", type=Path, help="an unpacked vLLM source tree")
    ap.add_argument("--scale", type=int, default=10, help="copies of the tree in the large tree (default 10)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of alternating runs at most (default 3)")
    ap.add_argument("--budget", type=float, default=540.0,
                    help="seconds; start another round only if it should end within this (default 540)")
    ap.add_argument("--cli-jobs", type=int, default=1, help="replayssm-lint --jobs (default 1, its default)")
    ap.add_argument("--flake8-jobs", default=str(os.cpu_count() or 1),
                    help="flake8 --jobs (default: number of CPUs)")
    ap.add_argument("--flake8-fraction", type=float, default=0.25,
                    help="share of the tree's .py files flake8 runs on; 1 = all (default 0.25)")
    ap.add_argument("--no-flake8", action="store_true", help="skip the flake8 comparison")
    ap.add_argument("--hardlink", action="store_true", help="hard-link the copies of the large tree")
    ap.add_argument("--workdir", type=Path, help="where to build trees (default: a new temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--dense", type=int, metavar="N",
                    help="also measure a generated tree of N launch files of every kind (section 4)")
    ap.add_argument("--semgrep", default=shutil.which("semgrep"),
                    help="semgrep to run as the peer on the dense tree (default: semgrep on PATH)")
    ap.add_argument("--lsp", action="store_true", help="measure the language server's latency (section 3)")
    ap.add_argument("--lsp-edits", type=int, default=30, help="edits per latency figure (default 30)")
    ap.add_argument("--lsp-cold", type=int, nargs="?", const=10, metavar="N",
                    help="measure the language server's cold start, N starts (default 10; section 5)")
    ap.add_argument("--releases", type=Path, metavar="TREE",
                    help="measure judging TREE against every known vLLM release beside one (section 6)")
    ns = ap.parse_args(argv)
    warm_bytecode()

    if ns.vllm_tree is None:
        if not ns.lsp and not ns.dense and not ns.lsp_cold and not ns.releases:
            ap.error("--vllm-tree is required (or --dense N, --releases TREE, --lsp or --lsp-cold, alone)")
        rc = releases_section(ns) if ns.releases else 0
        rc = dense_section(ns) if ns.dense else rc
        rc = lsp_latency(ns.lsp_edits) if ns.lsp else rc
        return lsp_cold_start(ns.lsp_cold) if ns.lsp_cold else rc

    tree = ns.vllm_tree.resolve()
    if not tree.is_dir():
        ap.error(f"--vllm-tree {tree} is not a directory")
    if ns.scale < 1 or ns.repeat < 1 or not 0 < ns.flake8_fraction <= 1:
        ap.error("--scale and --repeat must be >= 1, --flake8-fraction in (0, 1]")
    if not shutil.which("grep"):
        ap.error("grep is required")

    start = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="replayssm-bench-", dir=ns.workdir))
    try:
        return _run(ns, tree, work, start)
    finally:
        if ns.keep:
            print(f"\nwork directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _run(ns: argparse.Namespace, tree: Path, work: Path, start: float) -> int:
    print("replayssm-lint benchmark")
    print(f"  python {sys.version.split()[0]} on {sys.platform}, {os.cpu_count()} CPUs, "
          f"flake8-replayssm {metadata.version('flake8-replayssm')}")
    print(f"  load average at start: {load()}")
    print(f"  peak RSS from: {'/usr/bin/time -v' if os.access(TIME_BIN, os.X_OK) else 'ru_maxrss wrapper'}")

    scaled = work / "scaled"
    t0 = time.perf_counter()
    make_scaled_tree(tree, scaled, ns.scale, ns.hardlink)
    files, size = tree_stats(tree)
    sfiles, ssize = tree_stats(scaled)
    print(f"  tree:   {tree} — {files} files, {size / 1e6:.1f} MB")
    print(f"  scaled: {ns.scale} {'hard-linked' if ns.hardlink else 'copied'} copies — {sfiles} files, "
          f"{ssize / 1e6:.1f} MB (built in {time.perf_counter() - t0:.1f}s)")

    cli = cli_command()
    grep = ["grep", "-rlE", GREP_PATTERN]
    empty = work / "empty"
    empty.mkdir()
    runs: list[tuple[Series, list[str], tuple[int, ...], dict[str, str] | None]] = []

    def add(label: str, cmd: list[str], ok: tuple[int, ...] = (0,), env: dict[str, str] | None = None) -> Series:
        series = Series(label)
        runs.append((series, cmd, ok, env))
        return series

    cli_args = [*cli, "check", "--jobs", str(ns.cli_jobs)]
    cli_empty = add("replayssm-lint, empty directory (startup)", [*cli_args, str(empty)], (0, 1))
    grep_base = add("grep -rlE PATTERN, tree", [*grep, str(tree)], (0, 1))
    cli_base = add("replayssm-lint check, tree", [*cli_args, str(tree)], (0, 1))
    grep_scaled = add(f"grep -rlE PATTERN, tree x{ns.scale}", [*grep, str(scaled)], (0, 1))
    cli_scaled = add(f"replayssm-lint check, tree x{ns.scale}", [*cli_args, str(scaled)], (0, 1))

    flake8_pairs: list[tuple[Series, Series]] = []
    sample = work / "flake8-sample"
    if not ns.no_flake8:
        sample.mkdir()
        nsample = make_sample_tree(tree, sample, ns.flake8_fraction)
        venv_python = make_flake8_only_env(work / "flake8-only")
        # `python -m` puts the working directory on sys.path, and a checkout's *.egg-info there
        # registers the plugin again: every run starts in the (neutral) work directory, and
        # PYTHONPATH is dropped so nothing leaks the plugin into the flake8-only environment
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        with_version = flake8_version(sys.executable, work, env)
        without_version = flake8_version(venv_python, work, env)
        print(f"  flake8 with plugin:    {with_version}")
        print(f"  flake8 without plugin: {without_version}")
        if "flake8-replayssm" not in with_version or "flake8-replayssm" in without_version:
            sys.exit("benchmark: the two flake8 environments do not differ by the plugin; giving up")
        trig_tree = _count_lines_of([*grep, str(tree)])
        trig_sample = _count_lines_of([*grep, str(sample)])
        print(f"  flake8 runs on {nsample} .py files (fraction {ns.flake8_fraction:g}); "
              f"trigger files: {trig_sample} of them ({100 * trig_sample / max(nsample, 1):.1f}%), "
              f"tree: {trig_tree} of {files} ({100 * trig_tree / max(files, 1):.1f}%)")
        flake8_args = ["-m", "flake8", "--exit-zero", "--jobs", ns.flake8_jobs, "--isolated"]
        for target, what in ((empty, "empty directory (startup)"), (sample, "sample")):
            without = add(f"flake8 without plugin, {what}", [str(venv_python), *flake8_args, str(target)],
                          env=env)
            with_ = add(f"flake8 with plugin, {what}", [sys.executable, *flake8_args, str(target)], env=env)
            flake8_pairs.append((without, with_))

    # warm the page cache and the bytecode caches: nothing timed reads cold files
    for target in (tree, scaled, sample if sample.exists() else empty):
        subprocess.run(["grep", "-rlE", "x", str(target)], stdout=subprocess.DEVNULL)
    subprocess.run([*cli_args, str(empty)], stdout=subprocess.DEVNULL)
    print(f"  setup done after {time.perf_counter() - start:.0f}s; running up to {ns.repeat} rounds "
          f"(budget {ns.budget:.0f}s)\n")

    rounds = 0
    round_time = 0.0
    while rounds < ns.repeat:
        elapsed = time.perf_counter() - start
        if rounds and elapsed + 1.1 * round_time > ns.budget:
            print(f"  stopping after {rounds} round(s): another would end past the budget "
                  f"({elapsed:.0f}s + ~{round_time:.0f}s > {ns.budget:.0f}s)")
            break
        t0 = time.perf_counter()
        order = list(runs)
        if rounds % 2:  # ABBA: flip each with/without pair on odd rounds
            for without, with_ in flake8_pairs:
                i = next(k for k, r in enumerate(order) if r[0] is without)
                j = next(k for k, r in enumerate(order) if r[0] is with_)
                order[i], order[j] = order[j], order[i]
        for series, cmd, ok, env in order:
            series.samples.append(measure(cmd, work, ok_codes=ok, env=env, cwd=work))
        round_time = time.perf_counter() - t0
        rounds += 1
        print(f"  round {rounds} took {round_time:.0f}s (load average {load()})")

    print("\nmedians (cpu = user + system of the process tree; out lines = files for grep, findings "
          "and the closing count line for replayssm-lint, reports for flake8)")
    print_series([series for series, *_ in runs])

    print("\nratios (medians)")
    for name, g, c in (("tree", grep_base, cli_base), (f"tree x{ns.scale}", grep_scaled, cli_scaled)):
        print(f"  {name:<10} CLI/grep wall {fmt_ratio(c.median('wall'), g.median('wall')):>8}   "
              f"CLI/grep cpu {fmt_ratio(c.median('cpu'), g.median('cpu')):>8}   "
              f"CLI/grep peak RSS {fmt_ratio(c.median('rss_kb'), g.median('rss_kb')):>7}")
    print(f"  CLI startup (empty directory): {fmt_time(cli_empty.median('cpu'))} cpu, "
          f"{fmt_kb(cli_empty.median('rss_kb'))} peak RSS")
    print(f"  CLI tree x{ns.scale} / tree: wall {fmt_ratio(cli_scaled.median('wall'), cli_base.median('wall'))}, "
          f"cpu {fmt_ratio(cli_scaled.median('cpu'), cli_base.median('cpu'))} "
          f"(linear scaling would be {ns.scale}.0x)")
    if flake8_pairs:
        (s_without, s_with), (f_without, f_with) = flake8_pairs
        a, b = f_with.median("cpu"), f_without.median("cpu")
        sa, sb = s_with.median("cpu"), s_without.median("cpu")
        if a is not None and b:
            print(f"  flake8+plugin / flake8 CPU: {a / b:.3f} ({100 * (a / b - 1):+.1f}%)  "
                  f"[{a:.2f}s vs {b:.2f}s]")
        if a is not None and b and sa is not None and sb is not None and b - sb > 0:
            net = (a - sa) / (b - sb)
            print(f"  same, startup cost of each environment removed: {net:.3f} ({100 * (net - 1):+.1f}%)")
        extra = [f_with.samples[i].out_lines - f_without.samples[i].out_lines
                 for i in range(min(len(f_with.samples), len(f_without.samples)))]
        print(f"  flake8 report lines added by the plugin: {sorted(set(extra))}")
    findings = sorted({s.out_lines - 1 for s in cli_base.samples})  # less the closing count line
    print(f"  replayssm-lint findings on vLLM's own tree: {findings} (DESIGN.md precision bar: none)")
    print(f"\nload average at end: {load()}; total {time.perf_counter() - start:.0f}s")
    if ns.dense:
        dense_section(ns)
    return lsp_latency(ns.lsp_edits) if ns.lsp else 0


# ---------------------------------------------------------------- launch-dense tree


def dense_section(ns: argparse.Namespace) -> int:
    """Section 4: a generated tree where nearly every file is a launch (scripts/dense_tree.py),
    the CLI beside semgrep running two patterns, flake8 with and without the plugin on its
    Python files, and the CLI's startup."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import dense_tree

    with scratch(ns, "replayssm-dense-") as work:
        tree = work / "tree"
        counts = dense_tree.write_tree(tree, ns.dense)
        files, size = tree_stats(tree)
        print(f"\nlaunch-dense tree: {files} files, {size / 1e6:.1f} MB, seeded ("
              + ", ".join(f"{n} {kind}" for kind, n in counts.items()) + ")")
        print(f"  load average at start: {load()}")
        cli = cli_command()
        empty = work / "empty"
        empty.mkdir()
        one = work / "one"
        one.mkdir()
        shutil.copy2(next(tree.rglob("serve_*.sh")), one / "serve.sh")
        pysample = work / "py"
        for path in tree.rglob("*.py"):
            target = pysample / path.relative_to(tree)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        runs: list[tuple[Series, list[str], tuple[int, ...], dict[str, str] | None]] = []

        def add(label: str, cmd: list[str], ok: tuple[int, ...] = (0, 1), env: dict[str, str] | None = None) -> Series:
            series = Series(label)
            runs.append((series, cmd, ok, env))
            return series

        startup = add("replayssm-lint check, empty directory", [*cli, "check", str(empty)])
        one_file = add("replayssm-lint check, one shell launch file", [*cli, "check", str(one)])
        cli_run = add("replayssm-lint check, dense tree", [*cli, "check", str(tree)])
        semgrep_run = None
        if ns.semgrep:
            rules = work / "rules.yaml"
            rules.write_text(dense_tree.SEMGREP_RULES)
            semgrep_run = add("semgrep (2 patterns), dense tree",
                              [ns.semgrep, "scan", "--config", str(rules), "--metrics=off", "--disable-version-check",
                               "--no-git-ignore", "--quiet", "--jobs", "1", str(tree)], (0, 1))
        else:
            print("  semgrep not found (--semgrep PATH): its comparison is skipped")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        flake8_pair = None
        if not ns.no_flake8:
            venv_python = make_flake8_only_env(work / "flake8-only")
            if "flake8-replayssm" in flake8_version(venv_python, work, env) \
                    or "flake8-replayssm" not in flake8_version(sys.executable, work, env):
                sys.exit("benchmark: the two flake8 environments do not differ by the plugin; giving up")
            args = ["-m", "flake8", "--exit-zero", "--jobs", "1", "--isolated"]
            flake8_pair = (add("flake8 without plugin, dense tree's .py files",
                               [str(venv_python), *args, str(pysample)], env=env),
                           add("flake8 with plugin, dense tree's .py files",
                               [sys.executable, *args, str(pysample)], env=env))
        subprocess.run(["grep", "-rlE", "x", str(tree)], stdout=subprocess.DEVNULL)  # warm caches
        for _ in range(ns.repeat):
            for series, cmd, ok, cmd_env in runs:
                series.samples.append(measure(cmd, work, ok_codes=ok, env=cmd_env, cwd=work))
        print_series([series for series, *_ in runs])
        cpu = cli_run.median("cpu")
        base = startup.median("cpu") or 0.0
        if cpu is not None:
            print(f"  CLI per launch file: {1000 * (cpu - base) / max(files, 1):.2f} ms CPU "
                  f"(startup removed); startup {1000 * base:.0f} ms, one shell file "
                  f"{1000 * (one_file.median('cpu') or 0):.0f} ms")
        if semgrep_run is not None:
            print(f"  CLI / semgrep CPU: {fmt_ratio(cpu, semgrep_run.median('cpu'))} "
                  f"(wall {fmt_ratio(cli_run.median('wall'), semgrep_run.median('wall'))})")
        if flake8_pair is not None:
            without, with_ = flake8_pair
            print(f"  flake8+plugin / flake8 CPU on the .py files: "
                  f"{fmt_ratio(with_.median('cpu'), without.median('cpu'))}")
        print(f"  load average at end: {load()}")
    return 0


def releases_section(ns: argparse.Namespace) -> int:
    """Section 6: ``check TREE`` against every known vLLM release (``all``) beside one release."""
    tree = ns.releases.resolve()
    if not tree.is_dir():
        sys.exit(f"benchmark: --releases {tree} is not a directory")
    with scratch(ns, "replayssm-releases-") as work:
        files, size = tree_stats(tree)
        print(f"\nrelease sets: {tree} ({files} files, {size / 1e6:.1f} MB)")
        print(f"  load average at start: {load()}")
        cli = cli_command()
        empty = work / "empty"
        empty.mkdir()
        runs = {"replayssm-lint check, empty directory": [*cli, "check", str(empty)],
                "replayssm-lint check --vllm-version 0.33.0": [*cli, "check", "-q", "--vllm-version", "0.33.0",
                                                               str(tree)],
                "replayssm-lint check --vllm-version all (8 releases)": [*cli, "check", "-q", "--vllm-version",
                                                                         "all", str(tree)]}
        series = [Series(label) for label in runs]
        subprocess.run(["grep", "-rlE", "x", str(tree)], stdout=subprocess.DEVNULL)  # warm caches
        for _ in range(ns.repeat):
            for one_series, cmd in zip(series, runs.values()):
                one_series.samples.append(measure(cmd, work, ok_codes=(0, 1), cwd=work))
        print_series(series)
        startup, one, every = (s.median("cpu") for s in series)
        if one and every:
            base = startup or 0.0
            print(f"  all releases / one release, CPU: {every / one:.2f}x "
                  f"({(every - base) / max(one - base, 1e-9):.2f}x with startup removed); "
                  f"findings: {series[1].samples[-1].out_lines} and {series[2].samples[-1].out_lines} lines")
        print(f"  load average at end: {load()}")
    return 0


@contextlib.contextmanager
def scratch(ns: argparse.Namespace, prefix: str) -> Iterator[Path]:
    """A new work directory under ``--workdir``, removed afterwards unless ``--keep``."""
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=ns.workdir))
    try:
        yield work
    finally:
        if not ns.keep:
            shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- language server


NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


def shell_script(lines: int = 300) -> str:
    """A deployment script of ``lines`` lines: helpers, a case, loops, three vLLM launches."""
    out = ["#!/usr/bin/env bash", "set -euo pipefail", f'MODEL="${{MODEL:-{NANO}}}"', "PORT=${PORT:-8000}", ""]
    tail = 11
    block = 0
    while len(out) + 9 + tail <= lines:
        block += 1
        out += [f"# step {block}: fetch and check the shard",
                f"fetch_{block}() {{",
                f'  local dest="/data/shard-{block}"',
                '  mkdir -p "$dest"',
                f'  for part in a b c; do curl -fsSL "https://example.invalid/{block}/$part" -o "$dest/$part"; done',
                '  sha256sum "$dest"/* > "$dest/SUMS"',
                "}",
                f'if [[ -n "${{SKIP_{block}:-}}" ]]; then echo "skip {block}"; else fetch_{block}; fi',
                ""]
    out += ['case "${1:-serve}" in',
            "  serve)",
            '    vllm serve "$MODEL" --use-replayssm --port "$PORT" \\',
            "      --mamba-backend flashinfer --max-model-len 32768",
            "    ;;",
            "  bench)",
            f"    VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {NANO} --use-replayssm --port 8001 &",
            '    vllm bench serve --model "$MODEL" --num-prompts 100',
            "    ;;",
            "esac",
            f"python -m vllm.entrypoints.openai.api_server --model {NANO} --use-replayssm --mamba-cache-mode all"]
    out[-tail:-tail] = ["# (padding)"] * (lines - len(out))
    return "\n".join(out) + "\n"


def python_module(lines: int = 300) -> str:
    """A driver module of ``lines`` lines: dataclasses, helpers, a subprocess launch, ``LLM(...)``."""
    out = ['"""Serve and query a hybrid model."""', "from __future__ import annotations", "",
           "import argparse", "import subprocess", "from dataclasses import dataclass, field", "",
           "from vllm import LLM, SamplingParams", "", f'MODEL = "{NANO}"', ""]
    tail = 14
    block = 0
    while len(out) + 14 + tail <= lines:
        block += 1
        out += ["", "@dataclass",
                f"class Job{block}:",
                f'    """One batch of prompts ({block})."""', "",
                "    prompts: list[str] = field(default_factory=list)",
                "    max_tokens: int = 128", "",
                "    def sampling(self) -> SamplingParams:",
                "        return SamplingParams(max_tokens=self.max_tokens, temperature=0.0)", "",
                "    def shard(self, n: int) -> list[list[str]]:",
                "        return [self.prompts[i::n] for i in range(n)]", ""]
    out += ["", "def serve(port: int) -> subprocess.Popen:",
            "    argv = ['vllm', 'serve', MODEL, '--use-replayssm', '--port', str(port),",
            "            '--mamba-backend', 'flashinfer']",
            "    return subprocess.Popen(argv)", "",
            "def offline(prompts: list[str]) -> list[str]:",
            "    llm = LLM(MODEL, use_replayssm=True, mamba_cache_mode='all')",
            "    return [o.outputs[0].text for o in llm.generate(prompts)]", "",
            "if __name__ == '__main__':",
            "    ap = argparse.ArgumentParser()",
            "    ap.add_argument('--port', type=int, default=8000)",
            "    serve(ap.parse_args().port).wait()"]
    out[-tail:-tail] = ["# (padding)"] * (lines - len(out))
    return "\n".join(out) + "\n"


def lsp_latency(edits: int) -> int:
    """Section 3: didChange -> publishDiagnostics of the language server (see the module docstring)."""
    try:
        import asyncio

        from lsprotocol import types
        from pygls.lsp.client import LanguageClient
    except ImportError:
        print('the language server benchmark needs the lsp extra: pip install "flake8-replayssm[lsp]"')
        return 2
    from flake8_replayssm.config import LintConfig
    from flake8_replayssm.lint import lint_text
    from flake8_replayssm.lsp.settings import DEFAULT_DEBOUNCE_MS

    files = [("shell", "serve.sh", "shellscript", shell_script()), ("python", "driver.py", "python", python_module())]
    print("\nlanguage server: didChange -> publishDiagnostics (median of "
          f"{edits} edits; debounce {DEFAULT_DEBOUNCE_MS} ms, the default)")
    print(f"  load average at start: {load()}")

    def edited(text: str, i: int) -> str:  # a comment changes: the whole file is linted again
        return text.replace("\n", f"\n# edit {i}\n", 1)

    for kind, _, _, text in files:
        config = LintConfig()
        findings = lint_text(text, kind, config).findings
        wall, cpu = [], []
        for i in range(edits):
            t0, c0 = time.perf_counter(), time.process_time()
            lint_text(edited(text, i), kind, config)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(f"  {kind:6} {text.count(chr(10))} lines, {len(findings)} findings: "
              f"lint alone {1000 * statistics.median(wall):.1f} ms (CPU {1000 * statistics.median(cpu):.1f} ms)")

    async def drive() -> None:
        client = LanguageClient("replayssm-benchmark", "1")
        seen: dict[tuple[str, int], float] = {}

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            seen.setdefault((params.uri, params.version or 0), time.perf_counter())

        async def wait(uri: str, version: int) -> float:
            while (uri, version) not in seen:
                await asyncio.sleep(0.0005)
            return seen[(uri, version)]

        work = Path(tempfile.mkdtemp(prefix="replayssm-lsp-bench-"))
        await client.start_io(sys.executable, "-m", "flake8_replayssm", "server")
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=work.as_uri()))
        client.initialized(types.InitializedParams())
        delay = DEFAULT_DEBOUNCE_MS / 1000
        for kind, name, language, text in files:
            uri = (work / name).as_uri()
            client.text_document_did_open(types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri, language, 0, text)))
            await wait(uri, 0)
            version, isolated, burst = 0, [], []
            for i in range(edits):
                await asyncio.sleep(delay + 0.05)  # quiet: the next edit is linted at once
                version += 1
                t0 = time.perf_counter()
                client.text_document_did_change(types.DidChangeTextDocumentParams(
                    types.VersionedTextDocumentIdentifier(version, uri),
                    [types.TextDocumentContentChangeWholeDocument(edited(text, i))]))
                isolated.append(await wait(uri, version) - t0)
            for i in range(max(3, edits // 3)):
                await asyncio.sleep(delay + 0.05)
                for j in range(5):
                    version += 1
                    t0 = time.perf_counter()
                    client.text_document_did_change(types.DidChangeTextDocumentParams(
                        types.VersionedTextDocumentIdentifier(version, uri),
                        [types.TextDocumentContentChangeWholeDocument(edited(text, 1000 * i + j))]))
                    await asyncio.sleep(0.02 if j < 4 else 0)
                burst.append(await wait(uri, version) - t0)
            print(f"  {kind:6} isolated edit, end to end {1000 * statistics.median(isolated):.1f} ms "
                  f"(max {1000 * max(isolated):.1f}); last of a burst of 5 {1000 * statistics.median(burst):.1f} ms")
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        shutil.rmtree(work, ignore_errors=True)

    asyncio.run(drive())
    print(f"  load average at end: {load()}")
    return 0


# ---------------------------------------------------------------- language server: cold start


def _frame(message: dict) -> bytes:
    import json

    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_message(stream) -> dict | None:  # type: ignore[no-untyped-def]
    import json

    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length)) if length is not None else None


def server_command() -> list[str]:
    """``replayssm-lint server`` as an editor starts it: the console script next to this interpreter."""
    script = Path(sys.executable).with_name("replayssm-lint")
    return [str(script), "server"] if script.exists() else [sys.executable, "-m", "flake8_replayssm", "server"]


def _process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) a running process has used so far (Linux's /proc; else None)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def lsp_cold_start_once(text: str, uri: str, root: str,
                        timeout: float = 120.0) -> tuple[float, float, float | None]:
    """Start the server, ``initialize`` at once (as editors do), then ``initialized`` and
    ``didOpen``: seconds from the start of the process to the ``initialize`` answer and to the
    first ``publishDiagnostics`` of the opened document, and the server's CPU seconds by then
    (which a busy machine does not inflate as it does wall time)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": os.getpid(), "rootUri": root, "capabilities": {}}}))
        proc.stdin.flush()
        initialized = diagnosed = None
        while diagnosed is None:
            if time.perf_counter() - t0 > timeout:
                raise TimeoutError("no diagnostics from the language server")
            message = _read_message(proc.stdout)
            if message is None:
                raise RuntimeError("the language server exited")
            if message.get("id") == 1 and initialized is None:
                initialized = time.perf_counter() - t0
                proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
                proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
                    "textDocument": {"uri": uri, "languageId": "shellscript", "version": 0, "text": text}}}))
                proc.stdin.flush()
            elif message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                diagnosed = time.perf_counter() - t0
                cpu = _process_cpu(proc.pid)
                if not message["params"]["diagnostics"]:
                    raise RuntimeError("the benchmark's script should have findings")
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.flush()
        proc.wait(timeout=30)
        assert initialized is not None
        return initialized, diagnosed, cpu
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def import_seconds(module: str) -> float:
    """Seconds to import ``module`` in a fresh interpreter (bytecode cached), as it measures it."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def lsp_cold_start(runs: int) -> int:
    """Section 5: from starting the language server to the first diagnostics of a document."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        print('the language server benchmark needs the lsp extra: pip install "flake8-replayssm[lsp]"')
        return 2
    work = Path(tempfile.mkdtemp(prefix="replayssm-lsp-cold-"))
    try:
        script = work / "serve.sh"
        text = shell_script()
        script.write_text(text)
        print(f"\nlanguage server cold start: `{' '.join(Path(server_command()[0]).name.split())} server` "
              f"started, initialize, then didOpen of a {text.count(chr(10))}-line shell script "
              f"(median of {runs} starts, after one discarded start that warms the caches)")
        print(f"  load average at start: {load()}")
        lsp_cold_start_once(text, script.as_uri(), work.as_uri())
        answers, firsts, cpus = [], [], []
        for _ in range(runs):
            answered, diagnosed, cpu = lsp_cold_start_once(text, script.as_uri(), work.as_uri())
            answers.append(answered)
            firsts.append(diagnosed)
            cpus += [cpu] if cpu is not None else []
        print(f"  initialize answered after {1000 * statistics.median(answers):.0f} ms; first diagnostics "
              f"{1000 * statistics.median(firsts):.0f} ms after the start (max {1000 * max(firsts):.0f} ms)"
              + (f"; the server's CPU by then {1000 * statistics.median(cpus):.0f} ms" if cpus else ""))
        parts = {module: import_seconds(module) for module in
                 ("lsprotocol.types", "pygls.lsp.server", "flake8_replayssm.lsp.server", "libcst")}
        print("  of which imports (one fresh interpreter each, cumulative): "
              + ", ".join(f"{module} {1000 * seconds:.0f} ms" for module, seconds in parts.items()))
        print("  (libcst is imported only when a code action is asked for)")
        print(f"  load average at end: {load()}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _count_lines_of(cmd: list[str]) -> int:
    return len(subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines())


if __name__ == "__main__":
    sys.exit(main())
