"""Parameter expansion: ``$X``, ``${X}``, ``${X:-default}`` and the other operators,
``${A[@]}`` / ``${A[k]}``, ``$1`` and ``"$@"`` inside a function call, with the values the
:class:`~.scope.Scope` holds.

What a value is when the script does not say (DESIGN.md): a variable never assigned in the
file takes the default written in its ``${X:-default}`` (the script's own choice); an empty
default, or a plain ``$X`` from the caller, is unknown; an unquoted unknown expansion may be
any number of words (``splat``).  ``${X:=default}`` also assigns the default.
"""

from __future__ import annotations

from typing import Any, Callable

from .choices import Combinations
from .fields import FieldCollector
from .literals import literal
from .located import EMPTY, HOLE, Located, join
from .parsing import ParsedSource
from .scope import Scope
from .values import NAME, Field

#: variables that are never split into several words
_NUMERIC_SPECIALS = frozenset({"#", "?", "$", "!", "-"})
_OPERATORS = (":-", "-", ":=", "=", ":+", "+", ":?", "?")


class ParameterExpander:
    """Emits the value of one ``$...`` / ``${...}`` into the fields of the word it is in."""

    def __init__(self, source: ParsedSource, scope: Scope, choices: Combinations,
                 emit: Callable[[Any, FieldCollector, bool], None]) -> None:
        self.source = source
        self.c = source.c
        self.scope = scope
        self.choices = choices
        #: the word expander's: the words inside a ``${X:-word}``
        self.emit = emit

    def expansion(self, n: Any, acc: FieldCollector, quoted: bool) -> None:
        """A ``simple_expansion`` (``$X``) or ``expansion`` (``${...}``) node."""
        kids = n.children
        raw = self.source.raw
        fs, fe = self.source.node_loc(n)
        if n.type == "simple_expansion":
            named = [c for c in kids if c.is_named]
            if not named:
                acc.lit(literal(self.source, self.c(n.start_byte), self.c(n.end_byte), "plain"), quoted)
                return
            self.name(raw(named[0]), None, acc, quoted, (fs, fe))
            return
        # ${...}
        inner = [c for c in kids if c.type not in ("${", "}")]
        if not inner:
            acc.unknown(not quoted, quoted)
            return
        head = inner[0]
        if head.type not in ("variable_name", "special_variable_name", "subscript"):
            acc.unknown(not quoted, quoted)   # ${#X}, ${!X}
            return
        rest = inner[1:]
        index = None
        if head.type == "subscript":
            name_node = head.child_by_field_name("name")
            index_node = head.child_by_field_name("index")
            if name_node is None or index_node is None:
                acc.unknown(not quoted, quoted)
                return
            name = raw(name_node)
            index = raw(index_node)
        else:
            name = raw(head)
        if not rest:
            self.name(name, index, acc, quoted, (fs, fe))
            return
        op = raw(rest[0]) if not rest[0].is_named else ""
        op_index = len(kids) - len(rest) - (1 if kids and kids[-1].type == "}" else 0)
        if op not in _OPERATORS:
            acc.unknown(not quoted, quoted)
            return
        var = self.value(name, index, (fs, fe))
        if var is None and op in (":-", "-", ":=", "="):
            if not raw(n)[self.c(kids[op_index].end_byte) - self.c(n.start_byte):-1]:
                # an empty default (`${VLLM_ARGS:-}`): whatever the caller passes, if anything;
                # DESIGN.md: empty for extra arguments, unknown for a value
                acc.unknown(not quoted, quoted)
                return
            # never assigned in this file (`${MODEL:-org/x}`, `${1:-org/x}`): the default is what
            # the script serves unless its caller says otherwise (reference anchors.md §5)
            self.word_parts(n, op_index, acc, quoted)
            return
        if var is None or var[0] in ("unknown", "partial"):
            acc.unknown(index == "@" or (not quoted and name not in _NUMERIC_SPECIALS), quoted)
            return
        kind, value = var
        is_set = kind != "unset"
        non_empty = is_set and (kind == "array" and bool(value) or kind == "scalar" and bool(value.text))
        cond = non_empty if op.startswith(":") else is_set
        if op in (":-", "-", ":=", "=", ":?", "?"):
            if cond:
                self.emit_value(kind, value, acc, quoted)
            elif "?" in op:
                acc.unknown(False, quoted)
            else:
                self.word_parts(n, op_index, acc, quoted)
                if "=" in op and index is None and NAME.match(name):
                    self.assign_default(name, n, op_index)
        else:  # :+ / +
            if cond:
                self.word_parts(n, op_index, acc, quoted)
            elif quoted:
                acc.lit(EMPTY, True)

    def assign_default(self, name: str, n: Any, op_index: int) -> None:
        """``${X:=word}``: X is ``word`` from here on."""
        acc = FieldCollector(nosplit=True)
        self.word_parts(n, op_index, acc, True)
        built = acc.finish()
        loc = self.source.loc(self.c(n.children[op_index].end_byte), self.c(n.end_byte) - 1)
        if built and not built[0].unknown:
            self.scope.set_scalar(name, join([p for p in built[0].parts if p is not None], ""), loc)
        elif built:
            self.scope.set_unknown(name, self.source.node_loc(n))

    def word_parts(self, n: Any, op_index: int, acc: FieldCollector, quoted: bool) -> None:
        """The word after the operator of ``${X:-word}``, in the quoting it appears in."""
        kids = n.children
        c = self.c
        mode = "dq" if quoted else "plain"
        start = c(kids[op_index].end_byte)
        has_close = bool(kids) and kids[-1].type == "}"
        end = c(kids[-1].start_byte) if has_close else c(n.end_byte)
        parts = kids[op_index + 1:len(kids) - 1 if has_close else len(kids)]
        pos = start
        for part in parts:
            cs = c(part.start_byte)
            if cs > pos:
                gap = literal(self.source, pos, cs, mode)
                acc.lit(gap, quoted) if quoted else acc.split(gap)
            if part.type == "word" and not quoted:
                acc.split(literal(self.source, cs, c(part.end_byte), "plain"))
            elif part.type == "concatenation" and not quoted:
                for cc in part.children:
                    if cc.type in ("word", "variable_name"):
                        acc.split(literal(self.source, c(cc.start_byte), c(cc.end_byte), "plain"))
                    elif cc.is_named:
                        self.emit(cc, acc, quoted)
            elif part.is_named:
                self.emit(part, acc, quoted)
            else:
                acc.lit(literal(self.source, cs, c(part.end_byte), mode), quoted)
            pos = max(pos, c(part.end_byte))
        if end > pos:
            gap = literal(self.source, pos, end, mode)
            acc.lit(gap, quoted) if quoted else acc.split(gap)
        if quoted:
            acc.lit(EMPTY, True)

    def value(self, name: str, index: str | None, where: tuple[int, int]) -> tuple[str, Any] | None:
        """("scalar", Located) / ("array", fields) / ("unset", None) / ("unknown", None); None: never set."""
        scope = self.scope
        if name.isdigit() and name != "0" and scope.args:
            args = scope.args[-1]  # inside a call of a function: its arguments
            k = int(name)
            if k > len(args):
                return "unset", None
            arg = args[k - 1]
            if arg.l is None or arg.splat:
                return "unknown", None
            return "scalar", arg.l.relocate(*where)
        if not NAME.match(name):
            return None  # positional and special parameters
        var = self.choices.resolve(scope.lookup(name))
        if var is None:
            return None
        if var.kind in ("unknown", "unset"):
            return var.kind, None
        if var.kind in ("scalar", "partial"):
            value = var.value.relocate(*where)
            if index is None or index in ("0", "@", "*"):
                return var.kind, value
            return "unset", None
        fields: list[Field] = [
            Field(f.l.relocate(*where) if f.l is not None else None, f.splat, f.loc, label=f.label)
            for f in var.value]
        if index in ("@", "*"):
            # known elements stay words; an unseen splat element (`ARGS+=("$@")`) stays one
            # unseen extra-arguments word among them
            return "array", fields
        if index is None or index.isdigit():
            k = int(index or 0)
            if any(f.splat for f in fields[:k + 1]):
                return "unknown", None
            if k >= len(fields):
                return "unset", None
            f = fields[k]
            return ("scalar", f.l) if f.l is not None else ("unknown", None)
        return "unknown", None

    def emit_value(self, kind: str, value: Any, acc: FieldCollector, quoted: bool, star: bool = False) -> None:
        if kind == "scalar":
            acc.lit(value, True) if quoted else acc.split(value)
        elif kind == "partial":
            pos = 0
            for m in HOLE.finditer(value.text):
                chunk = value.slice(pos, m.start())
                if chunk.text:
                    acc.lit(chunk, True) if quoted else acc.split(chunk)
                acc.unknown(not quoted, quoted, value.locate(m.start(), m.end()))
                pos = m.end()
            tail = value.slice(pos, len(value.text))
            if tail.text:
                acc.lit(tail, True) if quoted else acc.split(tail)
        elif kind == "array":
            if star and quoted:
                if any(f.l is None for f in value):
                    acc.unknown(False, True)
                else:
                    acc.lit(join([f.l for f in value]), True)
            else:
                acc.elements(value, quoted)
        elif kind == "unset":
            if quoted:
                acc.lit(EMPTY, True)
        else:
            acc.unknown(not quoted, quoted)

    def name(self, name: str, index: str | None, acc: FieldCollector, quoted: bool,
             where: tuple[int, int]) -> None:
        """``$name`` / ``${name}`` / ``${name[index]}``."""
        if name in ("@", "*") and self.scope.args:  # a function's arguments
            self.emit_value("array", self.scope.args[-1], acc, quoted, star=name == "*")
            return
        if name in ("@", "*"):
            # read again (`eval "... $@"`) it is the same shell's arguments: keep it as written
            acc.unknown(name == "@" or not quoted, quoted, shadow=Located.fallback(f"${name}", *where))
            return
        multi = index == "@"   # "${A[@]}": any number of words
        var = self.value(name, index, where)
        if var is None or var[0] == "unknown":
            acc.unknown(multi or (not quoted and name not in _NUMERIC_SPECIALS), quoted)
            return
        kind, value = var
        if kind == "array" and index == "@":
            self.emit_value(kind, value, acc, quoted)
        elif kind == "array":
            self.emit_value(kind, value, acc, quoted, star=True)
        else:
            self.emit_value(kind, value, acc, quoted)
