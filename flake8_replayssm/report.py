"""Output formats of ``replayssm-lint check``: text, json, sarif, github.

Lines are 1-based and columns 1-based in every format (flake8's display
convention; :class:`~flake8_replayssm.model.Span` columns are 0-based inside the
package); notebooks add the 0-based ``cell`` index, with lines counted within that
cell.  Each code's severity (:func:`flake8_replayssm.rules.severity`) is shown in
text output and is the SARIF ``level`` and the GitHub command.

What the tool did not write itself (paths, messages that quote a file's words,
settings values) goes through :mod:`flake8_replayssm.escaping` in every format: a
text line is one line with no control character and never starts with ``::``, a
GitHub command is %-encoded as the runner decodes it, JSON and SARIF are valid for
any bytes of a file name.
"""

from __future__ import annotations

import collections
import json
import os
from typing import TYPE_CHECKING, Iterable, Sequence

from .escaping import github_data, github_property, json_dumps, line, shown, uri_path
from .model import Finding

if TYPE_CHECKING:
    from .inventory import LaunchNote, Unrecognised
    from .lint import FileResult
    from .rulebase import Rule


def severity(code: str) -> str:
    """The severity of ``code`` (the rule docs are imported only when a finding is shown)."""
    from .rules import severity as of

    return of(code)


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def _where(f: Finding) -> str:
    cell = f"cell {f.span.cell + 1}:" if f.span.cell is not None else ""  # numbered from 1, as ruff
    return f"{shown(f.path)}:{cell}{f.span.line}:{f.span.col + 1}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(findings: Sequence[Finding], checked: int, blind_spots: int = 0) -> str:
    """The closing count line of text output, with the launch-looking lines no launch covers in
    the files that can hold a finding (:mod:`.inventory`): silence means clean, not unseen."""
    if not findings:
        said = f"No findings ({_plural(checked, 'file')} checked)"
    else:
        counts = collections.Counter(severity(f.code) for f in findings)
        parts = ", ".join(_plural(counts[s], s) for s in ("error", "warning", "note") if counts[s])
        files = len({f.path for f in findings})
        said = f"Found {_plural(len(findings), 'finding')} ({parts}) in {_plural(files, 'file')} ({checked} checked)"
    if blind_spots:
        them = "it" if blind_spots == 1 else "them"
        said += f"; {_plural(blind_spots, 'launch-looking line')} not recognised: --show-launches lists {them}"
    return said + "."


def text(findings: Sequence[Finding], *, checked: int | None = None, note: str = "", blind_spots: int = 0) -> str:
    """``path:line:col: CODE severity: message`` per finding, then the count line."""
    out = [line(f"{_where(f)}: {f.code} {severity(f.code)}: {f.message}") + "\n" for f in findings]
    if note:
        out.append(line(note) + "\n")
    if checked is not None:
        out.append(summary(findings, checked, blind_spots) + "\n")
    return "".join(out)


def as_json(findings: Sequence[Finding]) -> str:
    items = []
    for f in findings:
        item: dict[str, object] = {
            "path": f.path, "line": f.span.line, "column": f.span.col + 1,
            "end_line": f.span.end_line, "end_column": f.span.end_col + 1,
            "code": f.code, "severity": severity(f.code), "message": f.message,
            "vllm_version": f.release, "vllm_version_reason": f.release_reason, "engine": f.engine,
            "releases": list(f.releases),
        }
        if f.span.cell is not None:
            item["cell"] = f.span.cell
        items.append(item)
    return json_dumps(items)


def github(findings: Sequence[Finding]) -> str:
    """GitHub workflow commands: ``::error``, ``::warning`` or ``::notice`` by severity.

    A notebook finding is annotated on the line of the ``.ipynb`` file where its source
    line is written (the cell, numbered from 1, starts the message)."""
    out = []
    in_notebooks = _notebook_positions(findings)
    for f in findings:
        props = (f"file={github_property(f.path)},line={f.span.line},col={f.span.col + 1},"
                 f"endLine={f.span.end_line},endColumn={f.span.end_col + 1},"
                 f"title={github_property('replayssm-lint ' + f.code)}")
        if f.span.cell is not None:
            props = _notebook_github_props(f, in_notebooks)
        cell = f"cell {f.span.cell + 1}: " if f.span.cell is not None else ""
        out.append(f"::{_GITHUB_COMMAND[severity(f.code)]} {props}::"
                   f"{github_data(cell + f.code + ' ' + f.message)}\n")
    return "".join(out)


def _notebook_github_props(f: Finding, positions: dict[tuple[str, int, int, int], tuple[int, int]]) -> str:
    """``file=...,line=...`` of a notebook finding: the line and column in the ``.ipynb`` file's
    text (line 1 when the file cannot be mapped), no end (a cell's end is another JSON string)."""
    assert f.span.cell is not None
    line, col = positions.get((f.path, f.span.cell, f.span.line, f.span.col), (1, 0))
    return (f"file={github_property(f.path)},line={line},col={col + 1},"
            f"title={github_property('replayssm-lint ' + f.code)}")


# ---------------------------------------------------------------------------
# SARIF 2.1.0
# ---------------------------------------------------------------------------

def _artifact(path: str, base: str) -> dict[str, str]:
    """A relative, percent-encoded URI under %SRCROOT% (the directory the run started in)."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, base) if absolute.startswith(base.rstrip(os.sep) + os.sep) else None
    if relative is None:
        return {"uri": "file://" + uri_path(absolute.replace(os.sep, "/"))}
    return {"uri": uri_path(relative.replace(os.sep, "/")), "uriBaseId": SRCROOT}


def _base_uri(base: str) -> str:
    return "file://" + uri_path(base.replace(os.sep, "/").rstrip("/") + "/")


def _notebook_positions(findings: Sequence[Finding]) -> dict[tuple[str, int, int, int], tuple[int, int]]:
    """(path, cell, line, col) -> (line, col) in the .ipynb's own text, for every notebook finding."""
    from .notebook_json import file_position

    out = {}
    texts: dict[str, str | None] = {}
    for f in findings:
        if f.span.cell is None:
            continue
        if f.path not in texts:
            from .files import MAX_SOURCE_BYTES, decode, read_bounded
            from .unchecked import NotChecked

            try:
                texts[f.path] = decode(read_bounded(f.path, MAX_SOURCE_BYTES)).text
            except NotChecked:
                texts[f.path] = None
        text = texts[f.path]
        position = file_position(text, f.span.cell, f.span.line, f.span.col) if text else None
        if position is not None:
            out[(f.path, f.span.cell, f.span.line, f.span.col)] = position
    return out


def sarif(findings: Sequence[Finding], rules: Iterable[Rule], base: str | None = None,
          docs_url: str | None = None) -> str:
    """SARIF 2.1.0: relative URIs under %SRCROOT%, levels from severities, notebook lines in the
    file, and each rule's ``helpUri`` its page (``docs_url``, the ``docs-url`` setting)."""
    from .config import DEFAULT_DOCS_URL, docs_page

    base = os.path.abspath(base or os.getcwd())
    rule_list = []
    for rule in rules:
        doc = rule.doc()
        rule_list.append({
            "id": rule.code, "name": rule.name,
            "shortDescription": {"text": rule.summary.split(". ")[0].rstrip(".") + "."},
            "fullDescription": {"text": doc}, "help": {"text": doc, "markdown": doc},
            "defaultConfiguration": {"level": rule.severity, "enabled": rule.default_enabled},
            "helpUri": docs_page(docs_url or DEFAULT_DOCS_URL, rule.code),
        })
    index = {rule["id"]: i for i, rule in enumerate(rule_list)}
    in_notebooks = _notebook_positions(findings)
    results = []
    for f in findings:
        line, col = in_notebooks.get((f.path, f.span.cell, f.span.line, f.span.col), (None, None)) \
            if f.span.cell is not None else (f.span.line, f.span.col)
        properties: dict[str, object] = {"vllmVersion": f.release, "vllmVersionReason": f.release_reason,
                                         "engine": f.engine, "releases": list(f.releases)}
        if f.span.cell is not None:
            properties.update(cell=f.span.cell, cellLine=f.span.line, cellColumn=f.span.col + 1)
        if line is None:  # a notebook we could not map back: the cell is still in the properties
            line, col = 1, 0
        region = {"startLine": line, "startColumn": col + 1}
        if f.span.cell is None:
            region.update(endLine=f.span.end_line, endColumn=f.span.end_col + 1)
        result: dict[str, object] = {
            "ruleId": f.code, "level": severity(f.code), "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(f.path, base), "region": region}}],
            "properties": properties,
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        results.append(result)
    doc = {
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "replayssm-lint", "version": _version(), "rules": rule_list}},
                  "originalUriBaseIds": {SRCROOT: {"uri": _base_uri(base)}},
                  "results": results}],
    }
    return json_dumps(doc)


def inventory_lines(launches: Sequence[LaunchNote], unrecognised: Sequence[Unrecognised], path: str) -> list[str]:
    """Text lines for every launch seen and every launch-looking line none covers (escaped)."""
    return [line(note.text(path)) for note in launches] + [line(u.line_text(path)) for u in unrecognised]


def with_inventory(fmt: str, rendered: str, results: Sequence[FileResult]) -> str:
    """The findings as ``fmt`` renders them, with what was seen (``--show-launches``): JSON
    becomes ``{"findings": [...], "launches": [...], "unrecognised": [...]}``; SARIF keeps its
    document and carries the two lists in the run's property bag (SARIF 2.1.0 §3.8), so the
    output stays one valid SARIF file; text and GitHub output get the inventory's text lines
    after the findings."""
    seen = {
        "launches": [n.as_dict(r.path) for r in results for n in r.launches],
        "unrecognised": [u.as_dict(r.path) for r in results for u in r.unrecognised],
    }
    if fmt == "json":
        return json_dumps({"findings": json.loads(rendered), **seen})
    if fmt == "sarif":
        doc = json.loads(rendered)
        doc["runs"][0].setdefault("properties", {}).update(seen)
        return json_dumps(doc)
    lines = [line for r in results for line in inventory_lines(r.launches, r.unrecognised, r.path)]
    return rendered + "".join(line + "\n" for line in lines)


def _version() -> str:
    from . import __version__

    return __version__
