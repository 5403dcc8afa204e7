"""``replayssm-lint fix [--diff] [--check] [--unsafe] PATH...``.

Each file is fixed as a whole: all edits at once, the result re-parsed and
re-linted, written atomically (same directory, same mode, UTF-8, line endings
kept) only when it parses.  ``--diff`` prints a unified diff and ``--check``
only reports; neither writes.

Exit codes: 0 nothing to change (or changes written), 1 changes found with
``--diff``/``--check``, 2 an error (configuration, unreadable or unparsable result).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import TextIO

from ..config import ConfigError, LintConfig
from .codemod import FixOutcome, fix_text
from .edits import write_atomic


def fix_file(path: str, config: LintConfig, *, unsafe: bool = False) -> FixOutcome | None:
    """The outcome of fixing ``path`` (None: not a file we read)."""
    from ..cli import read_text
    from ..lint import detect_kind, has_trigger

    text = read_text(path)
    if text is None:
        return None
    kind = detect_kind(path, text)
    if kind is None or not has_trigger(text):
        return None
    try:
        return fix_text(text, kind, config, path=path, unsafe=unsafe)
    except Exception as exc:  # a bug of ours must not stop the other files
        outcome = FixOutcome(text, text)
        outcome.error = f"internal error: {type(exc).__name__}: {exc}"
        return outcome


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile=f"a/{path.lstrip('/')}", tofile=f"b/{path.lstrip('/')}")
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def run_fix(ns: argparse.Namespace, config: LintConfig, *, out: TextIO | None = None,
            err: TextIO | None = None) -> int:
    from .. import cli

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        cli._validate(config)
        overrides = cli._overrides(ns)
    except ConfigError as exc:
        print(f"replayssm-lint: error: {exc}", file=err)
        return 2
    cli._project_config_cached.cache_clear()  # one run, one reading of each pyproject
    cli._MERGED.clear()
    excludes = [p.strip() for p in (getattr(ns, "exclude", "") or "").split(",") if p.strip()]
    write = not (ns.diff or ns.check)
    changed = errors = 0
    for path in cli.iter_files(ns.paths, excludes):
        try:  # each file with its own project's settings (under the command line's), as `check` does
            file_config = cli.config_for(path, overrides)
            cli._validate(file_config)
        except ConfigError as exc:
            errors += 1
            print(f"replayssm-lint: {path}: {exc}", file=err)
            continue
        outcome = fix_file(path, file_config, unsafe=bool(ns.unsafe))
        if outcome is None:
            continue
        if outcome.error:
            errors += 1
            print(f"replayssm-lint: {path}: {outcome.error}", file=err)
        for note in outcome.notes:
            print(f"replayssm-lint: {path}: {note}", file=err)
        if not outcome.changed:
            continue
        changed += 1
        codes = ", ".join(sorted(set(outcome.fixed)))
        if ns.diff:
            out.write(unified_diff(path, outcome.original, outcome.text))
        elif ns.check:
            print(f"{path}: would fix {codes}", file=out)
        if write:
            try:
                write_atomic(path, outcome.text)
            except OSError as exc:
                errors += 1
                print(f"replayssm-lint: {path}: cannot write: {exc}", file=err)
                continue
            print(f"fixed {path} ({codes})", file=err)
    if errors:
        return 2
    if changed and not write:
        return 1
    return 0
