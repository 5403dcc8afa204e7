"""The upgrade report (:mod:`.upgrade`) as a text table, JSON, or Markdown for a pull request.

Everything that comes from the checked files (paths, launch labels, messages that quote a
file's words, the fix's diff) goes through :mod:`.escaping`, as in every other output: text
lines are one line each and never start a workflow command, JSON is valid for any bytes,
and in Markdown such text is inline ``<code>`` with its punctuation as entities or a fenced
block no line of it can close (README, "Threat model").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .escaping import json_dumps, line, markdown_code, markdown_fence, shown

if TYPE_CHECKING:
    from .model import Finding
    from .upgrade import Change, Upgrade

FORMATS = ("text", "json", "markdown")
#: how each status reads in a heading and in Markdown's first column
_STATUS = {"breaks": ("breaks", "break"), "fixed": ("fixed by the upgrade",) * 2, "changed": ("changed",) * 2}
_MARK = {"breaks": "\u274c", "fixed": "\u2705", "changed": "\u26a0\ufe0f"}


def render(report: Upgrade, fmt: str) -> str:
    if fmt == "json":
        return as_json(report)
    if fmt == "markdown":
        return as_markdown(report)
    return as_text(report)


def _where(change: Change) -> str:
    cell = f"cell {change.cell + 1}:" if change.cell is not None else ""
    return f"{change.path}:{cell}{change.line}:{change.col + 1}"


def _at(change: Change, finding: Finding) -> str:
    """Where a finding of the launch is: its own place (in this file; a ``--config`` file's
    finding is shown at the launch)."""
    if finding.span.source is not None:
        return _where(change)
    cell = f"cell {finding.span.cell + 1}:" if finding.span.cell is not None else ""
    return f"{change.path}:{cell}{finding.span.line}:{finding.span.col + 1}"


def _codes(findings: Sequence[Finding]) -> str:
    return ", ".join(sorted({f.code for f in findings})) or "clean"


def _fix(change: Change) -> str:
    """What the safe fix for the new release does to the launch, in a few words."""
    if not change.after:
        return "-"
    if change.fix_removes and change.fix_leaves:
        return f"fixes {', '.join(change.fix_removes)}; leaves {', '.join(change.fix_leaves)}"
    if change.fix_removes:
        return f"fixes {', '.join(change.fix_removes)}"
    return "none"


def headline(report: Upgrade) -> str:
    """One line: how many launches change, and how."""
    counts = {status: sum(c.status == status for c in report.changes) for status in _STATUS}
    what = ", ".join(f"{n} {_STATUS[s][n != 1]}" for s, n in counts.items() if n)
    files = f"{report.checked} file{'s' if report.checked != 1 else ''} checked"
    if not report.changes:
        return f"{report.title} {report.old} -> {report.new}: no launch changes verdict ({files})."
    n = len(report.changes)
    return (f"{report.title} {report.old} -> {report.new}: {n} launch{'es' if n != 1 else ''} "
            f"change{'s' if n == 1 else ''} verdict ({what}; {files}).")


def as_text(report: Upgrade) -> str:
    """A table (one row per changed launch), what fails on the new release, the safe fix's diff."""
    title, old, new = report.title, report.old, report.new
    rows = [["location", "launch", "change", f"{title} {old}", f"{title} {new}", f"safe fix for {new}"]]
    rows += [[shown(_where(c)), shown(c.launch), c.status, _codes(c.before), _codes(c.after), _fix(c)]
             for c in report.changes]
    out = []
    if report.changes:
        widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
        out += [line("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()) for row in rows]
    failing = [(c, f) for c in report.changes for f in c.after if f.code in c.gained]
    if failing:
        out += ["", f"New on {title} {new}:"]
        out += [line(f"{_at(c, f)}: {f.code} {_severity(f.code)}: {f.message}") for c, f in failing]
    if report.diffs:
        out += ["", f"Safe fix for {title} {new} (replayssm-lint fix --{report.engine}-version {new}):"]
        out += [shown(part) for _, diff in report.diffs for part in diff.rstrip("\n").split("\n")]
    if out:
        out.append("")
    out.append(headline(report))
    return "\n".join(out) + "\n"


def as_json(report: Upgrade) -> str:
    """``{"engine", "from", "to", "checked", "breaks", "launches": [...], "fixes": [...]}``."""
    def finding(f: Finding) -> dict[str, object]:
        return {"code": f.code, "severity": _severity(f.code), "message": f.message,
                "line": f.span.line, "column": f.span.col + 1}

    launches = []
    for c in report.changes:
        item: dict[str, object] = {
            "path": c.path, "line": c.line, "column": c.col + 1, "launch": c.launch, "status": c.status,
            "before": [finding(f) for f in c.before], "after": [finding(f) for f in c.after],
            "gained": c.gained, "lost": c.lost,
            "safe_fix": {"removes": list(c.fix_removes), "leaves": list(c.fix_leaves)}}
        if c.cell is not None:
            item["cell"] = c.cell
        launches.append(item)
    return json_dumps({"engine": report.engine, "from": report.old, "to": report.new, "checked": report.checked,
                       "breaks": report.breaks, "launches": launches,
                       "fixes": [{"path": path, "diff": diff} for path, diff in report.diffs]})


def as_markdown(report: Upgrade) -> str:
    """A pull request's comment: heading, table, new findings and the fixes' diffs (folded)."""
    title, old, new = report.title, report.old, report.new
    out = [f"### replayssm-lint: {title} {old} \u2192 {new}", "", shown(headline(report)), ""]
    if report.changes:
        out += [f"| | where | launch | {title} {old} | {title} {new} | safe fix for {new} |",
                "|---|---|---|---|---|---|"]
        out += [f"| {_MARK[c.status]} {c.status} | {markdown_code(_where(c))} | {markdown_code(c.launch)} | "
                f"{_codes(c.before)} | {_codes(c.after)} | {_fix(c)} |" for c in report.changes]
        out.append("")
    failing = [(c, f) for c in report.changes for f in c.after if f.code in c.gained]
    if failing:
        out += [f"<details><summary>New on {title} {new} ({len(failing)})</summary>", ""]
        out += [f"- {markdown_code(_at(c, f))} **{f.code}** {_severity(f.code)}: {markdown_code(f.message)}"
                for c, f in failing]
        out += ["", "</details>", ""]
    for path, diff in report.diffs:
        out += [f"<details><summary>Safe fix for {title} {new}: {markdown_code(path)}</summary>", "",
                markdown_fence(diff, "diff").rstrip("\n"), "", "</details>", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _severity(code: str) -> str:
    from .rules import severity

    return severity(code)
