"""``replayssm-lint``: check (and fix) vLLM launches in every kind of file.

Exit codes: 0 no findings, 1 findings (or, for ``fix --diff``, changes), 2 usage
or configuration error.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache, partial
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from . import __version__, report
from .config import EXTRA_ARGS_MODES, GPUS, PLATFORMS, ConfigError, LintConfig, project_config, split_codes
from .lint import TRIGGER_NEEDLES, FileResult, detect_kind, lint_text
from .model import Finding
from .rules import BY_CODE, RULES

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "env", ".env", "node_modules",
                       "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                       "site-packages", ".eggs"})
MAX_FILE_BYTES = 5_000_000


def read_bytes(path: str) -> bytes | None:
    """The file's bytes, or None for unreadable, huge or binary files."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size > MAX_FILE_BYTES:
                return None
            data = fh.read()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data


def read_text(path: str) -> str | None:
    """The file's text (undecodable bytes replaced), or None for binary/huge files."""
    data = read_bytes(path)
    return None if data is None else data.decode("utf-8", errors="replace")


_BYTE_NEEDLES = tuple(n.encode() for n in TRIGGER_NEEDLES)


def iter_files(paths: Sequence[str], excludes: Sequence[str]) -> Iterator[str]:
    def excluded(path: str) -> bool:
        name, norm = os.path.basename(path), os.path.normpath(path)
        return any(fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(norm, os.path.normpath(pat))
                   for pat in excludes)

    for root in paths:
        if os.path.isfile(root):
            if not excluded(root):
                yield root
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS
                                 and not excluded(os.path.join(dirpath, d)))
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if not excluded(path):
                    yield path


def lint_file(path: str, config: LintConfig | Callable[[], LintConfig],
              kind: str | None = None) -> FileResult | None:
    """Lint one file; None when it is not a file we read (binary, unknown kind).

    ``config`` may be a function, called only for files that need linting (finding a
    file's project settings costs more than rejecting the file).
    """
    kind = kind or detect_kind(path)
    if kind is None and "." in os.path.basename(path):
        return None  # only extension-less files can be shell scripts by their shebang
    data = read_bytes(path)
    if data is None:
        return None
    if not any(needle in data for needle in _BYTE_NEEDLES):  # most files stop here, undecoded
        # ...unless every launch is to be listed, clean ones too (--show-launches)
        if not (b"vllm" in data or b"LLM" in data or b"engine_kwargs" in data) \
                or not (config() if callable(config) else config).inventory:
            return FileResult([], []) if kind else None
    text = data.decode("utf-8", errors="replace")
    kind = kind or detect_kind(path, text)
    if kind is None:
        return None
    try:
        return lint_text(text, kind, config() if callable(config) else config, path=path)
    except Exception as exc:  # a bug of ours must not hide the other files' findings
        return FileResult([], [], error=f"{path}: internal error: {type(exc).__name__}: {exc}")


def _lint_job(args: tuple[str, dict[str, object]]) -> FileResult | None:
    """lint_file in a worker process: verdicts stay behind (their checks do not pickle)."""
    path, overrides = args
    result = lint_file(path, lambda: config_for(path, overrides))
    if result is not None:
        result.verdicts = []
    return result


def _overrides(ns: argparse.Namespace) -> dict[str, object]:
    """The command line's settings, which win over every project's pyproject."""
    if ns.platform and ns.platform not in PLATFORMS:
        raise ConfigError(f"--platform must be one of {', '.join(PLATFORMS)}")
    return {"vllm_version": ns.vllm_version, "platform": ns.platform,
            "select": split_codes(ns.select) or None, "ignore": split_codes(ns.ignore),
            "enable": split_codes(ns.enable), "extra_args": ns.extra_args,
            "sglang_version": ns.sglang_version, "gpu": ns.gpu,
            "inventory": bool(getattr(ns, "show_launches", False) or getattr(ns, "verbose", False)) or None}


def config_for(path: str, overrides: dict[str, object]) -> LintConfig:
    """The settings for one file: its own project's pyproject under the command line."""
    folder = os.path.dirname(os.path.abspath(path)) if not os.path.isdir(path) else os.path.abspath(path)
    base = _project_config_cached(folder)
    key = (id(base), repr(sorted(overrides.items())))
    merged = _MERGED.get(key)
    if merged is None:
        merged = _MERGED[key] = _merge(base, overrides)
    return merged


_MERGED: dict[tuple[int, str], LintConfig] = {}


@lru_cache(maxsize=1024)
def _project_config_cached(folder: str) -> LintConfig:
    return project_config(Path(folder))


def _merge(base: LintConfig, overrides: dict[str, object]) -> LintConfig:
    ignore = base.ignore + tuple(overrides["ignore"])  # type: ignore[arg-type]
    enable = base.enable + tuple(overrides["enable"])  # type: ignore[arg-type]
    source = "--vllm-version" if overrides["vllm_version"] else None
    sglang_source = "--sglang-version" if overrides.get("sglang_version") else None
    return base.merged(vllm_version=overrides["vllm_version"], vllm_version_source=source,
                       sglang_version=overrides.get("sglang_version"), sglang_version_source=sglang_source,
                       gpu=overrides.get("gpu"),
                       platform=overrides["platform"], extra_args=overrides["extra_args"],
                       inventory=overrides.get("inventory"),
                       select=overrides["select"], ignore=ignore or None, enable=enable or None)


def build_config(ns: argparse.Namespace) -> LintConfig:
    """The settings for the first path (what `fix` and the checks of options use)."""
    return config_for(ns.paths[0] if ns.paths else ".", _overrides(ns))


def _validate(config: LintConfig) -> None:
    from .knowledge import knowledge
    from .target import explicit_release

    explicit_release(config, knowledge())  # raises ConfigError for text that is not a version
    if config.sglang_version:
        from .sglang.knowledge import knowledge as sglang_knowledge
        from .sglang.target import closest_release

        if closest_release(config.sglang_version, sglang_knowledge())[0] is None:
            raise ConfigError(f"{config.sglang_version!r} is not an SGLang version (expected e.g. 0.5.23)")
    unknown = [c for c in config.select + config.ignore + config.enable
               if not any(code.startswith(c) for code in BY_CODE)]
    if unknown:
        raise ConfigError(f"unknown code(s): {', '.join(unknown)}")


def run_check(ns: argparse.Namespace) -> int:
    _project_config_cached.cache_clear()  # one run, one reading of each pyproject
    _MERGED.clear()
    overrides = _overrides(ns)
    config = build_config(ns)
    _validate(config)
    results: list[FileResult] = []
    if ns.stdin_filename is not None or ns.paths == ["-"]:
        name = ns.stdin_filename or "stdin.py"
        text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        kind = detect_kind(name, text) or "python"
        results.append(lint_text(text, kind, config, path=name))
    else:
        missing = [p for p in ns.paths if not os.path.exists(p)]
        if missing:
            raise ConfigError(f"no such file or directory: {', '.join(missing)}")
        excludes = [p.strip() for p in ns.exclude.split(",") if p.strip()]
        files = list(iter_files(ns.paths, excludes))
        if ns.jobs > 1 and len(files) > 1:
            with ProcessPoolExecutor(max_workers=ns.jobs) as pool:
                jobs = [(f, overrides) for f in files]
                results += [r for r in pool.map(_lint_job, jobs, chunksize=64) if r]
        else:
            results += [r for r in (lint_file(f, partial(config_for, f, overrides)) for f in files) if r]
    findings = sorted((f for r in results for f in r.findings), key=lambda f: f.sort_key)
    errors = [r.error for r in results if r.error]
    for error in errors:
        print(f"replayssm-lint: {error}", file=sys.stderr)
    if ns.verbose:
        for r in results:
            for note in r.notes:
                print(f"replayssm-lint: {note}", file=sys.stderr)
            for line in report.inventory_lines(r.launches, r.unrecognised, r.path):
                print(f"replayssm-lint: {line}", file=sys.stderr)
    if ns.show_launches:
        sys.stdout.write(report.with_inventory(ns.format, _render(ns.format, findings), results))
        return 1 if findings else 0
    sys.stdout.write(_render(ns.format, findings))
    if errors:
        return 2
    return 1 if findings else 0


def _render(fmt: str, findings: Sequence[Finding]) -> str:
    if fmt == "json":
        return report.as_json(findings)
    if fmt == "sarif":
        return report.sarif(findings, ((r.code, r.summary.split(". ")[0], r.doc()) for r in RULES))
    if fmt == "github":
        return report.github(findings)
    return report.text(findings)


def run_explain(ns: argparse.Namespace) -> int:
    if ns.all or not ns.code:
        for rule in RULES:
            state = "" if rule.default_enabled else " (off by default)"
            print(f"{rule.code}  {rule.name}{state}")
        return 0
    rule = BY_CODE.get(ns.code.upper())
    if rule is None:
        print(f"replayssm-lint: unknown code {ns.code!r}", file=sys.stderr)
        return 2
    sys.stdout.write(rule.doc())
    return 0


def _add_target_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vllm-version", help="vLLM release to judge for (default: image tag, pins, installed, newest)")
    p.add_argument("--platform", choices=PLATFORMS, help="platform vLLM runs on (default: cuda)")
    p.add_argument("--sglang-version", help="SGLang release to judge SGLang launches for "
                                            "(default: image tag, pins, installed, newest)")
    p.add_argument("--gpu", choices=GPUS, help="GPU generation SGLang launches run on (default: judged for "
                                               "both; a code is reported only if it holds for both)")
    p.add_argument("--select", help="comma-separated codes or prefixes to report (default: RSM)")
    p.add_argument("--ignore", help="comma-separated codes or prefixes to leave out")
    p.add_argument("--enable", help="off-by-default codes to turn on (RSM201)")
    p.add_argument("--extra-args", choices=EXTRA_ARGS_MODES,
                   help="unseen extra arguments (\"$@\", $EXTRA_ARGS, **kwargs): 'closed' (default) assumes "
                        "they add no ReplaySSM option; 'open' reports nothing that depends on them")
    p.add_argument("--exclude", default="", help="comma-separated globs of paths to skip")
    p.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .)")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="replayssm-lint", description=__doc__.splitlines()[0])
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="report vLLM launches that ReplaySSM makes fail")
    _add_target_options(check)
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    check.add_argument("--jobs", "-j", type=int, default=1, help="parallel processes")
    check.add_argument("--verbose", "-v", action="store_true",
                       help="say which release judged each launch, and list every launch seen (stderr)")
    check.add_argument("--show-launches", action="store_true",
                       help="also list every launch seen (clean ones too) and the lines that look like a "
                            "launch where none was recognised (JSON: an object with findings, launches, "
                            "unrecognised)")
    check.add_argument("--stdin-filename", help="read the file from stdin, named like this")
    fix = sub.add_parser("fix", help="rewrite launches into ones the target release accepts")
    _add_target_options(fix)
    fix.add_argument("--diff", action="store_true", help="print a unified diff, write nothing")
    fix.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    fix.add_argument("--unsafe", action="store_true", help="also apply unsafe fixes")
    explain = sub.add_parser("explain", help="print a code's documentation")
    explain.add_argument("code", nargs="?")
    explain.add_argument("--all", action="store_true", help="list every code")
    server = sub.add_parser("server", help="run the language server for editors (stdio)")
    server.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead of stdio")
    return ap


def main(argv: Iterable[str] | None = None) -> int:
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
        if ns.command == "server":
            from .lsp import run_server

            return run_server(ns.tcp)
        if ns.command == "fix":
            from .fix.command import run_fix

            return run_fix(ns, build_config(ns))
    except ConfigError as exc:
        print(f"replayssm-lint: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    return 2
