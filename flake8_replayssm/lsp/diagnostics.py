"""Findings as LSP diagnostics, each in the document (or notebook cell) it belongs to.

A diagnostic's range is the finding's span, its severity the code's severity
(:func:`flake8_replayssm.rules.severity`), its ``code`` the RSM code and its
message the CLI's message followed by the release it was judged for and why
that release.  Where a finding lands:

- a notebook synchronised cell by cell: in the cell's own document;
- an ``.ipynb`` opened as text: on the JSON string that holds the finding's
  line of the cell (the CLI's lines are lines of the cell, not of the JSON);
- a finding in another file (a key of the ``--config`` YAML a launch reads):
  on that launch in this document, the message saying where, with the other
  file as related information.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from lsprotocol import types
from pygls.workspace import PositionCodec

from .. import engines
from ..config import DEFAULT_DOCS_URL, docs_page
from ..lint import FileResult
from ..model import Finding, Span
from ..rules import severity
from .documents import Snapshot
from .positions import TextPositions

SOURCE = "replayssm-lint"

_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "note": types.DiagnosticSeverity.Information}


@dataclass(frozen=True)
class Placed:
    """One finding as one diagnostic of one document."""

    uri: str
    diagnostic: types.Diagnostic
    finding: Finding


def place(snapshot: Snapshot, result: FileResult, codec: PositionCodec,
          docs_url: str = DEFAULT_DOCS_URL) -> list[Placed]:
    """The diagnostics of ``result`` (a lint of ``snapshot``), in the documents they belong to;
    each links to its code's page (``codeDescription``, from the ``docsUrl`` setting)."""
    anchors = {(f.span, f.code): v.launch.anchor for v in result.verdicts for f in v.findings}
    locate = _locator(snapshot, codec)
    out = []
    for finding in result.findings:
        span, prefix, related = finding.span, "", None
        if span.source is not None:  # a key of another file: shown on the launch that reads it
            anchor = anchors.get((finding.span, finding.code))
            if anchor is None or anchor.source is not None:
                continue
            where = _relative(span.source, snapshot.path)
            prefix = f"{where}:{span.line}: "
            related = [types.DiagnosticRelatedInformation(
                types.Location(_file_uri(span.source), types.Range(
                    types.Position(span.line - 1, span.col), types.Position(span.end_line - 1, span.end_col))),
                f"{finding.code} is reported here by replayssm-lint check")]
            span = anchor
        placed = locate(span)
        if placed is None:
            continue
        uri, range_ = placed
        out.append(Placed(uri, types.Diagnostic(
            range=range_,
            message=prefix + message(finding),
            severity=_SEVERITY.get(severity(finding.code), types.DiagnosticSeverity.Error),
            code=finding.code,
            code_description=types.CodeDescription(docs_page(docs_url, finding.code)),
            source=SOURCE,
            related_information=related,
        ), finding))
    return out


def message(finding: Finding) -> str:
    """The CLI's message, then the release the verdict is for and why that one."""
    if not finding.release:
        return finding.message
    reason = f": {finding.release_reason}" if finding.release_reason else ""
    releases = ", ".join(finding.releases) if len(finding.releases) > 1 else finding.release
    return f"{finding.message}\njudged for {engines.title(finding.engine)} {releases}{reason}"


def by_uri(snapshot: Snapshot, placed: list[Placed]) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics per document, every document of the snapshot included (empty lists clear)."""
    out: dict[str, list[types.Diagnostic]] = {}
    for uri in uris(snapshot):
        out[uri] = []
    for item in placed:
        out.setdefault(item.uri, []).append(item.diagnostic)
    return out


def uris(snapshot: Snapshot) -> list[str]:
    """The documents a snapshot's diagnostics are published to."""
    return [cell.uri for cell in snapshot.cells] if snapshot.cells is not None else [snapshot.uri]


def _locator(snapshot: Snapshot, codec: PositionCodec) -> Callable[[Span], tuple[str, types.Range] | None]:
    if snapshot.cells is not None:
        cells = [(cell.uri, TextPositions(cell.text, codec)) for cell in snapshot.cells]

        def in_cell(span: Span) -> tuple[str, types.Range] | None:
            if span.cell is None or not 0 <= span.cell < len(cells):
                return None
            uri, positions = cells[span.cell]
            return uri, positions.span(span)
        return in_cell

    positions = TextPositions(snapshot.text, codec)
    if snapshot.kind != "notebook":
        return lambda span: (snapshot.uri, positions.span(span))

    from ..notebook_json import locate_sources

    sources = locate_sources(snapshot.text) or {}

    def in_json(span: Span) -> tuple[str, types.Range] | None:
        source = sources.get(span.cell) if span.cell is not None else None
        if source is None:
            return None
        start, end = source.start, source.end
        if source.items and 1 <= span.line <= len(source.items):
            start, end, _ = source.items[span.line - 1]
        return snapshot.uri, positions.offsets(start, end)
    return in_json


def _relative(path: str, to: str | None) -> str:
    if to is None:
        return path
    try:
        return os.path.relpath(path, os.path.dirname(to))
    except ValueError:  # another drive on Windows
        return path


def _file_uri(path: str) -> str:
    from pygls.uris import from_fs_path

    return from_fs_path(os.path.abspath(path)) or path
