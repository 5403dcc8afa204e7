"""What the linter saw in a file: every launch (clean ones too) and every line that looks
like a launch where none was recognised.

A linter's silence must mean "clean", not "not seen": ``replayssm-lint check
--show-launches`` (and ``--verbose``) list each launch with its model, release and the
assumptions it was judged under, and the launch-looking lines that no launch covers,
so a user can see what the linter did not understand; the summary line counts those lines.

A **launch-looking line** names an engine's entry point (``vllm serve``, ``vllm run-batch``,
``vllm bench latency``, ``python -m vllm.entrypoints.openai.api_server``, ``sglang serve``,
``python -m sglang.launch_server``...: each engine's ``launch_looking`` in its
``engine.toml``), no recognised launch covers it, and it is not prose: not a comment, an
``echo``/``printf``/log line, an import, a step's ``name:``, Markdown outside a code block,
nor in Python a docstring, a ``print``/logging/``help=`` string or any string written where
nothing runs it (:mod:`.frontends.python.places`); there the string's value is what names
the entry point (``["vllm", "serve", model]`` does).  An engine class call or an image name
alone is not one: the one is judged wherever it is read, the other runs what its command says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Sequence

from . import engines

if TYPE_CHECKING:
    from .verdicts import Verdict

#: lines that only talk about a launch: comments, log and help text, a program's log output
#: (``INFO 08-20 10:12:03 ...``), process management, imports, the names of CI steps and tasks
_TALK = re.compile(r"^\s*(?:#|//|<!--|\*|(?:echo|printf|info|warn|warning|error|err|die|debug|msg|say|log|"
                   r"banner|pkill|pgrep|kill|from|import|INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b|print\(|"
                   r"log(?:ger|ging)?[.(]|help\s*=|description\s*=|"
                   r"(?:-\s+)?(?:name|description|summary|title|help)\s*:)")


@dataclass
class LaunchNote:
    """One launch as judged (a launch read with several values of a variable is one note)."""

    line: int
    col: int
    cell: int | None
    label: str
    model: str
    release: str
    release_reason: str
    codes: list[str]
    assumed: list[str] = field(default_factory=list)
    readings: int = 1
    #: the engine whose release ``release`` is (flake8_replayssm.engines.NAMES)
    engine: str = "vllm"
    #: every release the launch was judged for, oldest first (one, or a set), and how text names them
    releases: tuple[str, ...] = ()
    judged_for: str = ""

    def as_dict(self, path: str) -> dict[str, object]:
        item: dict[str, object] = {
            "path": path, "line": self.line, "column": self.col + 1, "launch": self.label,
            "model": self.model, "vllm_version": self.release, "vllm_version_reason": self.release_reason,
            "codes": self.codes, "assumed": self.assumed, "readings": self.readings, "engine": self.engine,
            "releases": list(self.releases)}
        if self.cell is not None:
            item["cell"] = self.cell
        return item

    def text(self, path: str) -> str:
        where = f"{path}:" + (f"cell {self.cell}:" if self.cell is not None else "") + f"{self.line}:{self.col + 1}"
        codes = ", ".join(self.codes) if self.codes else "clean"
        parts = [f"{where}: launch {self.label}: {codes}; model {self.model}; "
                 f"{engines.title(self.engine)} {self.judged_for or self.release} ({self.release_reason})"]
        if self.readings > 1:
            parts.append(f"read {self.readings} ways (a variable with several values)")
        parts += [f"assuming {a}" for a in self.assumed]
        return "; ".join(parts)


@dataclass
class Unrecognised:
    """A line that looks like a launch where no launch was recognised."""

    line: int
    cell: int | None
    text: str

    def as_dict(self, path: str) -> dict[str, object]:
        item: dict[str, object] = {"path": path, "line": self.line, "text": self.text}
        if self.cell is not None:
            item["cell"] = self.cell
        return item

    def line_text(self, path: str) -> str:
        where = f"{path}:" + (f"cell {self.cell}:" if self.cell is not None else "") + str(self.line)
        return f"{where}: looks like a launch, none recognised: {self.text}"


def launch_notes(verdicts: Sequence[Verdict], reported: Sequence[tuple]) -> list[LaunchNote]:
    """One note per written launch (the first reading of a group stands for the group)."""
    notes: list[LaunchNote] = []
    groups: dict[int, LaunchNote] = {}
    for verdict, findings in zip(verdicts, reported):
        launch = verdict.launch
        if launch.group is not None and launch.group in groups:
            groups[launch.group].readings += 1
            continue
        model = launch.model.value if launch.model is not None and isinstance(launch.model.value, str) \
            else None
        arch = verdict.architectures[0] if len(verdict.architectures) == 1 else None
        shown = (f"{model} ({arch})" if model and arch else model or
                 (f"unknown ({verdict.model_detail})" if arch is None else f"{arch} ({verdict.model_detail})"))
        assumed = [f"{u} adds no ReplaySSM option" for u in launch.unseen] if verdict.extra_args == "closed" else []
        note = LaunchNote(launch.anchor.line, launch.anchor.col, launch.anchor.cell,
                          launch.label or launch.entry, shown, verdict.target.name, verdict.target.reason,
                          sorted({f.code for f in findings}), assumed, engine=launch.engine,
                          releases=verdict.releases, judged_for=verdict.judged_for)
        if launch.group is not None:
            groups[launch.group] = note
        notes.append(note)
    return notes


def covered_lines(verdicts: Iterable[Verdict]) -> set[tuple[int | None, int]]:
    """(cell, line) of every line from a launch's first span to its last, in this file."""
    covered: set[tuple[int | None, int]] = set()
    for verdict in verdicts:
        launch = verdict.launch
        settings = [launch.model, *launch.options.values(), *launch.env.values()]
        spans = [launch.anchor] + [s.span for s in settings if s is not None]
        if launch.written is not None:  # a Python call or value: every line of it
            spans.append(launch.written)
        spans += [s.value_span for s in launch.options.values() if s.value_span is not None]
        by_cell: dict[int | None, list[int]] = {}
        for span in spans:
            if span.source is None:
                by_cell.setdefault(span.cell, []).extend((span.line, span.end_line))
        for cell, lines in by_cell.items():
            covered.update((cell, line) for line in range(min(lines), max(lines) + 1))
    return covered


#: a line the frontend already found launch-looking (a Python string that names an entry point)
Candidate = tuple[int | None, int, str, bool]


def unrecognised_lines(candidates: Iterable[Candidate], verdicts: Iterable[Verdict]) -> list[Unrecognised]:
    """The launch-looking lines among ``candidates`` ((cell, line, text, already found
    launch-looking)) that no launch of ``verdicts`` covers."""
    covered = covered_lines(verdicts)
    looking = engines.launch_looking()
    out = []
    for cell, line, text, found in candidates:
        if (cell, line) in covered:
            continue
        if found or looking.search(text) and not _TALK.match(text):
            snippet = " ".join(text.split())
            out.append(Unrecognised(line, cell, snippet if len(snippet) <= 100 else snippet[:97] + "..."))
    return out
