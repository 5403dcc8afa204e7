"""``replayssm-lint fix [--diff] [--check] [--unsafe] [--force] PATH...``.

Each file is fixed as a whole: all edits at once, the result re-parsed and
re-linted, and written (:mod:`.writing`) only when it parses.  ``--diff`` prints a
unified diff and ``--check`` only reports; neither writes.

The run says what it did and what it left, as ruff does: every finding left is
printed with the reason it was not fixed (no automatic fix for the code, needs
``--unsafe`` because the fix changes what the launch does, in another file, the
fix would make vLLM refuse the launch, the file could not be written...), each
fixed file is named with its codes, and a closing line counts them::

    Found 7 findings (4 fixed, 3 remaining); 2 more fixable with --unsafe.

Writing a file is a transaction (:mod:`.writing`); per file the run says what happened:
``fixed PATH: CODES``, ``unchanged PATH``, ``refused PATH: REASON`` (writing it could harm
the file: a symlink out of the project, an edit saved meanwhile, an attribute that cannot be
kept) or ``not written PATH: REASON`` (writing failed: a full disk); in the last two the file
is as it was, and its findings are listed with that reason.

Exit codes: 0 no finding left (and, with ``--diff``/``--check``, nothing to
change), 1 findings left (or changes to make), 2 a usage or configuration error
or an error of ours (a fix whose result would not parse), 128+N when signal N
(SIGINT, SIGTERM, SIGHUP) stopped the run while a file was written.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Mapping, TextIO

from .. import project
from ..config import LintConfig
from ..escaping import diff_path, line, shown
from ..files import Decoded, decode, read_with_identity
from ..lint import detect_kind, has_trigger, lint_text
from ..model import Finding
from ..rules import fix_policy, severity, unsafe_because
from ..unchecked import NotChecked
from ..verdicts import rests_on_unseen_environment
from .codemod import FixOutcome, fix_text
from .writing import Interrupted, NotWritten, WriteRefused, write_fixed

_ENVIRON_WHY = "setting os.environ changes the environment of the whole Python process"
#: a finding that rests on an engine's environment variable being unset (its fix sets it)
_UNSET_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9_]+ is unset\b")


@dataclass
class FileFix:
    """What fixing one file did and left."""

    path: str
    #: the findings before fixing, and how many of them the fixes removed
    before: list[Finding] = field(default_factory=list)
    fixed: int = 0
    outcome: FixOutcome | None = None
    #: findings left, each with the reason it was not fixed
    left: list[tuple[Finding, str]] = field(default_factory=list)
    #: findings only --unsafe would fix (counted when --unsafe was not given)
    unsafe_more: int = 0
    #: the codes of the findings the fixes removed, with how many of each (what the summary names)
    fixed_codes: collections.Counter[str] = field(default_factory=collections.Counter)
    error: str | None = None
    decoded: Decoded | None = None
    original: bytes = b""
    #: the file's fstat when it was read: writing it checks it is still that file
    identity: os.stat_result | None = None
    #: what writing did: "fixed", "refused" or "not written" (with ``why``); None: nothing to write
    written: str | None = None
    why: str = ""

    @property
    def changed(self) -> bool:
        return self.outcome is not None and self.outcome.changed

    @property
    def found(self) -> int:
        """Fixed plus left (a fix can uncover a finding vLLM reports only after the first one)."""
        return self.fixed + len(self.left)


def _lines(text: str) -> list[str]:
    """``text`` cut after each ``\\n`` only, as diff and patch count lines (``splitlines``
    would also cut at a form feed or a lone CR and make the diff say something else)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff, with the file name quoted as git quotes it when it has to be (a name
    with a newline cannot forge a ``+++`` header)."""
    name = path.lstrip("/")
    lines = difflib.unified_diff(_lines(before), _lines(after), fromfile=diff_path(f"a/{name}"),
                                 tofile=diff_path(f"b/{name}"), lineterm="\n")
    out = []
    for text in lines:
        out.append(text if text.endswith("\n") else text + "\n\\ No newline at end of file\n")
    return "".join(out)


def _guarded(diff: str) -> str:
    """In a GitHub Actions log, a diff (which quotes the files' lines as they are: a line of a
    file may read ``::error::...``) is bracketed with ``::stop-commands::`` and a random token
    that no file can know, so the runner reads none of it as a workflow command."""
    if not diff or os.environ.get("GITHUB_ACTIONS") != "true":
        return diff
    import secrets

    token = f"replayssm-lint-{secrets.token_hex(16)}"
    return f"::stop-commands::{token}\n{diff}::{token}::\n"


def _remaining(text: str, kind: str, config: LintConfig, path: str) -> list[Finding]:
    return lint_text(text, kind, config, path=path).findings


def _why(finding: Finding, outcome: FixOutcome, unsafe_codes: collections.Counter[str],
         unsupported_at: frozenset[tuple[int | None, int, int]] = frozenset()) -> str:
    code = finding.code
    if fix_policy(code) == "report-only":
        return "no automatic fix for this code"
    if finding.span.source is not None:
        return f"it is in {finding.span.source}; fix that file"
    if outcome.bound and not outcome.fixed:
        return outcome.bound
    if (finding.span, code) in outcome.why_not:
        return outcome.why_not[(finding.span, code)]
    if outcome.conflicts and len(finding.releases) >= 1 and _in_set(finding, outcome):
        from .codemod import said_refusals

        return ("left out: no launch was found that every release it is judged for accepts: the fixes tried "
                f"make it refused ({said_refusals(outcome.conflicts)})")
    if unsafe_codes[code] > 0:
        unsafe_codes[code] -= 1
        if code != "RSM001" and (finding.span.cell, finding.span.line, finding.span.col) in unsupported_at:
            return "needs --unsafe: dropping --use-replayssm for the unsupported model (RSM001) removes it too"
        line = outcome.text.splitlines()[finding.span.line - 1] if finding.span.cell is None \
            and 0 < finding.span.line <= outcome.text.count("\n") + 1 else ""
        if _UNSET_VARIABLE.search(finding.message) and "replayssm=" in line:  # a keyword launch in Python
            return f"needs --unsafe: {_ENVIRON_WHY}"
        return f"needs --unsafe: {unsafe_because(code)}"
    if any(code in note for note in outcome.notes):
        return "left out: the fix would make vLLM refuse to start a launch it accepts now"
    if rests_on_unseen_environment(finding.message):
        return "the environment the command runs in is not written in this file (see what the message " \
               "assumes): set the variable where it runs"
    return "no edit fits this launch as written (a value or environment from elsewhere, or a form " \
           "that cannot be edited safely)"


def _in_set(finding: Finding, outcome: FixOutcome) -> bool:
    """Whether the finding is of a launch judged for a set of releases of the engine the
    conflicts are about (its releases are some of them)."""
    return any(engine == finding.engine for _, engine, _ in outcome.conflicts)


def fix_file(path: str, config: LintConfig, *, unsafe: bool = False) -> FileFix | None:
    """Fix ``path`` in memory (None: not a file we read); nothing is written here."""
    kind = detect_kind(path)
    if kind is None and "." in os.path.basename(path):
        return None
    result = FileFix(path)
    try:
        result.original, result.identity = read_with_identity(path)
    except NotChecked as exc:
        if kind is None:
            return None
        found = exc.finding(path)
        if config.is_enabled(found.code):
            result.before = [found]
            result.left = [(found, "the file was not read")]
        return result
    result.decoded = decode(result.original, kind)
    text = result.decoded.text
    kind = kind or detect_kind(path, text)
    if kind is None or not has_trigger(text, kind):
        return None if kind is None else result
    result.before = _remaining(text, kind, config, path)
    if not result.before:
        return result
    try:
        outcome = fix_text(text, kind, config, path=path, unsafe=unsafe)
    except Exception as exc:  # a bug of ours must not stop the other files
        outcome = FixOutcome(text, text)
        outcome.error = f"internal error: {type(exc).__name__}: {exc}"
    if outcome.changed and not result.decoded.lossless:
        outcome = FixOutcome(text, text, notes=["not fixed: its bytes are not text this tool can write "
                                                "back unchanged"])
    result.outcome = outcome
    result.error = outcome.error
    left = _remaining(outcome.text, kind, config, path)
    unsafe_codes: collections.Counter[str] = collections.Counter()
    if left and not unsafe:
        try:
            bolder = fix_text(text, kind, config, path=path, unsafe=True)
            unsafe_codes = collections.Counter(f.code for f in left) - collections.Counter(
                f.code for f in _remaining(bolder.text, kind, config, path))
        except Exception:
            pass
    result.fixed_codes = collections.Counter(f.code for f in result.before) - collections.Counter(f.code for f in left)
    result.fixed = sum(result.fixed_codes.values())
    result.unsafe_more = sum(unsafe_codes.values())
    unsupported_at = frozenset((f.span.cell, f.span.line, f.span.col) for f in left if f.code == "RSM001")
    result.left = [(f, _why(f, outcome, unsafe_codes, unsupported_at)) for f in left]
    return result


def run_fix(ns: argparse.Namespace, overrides: Mapping[str, Any], *, out: TextIO | None = None,
            err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    project.clear_caches()  # one run, one reading of each settings file
    project.settings_for(ns.paths[0] if ns.paths else None, overrides)  # bad settings stop the run here
    problems = project.path_problems(ns.paths)
    for path, why in problems.items():  # each is an error line; the other paths are still fixed
        print(f"replayssm-lint: error: {shown(path)}: {shown(why)}", file=err)
    write = not (ns.diff or ns.check)
    talk = err if ns.diff else out  # a diff on stdout stays a clean diff
    totals = collections.Counter()
    errors = 0
    for path in project.iter_files([p for p in ns.paths if p not in problems],
                                   settings=partial(project.settings_for, overrides=overrides)):
        config = project.settings_for(path, overrides)
        result = fix_file(path, config, unsafe=bool(ns.unsafe))
        if result is None:
            continue
        if result.error:
            errors += 1
            print(f"replayssm-lint: {shown(path)}: {shown(result.error)}", file=err)
        if result.changed:
            assert result.outcome is not None and result.decoded is not None
            if ns.diff:
                out.write(_guarded(unified_diff(path, result.outcome.original, result.outcome.text)))
            if write:
                try:
                    _write(result, config, bool(getattr(ns, "force", False)))
                except Interrupted as stop:
                    _print_file(result, talk, write)
                    print(f"replayssm-lint: stopped by {stop.name}: {shown(path)} "
                          f"{'was fixed' if stop.written else 'was not written (it is as it was)'}; "
                          "no file after it was read", file=err)
                    return 128 + stop.signum
        _print_file(result, talk, write)
        totals.update(found=result.found, fixed=result.fixed, left=len(result.left),
                      unsafe=result.unsafe_more, changed=int(result.changed))
    print(_closing_line(totals, write), file=talk)
    if errors or problems:
        return 2
    if totals["left"] or (totals["changed"] and not write):
        return 1
    return 0


def _write(result: FileFix, config: LintConfig, force: bool) -> None:
    """Write the fixed text (:mod:`.writing`), and record what happened: fixed, refused (writing
    it could harm the file) or not written (writing failed); the file is as it was unless fixed."""
    assert result.outcome is not None and result.decoded is not None
    path = result.path
    try:
        write_fixed(path, result.original, result.decoded.encode(result.outcome.text),
                    project_root=str(config.project_root or os.path.dirname(os.path.abspath(path))),
                    force=force, identity=result.identity)
    except NotWritten as exc:
        _not_fixed(result, "not written", str(exc))
    except WriteRefused as exc:
        _not_fixed(result, "refused", str(exc))
    except OSError as exc:
        _not_fixed(result, "not written", f"cannot write it ({exc.strerror or exc})")
    except Interrupted as stop:
        if not stop.written:
            _not_fixed(result, "not written", f"interrupted by {stop.name}")
        else:
            result.written = "fixed"
        raise
    else:
        result.written = "fixed"


def _not_fixed(result: FileFix, status: str, why: str) -> None:
    """A file that was not written keeps every finding it had, each with that reason."""
    assert result.outcome is not None
    result.written, result.why = status, why
    result.left = [(f, f"{status}: {why}") for f in result.before]
    result.fixed = result.unsafe_more = 0
    result.fixed_codes = collections.Counter()
    result.outcome = FixOutcome(result.outcome.original, result.outcome.original)


def _print_file(result: FileFix, stream: TextIO, write: bool) -> None:
    for finding, why in result.left:
        where = f"{finding.path or result.path}:"
        if finding.span.cell is not None:
            where += f"cell {finding.span.cell + 1}:"  # numbered from 1, as in check's text output
        stream.write(line(f"{where}{finding.span.line}:{finding.span.col + 1}: {finding.code} "
                          f"{severity(finding.code)}: {finding.message} [not fixed: {why}]") + "\n")
    name = shown(result.path)
    if result.changed:
        assert result.outcome is not None
        # findings, not edits: one RSM008 fixed by an environment word and two pins is "RSM008", and
        # an RSM305 fixed by the edit that also fixes RSM302 elsewhere is named RSM305
        counts = result.fixed_codes or collections.Counter(dict.fromkeys(result.outcome.fixed, 1))
        codes = ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(counts.items()))
        verb = "fixed" if write else "would fix"
        stream.write(f"{verb} {name}: {codes}\n")
    elif result.written is not None:  # refused or not written: the file is as it was
        stream.write(f"{result.written} {name}: {shown(result.why)}; the file is as it was\n")
    elif write and result.before:
        left = len(result.left)
        stream.write(f"unchanged {name}: {left} finding{'s' if left != 1 else ''} left\n")


def _closing_line(totals: collections.Counter[str], write: bool) -> str:
    found, fixed, left, unsafe = totals["found"], totals["fixed"], totals["left"], totals["unsafe"]
    if not found:
        return "No findings."
    done = "fixed" if write else "fixable"
    line = f"Found {found} finding{'s' if found != 1 else ''} ({fixed} {done}, {left} remaining)"
    if unsafe:
        line += f"; {unsafe} more fixable with --unsafe"
    return line + "."
