"""Assignments: what ``X=v``, ``X+=v``, ``A=(...)``, ``export``/``declare``/``local``/
``readonly``, ``unset`` and the builtins that set variables (``read``, ``printf -v``,
``let``, ``getopts``, ``mapfile``) do to the :class:`~.scope.Scope`.

A value is known when every word of it is (``CMD="vllm serve $M"`` with an unknown M is
*partial*: its known text with holes, so that it can be read again as a command); ``+=``
grows a string, an array or each value of a choice; a value past the size bounds is unknown.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from .choices import choice
from .context import ReadContext
from .fields import FieldCollector
from .located import EMPTY, join
from .parsing import ParsedSource
from .scope import Scope
from .values import MAX_VALUE_CHARS, MAX_VALUE_ITEMS, NAME, Field, Var, too_large
from .words import WordExpander, word_groups

#: options of `read` / `mapfile` that take a value (never a variable's name)
_READ_VALUE_OPTIONS = ("-d", "-n", "-N", "-p", "-t", "-u", "-C", "-c", "-O", "-s", "-i")


class Assignments:
    """Applies the assignments of one parsed text to its shell's variables."""

    def __init__(self, source: ParsedSource, scope: Scope, ctx: ReadContext, words: WordExpander) -> None:
        self.source = source
        self.scope = scope
        self.ctx = ctx
        self.words = words

    def set_unknown(self, name: str, node: Any, *, local: bool = False) -> None:
        self.scope.set_unknown(name, self.source.node_loc(node), local=local)

    def unset(self, names: Iterable[str]) -> None:
        for name in names:
            if name.startswith("-"):
                continue
            if NAME.match(name):
                self.scope.set(name, Var("unset", None, None, exported=False))

    def value_of(self, n: Any) -> tuple[str, Any, tuple[int, int], str]:
        """(kind, value, file range of the value, operator) of a ``variable_assignment``."""
        source = self.source
        kids = n.children
        op_index = next((k for k, c in enumerate(kids) if not c.is_named and c.type in ("=", "+=")), None)
        op = kids[op_index].type if op_index is not None else "="
        values = [c for c in kids[op_index + 1:]] if op_index is not None else []
        values = [c for c in values if c.type != "comment"]
        if not values:
            end = source.c(n.end_byte)
            return "scalar", EMPTY, source.loc(end, end), op
        loc = source.loc(source.c(values[0].start_byte), source.c(values[-1].end_byte))
        if len(values) == 1 and values[0].type == "array":
            fields: list[Field] = []
            for group in word_groups([c for c in values[0].children if c.is_named and c.type != "comment"]):
                if source.raw(group[0]).startswith("["):
                    return "unknown", None, loc, op
                fields.extend(self.words.expand(group))
            return "array", fields, loc, op
        acc = FieldCollector(nosplit=True)
        first = values[0]
        if first.type in ("word", "concatenation") and source.raw(first).startswith("~"):
            return "unknown", None, loc, op
        for c in values:
            self.words.emit(c, acc, False)
        built = acc.finish()
        if not built:
            return "scalar", EMPTY, loc, op
        b = built[0]
        if b.unknown:
            if any(p is not None and p.text for p in b.parts):
                return "partial", join(b.shadow, ""), loc, op   # `CMD="vllm serve $M ..."`
            return "unknown", None, loc, op
        return "scalar", join([p for p in b.parts if p is not None], ""), loc, op

    def assign(self, n: Any, *, local: bool = False, export: bool | None = None, flags: str = "") -> None:
        name_node = n.child_by_field_name("name")
        if name_node is None:
            return
        if name_node.type == "subscript":
            inner = name_node.child_by_field_name("name")
            if inner is not None:
                self.set_unknown(self.source.raw(inner), n, local=local)
            return
        name = self.source.raw(name_node)
        readings = self.ctx.choices.each(lambda: self.value_of(n))
        kind, value, loc, op = readings[0]
        if len(readings) > 1:  # `CMD="vllm serve $MODEL"` with MODEL one of a few values: so is CMD
            alternatives = choice([Var(k, v, where) for k, v, where, _ in readings])
            kind, value = ("choice", alternatives.value) if alternatives is not None else ("unknown", None)
        if "A" in flags or ("i" in flags and kind == "scalar" and not value.text.strip().isdigit()):
            kind, value = "unknown", None
        before = self.scope.lookup(name)
        if op == "+=" and before is not None and before.kind == "choice" and kind in ("scalar", "partial"):
            # `CMD+=" --flag"` after an if/else chose CMD: every value grows
            grown = [Var("partial" if "partial" in (alt.kind, kind) else "scalar", alt.value + value, alt.loc)
                     if alt.kind in ("scalar", "partial") else Var("unknown") for alt in before.value]
            alternatives = choice(list(grown))
            kind, value, op = ("choice", alternatives.value, "=") if alternatives is not None \
                else ("unknown", None, "=")
        if op == "+=" and before is None and kind == "array":
            before = Var("array", [])   # arrays are never inherited from the environment
        if op == "+=":
            if before is not None and before.kind in ("scalar", "partial") and kind in ("scalar", "partial"):
                # `CMD+=" --max-model-len $LEN"`: a command string growing, holes and all
                value = before.value + value
                kind = "partial" if "partial" in (before.kind, kind) else "scalar"
            elif before is None or before.kind not in ("scalar", "array", "unset") \
                    or kind in ("unknown", "partial"):
                kind, value = "unknown", None
            elif kind == "array":
                old = before.value if before.kind == "array" else (
                    [Field(before.value, False, before.loc)] if before.kind == "scalar" else [])
                value = list(old) + list(value)
            elif before.kind == "array":
                kind, value = "unknown", None
            elif before.kind == "scalar":
                value = before.value + value
        if too_large(kind, value):
            # `A="$A $A"` doubling, a huge array: not followed further (bounded time and memory)
            self.ctx.bounded(loc, f"the value of ${name} grew past {MAX_VALUE_CHARS} characters or "
                                  f"{MAX_VALUE_ITEMS} words")
            kind, value = "unknown", None
        exported = self.scope.export_of(before) if export is None else export
        self.scope.set(name, Var(kind, value, loc, exported=exported,
                                 env=bool(before and before.env), local=local))

    def declaration(self, n: Any) -> None:
        """``export`` / ``declare`` / ``typeset`` / ``local`` / ``readonly``."""
        raw = self.source.raw
        scope = self.scope
        keyword = n.children[0].type if n.children else ""
        opts = [raw(c) for c in n.children[1:] if c.type == "word" and raw(c)[:1] in "-+"]
        flags = "".join(o[1:] for o in opts if o.startswith("-"))
        local = keyword == "local" or (keyword in ("declare", "typeset") and "g" not in flags
                                       and scope.in_function())
        export: bool | None = True if keyword == "export" else None
        for c in n.children[1:]:
            if c.type == "word" and raw(c)[:1] in "-+" and len(raw(c)) > 1:
                text = raw(c)
                if text[0] == "-" and "x" in text:
                    export = True
                if text[0] == "+" and "x" in text or (keyword == "export" and text == "-n"):
                    export = False
                continue
            if c.type == "variable_assignment":
                if "f" in flags or "F" in flags:
                    continue
                self.assign(c, local=local, export=export, flags=flags)
            elif c.type == "variable_name":
                name = raw(c)
                before = scope.lookup(name)
                if keyword == "export" or export is not None:
                    if before is None:
                        scope.set(name, Var("unknown", None, self.source.node_loc(c), exported=export))
                    else:
                        scope.set(name, before.with_(exported=export))
                elif keyword in ("local", "declare", "typeset") and "p" not in flags:
                    if "a" in flags and before is None:
                        scope.set(name, Var("array", [], self.source.node_loc(c), local=local))
                    else:
                        self.set_unknown(name, c, local=local)
            elif c.is_named and c.type != "comment":
                # `export $(cat .env | xargs)`, `export "$line"`: any variable may change
                scope.mark_barrier()

    def builtin_assigns(self, base: str, texts: list[str | None], n: Any) -> None:
        """The variables ``read``, ``mapfile``, ``getopts``, ``let`` or ``printf -v`` set: unknown."""
        names: list[str] = []
        args = texts[1:]
        if base == "printf":
            for k, t in enumerate(args[:-1]):
                if t == "-v" and args[k + 1]:
                    names.append(args[k + 1] or "")
        elif base == "getopts":
            if len(args) >= 2 and args[1]:
                names.append(args[1])
        elif base == "let":
            for t in args:
                m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*([-+*/%&|^]?=|\+\+|--)", t or "")
                if m:
                    names.append(m.group(1))
        else:
            skip = False
            for t in args:
                if skip:
                    skip = False
                    continue
                if t is None:
                    continue
                if t.startswith("-"):
                    skip = t in _READ_VALUE_OPTIONS
                    continue
                names.append(t)
            if base in ("mapfile", "readarray") and not names:
                names.append("MAPFILE")
            if base == "read" and not names:
                names.append("REPLY")
        for name in names:
            if NAME.match(name):
                self.set_unknown(name, n)
