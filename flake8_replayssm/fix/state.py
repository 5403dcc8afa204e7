"""The text being fixed and the edits planned on it so far: what every kind of edit shares.

:class:`PlanState` holds one text of one kind with its line index, its line ending and its
layout facts (libcst's for Python, :class:`.yaml_edits.YamlFacts` for YAML), the edits
planned so far, the words still to be deleted, and the word each span must hold
(:mod:`.expect`).  The families of edits build on it, each in its own module
(:mod:`.deletions`, :mod:`.words`, :mod:`.keywords`, :mod:`.environment`), and
:class:`.planner.Planner` joins them into the one interface engines' fixes call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from .. import engines
from .config_file import ConfigFile
from .edits import Edit, LineIndex, newline_of
from .yaml_edits import YamlFacts

if TYPE_CHECKING:
    from ..model import Finding, Launch, Span
    from .expect import Expected
    from .python_facts import PyFacts

#: file kinds where words may be inserted and deleted (elsewhere only replaced)
STRUCTURAL_KINDS = frozenset({"python", "shell", "makefile", "dockerfile", "markdown"})


class PlanState:
    """One text of one kind, and the edits planned on it so far."""

    def __init__(self, text: str, kind: str, *, unsafe: bool = False, ipython: bool = False) -> None:
        self.text, self.kind, self.unsafe = text, kind, unsafe
        #: a notebook cell: ``!cmd`` / ``%sx cmd`` lines start shell commands
        self.ipython = ipython
        self.index = LineIndex(text)
        self.newline = newline_of(text)
        self.py: PyFacts | None = None
        if kind == "python":
            from .python_facts import python_facts  # libcst: only when Python is fixed

            self.py = python_facts(text, self.index)
        self.yaml: YamlFacts | None = None
        #: the whole text is an engine's ``--config`` file (judged as ``ENGINE serve --config FILE``)
        self.serve_config = False
        if kind == "yaml":
            try:
                self.yaml = YamlFacts(text, self.index)
            except Exception:  # not YAML we can read: replacements only where spans are sure
                self.yaml = None
            self.serve_config = self.yaml is not None and engines.config_launch(text, None) is not None
        #: the block of options a keyword launch outside Python is fixed in (while it is planned)
        self.block: ConfigFile | None = None
        #: YAML sequence items to delete: (sequence, item index, code)
        self.item_deletions: list[tuple[Any, int, str]] = []
        self.edits: list[Edit] = []
        #: why findings were left unfixed ("CODE: reason")
        self.skipped: list[str] = []
        #: (span, code) -> why that finding is left unfixed, for the user (:meth:`leave`)
        self.why_not: dict[tuple[Span, str], str] = {}
        #: where the edits of the launch being planned start in ``edits``
        self.launch_start = 0
        #: environment variables set by a new ``os.environ[...]`` line (once per text: later
        #: launches see the line in the next round)
        self.environ_planned: set[str] = set()
        #: an ``import os`` line is planned in this round (``env={**os.environ, ...}``, ``os.environ[...]``)
        self.os_import_planned = False
        #: words to delete in the launch being planned: (start, end, in a list, code)
        self.deletions: list[tuple[int, int, bool, str]] = []
        #: span -> the text the word there must have (checked before editing it)
        self.expected: dict[tuple[int, int, int, int], Expected] = {}

    def offsets(self, span: Span) -> tuple[int, int]:
        """The character offsets of ``span`` in the text."""
        return self.index.span(span)

    def raw(self, span: Span) -> str:
        """The text of ``span`` as written (quotes included)."""
        start, end = self.offsets(span)
        return self.text[start:end]

    def add(self, start: int, end: int, replacement: str, code: str) -> None:
        """Plan ``text[start:end]`` -> ``replacement``, as a fix for ``code``."""
        self.edits.append(Edit(start, end, replacement, code))

    def planned(self, code: str) -> bool:
        """Whether the plan of the current launch already has an edit for ``code``."""
        return any(code in edit.code.split(",") for edit in self.edits[self.launch_start:])

    def skip(self, findings: Sequence[Finding], why: str) -> None:
        """Leave every one of ``findings`` unfixed, saying why."""
        self.skipped.extend(f"{f.code}: {why}" for f in findings)

    def leave(self, findings: Sequence[Finding], why: str) -> None:
        """Leave ``findings`` unfixed because of how the launch is written, and tell the user so
        (``fix`` prints ``why`` beside each: :attr:`why_not`)."""
        self.skip(findings, why)
        for f in findings:
            self.why_not[(f.span, f.code)] = why

    def option_block(self, launch: Launch) -> ConfigFile | None:
        """The YAML mapping a keyword launch's options are the keys of (a Ray Serve config's
        ``engine_kwargs``), for key edits; None when they are not all keys of one block mapping."""
        if self.yaml is None:
            return None
        points = [self.index.offset(s.span.line, s.span.col) for s in launch.options.values()
                  if s.span.source is None and s.span.cell is None]
        entries = self.yaml.block_entries(points)
        if not entries:
            return None
        known = launch.model is not None and isinstance(launch.model.value, str)
        return ConfigFile(self.yaml, entries, self.add, self.newline, model_known=known, keywords=True)

    def config_file(self) -> ConfigFile | None:
        """The text's top-level entries as an engine's ``--config`` file (None: not a YAML
        text of one block mapping), or the block of options being fixed (:meth:`option_block`)."""
        if self.block is not None:
            return self.block
        entries = self.yaml.config_entries() if self.yaml is not None else None
        if not entries:
            return None
        assert self.yaml is not None
        return ConfigFile(self.yaml, entries, self.add, self.newline)
