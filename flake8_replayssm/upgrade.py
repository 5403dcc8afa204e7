"""``replayssm-lint upgrade --from 0.31.0 --to 0.33.0 [PATHS]``: the launches an upgrade changes.

The question a team asks before it moves to a new release: which of our launches change
verdict?  Every launch of the engine (``--engine``, vLLM by default) is judged once for the
set of the two releases (:mod:`.release_sets`: the explicit option, so it wins over image
tags and pins, as ``--vllm-version`` does), and a launch whose codes differ between them is
reported: what fails after the upgrade that passed before, what the upgrade fixes, and what
the safe fix for the new release (``replayssm-lint fix --vllm-version NEW``) does to it.
:mod:`.upgrade_report` writes the result as a text table, JSON, or Markdown for a pull
request's comment.

Exit codes: 0 when nothing breaks, 1 when a launch gets an error with the upgrade that it did
not have before (a refusal to start), 2 on usage or configuration errors and errors of ours.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from . import engines, project
from .config import ConfigError
from .versions import is_version, normalize_version

if TYPE_CHECKING:
    from .lint import FileResult
    from .model import Finding
    from .verdicts import Verdict


@dataclass
class Change:
    """One launch whose verdict differs between the two releases."""

    path: str
    line: int
    col: int
    cell: int | None
    launch: str
    #: its findings on the old and on the new release (one per code)
    before: tuple[Finding, ...]
    after: tuple[Finding, ...]
    #: codes on the new release that the safe fix for it removes, and those it leaves
    fix_removes: tuple[str, ...] = ()
    fix_leaves: tuple[str, ...] = ()

    @property
    def gained(self) -> list[str]:
        return sorted({f.code for f in self.after} - {f.code for f in self.before})

    @property
    def lost(self) -> list[str]:
        return sorted({f.code for f in self.before} - {f.code for f in self.after})

    @property
    def breaks(self) -> bool:
        """The new release refuses the launch for a reason the old one did not have."""
        from .rules import severity

        return any(severity(code) == "error" for code in self.gained)

    @property
    def status(self) -> str:
        """``breaks``; ``fixed`` (codes gone, none new); ``changed`` (new warnings or notes)."""
        if self.breaks:
            return "breaks"
        return "fixed" if self.lost and not self.gained else "changed"


@dataclass
class Upgrade:
    """What moving from release ``old`` to ``new`` of ``engine`` changes in the checked files."""

    engine: str
    title: str
    old: str
    new: str
    changes: list[Change] = field(default_factory=list)
    #: (path, unified diff) of the safe fix for the new release, per file with a changed launch
    diffs: list[tuple[str, str]] = field(default_factory=list)
    checked: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def breaks(self) -> bool:
        return any(change.breaks for change in self.changes)


def releases_for(engine: str, old: str, new: str) -> tuple[str, str]:
    """The two releases, normalised; ConfigError unless both are releases the engine knows."""
    title = engines.title(engine)
    known = engines.get(engine).releases()
    out = []
    for flag, version in (("--from", old), ("--to", new)):
        wanted = normalize_version(version) if is_version(version) else version
        if wanted not in known:
            raise ConfigError(f"{flag} {version}: not a {title} release this linter knows "
                              f"(known: {', '.join(known)})")
        out.append(wanted)
    if out[0] == out[1]:
        raise ConfigError(f"--from and --to are both {title} {out[0]}: nothing changes")
    return out[0], out[1]


def upgrade(paths: Sequence[str], engine: str, old: str, new: str, overrides: Mapping[str, Any]) -> Upgrade:
    """Judge every launch under ``paths`` for ``old`` and ``new``; the launches that change."""
    old, new = releases_for(engine, old, new)
    report = Upgrade(engine, engines.title(engine), old, new)
    both = {**overrides, f"{engine}_version": f"{old},{new}",
            f"{engine}_version_source": "upgrade --from/--to"}
    after = {**overrides, f"{engine}_version": new, f"{engine}_version_source": "upgrade --to"}
    for path in project.iter_files(paths, settings=partial(project.settings_for, overrides=both)):
        result = project.lint_file(path, partial(project.settings_for, path, both))
        if result is None:
            continue
        if result.error:
            report.errors.append(result.error)
            continue
        report.checked += 1
        changes = launch_changes(result, engine, old, new, path)
        if any(change.after for change in changes):
            _with_safe_fix(report, path, changes, result, project.settings_for(path, after))
        report.changes += changes
    return report


def _launches(result: FileResult) -> list[tuple[Verdict, list[Verdict]]]:
    """Each written launch of a result, once (a command reached twice, or read with each value
    of a variable, is one), with the readings that make it up."""
    from .fix.edits import span_key

    groups: dict[int, list[Verdict]] = {}
    for verdict in result.verdicts:
        if verdict.launch.group is not None:
            groups.setdefault(verdict.launch.group, []).append(verdict)
    out, seen = [], set()
    for verdict in result.verdicts:
        anchor = verdict.launch.anchor
        key = (anchor.cell, anchor.source, span_key(anchor), verdict.launch.form)
        if key in seen or (verdict.launch.group is not None and verdict.launch.group in seen):
            continue
        seen.add(key)
        if verdict.launch.group is not None:
            seen.add(verdict.launch.group)
        out.append((verdict, groups.get(verdict.launch.group, [verdict]) if verdict.launch.group is not None
                    else [verdict]))
    return out


def _on(members: Sequence[Verdict], release: str, reported: set[tuple[Any, str]]) -> tuple[Finding, ...]:
    """The reported findings of a launch (every reading of it) on one release."""
    codes = set.intersection(*({f.code for f in m.for_release(release).findings} for m in members))
    lead = members[0]
    shown = {f.code for f in lead.findings if (f.span, f.code) in reported}
    return tuple(f for f in lead.for_release(release).findings if f.code in codes and f.code in shown)


def launch_changes(result: FileResult, engine: str, old: str, new: str, path: str) -> list[Change]:
    """The launches of one file's result (judged for both releases) whose codes differ."""
    reported = {(f.span, f.code) for f in result.findings}
    out = []
    for lead, members in _launches(result):
        launch = lead.launch
        if launch.engine != engine:
            continue
        before, after = _on(members, old, reported), _on(members, new, reported)
        if {f.code for f in before} != {f.code for f in after}:
            out.append(Change(path, launch.anchor.line, launch.anchor.col, launch.anchor.cell,
                              launch.label or launch.entry, before, after))
    return out


def _launch_codes(result: FileResult, engine: str) -> dict[tuple[int | None, int, int], set[str]]:
    """The codes each launch of ``engine`` is reported with, by (cell, line, column), in order."""
    reported = {(f.span, f.code) for f in result.findings}
    return {(lead.launch.anchor.cell, lead.launch.anchor.line, lead.launch.anchor.col):
            {f.code for f in lead.findings if (f.span, f.code) in reported}
            for lead, _ in _launches(result) if lead.launch.engine == engine}


def _with_safe_fix(report: Upgrade, path: str, changes: list[Change], result: FileResult, config: Any) -> None:
    """What ``fix --vllm-version NEW`` (safe fixes) does to the file, per changed launch: the
    codes of the new release it removes and those it leaves, and the file's diff."""
    from .fix.command import fix_file, unified_diff
    from .lint import detect_kind, lint_text

    fixed = fix_file(path, config, unsafe=False)
    if fixed is None or fixed.outcome is None or not fixed.outcome.changed:
        for change in changes:
            change.fix_leaves = tuple(sorted({f.code for f in change.after}))
        return
    kind = detect_kind(path, fixed.outcome.original) or "shell"
    before = list(_launch_codes(lint_text(fixed.outcome.original, kind, config, path=path), report.engine).items())
    now = list(_launch_codes(lint_text(fixed.outcome.text, kind, config, path=path), report.engine).values())
    left = {where: codes for (where, _), codes in zip(before, now)} if len(before) == len(now) else {}
    for change in changes:
        after = {f.code for f in change.after}
        still = left.get((change.cell, change.line, change.col), after) & after
        change.fix_removes, change.fix_leaves = tuple(sorted(after - still)), tuple(sorted(still))
    report.diffs.append((path, unified_diff(path, fixed.outcome.original, fixed.outcome.text)))
