"""tree-sitter-bash: the parser, one parsed text with its positions, and syntax errors.

Everything that knows tree-sitter's byte offsets is here: the rest of the shell
frontend asks a :class:`ParsedSource` for a node's text (:meth:`~ParsedSource.raw`)
and where it is written in the file (:meth:`~ParsedSource.node_loc`).  The parser is
also where bash and tree-sitter disagree and the text is adjusted before parsing (a
template's ``${a.b}``, a continuation at the very end, ``<<EOF;``), so that those
repairs stay in one place.  :func:`shell_syntax_errors` is what the lint reports as
RSM900 for the parts of a script the parser could not read.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from ...unchecked import NotChecked
from .located import Located

_LANGUAGE: Any = None
#: a `$` bash reads as itself: not followed by a name, a digit, `{`, `(`, `[`, a quote or a special parameter
_LONE_DOLLAR = re.compile(r"\$(?![A-Za-z0-9_{(\[@*#?$!'\"-])")
#: `${accelerator.dtypeArgs}`: a template's placeholder, not shell
_TEMPLATE_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+\}")


def new_parser() -> Any:
    global _LANGUAGE
    import tree_sitter

    if _LANGUAGE is None:
        import tree_sitter_bash

        _LANGUAGE = tree_sitter.Language(tree_sitter_bash.language())
    return tree_sitter.Parser(_LANGUAGE)


class _ByteMap:
    """tree-sitter byte offsets -> character offsets of the parsed text."""

    def __init__(self, text: str, data: bytes) -> None:
        self.ascii = len(data) == len(text)
        if self.ascii:
            return
        self.data = data
        self.byte_starts = [0]
        self.char_starts = [0]
        find = data.find
        k = find(b"\n")
        c = 0
        prev = 0
        while k >= 0:
            c += len(_decode(data[prev:k + 1]))
            prev = k + 1
            self.byte_starts.append(prev)
            self.char_starts.append(c)
            k = find(b"\n", prev)

    def __call__(self, b: int) -> int:
        if self.ascii:
            return b
        row = bisect.bisect_right(self.byte_starts, b) - 1
        start = self.byte_starts[row]
        return self.char_starts[row] + len(_decode(self.data[start:b]))


def _same_offset(b: int) -> int:
    return b


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "ignore")


class ParsedSource:
    """One text parsed (a file, a ``bash -c`` string, a recipe line): its tree, and where
    each of its characters is written in the file.

    ``src`` is the text as parsed (after the repairs), ``written`` the text as written
    (the labels of unknown words), ``root`` the tree's root node; ``c`` turns a byte
    offset of the tree into a character offset of ``text``."""

    def __init__(self, src: Located, parser: Any) -> None:
        self.src = src
        self.text = src.text
        self.written = self.text  # the text as written (labels), where self.text masks templates
        if "${" in self.text and _TEMPLATE_REF.search(self.text):
            # `${accelerator.dtypeArgs}`: a template's placeholder (bash would call it a bad
            # substitution, and tree-sitter drops the command): an unknown variable of the same length
            self.written = self.text
            self.src = self.src.retext(_TEMPLATE_REF.sub(lambda m: m.group(0).replace(".", "_"), self.text))
            self.text = self.src.text
        if self.text.endswith(("\\", "\\\n")):
            # a continuation at the very end (`--flag \` on the last line): bash ends the
            # command there, tree-sitter reads nothing; a blank line makes them agree
            end = len(self.text)
            where = self.src.locate(end, end) or (-1, -1)
            added = "\n\n" if self.text.endswith("\\") else "\n"
            self.src = self.src + Located.fallback(added, *where)
            self.text = self.src.text
            self.written += added
        for _ in range(20):
            data = self.text.encode("utf-8", "surrogatepass")
            tree = parser.parse(data)
            bytemap = _ByteMap(self.text, data)
            self.c = _same_offset if bytemap.ascii else bytemap
            if not self._repair_heredoc(tree) and not self._repair_lone_dollar(tree):
                break
        if len(self.written) != len(self.text):  # repaired: labels read the text as parsed
            self.written = self.text
        self.root = tree.root_node

    def _repair_heredoc(self, tree: Any) -> bool:
        """tree-sitter-bash reads ``<<EOF;`` as the delimiter ``EOF;`` (and then the
        rest of the file as the body); bash ends the word at ``;``.  Put a blank
        there and parse again."""
        if "<<" not in self.text:
            return False
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "heredoc_start":
                raw = self.raw(node)
                m = re.search(r"[;&|()<>]", raw)
                if m and not raw.startswith(("'", '"')):
                    at = self.c(node.start_byte) + m.start()
                    where = self.src.locate(at, at) or (-1, -1)
                    self.src = self.src.slice(0, at) + Located.fallback(" ", *where) \
                        + self.src.slice(at, len(self.text))
                    self.text = self.src.text
                    return True
                continue
            stack.extend(node.children)
        return False

    def _repair_lone_dollar(self, tree: Any) -> bool:
        """A ``$`` that starts no expansion (``$NODE$:5757``, ``$A$/x``) is a literal ``$`` to
        bash, where tree-sitter-bash gives up on the command.  Escape it (``\\$``, the same
        word to bash) and parse again."""
        if not tree.root_node.has_error:
            return False
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "$" and node.parent is not None and (
                    node.parent.type == "ERROR" or node.parent.type == "simple_expansion"
                    and any(c.type == "ERROR" for c in node.parent.children)):
                at = self.c(node.start_byte)
                if _LONE_DOLLAR.match(self.text, at):
                    where = self.src.locate(at, at + 1) or (-1, -1)
                    self.src = self.src.slice(0, at) + Located.fallback("\\", *where) \
                        + self.src.slice(at, len(self.text))
                    self.text = self.src.text
                    return True
            stack.extend(child for child in node.children if child.has_error or child.type == "$")
        return False

    # -- positions -----------------------------------------------------------
    def raw(self, n: Any) -> str:
        return self.text[self.c(n.start_byte):self.c(n.end_byte)]

    def loc(self, cs: int, ce: int) -> tuple[int, int]:
        """The file range of the characters ``[cs, ce)`` (the whole text's when unknown)."""
        found = self.src.locate(cs, ce)
        if found is not None:
            return found
        whole = self.src.locate(0, len(self.text))
        return whole if whole is not None else (0, 0)

    def node_loc(self, n: Any) -> tuple[int, int]:
        return self.loc(self.c(n.start_byte), self.c(n.end_byte))


def shell_syntax_errors(text: str, needles: tuple[str, ...]) -> list[NotChecked]:
    """Parts of a shell script tree-sitter could not read that hold a trigger token.

    Only those matter: a launch may be in them, and the shell frontend skips
    them.  The region of an error is its own text plus the lines it starts on
    (an unterminated quote cuts the command before it short); a missing token
    (``fi``, ``)``, a here-document's end) stands for the construct around it.  The text is
    parsed as the frontend parses it, with the same repairs (:class:`ParsedSource`: they add no
    line, so lines are the file's).
    """
    parsed = ParsedSource(Located.exact(text, 0), new_parser())
    if not parsed.root.has_error:
        return []
    data = parsed.text.encode("utf-8", "surrogatepass")
    found = []
    stack = [parsed.root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            region = node.parent if node.is_missing and node.parent is not None else node
            start = data.rfind(b"\n", 0, region.start_byte) + 1
            part = data[start:region.end_byte].decode("utf-8", "replace")
            if any(needle in part for needle in needles):
                line, col = node.start_point
                what = f"missing `{node.type}`" if node.is_missing else \
                    f"syntax error near `{_excerpt(data[node.start_byte:node.end_byte])}`"
                problem = NotChecked(f"could not be parsed (line {line + 1}: {what})", line + 1, kind="syntax")
                problem.lines = (data.count(b"\n", 0, start) + 1, region.end_point[0] + 1)
                found.append(problem)
            continue
        stack.extend(child for child in node.children if child.has_error or child.is_missing)
    return sorted(found, key=lambda nc: nc.line)


def _excerpt(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").split("\n", 1)[0].strip()
    return text if len(text) <= 30 else text[:27] + "..."
