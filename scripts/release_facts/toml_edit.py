"""Replacing one key's value in a committed TOML file, leaving every other byte alone.

The data tables are hand-formatted and commented; a TOML library would rewrite all of
it.  The generated parts are plain keys (``name = [...]``, ``name = { ... }``, a bool, a
string) inside a named table, so a line-based edit is enough: find the table header,
find the key inside that table, replace the lines its value spans (or insert the key at
the end of the table's own keys).
"""

from __future__ import annotations

import json

WIDTH = 100


def render(key: str, value: object, width: int = WIDTH) -> str:
    """``key = value`` in the data files' style: short lists on one line, long ones wrapped
    at ``width`` with two-space indents, dicts of lists as an inline table."""
    if isinstance(value, dict):
        inner = ", ".join(f"{k} = {_inline(v)}" for k, v in value.items())
        return f"{key} = {{ {inner} }}"
    if isinstance(value, list):
        one_line = f"{key} = {_inline(value)}"
        if len(one_line) <= width:
            return one_line
        lines, line = [], "  "
        for item in value:
            text = json.dumps(item) + ", "
            if len(line) + len(text) > width:
                lines.append(line.rstrip())
                line = "  "
            line += text
        lines.append(line.rstrip())
        return f"{key} = [\n" + "\n".join(lines) + "\n]"
    return f"{key} = {_inline(value)}"


def _inline(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return json.dumps(value)


class TomlText:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)

    def text(self) -> str:
        return "".join(self.lines)

    def _is_header(self, index: int) -> bool:
        return self.lines[index].startswith("[")

    def table(self, header: str) -> tuple[int, int] | None:
        """(first line after the header, end) of ``[header]``; end is the next header or EOF."""
        wanted = f"[{header}]"
        for i, line in enumerate(self.lines):
            if line.strip() == wanted:
                end = i + 1
                while end < len(self.lines) and not self._is_header(end):
                    end += 1
                return i + 1, end
        return None

    def key(self, header: str, key: str) -> tuple[int, int] | None:
        """(first, end) lines of ``key = ...`` inside ``[header]``, a multi-line value included."""
        span = self.table(header)
        if span is None:
            return None
        for i in range(*span):
            if self.lines[i].split("=", 1)[0].strip() == key and "=" in self.lines[i]:
                depth, end = 0, i
                while True:
                    depth += _depth(self.lines[end])
                    end += 1
                    if depth <= 0 or end >= len(self.lines):
                        return i, end
        return None

    def set(self, header: str, key: str, value: object) -> None:
        """Replace ``key``'s value in ``[header]``, or add the key after the table's last key."""
        found = self.key(header, key)
        width = WIDTH
        if found is not None and found[1] - found[0] > 2:
            # wrap as the file already does (each file has its own width)
            width = max(len(line.rstrip("\n")) for line in self.lines[found[0] + 1:found[1] - 1]) + 1
        rendered = [line + "\n" for line in render(key, value, width).split("\n")]
        if found is not None:
            self.lines[found[0]:found[1]] = rendered
            return
        span = self.table(header)
        if span is None:
            raise KeyError(f"no table [{header}]")
        at = span[1]
        while at > span[0] and (self.lines[at - 1].strip() == "" or self.lines[at - 1].lstrip().startswith("#")):
            at -= 1
        self.lines[at:at] = rendered

    def set_table(self, header: str, values: dict[str, object]) -> None:
        """``[header]`` holding exactly ``values`` as ``"key" = value`` lines (sorted), the
        table added at the end of the file when missing; comments above its keys stay."""
        lines = [f"{json.dumps(k)} = {_inline(v)}\n" for k, v in sorted(values.items())]
        span = self.table(header)
        if span is None:
            if self.lines and self.lines[-1].strip():
                self.lines.append("\n")
            self.lines += [f"[{header}]\n"] + lines
            return
        start, end = span
        while start < end and self.lines[start].lstrip().startswith("#"):
            start += 1
        trailing = end
        while trailing > start and self.lines[trailing - 1].strip() == "":
            trailing -= 1
        self.lines[start:trailing] = lines

    def add_table(self, header: str, after: tuple[str, ...], keys: list[tuple[str, object]]) -> None:
        """A new ``[header]`` with ``keys``, placed after the last table whose header starts
        with one of ``after`` (trailing comments stay with the table that follows)."""
        last = max(i for i, line in enumerate(self.lines) if line.startswith(after))
        end = last + 1
        while end < len(self.lines) and not self._is_header(end):
            end += 1
        while end > last + 1 and (self.lines[end - 1].strip() == "" or self.lines[end - 1].lstrip().startswith("#")):
            end -= 1
        block = ["\n", f"[{header}]\n"] + [line + "\n" for k, v in keys for line in render(k, v).split("\n")]
        self.lines[end:end] = block


def _depth(line: str) -> int:
    depth, quoted = 0, False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch == "#":
            break
        elif not quoted and ch in "[{":
            depth += 1
        elif not quoted and ch in "]}":
            depth -= 1
    return depth
