"""A TOML text as the placed nodes the YAML readers walk.

``tomllib`` gives values without places, and a finding must point at the key or the
string it is about.  So the text is read here into PyYAML's own node classes (mappings,
sequences, scalars with ``start_mark``/``end_mark``), the tags a YAML reader would give
(``str``, ``int``, ``float``, ``bool``), and for each string the file offset of every
character of its value (``rsm_chars``: escapes and multi-line strings included), which
:meth:`.nodes.Doc.chars` uses as it is.  Tables (``[a.b]``), arrays of tables
(``[[a]]``), dotted keys and inline tables all become nested mappings, as ``tomllib``
builds them.  Whether the text is TOML at all is ``tomllib``'s to say
(:func:`check_toml`); this reader only places what ``tomllib`` accepts.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from ...unchecked import NotChecked

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_NUMBER_OR_DATE = re.compile(r"[^\s,\]\}#]+")
_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\d(?:[Tt ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:[Zz]|[+-]\d\d:\d\d)?)?"
                        r"|\d\d:\d\d(?::\d\d(?:\.\d+)?)?")
#: a backslash that ends a line of a multi-line basic string, with the line break and the
#: whitespace after it (all trimmed); matched in place, never on a copy of the rest of the text
_LINE_ENDING_BACKSLASH = re.compile(r"\\[ \t]*\r?\n[ \t\r\n]*")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}
_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


def check_toml(text: str) -> dict[str, Any]:
    """``text`` as ``tomllib`` reads it; :class:`NotChecked` when it is not TOML (``tomllib``'s
    verdict and line)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line, col = (int(match.group(1)), int(match.group(2)) - 1) if match else (1, 0)
        reason = str(exc).split(" (at ")[0]
        raise NotChecked(f"could not be parsed (line {line}: {reason})", line, max(col, 0), kind="syntax") from None
    except RecursionError:
        raise NotChecked("too deeply nested to parse safely") from None


class TomlError(ValueError):
    """The text is not TOML this reader can place (``tomllib`` said it is: a reader's gap)."""


class _Table:
    """A table being filled: key -> (key node, value), in the order written."""

    def __init__(self, start: int, explicit: bool = False) -> None:
        self.entries: dict[str, tuple[Any, Any]] = {}
        self.start, self.end, self.explicit = start, start, explicit


class _Array:
    """An array of tables (``[[a]]``): its tables in the order written."""

    def __init__(self, start: int) -> None:
        self.tables: list[_Table] = []
        self.start = start


def toml_root(text: str) -> Any:
    """The root mapping node of a TOML text (raises :class:`TomlError` where it cannot place it)."""
    return _Reader(text).read()


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    # -- positions -------------------------------------------------------------------------
    def mark(self, index: int) -> Any:
        import yaml

        row = bisect.bisect_right(self.starts, index) - 1
        return yaml.Mark("<toml>", index, row, index - self.starts[row], None, None)

    def fail(self, what: str) -> TomlError:
        return TomlError(f"{what} at offset {self.i}")

    # -- the document ----------------------------------------------------------------------
    def read(self) -> Any:
        root = _Table(0, explicit=True)
        current = root
        n = len(self.text)
        while True:
            self.skip_blank_lines()
            if self.i >= n:
                break
            if self.text.startswith("[[", self.i):
                current = self.array_table(root)
            elif self.text[self.i] == "[":
                current = self.table_header(root)
            else:
                self.key_value(current)
            self.end_of_line()
        root.end = n
        return self.to_node(root)

    def skip_blank_lines(self) -> None:
        """Whitespace, line ends and comments (between statements, inside arrays and tables)."""
        text, n = self.text, len(self.text)
        while self.i < n:
            c = text[self.i]
            if c in " \t\r\n":
                self.i += 1
            elif c == "#":
                self.skip_comment()
            else:
                return

    def skip_ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1

    def skip_comment(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = len(self.text) if end < 0 else end

    def end_of_line(self) -> None:
        self.skip_ws()
        if self.i < len(self.text) and self.text[self.i] == "#":
            self.skip_comment()
        if self.i < len(self.text) and self.text[self.i] not in "\r\n":
            raise self.fail("text after a value")

    # -- keys and tables -------------------------------------------------------------------
    def key(self) -> list[tuple[str, int, int]]:
        parts = []
        while True:
            self.skip_ws()
            start = self.i
            if self.text.startswith('"', self.i):
                name, _ = self.basic_string()
            elif self.text.startswith("'", self.i):
                name, _ = self.literal_string()
            else:
                match = _BARE_KEY.match(self.text, self.i)
                if match is None:
                    raise self.fail("a key expected")
                name, self.i = match.group(0), match.end()
            parts.append((name, start, self.i))
            self.skip_ws()
            if not self.text.startswith(".", self.i):
                return parts
            self.i += 1

    def descend(self, table: _Table, parts: list[tuple[str, int, int]]) -> _Table:
        """The table ``parts`` name under ``table`` (made where missing; the last table of an
        array of tables)."""
        for name, start, end in parts:
            entry = table.entries.get(name)
            if entry is None:
                child = _Table(start)
                table.entries[name] = (self.key_node(name, start, end), child)
                table = child
            elif isinstance(entry[1], _Table):
                table = entry[1]
            elif isinstance(entry[1], _Array) and entry[1].tables:
                table = entry[1].tables[-1]
            else:
                raise self.fail(f"{name!r} is not a table")
        return table

    def header(self, opening: str) -> tuple[int, list[tuple[str, int, int]]]:
        """Where a ``[table]`` / ``[[array]]`` header starts, and its key."""
        start = self.i
        self.i += len(opening)
        parts = self.key()
        closing = opening.replace("[", "]")
        if not self.text.startswith(closing, self.i):
            raise self.fail(f"{closing!r} expected")
        self.i += len(closing)
        return start, parts

    def table_header(self, root: _Table) -> _Table:
        start, parts = self.header("[")
        table = self.descend(root, parts)
        table.explicit, table.start = True, start
        return table

    def array_table(self, root: _Table) -> _Table:
        start, parts = self.header("[[")
        parent = self.descend(root, parts[:-1])
        name, key_start, key_end = parts[-1]
        entry = parent.entries.get(name)
        if entry is None:
            array = _Array(start)
            parent.entries[name] = (self.key_node(name, key_start, key_end), array)
        elif isinstance(entry[1], _Array):
            array = entry[1]
        else:
            raise self.fail(f"{name!r} is not an array of tables")
        table = _Table(start, explicit=True)
        array.tables.append(table)
        return table

    def key_value(self, table: _Table) -> None:
        parts = self.key()
        if not self.text.startswith("=", self.i):
            raise self.fail("'=' expected")
        self.i += 1
        self.skip_ws()
        owner = self.descend(table, parts[:-1])
        name, start, end = parts[-1]
        owner.entries[name] = (self.key_node(name, start, end), self.value())
        table.end = owner.end = self.i

    def key_node(self, name: str, start: int, end: int) -> Any:
        import yaml

        return yaml.ScalarNode(_STR, name, self.mark(start), self.mark(end))

    # -- values ----------------------------------------------------------------------------
    def value(self) -> Any:
        import yaml

        text, start = self.text, self.i
        if text.startswith(('"""', "'''"), start):
            value, chars = self.multiline_string()
        elif text.startswith('"', start):
            value, chars = self.basic_string()
        elif text.startswith("'", start):
            value, chars = self.literal_string()
        elif text.startswith("[", start):
            return self.array()
        elif text.startswith("{", start):
            return self.inline_table()
        else:
            return self.bare_value()
        node = yaml.ScalarNode(_STR, value, self.mark(start), self.mark(self.i), style='"')
        node.rsm_chars = chars
        return node

    def bare_value(self) -> Any:
        import yaml

        start = self.i
        date = _DATE_TIME.match(self.text, start)
        if date is not None:  # dates and times stay strings, as written
            self.i = date.end()
            return yaml.ScalarNode(_STR, date.group(0), self.mark(start), self.mark(self.i))
        match = _NUMBER_OR_DATE.match(self.text, start)
        if match is None:
            raise self.fail("a value expected")
        self.i = match.end()
        tag, value = _scalar(match.group(0))
        return yaml.ScalarNode(tag, value, self.mark(start), self.mark(self.i))

    def basic_string(self) -> tuple[str, list[int]]:
        text = self.text
        self.i += 1
        out: list[str] = []
        chars: list[int] = []
        while True:
            if self.i >= len(text) or text[self.i] in "\r\n":
                raise self.fail("an unterminated string")
            c = text[self.i]
            if c == '"':
                self.i += 1
                return "".join(out), chars
            if c == "\\":
                self.escape(out, chars)
                continue
            out.append(c)
            chars.append(self.i)
            self.i += 1

    def escape(self, out: list[str], chars: list[int]) -> None:
        text, at = self.text, self.i
        code = text[at + 1:at + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            self.i += 2
        elif code in ("u", "U"):
            width = 4 if code == "u" else 8
            try:
                out.append(chr(int(text[at + 2:at + 2 + width], 16)))
            except ValueError:
                raise self.fail("a bad escape") from None
            self.i += 2 + width
        elif code == "x":
            out.append(chr(int(text[at + 2:at + 4], 16)))
            self.i += 4
        else:
            raise self.fail("a bad escape")
        chars.append(self.i - 1)  # an escaped character sits at its escape's end

    def literal_string(self) -> tuple[str, list[int]]:
        start = self.i + 1
        end = self.text.find("'", start)
        newline = self.text.find("\n", start)
        if end < 0 or 0 <= newline < end:
            raise self.fail("an unterminated string")
        self.i = end + 1
        return self.text[start:end], list(range(start, end))

    def multiline_string(self) -> tuple[str, list[int]]:
        text = self.text
        quote = text[self.i:self.i + 3]
        self.i += 3
        if text.startswith("\r\n", self.i):  # a newline right after the opening is trimmed
            self.i += 2
        elif text.startswith("\n", self.i):
            self.i += 1
        out: list[str] = []
        chars: list[int] = []
        while True:
            if self.i >= len(text):
                raise self.fail("an unterminated string")
            if text.startswith(quote, self.i):
                extra = 0  # up to two quotes may end the content (`""""` is `"` then `"""`)
                while extra < 2 and text.startswith(quote[0], self.i + 3 + extra):
                    extra += 1
                for k in range(extra):
                    out.append(quote[0])
                    chars.append(self.i + k)
                self.i += 3 + extra
                return "".join(out), chars
            c = text[self.i]
            if quote == '"""' and c == "\\":
                after = _LINE_ENDING_BACKSLASH.match(text, self.i)
                if after is not None:  # a line-ending backslash: the line break and indent go
                    self.i = after.end()
                    continue
                self.escape(out, chars)
                continue
            out.append(c)
            chars.append(self.i)
            self.i += 1

    def array(self) -> Any:
        import yaml

        start = self.i
        self.i += 1
        items = []
        while True:
            self.skip_blank_lines()
            if self.text.startswith("]", self.i):
                self.i += 1
                return yaml.SequenceNode(_SEQ, items, self.mark(start), self.mark(self.i), flow_style=True)
            items.append(self.value())
            self.skip_blank_lines()
            if self.text.startswith(",", self.i):
                self.i += 1
            elif not self.text.startswith("]", self.i):
                raise self.fail("',' or ']' expected")

    def inline_table(self) -> Any:
        start = self.i
        self.i += 1
        table = _Table(start, explicit=True)
        while True:
            self.skip_blank_lines()  # TOML 1.1 allows newlines in an inline table
            if self.text.startswith("}", self.i):
                self.i += 1
                break
            self.key_value(table)
            self.skip_blank_lines()
            if self.text.startswith(",", self.i):
                self.i += 1
            elif not self.text.startswith("}", self.i):
                raise self.fail("',' or '}' expected")
        table.end = self.i
        return self.to_node(table)

    # -- building nodes --------------------------------------------------------------------
    def to_node(self, table: _Table) -> Any:
        import yaml

        pairs = []
        end = table.end
        for key_node, value in table.entries.values():
            if isinstance(value, _Table):
                value = self.to_node(value)
            elif isinstance(value, _Array):
                tables = [self.to_node(t) for t in value.tables]
                last = tables[-1].end_mark.index if tables else value.start
                value = yaml.SequenceNode(_SEQ, tables, self.mark(value.start), self.mark(last))
            end = max(end, value.end_mark.index)
            pairs.append((key_node, value))
        return yaml.MappingNode(_MAP, pairs, self.mark(table.start), self.mark(end))


def _scalar(raw: str) -> tuple[str, str]:
    """The YAML tag and canonical text of a bare TOML value (a number or a boolean)."""
    if raw in ("true", "false"):
        return _BOOL, raw
    digits = raw.replace("_", "")
    try:
        return _INT, str(int(digits, 0))
    except ValueError:
        pass
    special = {"inf": ".inf", "+inf": ".inf", "-inf": "-.inf", "nan": ".nan", "+nan": ".nan", "-nan": ".nan"}
    if digits in special:
        return _FLOAT, special[digits]
    try:
        float(digits)
    except ValueError:
        return _STR, raw
    return _FLOAT, digits
