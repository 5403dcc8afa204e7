"""One YAML text as nodes with their places: node helpers, template lines, value alignment.

Documents are read with PyYAML ``compose_all`` so every scalar keeps its place
(``start_mark`` / ``end_mark``); spans of words are the scalar nodes as written
(quotes included).  A string that a shell runs is placed with :meth:`Doc.chars`: its
*value* is aligned character by character with the raw text between the node marks
(block scalars, folded lines, quotes and escapes), so a word is never placed on a wrong line.
"""

from __future__ import annotations

import re
from typing import Any

from ...model import UNKNOWN, Span
from ...unchecked import frontend_failed
from ...yaml_nodes import is_map, is_scalar, is_seq, loader
from ...yaml_templates import compose_documents, ranged_lines, template_lines
from .._common import LineIndex, Tok

STR_TAG = "tag:yaml.org,2002:str"
NULL_TAG = "tag:yaml.org,2002:null"
MERGE_TAG = "tag:yaml.org,2002:merge"

_STAND_IN = re.compile(r"__RSMTPL_+")
#: a template value that names arguments, not one value (``{{ .Values.extraArgs }}``)
_ARGUMENTS_NAME = re.compile(r"(?i)arg|flag|option|param|extra")


def items(node: Any) -> list[tuple[str, Any, Any]]:
    """``(key, key_node, value_node)`` of a mapping, merge keys (``<<``) resolved (cached)."""
    if not is_map(node):
        return []
    cached = node.__dict__.get("_rsm_items")
    if cached is not None:
        return cached
    node._rsm_items = []  # a merge cycle ends here
    out: list[tuple[str, Any, Any]] = []
    merged: list[Any] = []
    seen: set[str] = set()
    for key_node, value_node in node.value:
        if is_scalar(key_node) and key_node.tag == MERGE_TAG:
            merged += value_node.value if is_seq(value_node) else [value_node]
            continue
        if is_scalar(key_node):
            out.append((str(key_node.value), key_node, value_node))
            seen.add(str(key_node.value))
    for m in merged:
        for key, key_node, value_node in items(m):
            if key not in seen:
                seen.add(key)
                out.append((key, key_node, value_node))
    node._rsm_items = out
    node._rsm_get = {k: v for k, _, v in out}
    return out


def get(node: Any, key: str) -> Any:
    if not is_map(node):
        return None
    if "_rsm_get" not in node.__dict__:
        items(node)
    return node.__dict__.get("_rsm_get", {}).get(key)


def text_of(node: Any) -> str | None:
    """A scalar's value as written (``None`` for null / non-scalars)."""
    if not is_scalar(node) or node.tag == NULL_TAG:
        return None
    return str(node.value)


class Doc:
    """One YAML text: positions and scalar alignment."""

    def __init__(self, text: str, base_dir: str | None, original: str | None = None) -> None:
        self.text = text
        self.lines = LineIndex(text)
        self.base_dir = base_dir
        self.consumed: set[int] = set()
        #: the text before template actions were masked, and its template-only lines
        self.original = original if original is not None and len(original) == len(text) else text
        self.templates = template_lines(self.original) if self.original is not text else {}
        self.ranged = ranged_lines(self.original) if self.templates or "{{" in self.original else set()

    def as_written(self, node: Any) -> str | None:
        """A scalar's value with its template actions as written (``vllm/vllm-openai:{{ .Values.tag }}``),
        for what is shown to the user; the value PyYAML read when they cannot be placed."""
        value = text_of(node)
        if value is None or "__RSMTPL" not in value:
            return value
        chars = self.chars(node)
        if chars is None or len(chars) != len(value):
            return value
        return "".join(self.original[k] for k in chars)

    def written(self, node: Any) -> str:
        """A node as written in the file (template actions included)."""
        return self.original[node.start_mark.index:node.end_mark.index]

    def span(self, node: Any) -> Span:
        return self.lines.span(node.start_mark.index, node.end_mark.index)

    def tok(self, node: Any) -> Tok:
        value = text_of(node)
        if value is not None and _STAND_IN.fullmatch(value.strip()):
            # `- {{ . }}` in a `range`, `[..., {{ .Values.args }}]`: arguments the chart adds;
            # `- {{ .Values.model }}`: one value, unknown
            written = self.written(node).strip()
            many = node.start_mark.line in self.ranged or bool(_ARGUMENTS_NAME.search(written))
            return Tok(None, self.span(node), None, many, written)
        return Tok(value, self.span(node), self.chars(node) if value is not None else None)

    def chars(self, node: Any) -> list[int] | None:
        """The file offset of every character of a scalar's value."""
        try:
            return self._chars(node)
        except (MemoryError, RecursionError):  # too large or deep: reported, never dropped
            raise
        except Exception:
            return None

    def _chars(self, node: Any) -> list[int] | None:
        placed = node.__dict__.get("rsm_chars")
        if placed is not None:  # a reader that knows its strings' characters (TOML)
            return list(placed)
        value = str(node.value)
        start, end = node.start_mark.index, node.end_mark.index
        style = node.style or None
        text = self.text
        if style in ("|", ">"):
            nl = text.find("\n", start, end)
            if nl < 0:
                return None
            start = nl + 1
        elif style in ('"', "'"):
            start, end = start + 1, max(start + 1, end - 1)
        raw = text[start:end]
        if style is None and "\n" not in raw and raw == value:
            return list(range(start, start + len(value)))
        mapped = _align(value, raw, style == '"')
        return [start + k for k in mapped]


def _align(value: str, raw: str, double_quoted: bool) -> list[int]:
    """Index in ``raw`` of each character of ``value`` (YAML folding, quotes, escapes)."""
    out: list[int] = []
    j, n = 0, len(raw)
    for c in value:
        k = j
        found, step = None, 1
        while k < n:
            r = raw[k]
            if double_quoted and r == "\\" and k + 1 < n:
                nxt = raw[k + 1]
                if nxt in "\r\n":  # escaped line break: joins without a space
                    k += 2
                    while k < n and raw[k] in " \t\r\n":
                        k += 1
                    continue
                found = k
                step = {"x": 4, "u": 6, "U": 10}.get(nxt, 2)
                break
            if r == c:
                found = k
                break
            if c in " \n" and r in " \t\r\n":
                found = k
                break
            if r in " \t\r\n'\"\\":
                k += 1
                continue
            break
        if found is None:
            out.append(min(j, max(n - 1, 0)))
            continue
        out.append(found + step - 1)  # an escaped character sits at its escape's end
        j = found + step
    return out


def documents(text: str, kind: str = "yaml") -> tuple[str, list[Any]] | None:
    """``text`` as read (its template expressions masked), and its documents' root nodes;
    None when it does not parse (the caller finds nothing there; lint.py reports why).

    YAML and JSON (a JSON text is YAML to PyYAML, placed the same way) are composed by
    PyYAML; TOML is read into the same nodes by :mod:`.toml_nodes`.
    """
    if kind == "toml":  # tomllib said it is TOML (guard.py): a text this reader cannot place is ours
        from ...unchecked import frontend_failed
        from .toml_nodes import toml_root

        try:
            return text, [toml_root(text)]
        except Exception as exc:
            frontend_failed(Span(1, 0, 1, 0), "TOML", exc)
            return None
    try:
        import yaml

        if kind == "json":
            return text, [yaml.compose(text, Loader=loader())]
        return compose_documents(text)
    except (MemoryError, RecursionError):  # too large or deep: reported, never dropped
        raise
    except Exception:  # unparsable (or PyYAML missing)
        return None


def node_line(node: Any) -> Span:
    """The line a YAML node starts on (line 1 when it has no mark)."""
    line = getattr(getattr(node, "start_mark", None), "line", 0) + 1
    return Span(line, 0, line, 0)


def node_value(node: Any, sizes: dict[int, int] | None = None, *, where: Span | None = None,
               reader: str = "YAML") -> Any:
    """The Python value of a node as the document's own loader builds it (``true`` -> True), or
    UNKNOWN: a template's stand-in, aliases that expand past any real value, what cannot be built
    (a value too large or deep to build is also reported, at ``where``, by ``reader``)."""
    import yaml

    from ...config_files import MAX_EXPANDED_NODES, expanded_size

    if expanded_size(node, {} if sizes is None else sizes) > MAX_EXPANDED_NODES:
        return UNKNOWN
    try:
        value = yaml.SafeLoader("").construct_object(node, deep=True)
    except (MemoryError, RecursionError) as exc:  # reported, never dropped
        frontend_failed(where or node_line(node), reader, exc)
        return UNKNOWN
    except Exception:
        return UNKNOWN
    return UNKNOWN if isinstance(value, str) and "__RSMTPL" in value else value
