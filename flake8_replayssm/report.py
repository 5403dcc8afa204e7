"""Output formats of ``replayssm-lint check``: text, json, sarif, github.

Lines are 1-based and columns 1-based in every format (flake8's display
convention); notebooks add the 0-based ``cell`` index, with lines counted
within that cell.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterable, Sequence

from . import __version__
from .model import Finding

if TYPE_CHECKING:
    from .inventory import LaunchNote, Unrecognised
    from .lint import FileResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _where(f: Finding) -> str:
    cell = f"cell {f.span.cell}:" if f.span.cell is not None else ""
    return f"{f.path}:{cell}{f.span.line}:{f.span.col + 1}"


def text(findings: Sequence[Finding]) -> str:
    return "".join(f"{_where(f)}: {f.code} {f.message}\n" for f in findings)


def as_json(findings: Sequence[Finding]) -> str:
    items = []
    for f in findings:
        item: dict[str, object] = {
            "path": f.path, "line": f.span.line, "column": f.span.col + 1,
            "end_line": f.span.end_line, "end_column": f.span.end_col + 1,
            "code": f.code, "message": f.message,
            "vllm_version": f.release, "vllm_version_reason": f.release_reason,
        }
        if f.span.cell is not None:
            item["cell"] = f.span.cell
        items.append(item)
    return json.dumps(items, indent=2) + "\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(findings: Sequence[Finding]) -> str:
    out = []
    for f in findings:
        props = (f"file={_escape_property(f.path)},line={f.span.line},col={f.span.col + 1},"
                 f"endLine={f.span.end_line},endColumn={f.span.end_col + 1},"
                 f"title={_escape_property('replayssm-lint ' + f.code)}")
        cell = f"cell {f.span.cell}: " if f.span.cell is not None else ""
        out.append(f"::error {props}::{_escape_data(cell + f.code + ' ' + f.message)}\n")
    return "".join(out)


def sarif(findings: Sequence[Finding], rules: Iterable[tuple[str, str, str]]) -> str:
    """SARIF 2.1.0; ``rules`` are (code, short description, full markdown doc)."""
    rule_list = [
        {"id": code, "name": code, "shortDescription": {"text": short},
         "fullDescription": {"text": doc}, "help": {"text": doc, "markdown": doc},
         "defaultConfiguration": {"level": "error"}}
        for code, short, doc in rules
    ]
    index = {rule["id"]: i for i, rule in enumerate(rule_list)}
    results = []
    for f in findings:
        region = {"startLine": f.span.line, "startColumn": f.span.col + 1,
                  "endLine": f.span.end_line, "endColumn": f.span.end_col + 1}
        result: dict[str, object] = {
            "ruleId": f.code, "level": "error", "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.path}, "region": region}}],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        properties: dict[str, object] = {"vllmVersion": f.release, "vllmVersionReason": f.release_reason}
        if f.span.cell is not None:
            properties["cell"] = f.span.cell
        result["properties"] = properties
        results.append(result)
    doc = {
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "replayssm-lint", "version": __version__,
                                      "informationUri": "https://pypi.org/project/flake8-replayssm/",
                                      "rules": rule_list}},
                  "results": results}],
    }
    return json.dumps(doc, indent=2) + "\n"


def inventory_lines(launches: Sequence[LaunchNote], unrecognised: Sequence[Unrecognised], path: str) -> list[str]:
    """Text lines for every launch seen and every launch-looking line none covers."""
    return [note.text(path) for note in launches] + [u.line_text(path) for u in unrecognised]


def with_inventory(fmt: str, rendered: str, results: Sequence[FileResult]) -> str:
    """The findings as ``fmt`` renders them, with what was seen (``--show-launches``): JSON
    becomes ``{"findings": [...], "launches": [...], "unrecognised": [...]}``; other formats
    get the inventory's text lines after the findings."""
    if fmt == "json":
        return json.dumps({
            "findings": json.loads(rendered),
            "launches": [n.as_dict(r.path) for r in results for n in r.launches],
            "unrecognised": [u.as_dict(r.path) for r in results for u in r.unrecognised],
        }, indent=2) + "\n"
    lines = [line for r in results for line in inventory_lines(r.launches, r.unrecognised, r.path)]
    return rendered + "".join(line + "\n" for line in lines)
