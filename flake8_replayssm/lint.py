"""Lint one text of any kind: detect the kind, pre-filter, find launches, judge them.

This is the public Python API (``flake8_replayssm.check_source``) and what the
CLI runs per file.  A text without a trigger token is never parsed, and the
frontends (libcst, tree-sitter, PyYAML) are imported only for texts that need
them.
"""

from __future__ import annotations

import contextvars
import os
import re
import warnings
from dataclasses import dataclass, field
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Callable

from . import engines
from .config import LintConfig
from .files import confined_to
from .inventory import Candidate, LaunchNote, Unrecognised, launch_notes, unrecognised_lines
from .model import Command, Finding, Launch, Span
from .noqa import Suppressions
from .templates import mask_template_syntax, template_base
from .triggers import TRIGGER_NEEDLES, contains_trigger, has_trigger
from .unchecked import NotChecked, frontend_failed, not_followed, note, recording, without_line

if TYPE_CHECKING:
    from .verdicts import Verdict

__all__ = ["KINDS", "FileResult", "check_source", "contains_trigger", "detect_kind", "has_trigger", "lint_text"]

KINDS = ("python", "shell", "makefile", "dockerfile", "yaml", "toml", "json", "notebook", "markdown", "systemd")
#: Markdown and the formats written like it: MDX, Quarto, R Markdown, reStructuredText
_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".qmd", ".rmd", ".rst", ".rest")
_SHELL_SHEBANG = re.compile(r"^#!.*\b(ba|z|da|k)?sh\b")
#: every launch is being listed (``--show-launches``): a document written inside another (a YAML
#: fence, a ConfigMap's file) is read when it looks like a launch, not only when it has a trigger
_LISTING: contextvars.ContextVar[bool] = contextvars.ContextVar("replayssm_listing", default=False)


def _worth_reading(body: str, kind: str | None = None) -> bool:
    """Whether a document inside another is read: it may hold a finding, or every launch is listed."""
    return has_trigger(body, kind) or _LISTING.get() and engines.launch_looking().search(body) is not None


def detect_kind(path: str, text: str | None = None) -> str | None:
    """The file kind of ``path`` (None: not a file we read)."""
    base = template_base(path)
    if base is not None:  # deploy.yaml.j2, user_data.sh.tftpl: the kind it renders to
        return detect_kind(base, text)
    name = os.path.basename(path)
    lower = name.lower()
    if lower.endswith((".py", ".pyi")):
        return "python"
    if lower.endswith(".ipynb"):
        return "notebook"
    if lower.endswith(_MARKDOWN_SUFFIXES):
        return "markdown"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if lower.endswith(".toml"):
        return "toml"
    if lower.endswith(".json"):
        return "json"
    if lower.endswith((".service", ".container")):  # a systemd unit, a Podman quadlet unit
        return "systemd"
    if lower.endswith((".sh", ".bash", ".zsh", ".sbatch", ".slurm")):
        return "shell"
    if lower in ("makefile", "gnumakefile") or lower.endswith(".mk"):
        return "makefile"
    if lower in ("dockerfile", "containerfile") or lower.endswith((".dockerfile", ".containerfile")) \
            or lower.startswith(("dockerfile.", "containerfile.")):
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
    #: with LintConfig.inventory: every launch seen, and launch-looking lines none covers (without
    #: it, those of a text that can hold a finding: the summary line counts them)
    launches: list[LaunchNote] = field(default_factory=list)
    unrecognised: list[Unrecognised] = field(default_factory=list)
    path: str = ""
    #: launch-looking lines no launch covers in a text that can hold a finding (it holds a trigger
    #: token): where a launch the linter did not read could hide one
    blind_spots: int = 0


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
    """The launches of a Python text; :class:`NotChecked` when it cannot be parsed (safely)."""
    from .frontends.python_screen import candidate_lines, parsed
    from .guard import check_python, python_parse_failure

    lines = candidate_lines(text)
    if lines is False:
        return []
    tree = parsed(text)  # the screen's tree (None: ast rejects the text)
    ast_error = check_python(text, tree)  # too deep for the frontend's walk is RSM900, not a lost file
    from .frontends.python import launches_in_python

    try:
        return launches_in_python(text, base_dir=base_dir, tree=tree, candidate_lines=lines or None)
    except RecursionError:
        raise NotChecked("too deeply nested to parse safely") from None
    except Exception as exc:  # libcst cannot parse it either
        raise python_parse_failure(ast_error, exc) from None


def _commands_to_launches(commands: list[Command]) -> list[Launch]:
    from .recognise import launch_from_command

    return [launch for launch in map(launch_from_command, commands) if launch is not None]


def _lines_of(launch: Launch, cell: int | None = None) -> set[int]:
    """The lines a launch was read from (its word, its model, its options), in one cell."""
    spans = [launch.anchor, launch.written] + [s.span for s in [launch.model, *launch.options.values()]
                                               if s is not None]
    return {line for span in spans if span is not None and span.source is None and span.cell == cell
            for line in range(span.line, span.end_line + 1)}


def _yaml_launches(text: str, base_dir: str | None, path: str | None, kind: str = "yaml") -> list[Launch]:
    """The launches of a structured text: YAML, TOML or JSON (read alike: frontends/structured)."""
    from .frontends import structured
    from .guard import check_structured

    check_structured(text, kind)
    if kind == "yaml":
        config = engines.config_launch(text, base_dir)  # an engine's --config file, judged on its own
        if config is not None:
            return [config]
    reading = structured.read_document(text, kind, path=path, base_dir=base_dir)
    launches = _commands_to_launches(reading.commands) + reading.launches
    depth = _EMBEDDED_DEPTH.get()
    for inner_kind, inner, place, name in reading.embedded:
        # a recipe's `guide: |` Markdown, a pod patch in an annotation, a ConfigMap's files:
        # that kind, placed here
        if not _worth_reading(inner, inner_kind):
            continue
        if depth >= MAX_EMBEDDED_DEPTH:  # each level is read again whole: nesting is bounded
            not_followed(place(Span(1, 0, 1, 0)), f"a {inner_kind} document inside a string, nested deeper than "
                                                  f"{MAX_EMBEDDED_DEPTH} documents in strings")
            continue
        token = _EMBEDDED_DEPTH.set(depth + 1)
        try:
            with _relayed(place):
                # a file the key names (`inference_config.yaml: |`) is read as that file, beside this one
                found = _launches_in(inner, inner_kind, os.path.join(os.path.dirname(path or ""), name)
                                     if name and "/" not in name else path)
        except NotChecked as exc:
            if exc.kind == "syntax":  # a string that only looked like a document
                note(f"a {inner_kind} document inside a string was not checked: {exc.reason}")
            else:  # a bound was hit: reported where that string is, never dropped
                not_followed(place(Span(exc.line, exc.col, exc.line, exc.col)),
                             f"a {inner_kind} document inside a string {without_line(exc.reason)}")
            continue
        except (MemoryError, RecursionError) as exc:
            frontend_failed(place(Span(1, 0, 1, 0)), inner_kind, exc)
            continue
        finally:
            _EMBEDDED_DEPTH.reset(token)
        launches += [move_launch(launch, place) for launch in found]
    return launches


#: documents written inside strings (a recipe's Markdown guide, a manifest in an annotation)
#: are read this many levels deep; each level is parsed again, so deeper ones are RSM900
MAX_EMBEDDED_DEPTH = 8
_EMBEDDED_DEPTH: ContextVar[int] = ContextVar("replayssm_embedded_depth", default=0)


def _notebook_launches(text: str, base_dir: str | None, path: str | None) -> list[Launch]:
    from .frontends import notebook
    from .guard import check_notebook

    check_notebook(text)
    launches = _commands_to_launches(notebook.commands_in_notebook(text, path=path, base_dir=base_dir))
    launches += _written_files_launches(text, base_dir)
    for cell, source in notebook.markdown_cells_of_notebook(text):
        if has_trigger(source):
            launches += [_in_cell(launch, cell) for launch in _markdown_launches(source, base_dir, path)]
    cells = notebook.python_cells_of_notebook(text)
    if not has_trigger("".join(source for _, source in cells), "python"):
        return launches
    # the kernel runs the cells as one program: imports and constants carry over
    parts: list[str] = []
    starts: list[tuple[int, int]] = []
    lines = 0
    for cell, source in cells:  # counted as it goes: counting the joined text per cell was quadratic
        starts.append((lines, cell))
        part = source if source.endswith("\n") or not source else source + "\n"
        parts.append(part)
        lines += part.count("\n")
    joined = "".join(parts)
    offsets = [offset for offset, _ in starts]
    try:
        return launches + [_to_cells(launch, starts, offsets) for launch in _python_launches(joined, base_dir)]
    except NotChecked:
        pass
    for cell, source in cells:  # a broken cell: judge the others on their own
        if has_trigger(source, "python"):
            try:
                launches += [_in_cell(launch, cell) for launch in _python_launches(source, base_dir)]
            except NotChecked as exc:
                not_followed(Span(exc.line, exc.col, exc.line, exc.col, cell=cell), exc.reason)
    return launches


def _written_files_launches(text: str, base_dir: str | None) -> list[Launch]:
    """The launches of the files a notebook's ``%%writefile PATH`` cells write, each read as the
    kind PATH names (a script, a manifest, a serve config), placed in its cell from line 2."""
    from .frontends import notebook

    launches: list[Launch] = []
    for cell, name, body in notebook.written_files_of_notebook(text):
        kind = detect_kind(name, body)
        if kind is None or kind == "notebook" or not has_trigger(body, kind):
            continue
        try:
            with _relayed_down(1):
                found = launches_in(body, kind, path=os.path.join(base_dir, name) if base_dir else name)
        except NotChecked as exc:
            not_followed(Span(exc.line + 1, exc.col, exc.line + 1, exc.col, cell=cell),
                         f"the file {name} a %%writefile cell writes {without_line(exc.reason)}")
            continue
        launches += [_in_cell(_shifted(launch, 1), cell) for launch in found]
    return launches


def _markdown_launches(text: str, base_dir: str | None, path: str | None) -> list[Launch]:
    from .frontends import markdown

    launches = _commands_to_launches(markdown.commands_in_markdown(text, path=path, base_dir=base_dir))
    program = markdown.python_program_of_markdown(text)
    together = None
    if program is not None and has_trigger(program[0], "python"):
        try:
            together = _python_launches(program[0], base_dir)
        except NotChecked:  # judge the blocks one by one
            together = None
    blocks = markdown.python_blocks_of_markdown(text)
    if together is not None:  # the page's blocks as one program, as a notebook's cells are
        launches += [_shifted(launch, 0, program[1]) for launch in together]  # type: ignore[index]
        blocks = [(first_line, source) for first_line, source in blocks if not markdown.is_python(source)]
    for first_line, source in blocks:  # one by one, or the ones the program could not hold
        if has_trigger(source, "python"):
            try:
                with _relayed_down(first_line - 1):
                    launches += [_shifted(launch, first_line - 1) for launch in _python_launches(source, base_dir)]
            except NotChecked as exc:  # an engine launch in a block that does not parse: not judged
                line = exc.line + first_line - 1
                not_followed(Span(line, exc.col, line, exc.col), f"Python block {without_line(exc.reason)}")
    for kind, first_line, body, indents in markdown.document_blocks_of_markdown(text):
        if _worth_reading(body):
            try:
                with _relayed_down(first_line - 1, indents):
                    launches += [_shifted(launch, first_line - 1, indents)
                                 for launch in _yaml_launches(body, base_dir, path, kind)]
            except NotChecked as exc:
                line = exc.line + first_line - 1
                if kind != "yaml":  # a JSON/TOML example in prose (comments, `...`): said, not reported
                    note(f"line {line}: a {kind.upper()} block was not checked: {without_line(exc.reason)}")
                    continue
                col = exc.col + (indents[exc.line - 1] if exc.line <= len(indents) else 0)
                not_followed(Span(line, col, line, col), f"YAML block {without_line(exc.reason)}")
    return launches


def _relayed_down(lines: int, indents: list[int] | None = None) -> AbstractContextManager[None]:
    """What a snippet's reading could not follow, moved as :func:`_shifted` moves its launches."""
    return _relayed(lambda span: _shift_span(span, lines, indents))


def _relayed(change: Callable[[Span], Span]) -> AbstractContextManager[None]:
    from .frontends._common import relayed

    return relayed(change)


def move_launch(launch: Launch, change: Callable[[Span], Span]) -> Launch:
    """The same launch with every span moved (into a notebook cell, down a Markdown file): the
    history too, where the spellings judged per release are (an ambiguous prefix in a YAML
    block scalar inside a Markdown fence is reported on its own line, not the fence's)."""
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
        history=[setting(s) for s in launch.history],
        form_findings=[replace(f, span=change(f.span)) for f in launch.form_findings],
        written=change(launch.written) if launch.written else None,
    )


def _in_cell(launch: Launch, cell: int) -> Launch:
    from dataclasses import replace

    return move_launch(launch, lambda s: s if s.source else replace(s, cell=cell))


def _to_cells(launch: Launch, starts: list[tuple[int, int]], offsets: list[int]) -> Launch:
    """Spans of the joined cells back to (cell, line within the cell); ``offsets`` are the
    first elements of ``starts`` (made once per notebook, not once per launch)."""
    from bisect import bisect_right
    from dataclasses import replace

    def change(span: Span) -> Span:
        if span.source:
            return span
        offset, cell = starts[max(bisect_right(offsets, span.line - 1) - 1, 0)]
        return replace(span, line=span.line - offset, end_line=span.end_line - offset, cell=cell)

    return move_launch(launch, change)


def _shifted(launch: Launch, lines: int, indents: list[int] | None = None) -> Launch:
    """The launch of a snippet that starts ``lines`` lines down a file, each of its lines
    indented by ``indents[k]`` more characters there (a fence inside a list item)."""
    return move_launch(launch, lambda s: _shift_span(s, lines, indents))


def _shift_span(span: Span, lines: int, indents: list[int] | None = None) -> Span:
    from dataclasses import replace

    def indent(line: int) -> int:
        return indents[line - 1] if indents and 0 < line <= len(indents) else 0

    return span if span.source else replace(
        span, line=span.line + lines, end_line=span.end_line + lines,
        col=span.col + indent(span.line), end_col=span.end_col + indent(span.end_line))


#: kinds whose own readers end a line at a lone CR as at LF (Python's tokenizer, YAML, CommonMark;
#: JSON takes it as a blank); a shell, make and docker read a CR as part of the line
_CR_ENDS_A_LINE = frozenset({"python", "yaml", "markdown", "notebook"})
_LONE_CR = re.compile(r"\r(?!\n)")
#: what reads a kind whose lines a lone CR does not end (for the message)
_READ_BY = {"shell": "the shell", "makefile": "make", "dockerfile": "docker"}


def line_ends(text: str, kind: str) -> str:
    """``text`` with each lone CR made the LF it is to ``kind``'s own reader (a Python file with
    old Mac line ends runs), one character for one: columns and offsets do not move, and lines
    are counted as Python, editors and the language server protocol count them."""
    if "\r" not in text or kind not in _CR_ENDS_A_LINE:
        return text
    return _LONE_CR.sub("\n", text)


def _not_text(text: str, kind: str) -> NotChecked | None:
    """Why ``text`` is no text of ``kind`` to judge, or None.

    A NUL byte anywhere is a binary (or broken) file, as ruff and flake8 take it (Python
    will not compile it), and the engine's own marker for an unknown part of a word: read
    on, it would make a launch look clean.  A shell script, Makefile or Dockerfile whose
    lines end in a CR only is one long line to its reader, not the lines it shows.
    """
    nul = text.find("\0")
    if nul >= 0:
        return NotChecked("binary file (a NUL byte)", text.count("\n", 0, nul) + 1, kind="file")
    if kind in _READ_BY and "\r" in text and "\n" not in text:
        return NotChecked(f"its lines end in a CR only, and {_READ_BY[kind]} reads such a file as one line "
                          "(convert the line ends to LF)", kind="syntax")
    return None


def launches_in(text: str, kind: str, *, path: str | None = None) -> list[Launch]:
    """Every vLLM launch of a text of ``kind`` (no pre-filter here).

    Python's parsers warn about the user's code (invalid escapes, ...); that is
    not ours to report, so warnings are silenced while frontends read it.
    """
    text = line_ends(text, kind)
    problem = _not_text(text, kind)
    if problem is not None:
        raise problem
    if path is not None and template_base(path) is not None:  # its template syntax, masked in place
        text = mask_template_syntax(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _launches_in(text, kind, path)


def _launches_in(text: str, kind: str, path: str | None) -> list[Launch]:
    base_dir = os.path.dirname(os.path.abspath(path)) if path else None
    if kind == "python":
        return _python_launches(text, base_dir)
    if kind == "shell":
        launches = _commands_to_launches(_shell(text, base_dir))
        _report_unparsed(text, launches)
        return launches
    if kind == "makefile":
        launches = _commands_to_launches(_makefile(text, base_dir))
        for first_line, script in _recipe_lines(text):  # each recipe line is its own shell
            _report_unparsed(script, launches, first_line - 1)
        return launches
    if kind == "dockerfile":
        return _commands_to_launches(_dockerfile(text, base_dir))
    if kind == "systemd":
        from .frontends.systemd import commands_in_unit

        return _commands_to_launches(commands_in_unit(text, base_dir=base_dir))
    if kind in ("yaml", "toml", "json"):
        return _yaml_launches(text, base_dir, path, kind)
    if kind == "notebook":
        return _notebook_launches(text, base_dir, path)
    if kind == "markdown":
        return _markdown_launches(text, base_dir, path)
    raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")


def _report_unparsed(script: str, launches: list[Launch], line_offset: int = 0) -> None:
    """RSM900 for the parts of a shell ``script`` (starting ``line_offset`` lines down the file)
    the parser could not read that hold a trigger token and no launch was read from."""
    if not has_trigger(script):
        return
    from .frontends.shell import shell_syntax_errors

    read = {line for launch in launches for line in _lines_of(launch)}
    for problem in shell_syntax_errors(script, TRIGGER_NEEDLES):
        first, last = (line + line_offset for line in problem.lines)
        if not any(first <= line <= last for line in read):
            line = problem.line + line_offset
            not_followed(Span(line, problem.col, line, problem.col),
                         without_line(problem.reason) if line_offset else problem.reason)


_RECIPE_PREFIX = re.compile(r"\t[ \t@+-]*")


def _recipe_lines(text: str) -> list[tuple[int, str]]:
    """(file line, shell text) of each recipe line of a Makefile (tab-indented, continued with
    backslashes), its tab and ``@``/``-``/``+`` prefixes blanked so columns stay the file's."""
    out: list[tuple[int, str]] = []
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        prefix = _RECIPE_PREFIX.match(lines[k])
        if prefix is None:
            k += 1
            continue
        first = k
        body = [" " * prefix.end() + lines[k][prefix.end():]]
        while lines[k].rstrip().endswith("\\") and k + 1 < len(lines):
            k += 1
            body.append(lines[k])
        out.append((first + 1, "\n".join(body)))
        k += 1
    return out


def lint_text(text: str, kind: str, config: LintConfig, *, path: str | None = None,
              noqa: bool = True) -> FileResult:
    """Findings for one text, ``# noqa`` applied as flake8 does (unless ``noqa`` is False).

    What could not be checked is reported as RSM900 (:mod:`.unchecked`): the whole
    text, or the parts a frontend did not follow.  ``--config`` files named in
    the text are read only inside the project (:func:`.files.confined_to`).
    """
    triggered = has_trigger(text, kind)
    if not triggered and not (config.inventory and (any(p in text for p in engines.programs())
                                                    or "engine_kwargs" in text)):
        return FileResult([], [])
    text = line_ends(text, kind)  # the lines the spans, noqa comments and notes are counted in
    root = str(config.project_root) if config.project_root is not None else \
        (os.path.dirname(os.path.abspath(path)) if path else os.getcwd())
    whole: NotChecked | None = None
    # the summary counts the launch-looking lines no launch covers in a text with a trigger: it is
    # read as --show-launches reads it (documents inside others that look like a launch too), so
    # the count and the list are one computation
    listing = _LISTING.set(config.inventory or triggered)
    with recording() as record, confined_to(root):
        try:
            from .judging import judge  # the rules and their data: only for texts that need judging

            verdicts = [judge(launch, config) for launch in _with_install_pins(launches_in(text, kind, path=path),
                                                                               text)]
        except NotChecked as exc:
            verdicts, whole = [], exc
        except RecursionError:
            verdicts, whole = [], NotChecked("too deeply nested to check safely")
        except MemoryError:  # never an internal error, never a clean file
            verdicts, whole = [], NotChecked("the linter ran out of memory checking it")
        finally:
            _LISTING.reset(listing)
    findings: list[Finding] = []
    seen: set[tuple[object, ...]] = set()
    held = _held_by_every_reading(verdicts)
    unchecked = record.findings() + ([whole.finding()] if whole is not None else [])
    candidates = [(f, v.launch) for v, reported in zip(verdicts, held) for f in reported] + \
        [(f, None) for f in unchecked if config.is_enabled(f.code)]
    quiet = _Quiet(text, kind) if noqa else None
    for finding, launch in candidates:
        key = (finding.span, finding.code)
        if key in seen:  # one command reached twice (`argv = shlex.split(...)`; `Popen(argv)`)
            continue
        seen.add(key)
        where = finding.span.source or path or ""
        if quiet is not None and finding.span.source is None and quiet.covers(finding, launch):
            continue
        findings.append(finding.with_path(where))
    findings.sort(key=lambda f: f.sort_key)
    with confined_to(root):  # the note resolves the model again: under the same confinement
        notes = [f"{path or '-'}:{v.launch.anchor.line}: {v.launch.label or v.launch.entry} judged for "
                 f"{engines.title(v.launch.engine)} {v.judged_for} ({v.target.reason}); "
                 f"{_model_note(v, config)}"
                 for v in verdicts] + [f"{path or '-'}: {n}" for n in record.notes]
    result = FileResult(verdicts, findings, notes=notes, path=path or "")
    if config.inventory or whole is None and any(p in text for p in engines.programs()):
        result.unrecognised = unrecognised_lines(_candidate_lines(text, kind), verdicts)
        result.blind_spots = len(result.unrecognised) if triggered or config.inventory else 0
    if config.inventory:
        result.launches = launch_notes(verdicts, held)
    return result


def _candidate_lines(text: str, kind: str) -> list[Candidate]:
    """(cell, line, text, already found launch-looking) of the lines a launch could be written
    on: a Markdown page's (and a notebook's markdown cells') code blocks, a notebook's code
    cells, any line elsewhere; in Python, the strings that name an entry point where a command
    can be (:func:`.frontends.python_screen.looking_lines`)."""
    if kind == "markdown":
        from .frontends.markdown import code_lines_of_markdown

        return [(None, line, body, False) for line, body in code_lines_of_markdown(text)]
    lines = text.split("\n")
    if kind == "python":
        from .frontends.python_screen import looking_lines

        return [(None, line, lines[line - 1], True) for line in looking_lines(text) if 0 < line <= len(lines)]
    if kind == "notebook":
        return _notebook_candidates(text)
    candidates: list[Candidate] = [(None, k + 1, line, False) for k, line in enumerate(lines)]
    if kind in ("shell", "makefile", "dockerfile") and "<<" in text:
        return _with_heredoc_pages_as_markdown(candidates, text)
    if kind in ("yaml", "toml", "json"):
        from .frontends.structured.content import never_a_command

        return [c for c in candidates if not never_a_command(c[2])]
    return candidates


def _with_heredoc_pages_as_markdown(candidates: list[Candidate], text: str) -> list[Candidate]:
    """The candidate lines of a script, a here-document that writes a Markdown page
    (``cat > notes.md <<EOF``) counted as that page is: only its code blocks, never its prose."""
    from .frontends.markdown import code_lines_of_markdown
    from .frontends.shell_snippets import here_documents

    prose: set[int] = set()
    for written, start, end in here_documents(text):
        if written and detect_kind(written) == "markdown":
            first = text.count("\n", 0, start)  # lines before the body's first
            body = range(first + 1, first + 1 + text.count("\n", start, end))
            prose |= set(body) - {first + line for line, _ in code_lines_of_markdown(text[start:end])}
    return [c for c in candidates if c[1] not in prose]


def _notebook_candidates(text: str) -> list[Candidate]:
    """A notebook's candidate lines: its Python cells' strings (as in a Python file), its shell
    lines (``!``, ``%%bash``, a bash kernel's cells) and its markdown cells' code blocks."""
    from .frontends import notebook
    from .frontends.markdown import code_lines_of_markdown
    from .frontends.python_screen import looking_lines

    python = dict(notebook.python_cells_of_notebook(text))
    out: list[Candidate] = []
    for cell in notebook.code_cells_of_notebook(text):
        raw = notebook.cell_source(text, cell).split("\n")
        source = python.get(cell)
        if source is None:  # a shell kernel's cell
            out += [(cell, k + 1, line, False) for k, line in enumerate(raw)]
            continue
        blanked = source.split("\n")
        out += [(cell, k + 1, line, False) for k, line in enumerate(raw)  # its `!` and `%%bash` lines
                if k >= len(blanked) or blanked[k] != line]
        out += [(cell, line, raw[line - 1], True) for line in looking_lines(source) if 0 < line <= len(raw)]
    for cell, source in notebook.markdown_cells_of_notebook(text):
        out += [(cell, line, body, False) for line, body in code_lines_of_markdown(source)]
    return out


def _with_install_pins(launches: list[Launch], text: str) -> list[Launch]:
    """The launches, each knowing the releases its file installs (``pip install vllm==X``)."""
    if not launches or "install" not in text:
        return launches
    from .install_pins import install_pins

    pins: dict[str, list[tuple[str, str]]] = {}
    for launch in launches:
        package = engines.get(launch.engine).PACKAGE
        if package not in pins:
            pins[package] = install_pins(text, package)
        if pins[package]:
            launch.file_pins = {**launch.file_pins, package: pins[package]}
    return launches


def _held_by_every_reading(verdicts: list[Verdict]) -> list[tuple[Finding, ...]]:
    """The findings to report of each verdict.

    Launches of one group are one written launch read with each value a variable may
    take (an ``if``/``else``, a ``case``, ``a if c else b``): a code is reported once,
    where its first reading has it, and only if every reading has it (DESIGN.md: a
    finite set of values is that set), on each release of a set of releases.
    """
    from .verdicts import common_to_readings

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
            engine = engines.get(verdict.launch.engine)
            out.append(common_to_readings(members, engine.TITLE, engine.releases() if verdict.by_release else ()))
    return out


class _Quiet:
    """The suppressions of a text (per cell in a notebook), asked per finding with its launch."""

    def __init__(self, text: str, kind: str) -> None:
        self.text, self.kind = text, kind
        self.by_cell: dict[int | None, Suppressions] = {}

    def _of(self, cell: int | None) -> Suppressions:
        if cell not in self.by_cell:
            if cell is None:
                lines = self.text.splitlines()
            else:
                from .frontends.notebook import cell_source

                lines = cell_source(self.text, cell).splitlines()
            self.by_cell[cell] = Suppressions(lines)
        return self.by_cell[cell]

    def covers(self, finding: Finding, launch: Launch | None) -> bool:
        span = finding.span
        if self.kind == "notebook" and span.cell is None:
            return False  # a line of the notebook's JSON, where no comment can be
        first = last = None
        suppressions = self._of(span.cell)
        if launch is not None and launch.form == "argv":  # a command line: any of its lines
            lines = _lines_of(launch, span.cell)
            if lines:
                first, last = min(lines), max(lines)
                while last < len(suppressions.lines) and suppressions.lines[last - 1].rstrip().endswith("\\"):
                    last += 1  # the words after the last option, on the continuation lines
        elif launch is not None and launch.anchor.cell == span.cell:  # a call: from its name to here
            first, last = min(launch.anchor.line, span.line), max(launch.anchor.line, span.line)
            if launch.written is not None and launch.written.cell == span.cell:  # or any line of it
                first, last = min(first, launch.written.line), max(last, launch.written.end_line)
        return suppressions.covers(finding.code, span.line, first, last)


def _model_note(verdict: Verdict, config: LintConfig) -> str:
    """The model and the architecture it resolved to, for ``--verbose``."""
    return engines.get(verdict.launch.engine).model_note(verdict, config)


def check_source(text: str, kind: str = "python", *, vllm_version: str | None = None,
                 platform: str | None = None, config: LintConfig | None = None,
                 path: str | None = None) -> list[Finding]:
    """Lint ``text`` as a file of ``kind``; the findings of every launch in it.

    ``vllm_version`` and ``platform``, when given, win over ``config``'s (CUDA by default).

    >>> [f.code for f in check_source('LLM("state-spaces/mamba-130m-hf", use_replayssm=True)\\n'
    ...     .replace('LLM', 'from vllm import LLM\\nLLM', 1), vllm_version="0.28.0")]
    ['RSM001']
    """
    config = (config or LintConfig()).merged(vllm_version=vllm_version, platform=platform)
    return lint_text(text, kind, config, path=path).findings
