"""``replayssm-lint``: check (and fix) vLLM launches in every kind of file.

Exit codes: 0 no findings, 1 findings (or, for ``fix --diff``/``--check``, changes; for
``upgrade``, a launch that breaks), 2 usage or configuration error, or an internal error of ours.
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable, NoReturn, Sequence

from . import project, report
from .config import ConfigError, LintConfig
from .escaping import shown
from .settings import SETTINGS
from .unchecked import NotChecked

if TYPE_CHECKING:
    from .lint import FileResult
    from .model import Finding

# What a run needs is imported when it needs it (the linting machinery only for files
# that hold a trigger token, the rule docs only for SARIF and explain, the process pool
# only with --jobs): a pre-commit run on a few files pays an interpreter's startup.

#: more worker processes than this never helps (and each one costs memory)
MAX_JOBS = 32
FORMATS = ("text", "json", "sarif", "github")


def overrides_of(ns: argparse.Namespace) -> dict[str, object]:
    """The command line's settings (validated), which win over every settings file."""
    values = {key: getattr(ns, spec.field, None) for key, spec in SETTINGS.items()}
    overrides = project.command_line_overrides(values)
    if getattr(ns, "show_launches", False) or getattr(ns, "verbose", False):
        overrides["inventory"] = True  # list every launch seen, clean ones too
    return overrides


def _lint_job(args: tuple[str, dict[str, object]]) -> FileResult | None:
    """lint_file for one file of a run, keeping only what the report shows.

    The verdicts stay behind: their checks do not pickle (a worker process), and a run
    over a large tree holds only findings and notes, not every launch it read.
    """
    path, overrides = args
    result = project.lint_file(path, partial(project.settings_for, path, overrides),
                               inventory=bool(overrides.get("inventory")))
    if result is not None:
        result.verdicts = []
    return result


class Stopped(BaseException):
    """SIGTERM or SIGHUP arrived: the run stops (exit 128+N) once the worker processes are ended.
    A BaseException, like KeyboardInterrupt (SIGINT), so no ``except Exception`` swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: object) -> None:
    raise Stopped(signum)


def _worker_signals() -> None:
    """In a worker: Ctrl-C (sent to the whole process group) is the parent's to act on, and the
    other signals do what they do by default (the parent's handlers are not the workers')."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


def _lint_in_pool(files: list[str], overrides: dict[str, object], jobs: int) -> list[FileResult]:
    """The files linted by ``jobs`` worker processes.  SIGINT, SIGTERM and SIGHUP while they
    run end every worker before the run stops: none is left behind, still reading files."""
    import multiprocessing
    import signal
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    stopping = [getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    previous = {s: signal.getsignal(s) for s in stopping if signal.getsignal(s) is not signal.SIG_IGN}
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_signals)
    finished = False
    try:
        for signum in previous:
            signal.signal(signum, _raise_stopped)
        results = [r for r in pool.map(_lint_job, [(f, overrides) for f in files], chunksize=64) if r]
        finished = True
        return results
    except BrokenProcessPool:
        raise RuntimeError("a worker process died while checking; run with --jobs 1 to see which file") from None
    finally:
        calm = {**previous, signal.SIGINT: signal.getsignal(signal.SIGINT)}
        for signum in calm:  # a second signal must not cut the cleaning up short
            signal.signal(signum, signal.SIG_IGN)
        if not finished:  # stopped or failed: the workers go now, not when they run out of work
            for worker in multiprocessing.active_children():
                worker.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        for signum, handler in calm.items():
            signal.signal(signum, handler)


def _jobs(requested: int, files: int) -> int:
    if requested < 1:
        raise ConfigError(f"--jobs must be at least 1, not {requested}")
    return max(1, min(requested, os.cpu_count() or 1, MAX_JOBS, files))


def run_check(ns: argparse.Namespace) -> int:
    from .lint import FileResult

    project.clear_caches()  # one run, one reading of each settings file
    overrides = overrides_of(ns)
    first = project.settings_for(ns.paths[0] if ns.paths and ns.paths != ["-"] else None, overrides)
    results: list[FileResult] = []
    notes: list[str] = []
    problems: dict[str, str] = {}
    if ns.stdin_filename is not None or ns.paths == ["-"]:
        results.append(_check_stdin(ns, project.settings_for(ns.stdin_filename, overrides)
                                    if ns.stdin_filename else first))
    else:
        problems = report_path_problems(ns.paths)
        unreadable: list[NotChecked] = []
        walk = project.iter_files([p for p in ns.paths if p not in problems], (), notes, unreadable,
                                  settings=partial(project.settings_for, overrides=overrides))
        files = list(walk) if ns.jobs != 1 else []  # one job reads the tree as it walks it
        jobs = _jobs(ns.jobs, len(files)) if ns.jobs != 1 else 1
        if jobs > 1:
            results += _lint_in_pool(files, overrides, jobs)
        else:
            results += [r for r in map(_lint_job, ((f, overrides) for f in files or walk)) if r]
        results += [FileResult([], [problem.finding()]) for problem in unreadable
                    if first.is_enabled(problem.finding().code)]
    findings = sorted((f for r in results for f in r.findings), key=lambda f: f.sort_key)
    errors = [r.error for r in results if r.error]
    for error in errors:
        say(error)
    if ns.verbose:
        for note in notes:
            say(note)
        for r in results:
            for said in r.notes + report.inventory_lines(r.launches, r.unrecognised, r.path):
                say(said)
    checked = sum(1 for r in results if r.error is None)
    if ns.statistics:
        rendered = statistics(findings, ns.format)
    else:
        rendered = _render(ns.format, findings, None if ns.quiet else checked, "" if ns.quiet else _release_note(first),
                           first.docs_url, sum(r.blind_spots for r in results))
        if ns.format == "text":
            rendered = text_conventions(rendered, ns.color)
    _emit(report.with_inventory(ns.format, rendered, results) if ns.show_launches and not ns.statistics
          else rendered)
    if errors or problems:
        return 2
    return 1 if findings and not ns.exit_zero else 0


def report_path_problems(paths: Sequence[str]) -> dict[str, str]:
    """An error line on stderr for each named path that cannot be checked; the run goes on."""
    problems = project.path_problems(paths)
    for path, why in problems.items():
        say(f"error: {path}: {why}")
    return problems


def text_conventions(rendered: str, color: str) -> str:
    """Text output in colour when it goes to a terminal (``--color``, ``NO_COLOR``, ``FORCE_COLOR``)."""
    from .colour import paint, wanted

    return paint(rendered) if wanted(color, sys.stdout) else rendered


def statistics(findings: Sequence[Finding], fmt: str) -> str:
    """``--statistics``: one line per code with its count, most frequent first (as ruff)."""
    import collections

    from .rules import BY_CODE

    counts = collections.Counter(f.code for f in findings)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if fmt in ("json", "sarif"):
        import json

        return json.dumps([{"code": code, "name": BY_CODE[code].name if code in BY_CODE else "",
                            "count": n, "severity": report.severity(code)} for code, n in rows], indent=2) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    return "".join(f"{n:>{width}}\t{code}\t{report.severity(code)}\t{BY_CODE[code].name if code in BY_CODE else ''}\n"
                   for code, n in rows)


def _check_stdin(ns: argparse.Namespace, config: LintConfig) -> FileResult:
    from .files import read_stdin
    from .lint import FileResult, detect_kind, lint_text

    name = ns.stdin_filename or "-"
    try:
        data = read_stdin()
    except NotChecked as exc:
        if "closed" in exc.reason or "unreadable" in exc.reason:
            raise ConfigError(exc.reason) from None
        return FileResult([], [exc.finding(name)] if config.is_enabled(exc.finding().code) else [])
    from .files import decode

    kind = detect_kind(name) if ns.stdin_filename else None
    text = decode(data, kind).text
    if kind is None:
        kind = (detect_kind(name, text) if ns.stdin_filename else None) or project.guess_kind(text)
    return lint_text(text, kind, config, path=name)


def _release_note(config: LintConfig) -> str:
    """What the summary must say about an explicit release the tool does not know."""
    from . import engines

    return "\n".join(note for engine in engines.all_engines() if (note := engine.release_note(config)))


def _render(fmt: str, findings: Sequence[Finding], checked: int | None, note: str, docs_url: str | None = None,
            blind_spots: int = 0) -> str:
    if fmt == "json":
        return report.as_json(findings)
    if fmt == "sarif":
        from .rules import RULES

        return report.sarif(findings, RULES, docs_url=docs_url)
    if fmt == "github":
        return report.github(findings)
    return report.text(findings, checked=checked, note=note, blind_spots=blind_spots)


def say(text: str) -> None:
    """One diagnostic line on stderr, ``replayssm-lint: ...``: whatever ``text`` quotes, it
    stays one line that starts with the tool's name (never a forged line or a workflow
    command)."""
    print(f"replayssm-lint: {shown(text)}", file=sys.stderr)


def _emit(text: str) -> None:
    """Write to stdout; a reader that went away (``| head -1``) is not an error of ours."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout again at exit


def find_rule(name: str):  # type: ignore[no-untyped-def]
    """A rule by code (``RSM008``, ``rsm008``) or by name (``replayssm-model-runner``)."""
    from .rules import BY_CODE, RULES

    key = name.strip()
    return BY_CODE.get(key.upper()) or next((r for r in RULES if r.name == key.lower()), None)


def run_explain(ns: argparse.Namespace) -> int:
    from .rules import RULES

    if ns.all or not ns.code:
        lines = []
        for rule in RULES:
            state = "" if rule.default_enabled else " (off by default)"
            lines.append(f"{rule.code}  {rule.name}  [{rule.severity}]{state}\n")
        _emit("".join(lines))
        return 0
    rule = find_rule(ns.code)
    if rule is None:
        say(f"unknown code or rule name {ns.code!r} (see replayssm-lint explain --all)")
        return 2
    _emit(rule.doc())
    return 0


def _add_settings_options(p: argparse.ArgumentParser, leave_out: frozenset[str] = frozenset()) -> None:
    """One option per setting of the SETTINGS table (validated by that table, like every source)."""
    for key, spec in SETTINGS.items():
        if key in leave_out:
            continue
        if spec.switch:  # --respect-gitignore / --no-respect-gitignore
            p.add_argument(f"--{key}", dest=spec.field, default=None, action=argparse.BooleanOptionalAction,
                           help=spec.help)
        else:
            p.add_argument(f"--{key}", dest=spec.field, default=None, help=spec.help)
    p.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .)")


def _add_output_options(check: argparse.ArgumentParser) -> None:
    """The output options CI users type, with ruff's names (``--format`` is kept as an alias)."""
    check.add_argument("--output-format", "--format", dest="format", choices=FORMATS, default="text",
                       help="text (default), json, sarif or github")
    check.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even when there are findings (2 still means an error)")
    check.add_argument("-q", "--quiet", action="store_true",
                       help="print the findings and nothing else (no count line, no notes)")
    check.add_argument("--statistics", action="store_true",
                       help="print the number of findings per code instead of the findings")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help="colour text output: auto (a terminal, unless NO_COLOR is set or FORCE_COLOR "
                            "asks for it), always or never")


class _Version(argparse.Action):
    """``--version``, read from the installed metadata only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any,
                 option_string: str | None = None) -> None:
        from . import __version__

        print(f"{parser.prog} {__version__}")  # stdout, as argparse's own version action
        parser.exit()


class _ArgumentParser(argparse.ArgumentParser):
    """argparse, whose error messages quote the arguments (file names too), escaped.

    Every sub-command's parser is one of these (``add_subparsers`` makes its parsers of
    the parent's class), and each takes ``--`` as the end of its options: the pre-commit
    hooks end their ``entry`` with it, so a committed file named ``--ignore=RSM`` is a
    file to lint, never an option.
    """

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {shown(message)}\n")


def parser() -> argparse.ArgumentParser:
    ap = _ArgumentParser(prog="replayssm-lint", description=__doc__.splitlines()[0])
    ap.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = ap.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="report vLLM launches that ReplaySSM makes fail")
    _add_settings_options(check)
    _add_output_options(check)
    check.add_argument("--jobs", "-j", type=int, default=1,
                       help=f"parallel processes (at most the number of CPUs, and {MAX_JOBS})")
    check.add_argument("--verbose", "-v", action="store_true",
                       help="say which release judged each launch, the model's architecture, what was skipped, "
                            "and list every launch seen (stderr)")
    check.add_argument("--show-launches", action="store_true",
                       help="also list every launch seen (clean ones too) and the lines that look like a "
                            "launch where none was recognised (JSON: an object with findings, launches, "
                            "unrecognised)")
    check.add_argument("--stdin-filename", help="read the file from stdin, named like this")
    fix = sub.add_parser("fix", help="rewrite launches into ones the target release accepts")
    _add_settings_options(fix)
    fix.add_argument("--diff", action="store_true", help="print a unified diff, write nothing")
    fix.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    fix.add_argument("--unsafe", action="store_true", help="also apply unsafe fixes")
    fix.add_argument("--force", action="store_true", help="also write read-only files (their mode is kept)")
    _add_upgrade_parser(sub)
    server = sub.add_parser("server", help="run the language server for editors (stdio)")
    server.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead of stdio")
    explain = sub.add_parser("explain", help="print a code's documentation (by code or rule name)")
    explain.add_argument("code", nargs="?")
    explain.add_argument("--all", action="store_true", help="list every code")
    return ap


def _add_upgrade_parser(sub: Any) -> None:
    """``upgrade --from OLD --to NEW [--engine sglang]``: the launches whose verdict an upgrade changes."""
    from .engines import NAMES

    up = sub.add_parser("upgrade", help="list the launches whose verdict changes from one release to another")
    up.add_argument("--from", dest="old", required=True, metavar="RELEASE", help="the release used now (e.g. 0.31.0)")
    up.add_argument("--to", dest="new", required=True, metavar="RELEASE", help="the release to move to (e.g. 0.33.0)")
    up.add_argument("--engine", choices=NAMES, default="vllm",
                    help="whose releases --from and --to are (default: vllm)")
    _add_settings_options(up, leave_out=frozenset(f"{name}-version" for name in NAMES))
    up.add_argument("--output-format", "--format", dest="format", choices=("text", "json", "markdown"),
                    default="text", help="text (a table; default), json, or markdown (a pull-request comment)")
    up.add_argument("--exit-zero", action="store_true",
                    help="exit 0 even when a launch breaks (2 still means an error)")


def run_upgrade(ns: argparse.Namespace) -> int:
    """Exit 1 when a launch gets an error on the new release it did not have on the old one."""
    from .upgrade import upgrade
    from .upgrade_report import render

    project.clear_caches()
    overrides = overrides_of(ns)
    problems = report_path_problems(ns.paths)
    report = upgrade([p for p in ns.paths if p not in problems], ns.engine, ns.old, ns.new, overrides)
    for error in report.errors:
        say(error)
    _emit(render(report, ns.format))
    if report.errors or problems:
        return 2
    return 1 if report.breaks and not ns.exit_zero else 0


def _never_fail_to_encode() -> None:
    """A character the terminal's encoding lacks is written as ``\\uNNNN``, not a crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a stream that cannot change now
                pass


def main(argv: Iterable[str] | None = None) -> int:
    _never_fail_to_encode()
    ap = parser()
    try:
        ns = ap.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else 2
    try:
        if ns.command == "check":
            return run_check(ns)
        if ns.command == "explain":
            return run_explain(ns)
        if ns.command == "upgrade":
            return run_upgrade(ns)
        if ns.command == "fix":
            from .fix.command import run_fix

            return run_fix(ns, overrides_of(ns))
        if ns.command == "server":
            from .lsp import run_server

            return run_server(ns.tcp)
    except ConfigError as exc:
        say(f"error: {exc}")
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except Stopped as stop:
        return 128 + stop.signum
    except BrokenPipeError:
        _emit("")
        return 0
    except Exception as exc:  # a bug of ours: one line and exit 2, never exit 1 (which reads as findings)
        say(f"internal error: {type(exc).__name__}: {exc}")
        return 2
    return 2
