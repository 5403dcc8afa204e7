"""Markdown (and reStructuredText) documents: launches in code blocks.

Fenced blocks (````` and ``~~~``, any info string, indented fences in lists) and
reST ``.. code-block::`` / ``.. code::`` / ``.. sourcecode::`` directives are
judged by their content, not by their tag, because recipes put shell in
``python`` fences:

- ``text`` / ``log`` / ``json`` / ``toml``... blocks are never launches;
- lines with a ``$ `` prompt are commands and the rest of such a block is
  output; a ``console`` block without prompts counts only if it starts with a
  command;
- a block that parses as Python and builds an engine (``LLM(`` / ``EngineArgs(``
  / subprocess) is Python (:func:`python_blocks_of_markdown`);
- a block with a shell command line (``vllm``, ``python -m``, ``docker``,
  ``env``, ``export``, ``VAR=x cmd``...) or a shell tag goes to the shell
  frontend, placed exactly in the file;
- ``yaml`` blocks go to the YAML frontend, ``dockerfile`` blocks (or blocks
  starting with ``FROM``) to the Dockerfile frontend.

Prose and inline code are never read.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from .. import engines
from ..model import Command, Span
from ..unchecked import frontend_failed
from ._common import LineIndex, placer, relayed, shift_command
from .shell_snippets import doc_shell_commands
from .dockerfile import commands_in_dockerfile
from .systemd import commands_in_unit

_FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_RST_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:code-block|code|sourcecode|prompt)::\s*(\S*)")
#: a reST paragraph that ends with ``::`` (or ``::`` alone): the indented block after it is a
#: literal block, code as written (not a directive, ``.. note::``)
_RST_LITERAL = re.compile(r"^(\s*)(?!\.\.(?:\s|$))\S.*::\s*$")
_PROMPT = re.compile(r"^(\s*(?:\([^)\s]*\)\s*)?(?:[\w.-]+@[\w.-]+(?::[^\s$#]*)?\s*)?\$ )")
_PROMPT_ONLY = re.compile(r"^\s*\$\s*$")
#: a unit file's section header (systemd, Podman quadlet), and the keys whose commands it runs: a
#: unit shown on a page (`$ cat tiny.container` and its output, an indented block) is read as one
_UNIT_SECTION = re.compile(r"^\s*\[(?:Unit|Service|Container|Install|Pod|Kube)\]\s*$")
_UNIT_EXEC = re.compile(r"^\s*(?:Exec|ExecStart|ExecStartPre|ExecStartPost|ExecReload)\s*=")
_INDENTED_UNIT = re.compile(r"^(?: {4}|\t)\s*\[(?:Unit|Service|Container)\]\s*$")

_SKIP_LANGS = frozenset({
    "text", "txt", "log", "logs", "output", "out", "stdout", "stderr", "jsonc", "json5",
    "jsonl", "ini", "cfg", "csv", "tsv", "diff", "patch", "plaintext", "plain", "none",
    "nohighlight", "http", "xml", "html", "sql", "mermaid", "md", "markdown", "rst", "tex",
    "latex", "math", "c", "cpp", "c++", "go", "rust", "java", "javascript", "js", "ts",
    "typescript", "powershell", "ps1", "pwsh", "bat", "batch", "cmd", "pycon", "python-console",
    "ipython-console", "traceback", "pytb", "properties", "env", "dotenv", "graphql", "proto",
})
_SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh", "ksh", "fish", "shellscript",
                          "shell-script", "posix", "slurm", "sbatch"})
_PROMPT_LANGS = frozenset({"console", "shell-session", "shellsession", "terminal", "sh-session",
                           "bash-session", "session"})
_PYTHON_LANGS = frozenset({"python", "py", "python3", "py3", "ipython", "ipython3", "jupyter",
                           "notebook"})
_YAML_LANGS = frozenset({"yaml", "yml"})
_DOCKER_LANGS = frozenset({"dockerfile", "docker", "containerfile"})
_STARTERS = engines.programs() | frozenset({
    "python", "python3", "docker", "podman", "nerdctl", "env", "export", "nohup",
    "exec", "uv", "uvx", "srun", "torchrun", "sudo", "time", "numactl", "taskset", "conda",
    "micromamba", "pixi", "poetry", "pipenv", "apptainer", "singularity", "kubectl", "bash",
    "sh", "source", "cd", "set", "ray", "accelerate", "deepspeed", "timeout", "mpirun",
})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: a manifest or compose file: its first line that is not blank, a comment or ``---`` starts
#: with one of these keys.  Each skipped line is matched one way only (``[^\S\n]`` stays on its
#: line): ``(?:---\s*\n|\s*\n)*`` split a run of blank lines in exponentially many ways
_YAML_MANIFEST = re.compile(r"\A(?:#[^\n]*\n|---[^\S\n]*\n|[^\S\n]*\n)*(?:apiVersion|kind|services):")
_ENGINE_CALL = re.compile(r"\b(?:" + "|".join(sorted(engines.python_names())) + r"|Popen|"
                          r"LLMConfig|subprocess\.\w+|os\.system)\s*\(|engine_kwargs")


@dataclass
class _Block:
    lang: str
    line: int  # 1-based file line of the first content line
    lines: list[str]  # content lines, block indentation removed
    indents: list[int]  # characters removed from each content line
    chars: list[list[int]]  # file offset of every character of each content line


def _lang(info: str) -> str:
    words = info.strip().split()
    if not words:
        return ""
    first = words[0].strip("{}.").lower()
    if first in ("code-block", "code", "sourcecode", "eval-rst") and len(words) > 1:
        first = words[1].strip("{}.").lower()
    first = first.split(",")[0].split("{")[0]
    return first


def _blocks(text: str) -> list[_Block]:
    lines = text.split("\n")
    index = LineIndex(text)
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        quoted = _QUOTE.match(lines[i]) is not None
        line = _unquoted(lines[i])
        m = _FENCE_OPEN.match(line)
        if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
            indent, fence, info = len(m.group(1)), m.group(2), m.group(3)
            close = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
            j = i + 1
            content: list[str] = []
            indents: list[int] = []
            chars: list[list[int]] = []
            while j < len(lines) and not close.match(_unquoted(lines[j]) if quoted else lines[j]):
                if quoted and _QUOTE.match(lines[j]) is None:
                    break  # the blockquote ended, and the fence with it
                raw = (_unquoted(lines[j]) if quoted else lines[j]).rstrip("\r")
                strip = min(indent, len(raw) - len(raw.lstrip(" ")))
                content.append(raw[strip:])
                indents.append(strip)
                base = index.starts[j] + strip
                chars.append(list(range(base, base + len(raw) - strip)))
                j += 1
            blocks.append(_Block(_lang(info), i + 2, content, indents, chars))
            i = j + 1
            continue
        if _INDENTED_UNIT.match(line) and (i == 0 or not lines[i - 1].strip()):
            block, j = _indented_block(lines, index, i, 3, "systemd")  # Markdown's indented code block
            if block is not None:
                blocks.append(block)
            i = max(j, i + 1)
            continue
        m = _RST_DIRECTIVE.match(line)
        literal = None if m else _RST_LITERAL.match(line)
        if m or literal:
            j = i + 1
            while m and j < len(lines) and lines[j].strip().startswith(":"):  # options
                j += 1
            indent = len((m or literal).group(1))  # type: ignore[union-attr]
            block, j = _indented_block(lines, index, j, indent, m.group(2).lower() if m else "")
            if block is not None:
                blocks.append(block)
            i = max(j, i + 1)
            continue
        i += 1
    return blocks


def _indented_block(lines: list[str], index: LineIndex, start: int, indent: int,
                    lang: str) -> tuple[_Block | None, int]:
    """The block of lines from ``start`` indented deeper than ``indent`` (a reST directive's
    content, a literal block after ``::``), and the line after it."""
    j = start
    while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
        j += 1
    body = lines[start:j]
    while body and not body[-1].strip():
        body.pop()
    nonblank = [len(b) - len(b.lstrip()) for b in body if b.strip()]
    strip_n = min(nonblank) if nonblank else 0
    content, indents, chars = [], [], []
    for k, raw in enumerate(body):
        raw = raw.rstrip("\r")
        strip = min(strip_n, len(raw) - len(raw.lstrip()))
        content.append(raw[strip:])
        indents.append(strip)
        base = index.starts[start + k] + strip
        chars.append(list(range(base, base + len(raw) - strip)))
    return (_Block(lang, start + 1, content, indents, chars) if content else None), j


#: the ``>`` markers of a blockquote line (nested ones included)
_QUOTE = re.compile(r"^(?:[ ]{0,3}>[ ]?)+")


def _unquoted(line: str) -> str:
    """A blockquote line with its ``>`` markers blanked (same length, so columns stay)."""
    m = _QUOTE.match(line)
    return " " * m.end() + line[m.end():] if m else line


#: an indented code block's line (four spaces), outside fences
_INDENTED_CODE = re.compile(r"^(?: {4}|\t)\S")


def _indented_code_lines(text: str, fenced: set[int]) -> list[tuple[int, str]]:
    """(file line, text) of indented code block lines: not read as launches (a list item's
    continued paragraph is indented too) but listed as lines that look like one."""
    lines = text.split("\n")
    out = []
    for k, line in enumerate(lines):
        if k + 1 not in fenced and _INDENTED_CODE.match(line) and not line.lstrip().startswith(("-", "*", "+")):
            out.append((k + 1, line.strip()))
    return out


def _first_word(line: str) -> str:
    words = line.strip().split()
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words[0].rsplit("/", 1)[-1] if words else ""


def _logical_lines(lines: list[str]) -> list[str]:
    """Lines joined where they end with ``\\`` (the parts collected, then joined once: adding
    each continued line to a growing string is quadratic in a long command)."""
    out: list[str] = []
    current: list[str] = []
    for line in lines:
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            current += [stripped[:-1], " "]
            continue
        out.append("".join(current) + line)
        current = []
    if current:
        out.append("".join(current))
    return out


def _starts_command(line: str) -> bool:
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return False
    words = stripped.split()
    if _ASSIGNMENT.match(words[0]):
        # VAR=x cmd, or a plain assignment followed by more shell
        return len(words) > 1 or bool(re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]))
    first = _first_word(stripped)
    return first in _STARTERS or bool(re.match(r"^python\d(\.\d+)?$", first))


def _prompted(block: _Block) -> tuple[list[str], bool]:
    """Lines with the ``$ `` prompt blanked; output lines blanked.  ``found`` if any prompt."""
    out: list[str] = []
    found = False
    continuing = False
    for line in block.lines:
        m = _PROMPT.match(line)
        if m:
            found = True
            out.append(" " * len(m.group(1)) + line[m.end(1):])
            continuing = line.rstrip().endswith("\\")
        elif continuing:
            out.append(line)
            continuing = line.rstrip().endswith("\\")
        else:
            out.append("")
    return out, found


def is_python(source: str) -> bool:
    """Whether ``source`` parses as Python."""
    return _is_python(source)


def _is_python(source: str) -> bool:
    try:
        ast.parse(source)
    except Exception:
        return False
    return True


@dataclass
class _Judged:
    kind: str  # "shell", "python", "yaml", "dockerfile", ""
    lines: list[str]


def _judge(block: _Block) -> _Judged:
    lang = block.lang
    if lang in _SKIP_LANGS:
        return _Judged("", [])
    body = "\n".join(block.lines)
    if lang in _YAML_LANGS or (not lang and _YAML_MANIFEST.search(body)):
        return _Judged("yaml", block.lines)
    if lang in ("toml", "json"):  # a framework's config, an engine-arguments file: read as that kind
        return _Judged(lang, block.lines)
    if lang in _DOCKER_LANGS or _looks_like_dockerfile(block.lines):
        return _Judged("dockerfile", block.lines)
    prompted, found = _prompted(block)
    if found:
        return _Judged("shell", prompted)
    if lang in _PROMPT_LANGS:
        logical = [ln for ln in _logical_lines(block.lines) if ln.strip()]
        if logical and _starts_command(logical[0]):
            return _Judged("shell", block.lines)
        return _Judged("", [])
    if lang in _SHELL_LANGS:
        return _Judged("shell", block.lines)
    if _is_python(body):
        if _ENGINE_CALL.search(body):
            return _Judged("python", block.lines)
        if lang in _PYTHON_LANGS:
            return _Judged("", [])
    elif lang in _PYTHON_LANGS and _ENGINE_CALL.search(body) \
            and not any(_starts_command(ln) for ln in _logical_lines(block.lines)):
        return _Judged("python", block.lines)  # a launch that does not parse: reported, not dropped
    if any(_starts_command(ln) for ln in _logical_lines(block.lines)):
        return _Judged("shell", block.lines)
    return _Judged("", [])


def _looks_like_dockerfile(lines: list[str]) -> bool:
    significant = [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]
    if not significant or not re.match(r"^FROM\s+\S", significant[0]):
        return False
    return any(re.match(r"^(CMD|ENTRYPOINT|RUN|ENV|ARG)\b", ln) for ln in significant[1:])


def code_lines_of_markdown(text: str) -> list[tuple[int, str]]:
    """(file line, text) of every line inside a code block (prose is never a launch)."""
    try:
        fenced = [(b.line + k, line) for b in _blocks(text) for k, line in enumerate(b.lines)]
        inside = {line for line, _ in fenced} | {b.line - 1 for b in _blocks(text)}
        return fenced + _indented_code_lines(text, inside)
    except Exception:
        return []


def python_program_of_markdown(text: str) -> tuple[str, list[int]] | None:
    """The page's Python blocks as one program, each block on its own lines of the page (the
    other lines blank), and how far each line is indented on the page; None when no block
    launches anything.  A recipe imports in one block and builds the engine in the next, as
    a notebook's cells share a kernel."""
    try:
        blocks = [b for b in _blocks(text) if _is_python("\n".join(b.lines))
                  and (b.lang in _PYTHON_LANGS or _judge(b).kind == "python")]
    except Exception:
        return None
    if not any(_judge(b).kind == "python" for b in blocks):
        return None
    lines = [""] * (text.count("\n") + 1)
    indents = [0] * len(lines)
    for b in blocks:
        for k, (line, indent) in enumerate(zip(b.lines, b.indents)):
            row = b.line - 1 + k
            if row < len(lines):
                lines[row], indents[row] = line, indent
    return "\n".join(lines) + "\n", indents


def python_blocks_of_markdown(text: str) -> list[tuple[int, str]]:
    """``(file line of the source's first line, source)`` of Python engine-launch blocks.

    A block indented in the document (a fence inside a list item) keeps its
    indentation, under an ``if True:`` line placed on the fence line, so that
    lines *and* columns are the document's; if that does not parse, the block
    is given dedented (columns then count from the block's indentation).
    """
    out: list[tuple[int, str]] = []
    try:
        for b in _blocks(text):
            if _judge(b).kind != "python":
                continue
            if any(b.indents) and b.line > 1:
                wrapped = "if True:\n" + "\n".join(" " * n + ln for n, ln in zip(b.indents, b.lines))
                if _is_python(wrapped):
                    out.append((b.line - 1, wrapped))
                    continue
            out.append((b.line, "\n".join(b.lines)))
    except Exception:
        return out
    return out


def commands_in_markdown(text: str, *, path: str | None = None,
                         base_dir: str | None = None) -> list[Command]:
    """The commands in a document's shell, YAML and Dockerfile code blocks."""
    try:
        blocks = _blocks(text)
    except Exception as exc:
        frontend_failed(Span(1, 0, 1, 0), "Markdown", exc)
        return []
    index = LineIndex(text)
    out: list[Command] = []
    for block in blocks:
        try:
            units = _unit_runs(block)
            for first, end in units:  # read as the unit file they are, and not again as shell
                out += _delegate(_part(block, first, end), "systemd", base_dir)
                block = replace(block, lines=block.lines[:first] + [""] * (end - first) + block.lines[end:])
            judged = _judge(block)
            if judged.kind == "shell":
                out += _shell_block(block, judged.lines, index, base_dir)
            elif judged.kind == "dockerfile":  # YAML, TOML, JSON: document_blocks_of_markdown
                out += _delegate(block, judged.kind, base_dir)
        except Exception as exc:  # this block is not checked; the others are
            frontend_failed(Span(block.line, 0, block.line, 0), "Markdown", exc)
    return out


def _shell_block(block: _Block, lines: list[str], index: LineIndex,
                 base_dir: str | None) -> list[Command]:
    script = "\n".join(lines)
    chars: list[int] = []
    for k, line in enumerate(lines):
        row_chars = block.chars[k]
        row = block.line - 1 + k
        line_end = row_chars[-1] + 1 if row_chars else index.starts[min(row, len(index.starts) - 1)]
        # blanked prompts keep their length, so columns still line up with the file
        chars += [row_chars[c] if c < len(row_chars) else line_end for c in range(len(line))]
        if k < len(lines) - 1:
            chars.append(line_end)
    first = index.starts[min(block.line - 1, len(index.starts) - 1)]
    fallback = index.span(first, first)
    place = placer(script, chars, index, fallback)
    return doc_shell_commands(script, place, None, base_dir, prose=True)


def _unit_runs(block: _Block) -> list[tuple[int, int]]:
    """``(first, end)`` of the runs of a block's lines that are a unit file: from a section header
    to the next prompt line (``$ ...``) or the block's end, holding an ``Exec...=`` key."""
    if block.lang in _YAML_LANGS or block.lang in _PYTHON_LANGS or block.lang in _DOCKER_LANGS \
            or block.lang in ("toml", "json"):
        return []
    lines, runs, k = block.lines, [], 0
    while k < len(lines):
        if not _UNIT_SECTION.match(lines[k]):
            k += 1
            continue
        j = k + 1
        while j < len(lines) and not (_PROMPT.match(lines[j]) or _PROMPT_ONLY.match(lines[j])):
            j += 1
        if any(_UNIT_EXEC.match(line) for line in lines[k:j]):
            runs.append((k, j))
        k = j
    return runs


def _part(block: _Block, first: int, end: int) -> _Block:
    return _Block(block.lang, block.line + first, block.lines[first:end], block.indents[first:end],
                  block.chars[first:end])


def document_blocks_of_markdown(text: str) -> list[tuple[str, int, str, list[int]]]:
    """``(kind, file line of the first line, body, indentation of each line)`` of the YAML, TOML
    and JSON blocks: manifests, compose files, serve configs, Ray Serve configs, frameworks'
    configs, judged as files of that kind are."""
    out = []
    try:
        for b in _blocks(text):
            kind = _judge(b).kind
            if kind in ("yaml", "toml", "json"):
                out.append((kind, b.line, "\n".join(b.lines) + "\n", b.indents))
    except Exception:
        return out
    return out


def _delegate(block: _Block, kind: str, base_dir: str | None) -> list[Command]:
    body = "\n".join(block.lines) + "\n"
    indents = block.indents

    def col_offset(line: int) -> int:
        k = line - 1
        return indents[k] if 0 <= k < len(indents) else 0

    def move(span: Span) -> Span:
        return Span(span.line + block.line - 1, span.col + col_offset(span.line),
                    span.end_line + block.line - 1, span.end_col + col_offset(span.end_line))

    with relayed(move):
        found = (commands_in_unit if kind == "systemd" else commands_in_dockerfile)(body, base_dir=base_dir)
    return [shift_command(c, block.line - 1, col_offset) for c in found]
