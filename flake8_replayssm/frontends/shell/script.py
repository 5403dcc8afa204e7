"""Reading a shell script: the entry point :func:`commands_in_shell`, and :func:`read_text`,
which parses one text and wires the objects that walk it.

One text's walk is a few collaborating objects, each with one job, sharing three explicit
pieces of state: the :class:`~.parsing.ParsedSource` (the text and its positions), the
:class:`~.scope.Scope` (the shell's variables) and the :class:`~.context.ReadContext` (what
every text of one input shares).  :func:`read_text` builds them in order of dependency and
connects the two calls that go back up: a ``$(...)`` inside a word runs statements, and a
command may call a function whose body the walk reads again.
"""

from __future__ import annotations

from typing import Any, Mapping

from ...model import Command
from ...unchecked import not_followed
from .assignments import Assignments
from .commands import CommandReader, Wrapping, mentions_an_engine, sbatch_exports
from .context import Nesting, ReadContext
from .control import ControlFlow
from .located import FileMap, Located, Placer
from .parsing import ParsedSource, new_parser
from .scope import Scope
from .values import caller_value, caller_vars
from .words import WordExpander

#: raise internal errors instead of returning what was found so far (tests)
STRICT = False
#: texts read out of texts (`bash -c "eval '...'"`), at most
MAX_NESTED_PARSES = 6
#: texts read for one input, at most
_MAX_PARSES = 2000


def read_text(ctx: ReadContext, src: Located, scope: Scope, wrapping: Wrapping = Wrapping()) -> None:
    """Parse ``src`` (a file, a ``bash -c`` string, a recipe line) and walk it, adding the
    commands it runs to ``ctx.commands``."""
    if ctx.parses >= _MAX_PARSES or wrapping.nested > MAX_NESTED_PARSES:
        return
    ctx.parses += 1
    if ctx.parser is None:
        ctx.parser = new_parser()
    source = ParsedSource(src, ctx.parser)
    nesting = Nesting(ctx, source.node_loc)
    words = WordExpander(source, scope, ctx.choices, nesting)
    assignments = Assignments(source, scope, ctx, words)
    commands = CommandReader(source, scope, ctx, words=words, assignments=assignments, wrapping=wrapping,
                             read_text=read_text)
    walk = ControlFlow(commands, nesting)
    words.read_subshell = walk.subshell
    commands.call_function = walk.call
    walk.block(source.root.children)


def worth_reading(text: str, variables: Mapping[str, Any] | None) -> bool:
    """Whether ``text`` or a value handed in mentions an engine (else nothing is launched)."""
    if mentions_an_engine(text):
        return True
    for value in (variables or {}).values():
        v, _ = caller_value(value)
        if v is not None and mentions_an_engine(v):
            return True
    return False


def commands_in_shell(text: str, *, place: Placer | None = None,
                      variables: Mapping[str, Any] | None = None,
                      base_dir: str | None = None) -> list[Command]:
    """Every simple command of a shell script that mentions vLLM, as argv words and env.

    ``place(start_row0, start_col0, end_row0, end_col0)`` turns positions in
    ``text`` (0-based rows, character columns) into file spans; by default
    ``Span(row + 1, col, end_row + 1, end_col)``.  ``variables`` are known
    environment variables (values ``str``, ``None`` for set-but-unknown, or
    :class:`Word`).  Never raises.
    """
    ctx: ReadContext | None = None
    try:
        if not isinstance(text, str) or not worth_reading(text, variables):
            return []
        ctx = ReadContext(FileMap(text, place), base_dir)
        scope = Scope({**caller_vars(variables), **sbatch_exports(text)}, False)
        read_text(ctx, Located.exact(text, 0), scope)
        _report_bounds(ctx)
        return ctx.commands
    except Exception:  # a frontend never breaks a lint run (RecursionError included)
        if STRICT:
            raise
        if ctx is not None:
            _report_bounds(ctx)
            not_followed(ctx.fmap.span(0, 0), "the shell script could not be read to its end")
        return ctx.commands if ctx is not None else []


def _report_bounds(ctx: ReadContext) -> None:
    """Bounds hit while reading: RSM900 says which part was not followed (:mod:`...unchecked`)."""
    for (start, end), why in ctx.not_followed:
        not_followed(ctx.fmap.span(max(start, 0), max(end, 0)), why)
