"""Lint one text of any kind: detect the kind, pre-filter, find launches, judge them.

This is the public Python API (``flake8_replayssm.check_source``) and what the
CLI runs per file.  A text without a trigger token is never parsed, and the
frontends (libcst, tree-sitter, PyYAML) are imported only for texts that need
them.
"""

from __future__ import annotations

import fnmatch
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable

from .config import LintConfig
from .engine import Verdict, judge
from .inventory import LAUNCH_LOOKING, LaunchNote, Unrecognised, launch_notes, unrecognised_lines
from .model import Command, Finding, Launch, Span
from .noqa import suppressed

#: a text must contain one of these to hold anything we report (plain substring
#: tests: much faster than a regular expression over every file of a large tree)
TRIGGER_NEEDLES = ("replayssm", "REPLAYSSM", "mamba-block-size", "mamba_block_size", "mamba-cache-mode",
                   "mamba_cache_mode", "--config", "api_server", "disable-prefix-caching",
                   "disable_prefix_caching")

KINDS = ("python", "shell", "makefile", "dockerfile", "yaml", "notebook", "markdown")
_SHELL_SHEBANG = re.compile(r"^#!.*\b(ba|z|da|k)?sh\b")


#: a Python file can only launch vLLM through one of these
PYTHON_LAUNCHERS = ("LLM(", "LLM as", "EngineArgs", "subprocess", "system(", "popen(", "Popen", "shlex",
                    "create_subprocess", "engine_kwargs", "Engine(", "Engine as", "ServerArgs")


def has_trigger(text: str, kind: str | None = None) -> bool:
    """Whether ``text`` can hold anything we report (cheap; decides whether to parse)."""
    if not any(needle in text for needle in TRIGGER_NEEDLES):
        return False
    return kind != "python" or any(needle in text for needle in PYTHON_LAUNCHERS)


def detect_kind(path: str, text: str | None = None) -> str | None:
    """The file kind of ``path`` (None: not a file we read)."""
    name = os.path.basename(path)
    lower = name.lower()
    if lower.endswith((".py", ".pyi")):
        return "python"
    if lower.endswith(".ipynb"):
        return "notebook"
    if lower.endswith((".md", ".markdown")):
        return "markdown"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if lower.endswith((".sh", ".bash", ".zsh", ".sbatch", ".slurm")):
        return "shell"
    if lower in ("makefile", "gnumakefile") or lower.endswith(".mk"):
        return "makefile"
    if lower in ("dockerfile", "containerfile") or lower.endswith((".dockerfile", ".containerfile")) \
            or fnmatch.fnmatch(lower, "dockerfile.*") or fnmatch.fnmatch(lower, "containerfile.*"):
        return "dockerfile"
    if "." not in name and text is not None and _SHELL_SHEBANG.match(text):
        return "shell"
    return None


@dataclass
class FileResult:
    verdicts: list[Verdict]
    findings: list[Finding]
    error: str | None = None
    #: one line per launch: which release judged it and why (for --verbose)
    notes: list[str] = field(default_factory=list)
    #: with LintConfig.inventory: every launch seen, and launch-looking lines none covers
    launches: list[LaunchNote] = field(default_factory=list)
    unrecognised: list[Unrecognised] = field(default_factory=list)
    path: str = ""


def _shell(text: str, base_dir: str | None) -> list[Command]:
    from .frontends.shell import commands_in_shell

    return commands_in_shell(text, base_dir=base_dir)


def _makefile(text: str, base_dir: str | None) -> list[Command]:
    from .frontends.shell import commands_in_makefile

    return commands_in_makefile(text, base_dir=base_dir)


def _dockerfile(text: str, base_dir: str | None) -> list[Command]:
    from .frontends.dockerfile import commands_in_dockerfile

    return commands_in_dockerfile(text, base_dir=base_dir)


def _python_launches(text: str, base_dir: str | None) -> list[Launch]:
    return _python_launches_or_none(text, base_dir) or []


def _python_launches_or_none(text: str, base_dir: str | None) -> list[Launch] | None:
    """The launches of a Python text; None when libcst cannot parse it."""
    from .frontends.python_screen import might_launch

    if not might_launch(text):
        return []
    from .frontends.python import launches_in_python

    try:
        return launches_in_python(text, base_dir=base_dir)
    except Exception:  # libcst cannot parse it (syntax error, newer grammar): no findings
        return None


def _commands_to_launches(commands: list[Command]) -> list[Launch]:
    from .argv import launch_from_command

    return [launch for launch in map(launch_from_command, commands) if launch is not None]


def _yaml_launches(text: str, base_dir: str | None, path: str | None) -> list[Launch]:
    from .argv import launch_from_serve_config
    from .frontends import yaml_manifests

    from .sglang import argv as sglang_argv

    if sglang_argv.is_serve_config(text):
        launch = sglang_argv.launch_from_serve_config(text, base_dir=base_dir)
        return [launch] if launch is not None else []
    if yaml_manifests.is_serve_config(text):
        launch = launch_from_serve_config(text, base_dir=base_dir)
        return [launch] if launch is not None else []
    launches = _commands_to_launches(yaml_manifests.commands_in_yaml(text, path=path, base_dir=base_dir)) \
        + yaml_manifests.ray_launches_in_yaml(text, base_dir=base_dir)
    for kind, inner, place in yaml_manifests.embedded_documents(text):
        # a recipe's `guide: |` Markdown, a pod patch in an annotation: that kind, placed here
        found = _markdown_launches(inner, base_dir, path) if kind == "markdown" \
            else _yaml_launches(inner, base_dir, path)
        launches += [_move(launch, place) for launch in found]
    return launches


def _notebook_launches(text: str, base_dir: str | None, path: str | None) -> list[Launch]:
    from .frontends import notebook

    launches = _commands_to_launches(notebook.commands_in_notebook(text, path=path, base_dir=base_dir))
    for cell, source in notebook.markdown_cells_of_notebook(text):
        if has_trigger(source):
            launches += [_in_cell(launch, cell) for launch in _markdown_launches(source, base_dir, path)]
    cells = notebook.python_cells_of_notebook(text)
    if not has_trigger("".join(source for _, source in cells), "python"):
        return launches
    # the kernel runs the cells as one program: imports and constants carry over
    joined, starts = "", []
    for cell, source in cells:
        starts.append((joined.count("\n"), cell))
        joined += source if source.endswith("\n") or not source else source + "\n"
    together = _python_launches_or_none(joined, base_dir)
    if together is not None:
        return launches + [_to_cells(launch, starts) for launch in together]
    for cell, source in cells:  # a broken cell: judge the others on their own
        if has_trigger(source, "python"):
            launches += [_in_cell(launch, cell) for launch in _python_launches(source, base_dir)]
    return launches


def _markdown_launches(text: str, base_dir: str | None, path: str | None) -> list[Launch]:
    from .frontends import markdown

    from .argv import launch_from_serve_config

    launches = _commands_to_launches(markdown.commands_in_markdown(text, path=path, base_dir=base_dir))
    program = markdown.python_program_of_markdown(text)
    together = _python_launches_or_none(program[0], base_dir) \
        if program is not None and has_trigger(program[0], "python") else None
    if together is not None:  # the page's blocks as one program, as a notebook's cells are
        launches += [_shifted(launch, 0, program[1]) for launch in together]  # type: ignore[index]
    else:
        for first_line, source in markdown.python_blocks_of_markdown(text):
            if has_trigger(source, "python"):
                launches += [_shifted(launch, first_line - 1) for launch in _python_launches(source, base_dir)]
    for first_line, body, indents in markdown.serve_configs_of_markdown(text):
        launch = launch_from_serve_config(body, base_dir=base_dir)
        if launch is not None:
            launches.append(_shifted(launch, first_line - 1, indents))
    return launches


def _move(launch: Launch, change: Callable[[Span], Span]) -> Launch:
    """The same launch with every span moved (into a notebook cell, down a Markdown file)."""
    from dataclasses import replace

    def setting(s):  # type: ignore[no-untyped-def]
        return replace(s, span=change(s.span), value_span=change(s.value_span) if s.value_span else None)

    return replace(
        launch,
        anchor=change(launch.anchor),
        model=setting(launch.model) if launch.model else None,
        options={k: setting(v) for k, v in launch.options.items()},
        env={k: setting(v) for k, v in launch.env.items()},
        yaml_false=[setting(s) for s in launch.yaml_false],
        form_findings=[replace(f, span=change(f.span)) for f in launch.form_findings],
    )


def _in_cell(launch: Launch, cell: int) -> Launch:
    from dataclasses import replace

    return _move(launch, lambda s: s if s.source else replace(s, cell=cell))


def _to_cells(launch: Launch, starts: list[tuple[int, int]]) -> Launch:
    """Spans of the joined cells back to (cell, line within the cell)."""
    from bisect import bisect_right
    from dataclasses import replace

    offsets = [offset for offset, _ in starts]

    def change(span: Span) -> Span:
        if span.source:
            return span
        offset, cell = starts[max(bisect_right(offsets, span.line - 1) - 1, 0)]
        return replace(span, line=span.line - offset, end_line=span.end_line - offset, cell=cell)

    return _move(launch, change)


def _shifted(launch: Launch, lines: int, indents: list[int] | None = None) -> Launch:
    """The launch of a snippet that starts ``lines`` lines down a file, each of its lines
    indented by ``indents[k]`` more characters there (a fence inside a list item)."""
    from dataclasses import replace

    def indent(line: int) -> int:
        return indents[line - 1] if indents and 0 < line <= len(indents) else 0

    return _move(launch, lambda s: s if s.source else replace(
        s, line=s.line + lines, end_line=s.end_line + lines,
        col=s.col + indent(s.line), end_col=s.end_col + indent(s.end_line)))


def launches_in(text: str, kind: str, *, path: str | None = None) -> list[Launch]:
    """Every vLLM launch of a text of ``kind`` (no pre-filter here).

    Python's parsers warn about the user's code (invalid escapes, ...); that is
    not ours to report, so warnings are silenced while frontends read it.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _launches_in(text, kind, path)


def _launches_in(text: str, kind: str, path: str | None) -> list[Launch]:
    base_dir = os.path.dirname(os.path.abspath(path)) if path else None
    if kind == "python":
        return _python_launches(text, base_dir)
    if kind == "shell":
        return _commands_to_launches(_shell(text, base_dir))
    if kind == "makefile":
        return _commands_to_launches(_makefile(text, base_dir))
    if kind == "dockerfile":
        return _commands_to_launches(_dockerfile(text, base_dir))
    if kind == "yaml":
        return _yaml_launches(text, base_dir, path)
    if kind == "notebook":
        return _notebook_launches(text, base_dir, path)
    if kind == "markdown":
        return _markdown_launches(text, base_dir, path)
    raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")


def lint_text(text: str, kind: str, config: LintConfig, *, path: str | None = None) -> FileResult:
    """Findings for one text, ``# noqa`` applied as flake8 does (not inside notebooks)."""
    if not has_trigger(text, kind) and not (config.inventory and LAUNCH_LOOKING.search(text)):
        return FileResult([], [])
    verdicts = [judge(launch, config) for launch in launches_in(text, kind, path=path)]
    findings: list[Finding] = []
    seen: set[tuple[object, ...]] = set()
    lines = text.splitlines()
    held = _held_by_every_reading(verdicts)
    for verdict, reported in zip(verdicts, held):
        for finding in reported:
            key = (finding.span, finding.code)
            if key in seen:  # one command reached twice (`argv = shlex.split(...)`; `Popen(argv)`)
                continue
            seen.add(key)
            where = finding.span.source or path or ""
            if kind != "notebook" and finding.span.source is None \
                    and suppressed(lines, finding.span.line, finding.code):
                continue
            findings.append(finding.with_path(where))
    findings.sort(key=lambda f: f.sort_key)
    notes = [f"{path or '-'}:{v.launch.anchor.line}: {v.launch.label or v.launch.entry} judged for "
             f"{'SGLang' if v.launch.engine == 'sglang' else 'vLLM'} {v.target.name} ({v.target.reason}); "
             f"model: {v.model_detail}"
             for v in verdicts]
    result = FileResult(verdicts, findings, notes=notes, path=path or "")
    if config.inventory:
        result.launches = launch_notes(verdicts, held)
        result.unrecognised = unrecognised_lines(_candidate_lines(text, kind), verdicts)
    return result


def _candidate_lines(text: str, kind: str) -> list[tuple[int | None, int, str]]:
    """(cell, line, text) of the lines a launch could be written on: a Markdown page's (and
    a notebook's markdown cells') code blocks, a notebook's code cells, any line elsewhere."""
    if kind == "markdown":
        from .frontends.markdown import code_lines_of_markdown

        return [(None, line, body) for line, body in code_lines_of_markdown(text)]
    if kind == "notebook":
        from .frontends import notebook
        from .frontends.markdown import code_lines_of_markdown

        out: list[tuple[int | None, int, str]] = []
        for cell, source in notebook.python_cells_of_notebook(text):
            out += [(cell, k + 1, line) for k, line in enumerate(notebook.cell_source(text, cell).split("\n"))]
        for cell, source in notebook.markdown_cells_of_notebook(text):
            out += [(cell, line, body) for line, body in code_lines_of_markdown(source)]
        return out
    return [(None, k + 1, line) for k, line in enumerate(text.split("\n"))]


def _held_by_every_reading(verdicts: list[Verdict]) -> list[tuple[Finding, ...]]:
    """The findings to report of each verdict.

    Launches of one group are one written launch read with each value a variable may
    take (an ``if``/``else``, a ``case``, ``a if c else b``): a code is reported once,
    where its first reading has it, and only if every reading has it (DESIGN.md: a
    finite set of values is that set).
    """
    groups: dict[int, list[Verdict]] = {}
    for verdict in verdicts:
        if verdict.launch.group is not None:
            groups.setdefault(verdict.launch.group, []).append(verdict)
    out = []
    for verdict in verdicts:
        members = groups.get(verdict.launch.group) if verdict.launch.group is not None else None
        if members is None:
            out.append(verdict.findings)
        elif members[0] is not verdict:
            out.append(())
        else:
            common = set.intersection(*({f.code for f in m.findings} for m in members))
            out.append(tuple(f for f in verdict.findings if f.code in common))
    return out


def check_source(text: str, kind: str = "python", *, vllm_version: str | None = None,
                 platform: str = "cuda", config: LintConfig | None = None,
                 path: str | None = None) -> list[Finding]:
    """Lint ``text`` as a file of ``kind``; the findings of every launch in it.

    >>> [f.code for f in check_source('LLM("state-spaces/mamba-130m-hf", use_replayssm=True)\\n'
    ...     .replace('LLM', 'from vllm import LLM\\nLLM', 1), vllm_version="0.28.0")]
    ['RSM001']
    """
    config = (config or LintConfig()).merged(vllm_version=vllm_version, platform=platform)
    return lint_text(text, kind, config, path=path).findings
