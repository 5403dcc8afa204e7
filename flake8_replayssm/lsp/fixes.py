"""Quick fixes for one finding, and "fix all safe" for a document, from the ``fix`` planner.

A finding's quick fix is the planner's edits for that finding's code, limited
to the launch the finding belongs to (the cell, in a notebook): two launches
with the same problem are two quick fixes.  Safe edits are those the planner
makes without ``--unsafe``; an edit it makes only with ``--unsafe`` is offered
labelled as unsafe.  Every quick fix is checked before it is offered: the
result parses, has fewer findings of that code, and no more findings of a code
that makes vLLM refuse a launch.  "Fix all" is ``replayssm-lint fix`` on the
buffer (rounds, roll-back of rounds that would break a launch vLLM accepts).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Hashable

from ..config import LintConfig
from ..fix.codemod import FAILING_CODES, fix_text, plan_edits
from ..fix.edits import Edit, LineIndex, OverlapError, apply_edits, parse_error
from ..lint import FileResult, lint_text
from ..model import Finding, Launch, Span
from .documents import Snapshot


@dataclass(frozen=True)
class Fix:
    """One way to change the snapshot's text; ``text`` is the whole new text."""

    title: str
    text: str
    codes: tuple[str, ...]
    safe: bool


class Fixer:
    """The fixes of one snapshot (linted and planned once, on demand)."""

    def __init__(self, snapshot: Snapshot, config: LintConfig, result: FileResult | None = None) -> None:
        assert snapshot.kind is not None
        self.snapshot, self.config, self.kind = snapshot, config, snapshot.kind
        self.text = snapshot.text
        self.result = result or self._lint(self.text)
        self._for_finding: dict[Finding, list[Fix]] = {}

    def _lint(self, text: str) -> FileResult:
        return lint_text(text, self.kind, self.config, path=self.snapshot.path)

    @cached_property
    def safe_edits(self) -> list[Edit]:
        return plan_edits(self.text, self.kind, self.config, path=self.snapshot.path, unsafe=False)

    @cached_property
    def unsafe_edits(self) -> list[Edit]:
        return plan_edits(self.text, self.kind, self.config, path=self.snapshot.path, unsafe=True)

    def for_finding(self, finding: Finding) -> list[Fix]:
        """The quick fix of one finding: the safe one if there is one, else an unsafe one."""
        if finding not in self._for_finding:
            self._for_finding[finding] = self._plan_for(finding)
        return self._for_finding[finding]

    def _plan_for(self, finding: Finding) -> list[Fix]:
        owner = self._owner_of_finding(finding)
        safe_set = set(self.safe_edits)
        for plan, safe in ((self.safe_edits, True), (self.unsafe_edits, False)):
            mine = [e for e in plan if finding.code in e.code.split(",")]
            for candidate in (self._owned(mine, owner), mine):
                if not candidate or not safe and set(candidate) <= safe_set:
                    continue  # nothing, or nothing the safe plan does not already offer
                text = self._checked(candidate, finding.code)
                if text is not None:
                    title = _title(finding.code, candidate, safe, self.kind, self.text, text)
                    return [Fix(title, text, _codes(candidate), safe)]
        return []

    def fix_all(self) -> Fix | None:
        """Every safe fix of the document, as ``replayssm-lint fix`` makes them."""
        return self._fix_all

    @cached_property
    def _fix_all(self) -> Fix | None:
        outcome = fix_text(self.text, self.kind, self.config, path=self.snapshot.path, unsafe=False)
        if not outcome.changed or outcome.error:
            return None
        codes = tuple(sorted(set(outcome.fixed)))
        return Fix(f"Fix all safe ReplaySSM problems ({', '.join(codes)})", outcome.text, codes, True)

    def _checked(self, edits: list[Edit], code: str) -> str | None:
        """The text with ``edits`` applied, if that parses and really fixes ``code``."""
        try:
            text = apply_edits(self.text, edits)
        except OverlapError:
            return None
        if text == self.text or parse_error(text, self.kind) is not None:
            return None
        before = Counter(f.code for f in self.result.findings)
        after = Counter(f.code for f in self._lint(text).findings)
        if after[code] >= before[code] or any(after[c] > before[c] for c in FAILING_CODES):
            return None
        return text

    # -- which launch (or notebook cell) an edit and a finding belong to ---------------
    def _owned(self, edits: list[Edit], owner: Hashable) -> list[Edit]:
        return [e for e in edits if owner is not None and self._owner_of_edit(e) == owner]

    def _owner_of_finding(self, finding: Finding) -> Hashable:
        if self.kind == "notebook":
            return finding.span.cell
        for i, verdict in enumerate(self.result.verdicts):
            if any(f.span == finding.span and f.code == finding.code for f in verdict.findings):
                return i
        return None

    def _owner_of_edit(self, edit: Edit) -> Hashable:
        if self.kind == "notebook":
            return next((cell for cell, (start, end) in self._cell_sources.items()
                         if start <= edit.start < end), None)
        best, distance = None, None
        for i, (start, end) in enumerate(self._extents):
            d = 0 if start <= edit.start <= end else min(abs(edit.start - start), abs(edit.start - end))
            if distance is None or d < distance:
                best, distance = i, d
        return best

    @cached_property
    def _extents(self) -> list[tuple[int, int]]:
        """Per launch, the offsets from its first to its last span in this text."""
        index = LineIndex(self.text)
        out = []
        for verdict in self.result.verdicts:
            offsets = [o for span in _spans(verdict.launch) if span.source is None and span.cell is None
                       for o in index.span(span)]
            out.append((min(offsets), max(offsets)) if offsets else (-1, -1))
        return out

    @cached_property
    def _cell_sources(self) -> dict[int, tuple[int, int]]:
        from ..notebook_json import locate_sources

        return {cell: (s.start, s.end) for cell, s in (locate_sources(self.text) or {}).items()}


def _spans(launch: Launch) -> list[Span]:
    settings = list(launch.options.values()) + list(launch.env.values()) + launch.history + launch.yaml_false
    if launch.model is not None:
        settings.append(launch.model)
    spans = [launch.anchor]
    for setting in settings:
        spans.append(setting.span)
        if setting.value_span is not None:
            spans.append(setting.value_span)
    return spans


def _codes(edits: list[Edit]) -> tuple[str, ...]:
    return tuple(sorted({c for e in edits for c in e.code.split(",") if c}))


def _title(code: str, edits: list[Edit], safe: bool, kind: str, before: str, after: str) -> str:
    others = [c for c in _codes(edits) if c != code]
    what = "; ".join(filter(None, (describe(old, new) for old, new in _visible(kind, before, after))))
    head = f"Fix {code}" + (f" (and {', '.join(others)})" if others else "")
    return f"{head}{'' if safe else ' (unsafe)'}: {what}" if what else head + ("" if safe else " (unsafe)")


def _visible(kind: str, before: str, after: str) -> list[tuple[str, str]]:
    """The texts a user sees change: a notebook's changed cells, or the whole text."""
    if kind != "notebook":
        return [(before, after)]
    import json

    from ..frontends.notebook import source_of

    try:
        old, new = json.loads(before)["cells"], json.loads(after)["cells"]
    except (ValueError, KeyError, TypeError):
        return []
    return [(source_of(a), source_of(b)) for a, b in zip(old, new) if source_of(a) != source_of(b)]


def describe(before: str, after: str, *, limit: int = 3, width: int = 48) -> str:
    """What an edit does, in words: ``insert 'X'; replace 'a' with 'b'; remove 'c'``."""
    from .positions import changes

    parts = []
    for start, end, new in changes(before, after):
        old = before[start:end]
        while old and start > 0 and not before[start - 1].isspace() and before[start - 1] not in "\"'[(,":
            start -= 1
            old, new = before[start] + old, before[start] + new
        while old and end < len(before) and not before[end].isspace() and before[end] not in "\"']),":
            old, new = old + before[end], new + before[end]
            end += 1
        old, new = _short(old.strip(), width), _short(new.strip(), width)
        if not old:
            parts.append(f"insert {new!r}")
        elif not new:
            parts.append(f"remove {old!r}")
        else:
            parts.append(f"replace {old!r} with {new!r}")
    if len(parts) > limit:
        parts = parts[:limit] + [f"{len(parts) - limit} more"]
    return "; ".join(parts)


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"
