"""Template syntax written inside YAML: Go/Helm actions ``{{ ... }}`` and GitHub Actions'
``${{ ... }}`` expressions, found in time linear in the text (the YAML frontend and every
place that composes YAML mask them the same way, so a position never moves).

The actions are found with ``str.find``, not with ``{{.*?}}``-style regular expressions:
those re-scan the rest of the line (or, across lines, the rest of the text) from every
``{{`` that is never closed, so a pull request with a line of 100,000 ``{`` kept the
linter busy for minutes.  An action that is not closed on its line (a Helm action) or
anywhere after it (an Actions expression) means no later one is closed either, so the
scan stops there.
"""

from __future__ import annotations

import re
from typing import Any, Callable

#: a line that is only a template action (``{{- if .Values.x }}``, ``{{ toYaml .Values.env }}``)
TEMPLATE_LINE = re.compile(r"^[ \t]*{{-?.*?-?}}[ \t]*$", re.M)
#: template actions that write nothing themselves (control flow, comments, assignments)
_SILENT_ACTION = re.compile(r"{{-?\s*(?:if|else|end|with|range|define|block|break|continue|/\*|\$\w+\s*:?=)\b")
_BLOCK_ACTION = re.compile(r"{{-?\s*(if|with|range|define|block|end)\b")


def closed_spans(text: str, opener: str, closer: str = "}}", *, one_line: bool,
                 escaped: str = "") -> list[tuple[int, int]]:
    """``(start, end)`` of every ``opener ... closer``, left to right, as a lazy
    ``opener.*?closer`` finds them (``one_line``: ``.`` stops at a line's end), with ``str.find``
    (an opener not closed means none after it is: the scan stops, so a text of unclosed openers
    costs its length, not its square); an opener right after a character of ``escaped`` is not one."""
    out: list[tuple[int, int]] = []
    i = 0
    while True:
        start = text.find(opener, i)
        if start < 0:
            return out
        if start and text[start - 1] in escaped:
            i = start + 1
            continue
        limit = text.find("\n", start) if one_line else -1
        limit = len(text) if limit < 0 else limit
        end = text.find(closer, start + len(opener), limit)
        if end < 0:  # no opener after this one is closed within the limit either
            if not one_line:
                return out
            i = limit
            continue
        out.append((start, end + len(closer)))
        i = end + len(closer)


def helm_actions(text: str) -> list[tuple[int, int]]:
    r"""``(start, end)`` of every ``{{ ... }}`` action closed on its own line, left to right
    (what ``(?<![$\\]){{.*?}}`` finds; ``${{`` belongs to GitHub Actions, ``\{{`` is escaped)."""
    return closed_spans(text, "{{", one_line=True, escaped="$\\")


def actions_expressions(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every GitHub Actions ``${{ ... }}`` expression (it may span lines)."""
    return closed_spans(text, "${{", one_line=False)


def has_actions_expression(text: str) -> bool:
    """Whether ``text`` holds a ``${{ ... }}`` expression (its value is then unknown)."""
    start = text.find("${{")
    return start >= 0 and text.find("}}", start + 3) >= 0


def _replaced(text: str, spans: list[tuple[int, int]], stand_in: Callable[[int], str]) -> str:
    parts, last = [], 0
    for start, end in spans:
        parts += [text[last:start], stand_in(end - start)]
        last = end
    return "".join(parts) + text[last:]


def mask_expressions(script: str) -> str:
    """``${{ expr }}`` -> ``${___...}`` of the same length: an unknown shell variable."""
    if "${{" not in script:
        return script
    return _replaced(script, actions_expressions(script), lambda n: "${" + "_" * max(n - 3, 1) + "}")


def silent_line(line: str, continued: bool, comment: bool = False) -> str:
    """A line that writes nothing, as it is to be read (same length): blank; a continuation
    (``\\`` at its end) after a line that a backslash continues (a template line inside a
    command written over several lines); with ``comment``, its indentation kept and a ``#``
    after it (a YAML block scalar must not start with a blank line longer than its text's
    indentation)."""
    body = line.rstrip("\r")
    tail = line[len(body):]
    if continued and body:
        return " " * (len(body) - 1) + "\\" + tail
    if comment and body.strip():
        indent = len(body) - len(body.lstrip())
        return " " * indent + "#" + " " * (len(body) - indent - 1) + tail
    return " " * len(body) + tail


def stand_in(length: int) -> str:
    """One word of ``length`` characters that argv.py reads as a placeholder (an unknown value)."""
    return "__RSMTPL" + "_" * (length - 8)


def mask_templates(text: str, *, comment_lines: bool = False) -> str:
    """Go/Helm template actions as YAML PyYAML can read, keeping every position.

    A line that is only an action (``{{- if .Values.x }}``, ``{{- toYaml .Values.env |
    nindent 12 }}``) becomes blank (a continuation after a line a backslash continues, a
    ``#`` comment line with ``comment_lines``: :func:`silent_line`); an action inside a value
    becomes a plain scalar of the same length that argv.py reads as a placeholder (an unknown
    value).  GitHub Actions' ``${{ expr }}`` is left alone (the Actions reader masks it itself).
    """
    if "{{" not in text:
        return text

    previous = (-2, False)  # (where the last template line ends, whether it continues a command)

    def silent(match: re.Match[str]) -> str:
        nonlocal previous
        end = match.start() - 1  # the line break before this line
        if end < 0:
            continued = False
        elif previous[0] == end:  # right after another template line: as that one
            continued = previous[1]
        else:
            continued = text[text.rfind("\n", 0, end) + 1:end].rstrip().endswith("\\")
        previous = (match.end(), continued)
        return silent_line(match.group(0), continued, comment_lines)

    text = TEMPLATE_LINE.sub(silent, text)
    spans = [(start, end) for start, end in helm_actions(text) if end - start >= 8]
    return _replaced(text, spans, stand_in)


def compose_documents(text: str) -> tuple[str, list[Any]]:
    """``text``'s template actions masked, and its YAML documents' root nodes.

    Template-only lines are first read as blank lines; where that does not compose (a block
    scalar whose first line is ``{{- bos_token }}``: a blank line longer than the block's
    indentation ends it) as comment lines.  Raises PyYAML's error of the first reading when
    neither composes.
    """
    import yaml

    from .yaml_nodes import loader

    first = mask_templates(text)
    try:
        return first, list(yaml.compose_all(first, Loader=loader()))
    except yaml.YAMLError as exc:
        error = exc
    second = mask_templates(text, comment_lines=True)
    if second != first:
        try:
            return second, list(yaml.compose_all(second, Loader=loader()))
        except yaml.YAMLError:
            pass
    raise error


def ranged_lines(text: str) -> set[int]:
    """0-based lines inside a ``{{ range }}`` ... ``{{ end }}`` block: a list item there is
    written once per element, as many arguments as the values hold."""
    if "range" not in text:
        return set()
    out: set[int] = set()
    stack: list[str] = []
    ranges = 0  # how many of the open blocks are ranges (not `"range" in stack` per line)
    for line_no, line in enumerate(text.split("\n")):
        if ranges:
            out.add(line_no)
        for match in _BLOCK_ACTION.finditer(line):
            if match.group(1) == "end":
                if stack:
                    ranges -= stack.pop() == "range"
            else:
                stack.append(match.group(1))
                ranges += match.group(1) == "range"
    return out


def template_lines(text: str) -> dict[int, int]:
    """0-based line -> indentation of each line that is only a template action writing YAML of
    its own (``{{- toYaml .Values.env | nindent 10 }}``, ``{{- include "args" . }}``): what it
    writes is unseen where it stands (:func:`mask_templates` blanks it)."""
    if "{{" not in text:
        return {}
    out: dict[int, int] = {}
    line, counted = 0, 0
    for match in TEMPLATE_LINE.finditer(text):
        line += text.count("\n", counted, match.start())  # counted on from the last one
        counted = match.start()
        written = match.group(0)
        if not _SILENT_ACTION.match(written.strip()):
            out[line] = len(written) - len(written.lstrip())
    return out
