"""Word expansion: one shell word (the tree-sitter nodes that touch) into the fields it
expands to, each with its text (None: unknown) and its place in the file.

Literal text, ``'...'``, ``"..."``, ``$'...'``, concatenations and here-document bodies are
read here; ``$X`` / ``${...}`` go to :class:`~.parameters.ParameterExpander`; ``$(...)`` and
``<(...)`` are unknown words whose commands still run (the walk reads them in a subshell:
``read_subshell``, which the wiring in :mod:`.script` sets); brace expansion and arithmetic
are unknown.  Precision first: what is not certain is unknown, never guessed.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from ...model import UNKNOWN_PART
from .choices import Combinations
from .context import MAX_DEPTH, Nesting
from .fields import FieldCollector
from .literals import ansi_c, literal
from .located import UNKNOWN_MARK, join
from .parameters import ParameterExpander
from .parsing import ParsedSource
from .scope import Scope
from .values import Field

#: `{a,b}` / `{1..3}`: brace expansion, any number of words
_BRACE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")


def word_groups(nodes: Sequence[Any]) -> list[list[Any]]:
    """Argument nodes that touch form one shell word."""
    groups: list[list[Any]] = []
    for c in nodes:
        if groups and groups[-1][-1].end_byte == c.start_byte:
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def _no_subshell(n: Any) -> None:
    raise AssertionError("the word expander was not wired to a walk")


class WordExpander:
    """Expands the words of one parsed text."""

    def __init__(self, source: ParsedSource, scope: Scope, choices: Combinations, nesting: Nesting) -> None:
        self.source = source
        self.c = source.c
        self.text = source.text
        self.nesting = nesting
        self.parameters = ParameterExpander(source, scope, choices, self.emit)
        #: reads the commands of a ``$(...)`` / ``<(...)`` in a subshell (the walk's)
        self.read_subshell: Callable[[Any], None] = _no_subshell

    def expand(self, group: Sequence[Any]) -> list[Field]:
        """The fields one shell word expands to, each placed in the file."""
        acc = FieldCollector()
        c = self.c
        first_raw = self.source.raw(group[0]) if group else ""
        for node in group:
            self.emit(node, acc, False)
        built = acc.finish()
        whole = self.source.loc(c(group[0].start_byte), c(group[-1].end_byte))
        if first_raw.startswith("~") and group[0].type in ("word", "concatenation"):
            return [Field(None, False, whole)]
        out = []
        single = len(built) == 1 and not acc.broke
        for b in built:
            if b.elem is not None and b.adds == 1 and len(b.parts) == 1:
                loc = b.elem.loc or whole
            elif single:
                loc = whole
            else:
                known = [p for p in b.parts if p is not None and p.text]
                loc = (join(known, "").locate(0, sum(len(p.text) for p in known))
                       if known else None) or whole
            if b.unknown:
                known_parts = [p for p in b.parts if p is not None and p.text]
                partial = None
                if known_parts:
                    partial = "".join(p.text if p is not None else UNKNOWN_PART for p in b.parts)
                label = self.source.written[c(group[0].start_byte):c(group[-1].end_byte)]
                if b.elem is not None and b.adds == 1 and b.elem.label:
                    label = b.elem.label  # an array's unseen element: as its assignment wrote it
                out.append(Field(None, b.splat, loc, partial, join(b.shadow, ""), label))
            else:
                joined = join([p for p in b.parts if p is not None], "")
                if UNKNOWN_MARK in joined.text:  # holes of an outer string: unknown, but readable again
                    out.append(Field(None, False, loc, None, joined))
                else:
                    out.append(Field(joined, False, loc))
        return out

    def emit(self, n: Any, acc: FieldCollector, quoted: bool) -> None:
        nesting = self.nesting
        if nesting.level > MAX_DEPTH:
            nesting.too_deep(n)
            acc.unknown(not quoted, quoted)
            return
        nesting.level += 1
        old = acc.where
        acc.where = lambda: self.source.node_loc(n)
        try:
            self._emit(n, acc, quoted)
        finally:
            nesting.level -= 1
            acc.where = old

    def _emit(self, n: Any, acc: FieldCollector, quoted: bool) -> None:
        t = n.type
        c = self.c
        # tree-sitter-bash reads `meta-llama` in `${M:-meta-llama/x}` as the variable_name
        # `meta` and the word `-llama/x`: without a `$` it is literal text
        if t in ("word", "number", "extglob_pattern", "regex", "variable_name"):
            cs, ce = c(n.start_byte), c(n.end_byte)
            raw = self.text[cs:ce]
            if not quoted and _BRACE.search(raw):
                acc.unknown(True, False)
                return
            acc.lit(literal(self.source, cs, ce, "dq" if quoted else "plain"), quoted)
        elif t == "raw_string":
            cs, ce = c(n.start_byte), c(n.end_byte)
            acc.lit(self.source.src.slice(cs + 1, max(cs + 1, ce - 1)), True)
        elif t == "ansi_c_string":
            acc.lit(ansi_c(self.source, c(n.start_byte), c(n.end_byte)), True)
        elif t in ("string", "translated_string"):
            acc.mark_quoted()
            self.emit_string(n, acc)
        elif t == "concatenation":
            for child in n.children:
                if child.is_named:
                    self.emit(child, acc, quoted)
                elif child.type not in ("$",):
                    cs, ce = c(child.start_byte), c(child.end_byte)
                    acc.lit(literal(self.source, cs, ce, "dq" if quoted else "plain"), quoted)
        elif t in ("simple_expansion", "expansion"):
            self.parameters.expansion(n, acc, quoted)
        elif t in ("command_substitution", "process_substitution"):
            self.read_subshell(n)
            acc.unknown(t == "command_substitution" and not quoted, quoted)
        elif t == "arithmetic_expansion":
            acc.unknown(False, True)
        elif t == "brace_expression":
            acc.unknown(True, False)
        elif t == "string_content":
            acc.lit(literal(self.source, c(n.start_byte), c(n.end_byte), "dq"), True)
        elif not n.is_named:
            if t != "$":
                cs, ce = c(n.start_byte), c(n.end_byte)
                acc.lit(literal(self.source, cs, ce, "dq" if quoted else "plain"), quoted)
        else:
            acc.unknown(not quoted, quoted)

    def emit_string(self, n: Any, acc: FieldCollector, mode: str = "dq") -> None:
        """The inside of ``"..."`` (or of a here-document body)."""
        c = self.c
        kids = list(n.children)
        start = c(n.start_byte)
        end = c(n.end_byte)
        if kids and not kids[0].is_named and kids[0].type in ('"', '$"'):
            start = c(kids[0].end_byte)
            kids = kids[1:]
        if kids and not kids[-1].is_named and kids[-1].type == '"':
            end = c(kids[-1].start_byte)
            kids = kids[:-1]
        pos = start
        for child in kids:
            if not child.is_named:
                continue  # anonymous tokens (a lone `$`) are literal text, taken from the gaps
            if child.type in ("string_content", "heredoc_content"):
                continue
            cs = self._true_start(child)
            if cs > pos:
                acc.lit(literal(self.source, pos, cs, mode), True)
            if child.type in ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion"):
                self.emit(child, acc, True)
            else:
                acc.unknown(False, True)
            pos = max(pos, c(child.end_byte))
        if end > pos:
            acc.lit(literal(self.source, pos, end, mode), True)

    def _true_start(self, n: Any) -> int:
        """Where an expansion really starts (tree-sitter counts blanks before it in strings)."""
        if n.children:
            return self.c(n.children[0].start_byte)
        cs = self.c(n.start_byte)
        raw = self.text[cs:self.c(n.end_byte)]
        return cs + (len(raw) - len(raw.lstrip()))
