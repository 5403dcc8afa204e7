"""What one lint of an editor buffer reads: its text at one version, its kind, where it lives.

The kind comes from the editor's language id first (a ``Dockerfile.prod``
opened as ``dockerfile``, an extension-less script opened as ``shellscript``),
then from the file name, then from the content (a shell shebang), as the CLI
decides it.  A notebook synchronised cell by cell (LSP 3.17) is linted as the
``.ipynb`` text its cells make, so findings come back with the index of their
cell and lines within it, exactly as ``replayssm-lint check`` reports them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Sequence

from ..lint import detect_kind

#: editor language ids (VS Code, Neovim filetypes, Helix, Emacs modes) -> file kind
LANGUAGE_KINDS = {
    "python": "python",
    "shellscript": "shell", "sh": "shell", "bash": "shell", "zsh": "shell", "ksh": "shell",
    "dockerfile": "dockerfile", "containerfile": "dockerfile",
    "yaml": "yaml", "yml": "yaml", "docker-compose": "yaml", "dockercompose": "yaml",
    "yaml.docker-compose": "yaml", "github-actions-workflow": "yaml", "compose": "yaml",
    "makefile": "makefile", "make": "makefile",
    "markdown": "markdown", "md": "markdown", "mdx": "markdown", "quarto": "markdown",
    "restructuredtext": "markdown", "rst": "markdown",
    "toml": "toml", "json": "json", "systemd": "systemd",
}

#: cell languages linted as the notebook's code (IPython); other code cells are left out
PYTHON_CELL_LANGUAGES = frozenset({"python", "ipython", "python3", ""})


@dataclass(frozen=True)
class Cell:
    """One notebook cell as the editor holds it."""

    uri: str
    text: str
    #: "code" or "markdown"; a code cell in another language than Python is "raw"
    cell_type: str
    version: int | None = None


@dataclass(frozen=True)
class Snapshot:
    """One buffer (or one notebook) at one version: everything a lint needs."""

    uri: str
    version: int | None
    #: the text linted; for a notebook of cells, the ``.ipynb`` JSON they make
    text: str
    kind: str | None
    path: str | None
    #: a notebook synchronised cell by cell: its cells in order (None for text documents)
    cells: tuple[Cell, ...] | None = None


def kind_of(language_id: str | None, path: str | None, text: str) -> str | None:
    """The file kind of a buffer: language id, then file name, then content."""
    kind = LANGUAGE_KINDS.get((language_id or "").lower())
    if kind is not None and not (path or "").lower().endswith(".ipynb"):
        return kind
    return detect_kind(path or "", text)


def text_snapshot(uri: str, version: int | None, text: str, language_id: str | None,
                  path: str | None) -> Snapshot:
    return Snapshot(uri, version, text, kind_of(language_id, path, text), path)


def notebook_snapshot(uri: str, version: int | None, cells: Sequence[Cell], path: str | None,
                      metadata: Any = None) -> Snapshot:
    """A notebook of cells as the ``.ipynb`` text the notebook frontend reads."""
    return Snapshot(uri, version, notebook_json(cells, metadata), "notebook", path, tuple(cells))


def notebook_json(cells: Sequence[Cell], metadata: Any = None) -> str:
    """nbformat 4 JSON of ``cells``: cell ``i`` of the text is cell ``i`` of the editor."""
    out = []
    for cell in cells:
        item: dict[str, Any] = {"cell_type": cell.cell_type, "metadata": {}, "source": cell.text}
        if cell.cell_type == "code":
            item.update(execution_count=None, outputs=[])
        out.append(item)
    return json.dumps({"cells": out, "metadata": metadata if isinstance(metadata, dict) else {},
                       "nbformat": 4, "nbformat_minor": 5})


def cell_type(kind: int, language_id: str | None) -> str:
    """The nbformat type of an LSP cell (``NotebookCellKind``: 1 markup, 2 code)."""
    if kind == 1:
        return "markdown"
    return "code" if (language_id or "").lower() in PYTHON_CELL_LANGUAGES else "raw"


def path_of(uri: str) -> str | None:
    """The file system path of a ``file:`` URI (None for ``untitled:`` and other schemes)."""
    from pygls.uris import to_fs_path

    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return os.path.normpath(path) if path else None
