"""Jupyter notebooks (``.ipynb``): shell escapes and shell cells.

Cells are numbered as ``cells`` numbers them (0-based, markdown and raw cells
counted); lines are 1-based within the cell, which is how findings on notebooks
are reported (``Span.cell``).

- ``!cmd`` / ``!!cmd`` / ``var = !cmd`` lines (``\\``-continued lines joined, as
  IPython does), ``%sx cmd`` / ``%system cmd``: shell;
- ``%%bash``, ``%%sh``, ``%%script bash|sh`` cells: shell (body from line 2);
- ``%%capture`` / ``%%time`` / ``%%timeit`` cells: Python after the first line;
- ``%%writefile [-a] PATH`` cells write a file: their body is read as the kind of file PATH
  names (``serve.sh``, ``config.yaml``, ``Dockerfile``, a script with a shell shebang), by
  :func:`written_files_of_notebook`;
- other ``%%`` cell magics (``%%html``...) are neither;
- ``%`` line magics are ignored, except ``%env K=V`` / ``%set_env`` and Python
  ``os.environ["K"] = "V"``, which set the environment of the shell commands
  that follow (in cell order).

:func:`python_cells_of_notebook` gives the Python of each code cell with the
IPython-only lines blanked (``pass`` where a block needs a statement), so line
numbers are kept; the Python frontend reads those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..model import Command, Span, Word
from ..notebook_json import parsed
from ..unchecked import frontend_failed
from ._common import LineIndex, merge_context, placer
from .shell_snippets import doc_shell_commands

_SHELL_CELL = re.compile(r"^%%(bash|sh|script\s+(?:\S*/)?(?:bash|sh|zsh|dash))\b")
_PY_CELL = re.compile(r"^%%(capture|time|timeit|prun|debug|python3?|pypy|memit)\b")
_BANG = re.compile(r"^(\s*)(!!?)")
_ASSIGN_BANG = re.compile(r"^(\s*[A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*\s*=\s*)(!!?)")
_SHELL_MAGIC = re.compile(r"^(\s*)(%(?:sx|system|sc)\b)")
_LINE_MAGIC = re.compile(r"^\s*%")
_ENV_MAGIC = re.compile(r"^\s*%(?:env|set_env)\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s*=\s*|\s+)(.*?)\s*$")
_OS_ENVIRON = re.compile(
    r"^\s*os\.environ\[\s*(['\"])([A-Za-z_][A-Za-z0-9_]*)\1\s*\]\s*=\s*(['\"])(.*?)\3\s*(#.*)?$")


@dataclass
class _ShellPart:
    cell: int
    text: str  # lines ``first_line``.. of the cell, IPython syntax replaced by spaces
    first_line: int  # 1-based line in the cell of the text's first line
    env: dict[str, Word] = field(default_factory=dict)  # %env / os.environ set before it
    source: str = ""  # the whole cell
    #: files an earlier cell of a shell kernel sourced (its shell lives on): variables unseen
    env_unseen: list[str] = field(default_factory=list)


@dataclass
class _Scan:
    parts: list[_ShellPart] = field(default_factory=list)
    python: list[tuple[int, str]] = field(default_factory=list)


def _notebook(text: str) -> dict[str, Any]:
    data, _ = parsed(text)  # parsed once per text, however many cells ask
    return data if isinstance(data, dict) else {}


def _cells(text: str) -> list[Any]:
    cells = _notebook(text).get("cells")
    return cells if isinstance(cells, list) else []


#: kernels whose code cells are shell scripts (bash_kernel, zsh and sh kernels)
_SHELL_KERNELS = frozenset({"bash", "sh", "zsh", "shell"})


def _runs_shell(text: str) -> bool:
    """Whether the notebook's kernel is a shell (its code cells are shell, not Python)."""
    metadata = _notebook(text).get("metadata")
    if not isinstance(metadata, dict):
        return False
    names = []
    for key, field_name in (("kernelspec", "language"), ("language_info", "name"), ("kernelspec", "name")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field_name), str):
            names.append(section[field_name].lower())
    return bool(names) and names[0] in _SHELL_KERNELS


def _shell_kernel_scan(text: str) -> _Scan:
    """A shell kernel's notebook: each code cell is a script (its ``!`` would be a shell's ``!``)."""
    scan = _Scan()
    maybe: dict[str, Word] = {}  # variables earlier cells set: set or not, as the cells ran
    sourced: list[str] = []
    for index, cell in enumerate(_cells(text)):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = source_of(cell)
            scan.parts.append(_ShellPart(index, source, 1, dict(maybe), source, env_unseen=list(sourced)))
            for match in _SHELL_ASSIGNMENT.finditer(source):
                if match.group("name"):
                    maybe[match.group("name")] = Word(None, Span(1, 0, 1, 0, cell=index))
                elif match.group("sourced") and match.group("sourced") not in sourced:
                    sourced.append(match.group("sourced"))
    return scan


#: a shell line that sets a variable a later cell's commands may run with
_SHELL_ASSIGNMENT = re.compile(
    r"^[ \t]*(?:(?:export|declare|typeset)[ \t]+(?:-[a-z]+[ \t]+)*)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)="
    r"|^[ \t]*(?P<sourced>(?:source|\.)[ \t]+\S+)", re.M)


def source_of(cell: Any) -> str:
    """A notebook cell's source as one text (nbformat keeps it as a string or a list of lines)."""
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(src, list):
        return "".join(s for s in src if isinstance(s, str))
    return src if isinstance(src, str) else ""


def _scan(text: str) -> _Scan:
    if _runs_shell(text):
        return _shell_kernel_scan(text)
    scan = _Scan()
    env: dict[str, Word] = {}
    for index, cell in enumerate(_cells(text)):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = source_of(cell)
        lines = source.split("\n")
        first = lines[0].strip() if lines else ""
        if first.startswith("%%"):
            if _SHELL_CELL.match(first):
                body = "\n".join(lines[1:])
                scan.parts.append(_ShellPart(index, body, 2, dict(env), source))
                continue
            if not _PY_CELL.match(first):
                continue  # %%writefile, %%html, ...: not run here
            lines = [""] + lines[1:]
        python_lines = list(lines)
        i = 0
        while i < len(lines):
            line = lines[i]
            m_env = _ENV_MAGIC.match(line)
            if m_env:
                value = m_env.group(2)
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                    value = value[1:-1]
                col = m_env.start(2)
                end = col + len(m_env.group(2))
                env[m_env.group(1)] = Word(value, Span(i + 1, col, i + 1, end, cell=index))
            m_os = _OS_ENVIRON.match(line)
            if m_os:
                col = m_os.start(3)
                end = m_os.end(3) + len(m_os.group(4)) + 1
                env[m_os.group(2)] = Word(m_os.group(4), Span(i + 1, col, i + 1, end, cell=index))
            prefix = None
            for pattern in (_BANG, _ASSIGN_BANG, _SHELL_MAGIC):
                m = pattern.match(line)
                if m:
                    prefix = m.end(2)
                    break
            if prefix is None:
                if _LINE_MAGIC.match(line) or line.rstrip().endswith("?") and \
                        re.match(r"^\s*[\w.]+\?\??\s*$", line):
                    python_lines[i] = _blank(line)
                i += 1
                continue
            # the shell text: the line with everything up to the command blanked
            start = i
            shell_lines = [" " * prefix + line[prefix:]]
            python_lines[i] = _blank(line)
            while lines[i].rstrip("\r").endswith("\\") and i + 1 < len(lines):
                i += 1
                shell_lines.append(lines[i])
                python_lines[i] = ""
            scan.parts.append(_ShellPart(index, "\n".join(shell_lines), start + 1, dict(env),
                                         source))
            i += 1
        scan.python.append((index, "\n".join(python_lines)))
    return scan


def _blank(line: str) -> str:
    """An IPython-only line as Python: ``pass`` at its indentation keeps blocks valid."""
    indent = len(line) - len(line.lstrip())
    return line[:indent] + "pass" if indent else ""


_WRITEFILE = re.compile(r"^%%writefile(?:\s+-a|\s+--append)*\s+(\S.*?)\s*$")


def written_files_of_notebook(text: str) -> list[tuple[int, str, str]]:
    """``(cell index, path, body)`` of every ``%%writefile PATH`` cell: a file the notebook writes
    (a script, a manifest, a config) whose body starts on the cell's line 2."""
    if _runs_shell(text):
        return []
    out = []
    for index, cell in enumerate(_cells(text)):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            first, _, body = source_of(cell).partition("\n")
            m = _WRITEFILE.match(first.strip())
            if m is not None:
                out.append((index, m.group(1).strip("\"'"), body))
    return out


def shell_parts_of_notebook(text: str) -> list[tuple[int, str, int]]:
    """``(cell index, shell text, first line of that text in the cell)`` for every shell part."""
    try:
        return [(p.cell, p.text, p.first_line) for p in _scan(text).parts]
    except Exception:
        return []


def cell_source(text: str, index: int) -> str:
    """The source of cell ``index`` as written (IPython lines included)."""
    cells = _cells(text)
    return source_of(cells[index]) if 0 <= index < len(cells) else ""


def markdown_cells_of_notebook(text: str) -> list[tuple[int, str]]:
    """``(cell index, source)`` of every markdown cell: judged like a Markdown file."""
    try:
        return [(index, source_of(cell)) for index, cell in enumerate(_cells(text))
                if isinstance(cell, dict) and cell.get("cell_type") == "markdown"]
    except Exception:
        return []


def code_cells_of_notebook(text: str) -> list[int]:
    """The index of every code cell (whatever its kernel runs)."""
    return [index for index, cell in enumerate(_cells(text))
            if isinstance(cell, dict) and cell.get("cell_type") == "code"]


def python_cells_of_notebook(text: str) -> list[tuple[int, str]]:
    """``(cell index, Python source)`` of every code cell, IPython lines blanked."""
    try:
        return _scan(text).python
    except Exception:
        return []


def commands_in_notebook(text: str, *, path: str | None = None,
                         base_dir: str | None = None) -> list[Command]:
    """The commands the notebook's shell parts start; spans carry ``cell`` and cell lines."""
    try:
        scan = _scan(text)
    except Exception as exc:
        frontend_failed(Span(1, 0, 1, 0), "notebook", exc)
        return []
    out: list[Command] = []
    for part in scan.parts:
        try:
            lines = LineIndex(part.source)
            offset = lines.index(part.first_line, 0)
            chars = list(range(offset, offset + len(part.text)))
            fallback = Span(part.first_line, 0, part.first_line, 0, cell=part.cell)
            place = placer(part.text, chars, lines, fallback, cell=part.cell)
            for command in doc_shell_commands(part.text, place, dict(part.env), base_dir):
                merged = merge_context(command, env=part.env, base_dir=base_dir)
                for label in part.env_unseen:
                    merged.env_open_ended = True
                    merged.env_unseen.append(label)
                out.append(merged)
        except Exception as exc:  # this cell part is not checked; the others are
            frontend_failed(Span(part.first_line, 0, part.first_line, 0, cell=part.cell), "notebook", exc)
    return out
