"""Deleting words, list items and keyword arguments with their separators.

Deletions are collected while a launch is planned and turned into edits once
(:meth:`Deletions.flush_deletions`): neighbouring words go in one edit, so the separator
between them is removed once (``"true", "--mamba-cache-mode", "all"``), and a word alone on
its line takes the line with it.
"""

from __future__ import annotations

import re
from typing import Any

from .state import PlanState


class Deletions(PlanState):
    """Turning the words to delete into edits that leave no stray separator behind."""

    def flush_deletions(self) -> None:
        """Turn the words to delete into edits; neighbouring words go in one edit, so
        that their separators are removed once (``"true", "--mamba-cache-mode", "all"``)."""
        runs: list[list[Any]] = []
        for start, end, listed, code in sorted(self.deletions):
            if runs and runs[-1][2] == listed and start >= runs[-1][1] and \
                    re.fullmatch(r"[\s,]*" if listed else r"[ \t]*", self.text[runs[-1][1]:start]):
                runs[-1][1] = max(runs[-1][1], end)
                continue
            runs.append([start, end, listed, code])
        self.deletions = []
        for start, end, listed, code in runs:
            start, end = self.list_item_range(start, end) if listed else self.word_range(start, end)
            self.add(start, end, "", code)
        by_seq: dict[int, tuple[Any, set[int], str]] = {}
        for seq, index, code in self.item_deletions:
            by_seq.setdefault(id(seq), (seq, set(), code))[1].add(index)
        self.item_deletions = []
        for seq, indexes, code in by_seq.values():
            assert self.yaml is not None
            ranges = self.yaml.delete_items(seq, indexes)
            if ranges is None:
                raise AssertionError("cannot delete these items")
            for start, end in ranges:
                self.add(start, end, "", code)

    def list_item_range(self, start: int, end: int) -> tuple[int, int]:
        """A list item or keyword argument with its comma; its whole line when alone on it."""
        text = self.text
        after = re.match(r"[ \t]*,[ \t]*", text[end:])
        if after:
            new_end = end + after.end()
            line_start = self.index.line_start(start)
            line_end = self.index.line_end(start)
            rest = text[new_end:line_end]
            if text[line_start:start].strip() == "" \
                    and (new_end >= line_end or self.kind == "python" and rest.lstrip().startswith("#")) \
                    and self.index.line_of(end) == self.index.line_of(start):
                terminator_end = self.index.starts[self.index.line_of(start) + 1] \
                    if self.index.line_of(start) + 1 < len(self.index.starts) else len(text)
                return line_start, terminator_end
            if new_end >= line_end:  # the last item on its line: no trailing blank left behind
                lead = re.search(r"[ \t]+\Z", text[line_start:start])
                if lead and text[line_start:start].strip():
                    start = line_start + lead.start()
            return start, new_end
        before = re.search(r",\s*\Z", text[:start])
        if before:
            line_end = self.index.line_end(end)
            if self.kind == "python" and text[self.index.line_start(start):start].strip() == "" \
                    and text[end:line_end].lstrip().startswith("#"):
                end = line_end  # the item's own comment goes with it
            return before.start(), end
        return start, end

    def word_range(self, start: int, end: int) -> tuple[int, int]:
        """A bare word (or words) with the whitespace before it; its whole line when alone on it."""
        text = self.text
        line_start = self.index.line_start(start)
        line_end = self.index.line_end(end)
        rest = text[end:line_end]
        if text[line_start:start].strip() == "" and re.fullmatch(r"[ \t]*\\[ \t]*", rest) \
                and self.index.line_of(start) > 0:
            next_line = self.index.line_of(end) + 1
            stop = self.index.starts[next_line] if next_line < len(self.index.starts) else len(text)
            return line_start, stop
        if self.kind == "yaml" and text[line_start:start].strip() == "" and rest.strip() == "" \
                and self.index.line_of(start) > 0:
            # a word alone on its line of a YAML string: the whole line (unless the line
            # before continues onto it with a backslash, which would then join the next line)
            previous = self.index.line_of(start) - 1
            before = text[self.index.starts[previous]:self.index.line_end(self.index.starts[previous])]
            if not before.rstrip().endswith("\\"):
                next_line = self.index.line_of(end) + 1
                if next_line < len(self.index.starts):
                    return line_start, self.index.starts[next_line]
        lead = re.search(r"[ \t]+\Z", text[:start])
        if lead:
            return lead.start(), end
        trail = re.match(r"[ \t]+", text[end:])
        return start, end + (trail.end() if trail else 0)
