"""What every text read out of one input shares (:class:`ReadContext`), and the nesting bound
of one text's walk (:class:`Nesting`).

One input (a script, a Makefile) may be read as several texts: ``bash -c`` and ``eval``
strings, here-documents fed to a shell, recipe lines.  They all add to one list of
commands, see the same files written by here-documents, share one parser and one budget of
parses, and report the parts they did not follow (a bound was hit) in one place.
"""

from __future__ import annotations

import itertools
from typing import Any

from ...model import Command
from .choices import Combinations
from .located import FileMap, Located

#: nesting (statements and words together) beyond which a part is skipped / unknown
MAX_DEPTH = 60


class ReadContext:
    """What every (nested) parse of one input shares."""

    def __init__(self, fmap: FileMap, base_dir: str | None) -> None:
        self.fmap = fmap
        self.base_dir = base_dir
        self.commands: list[Command] = []
        #: files the script writes with a here-document (path -> text), for `--config PATH`
        self.files: dict[str, Located] = {}
        self.parses = 0
        self.parser: Any = None
        #: reading a command once per combination of the choice variables it uses
        self.choices = Combinations()
        self.groups = itertools.count(1)
        #: how many times the loop bodies being read are read (nested loops over listed words)
        self.loop_readings = 1
        #: parts of the text not followed because a bound was hit: (file range, why)
        self.not_followed: list[tuple[tuple[int, int], str]] = []

    def bounded(self, loc: tuple[int, int], why: str) -> None:
        """Say that part of the text was not followed (a bound was hit), once per place."""
        if (loc, why) not in self.not_followed:
            self.not_followed.append((loc, why))


class Nesting:
    """How deep the walk of one text is, statements and words together (one bound for both:
    ``$( $( ... ) )`` nests statements inside words inside statements)."""

    __slots__ = ("level", "ctx", "node_loc")

    def __init__(self, ctx: ReadContext, node_loc: Any) -> None:
        self.level = 0
        self.ctx = ctx
        self.node_loc = node_loc

    def too_deep(self, n: Any) -> None:
        """The bound was hit at ``n`` (``level > MAX_DEPTH``, which the walk tests inline: it is
        on every node): say so once, at the construct whose contents are not followed (its
        parent: the siblings cut there are one part)."""
        where = n.parent if n.parent is not None else n
        self.ctx.bounded(self.node_loc(where), f"shell nesting deeper than {MAX_DEPTH} levels")
