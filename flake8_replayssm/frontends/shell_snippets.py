"""Shell written inside other documents: a Dockerfile ``RUN``, a YAML ``command`` string, a
Markdown fence, a notebook's ``!`` line, an exec-form ``sh -c`` argv.

Each such reader hands the shell text and a ``place`` function (from :mod:`._common`) to the
shell frontend and gets the commands back placed in its own file; what the shell parser could
not read is reported where it is written (RSM900). Documentation snippets also have their
placeholders (``<model>``, ``[a|b]``, ``N``) read as unknown values (DESIGN.md).

This module sits above the shell frontend and :mod:`._common` below both, so the shell
frontend can use the shared helpers without importing the readers that embed it.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import Callable, Sequence

from .. import engines
from ..model import Command, Span, Word
from ._common import LineIndex, Tok, merge_context, placer, shell_script_index

#: ``<model>``, ``<org/model|local-path>``, ``<path to model>``: not a redirection (``<in.txt >out``)
_ANGLE_PLACEHOLDER = re.compile(r"(?<![<\w])<([A-Za-z_](?:[^<>\n]*[^<>\s])?)>(?![\w/.~$])")
#: a choice written out in prose: ``[triton|flashinfer]``, ``{triton,flashinfer}``, ``{a|b}``
_ALTERNATIVES = re.compile(r"(?<![\w$])(?:\[([A-Za-z_][\w.\-/]*(?:\|[\w.\-/]+)+)\]"
                           r"|\{([A-Za-z_][\w.\-/]*(?:[|,][\w.\-/]+)+)\})")
#: an optional part of a documented command line: ``[--mamba-backend flashinfer ...]``
_OPTIONAL_GROUP = re.compile(r"(?<!\S)\[(-{1,2}[A-Za-z][^\[\]\n]*)\](?!\S)")
#: a value written as its name: ``--replayssm-buffer-len N``, ``--mamba-backend BACKEND``
_CAPS_WORD = re.compile(r"[A-Z][A-Z0-9_]*")
#: group ids handed out here: far above the shell's and Python's own counters, never reused
_GROUP_IDS = itertools.count(10**12)


def mask_doc_placeholders(script: str, prose: bool = False) -> tuple[str, dict[str, str]]:
    """``script`` with documentation's placeholders written as one shell word each, and what
    each such word was written as.

    ``<model>`` in documentation's shell is a value to fill in, not a redirection, and
    ``<triton|flashinfer>`` not a pipe: written ``{triton_flashinfer}`` (same length, so
    positions hold) the shell reads one word, which :func:`unmask_words` turns back into an
    unknown value labelled as written.  In prose (Markdown), choices written out
    (``[a|b]``, ``{a,b}``) are placeholders too; in a real script they are shell.
    """
    originals: dict[str, str] = {}

    def one_word(match: re.Match[str]) -> str:
        inner = next(g for g in match.groups() if g is not None)
        masked = "{" + re.sub(r"[^\w.\-/]", "_", inner) + "}"
        originals[masked] = match.group(0)
        return masked

    if "<" in script:
        script = outside_here_documents(script, lambda part: _ANGLE_PLACEHOLDER.sub(one_word, part))
    if prose and ("[" in script or "{" in script):
        script = outside_here_documents(script, lambda part: _ALTERNATIVES.sub(one_word, part))
    return script, originals


def outside_here_documents(script: str, change: Callable[[str], str]) -> str:
    """``script`` with ``change`` made to every part but its here-documents' bodies: a body is a
    file of its own (a manifest, a config), whose brackets and angles are that file's syntax,
    not a documentation placeholder."""
    parts, at = [], 0
    for start, end in _here_document_bodies(script):
        parts += [change(script[at:start]), script[start:end]]
        at = end
    return "".join(parts) + change(script[at:])


#: the start of a here-document (``<<EOF``, ``<<-'EOF'``, ``<< "END"``), and its delimiter
_HERE_DOCUMENT = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][\w.-]*)\1")


def _here_document_bodies(script: str) -> list[tuple[int, int]]:
    return [(start, end) for _, start, end in here_documents(script)]


#: where a command line writes its output: ``> notes.md``, ``>> notes.md``, ``tee -a notes.md``
_WRITES_TO = re.compile(r"(?<![<0-9&])>>?[ \t]*([^\s<>|;&]+)|\btee[ \t]+(?:-a[ \t]+)?([^\s<>|;&-][^\s<>|;&]*)")


def here_documents(script: str) -> list[tuple[str, int, int]]:
    """``(file, start, end)`` of ``script``'s here-documents, as bash reads them: the body from
    the line after the ``<<WORD`` to the line that is the delimiter alone (offsets), and the
    file the command writes it to (``cat > notes.md <<EOF``, ``tee notes.md <<EOF``; "" for none)."""
    out: list[tuple[str, int, int]] = []
    at = 0
    while True:
        match = _HERE_DOCUMENT.search(script, at)
        if match is None:
            return out
        start = script.find("\n", match.end())
        if start < 0:
            return out
        line = script[script.rfind("\n", 0, match.start()) + 1:start]
        written = next((w.group(1) or w.group(2) for w in _WRITES_TO.finditer(line)), "")
        delimiter = re.compile(r"^[ \t]*" + re.escape(match.group(2)) + r"[ \t]*$", re.M)
        end = delimiter.search(script, start + 1)
        stop = end.start() if end is not None else len(script)
        out.append((written.strip("'\""), start + 1, stop))
        at = stop + 1


def doc_shell_commands(script: str, place: Callable[[int, int, int, int], Span],
                       variables: dict[str, Word] | None = None, base_dir: str | None = None, *,
                       prose: bool = False) -> list[Command]:
    """The commands of a shell snippet written in documentation (a Markdown fence, a notebook's
    ``!`` lines), its placeholders unknown values (DESIGN.md); with ``prose``, an optional
    ``[--flag value]`` group is read both with and without it, as one launch's two readings."""
    masked, originals = mask_doc_placeholders(script, prose)
    present = outside_here_documents(masked, _written_in) if prose and _OPTIONAL_GROUP.search(masked) else masked
    if present != masked:
        absent = outside_here_documents(masked, lambda part: _OPTIONAL_GROUP.sub(_left_out, part))
        found = _readings(shell_commands(present, place, variables, base_dir),
                          shell_commands(absent, place, variables, base_dir))
    else:
        found = _fresh_groups(shell_commands(masked, place, variables, base_dir))
    return [unmask_words(c, originals, prose) for c in found]


def _written_in(part: str) -> str:
    """``part`` with each optional group written (its brackets blanked)."""
    return _OPTIONAL_GROUP.sub(lambda m: " " + m.group(1) + " ", part)


def _left_out(group: re.Match[str]) -> str:
    """An optional group not written: blank, or a comment where it ends a line (a continued
    line then ends the command there, as it would without the group)."""
    rest = group.string[group.end():].split("\n", 1)[0]
    blank = " " * len(group.group(0))
    return "#" + blank[1:] if not rest.strip() else blank


def _fresh_groups(commands: list[Command]) -> list[Command]:
    """Each snippet's own groups renumbered, so two snippets of one page never share a group."""
    fresh: dict[int, int] = {}
    return [c if c.group is None else replace(c, group=fresh.setdefault(c.group, next(_GROUP_IDS)))
            for c in commands]


def _readings(present: list[Command], absent: list[Command]) -> list[Command]:
    """Two readings of one snippet paired command by command into groups (a code is then
    reported only if both readings have it); the same command in both is kept once."""
    if len(present) != len(absent):
        return _fresh_groups(present)
    fresh: dict[object, int] = {}
    out: list[Command] = []
    for k, (a, b) in enumerate(zip(present, absent)):
        same = [w.text for w in a.words] == [w.text for w in b.words]
        key: object = ("group", a.group) if a.group is not None else ("command", k)
        if same and a.group is None:
            out.append(a)
            continue
        group = fresh.setdefault(key, next(_GROUP_IDS))
        out += [replace(a, group=group)] if same else [replace(a, group=group), replace(b, group=group)]
    return out


def unmask_words(command: Command, originals: dict[str, str], prose: bool = False) -> Command:
    """``command`` with each placeholder word an unknown value labelled as written (and, in
    prose, an ALL-CAPS value of a vLLM option that is none of its values: ``N``, ``BACKEND``)."""
    if not originals and not prose:
        return command
    words: list[Word] = []
    previous: str | None = None
    for word in command.words:
        words.append(_unmasked(word, originals, previous if prose else None))
        previous = word.text
    return replace(command, words=words)


def _unmasked(word: Word, originals: dict[str, str], previous: str | None) -> Word:
    text = word.text
    if text is None:
        return word
    if text in originals:
        return Word(None, word.span, False, originals[text])
    if previous is not None and _names_value(previous, text):
        return Word(None, word.span, False, text)
    flag, eq, value = text.partition("=")
    if eq and text.startswith("--") and _names_value(flag, value):
        return replace(word, text=f"{flag}={{{value}}}")  # a placeholder argv.py knows
    for masked, original in originals.items():
        if masked in text and original.startswith("<"):
            text = text.replace(masked, original)  # `--x=<a|b>`: argv.py reads the placeholder
    return word if text == word.text else replace(word, text=text)


def _names_value(flag: str, value: str) -> bool:
    """``value`` names the value of the vLLM option ``flag`` rather than being one (ALL-CAPS,
    not a valid value of any option whose values are a case-insensitive set)."""
    if not flag.startswith("--") or "=" in flag or not _CAPS_WORD.fullmatch(value):
        return False
    return engines.names_a_value(flag, value)


def shell_commands(script: str, place: Callable[[int, int, int, int], Span],
                   variables: dict[str, Word] | None = None,
                   base_dir: str | None = None) -> list[Command]:
    """Run the shell frontend on ``script``; [] if it is unavailable or fails."""
    if not script.strip():
        return []
    try:
        from .shell import commands_in_shell
    except Exception:  # the shell frontend (tree-sitter) is not available
        return []
    plain = {k: (v.text if isinstance(v, Word) else v) for k, v in (variables or {}).items()}
    try:
        found = list(commands_in_shell(script, place=place, variables=plain or None,
                                       base_dir=base_dir))
    except Exception as exc:  # not checked, never silently clean (MemoryError included)
        from ..unchecked import frontend_failed

        frontend_failed(place(0, 0, 0, 0), "shell", exc)
        return []
    report_unparsed_shell(script, place, found)
    return found


def report_unparsed_shell(script: str, place: Callable[[int, int, int, int], Span],
                          commands: Sequence[Command]) -> None:
    """RSM900 for each part of ``script`` the shell parser could not read (an unterminated
    quote in a ``RUN``, a recipe, a fence) that holds a trigger token and no command found:
    a launch may be there, and it was not judged (never skipped in silence)."""
    from ..triggers import TRIGGER_NEEDLES
    from ..unchecked import without_line

    if not any(needle in script for needle in TRIGGER_NEEDLES):
        return
    from ..unchecked import not_followed

    try:
        from .shell import shell_syntax_errors

        problems = shell_syntax_errors(script, TRIGGER_NEEDLES)
    except Exception:  # the parser is not available: the frontend found nothing either
        return
    read = {line for c in commands for w in c.words if w.span.source is None
            for line in range(w.span.line, w.span.end_line + 1)}
    for problem in problems:
        first, last = (place(row - 1, 0, row - 1, 0).line for row in problem.lines)
        if any(first <= line <= last for line in read):
            continue
        where = place(problem.line - 1, problem.col, problem.line - 1, problem.col)
        not_followed(where, without_line(problem.reason))


def commands_from_argv(toks: list[Tok], lines: LineIndex, *, env: dict[str, Word],
                       env_open_ended: bool = False, image: str | None = None,
                       variables: dict[str, Word] | None = None, base_dir: str | None = None,
                       cell: int | None = None) -> list[Command]:
    """Commands for an exec-form argv: ``sh -c SCRIPT`` goes through the shell frontend."""
    if not toks:
        return []
    k = shell_script_index(toks)
    if k is not None:
        script = toks[k]
        if script.text is None:
            return []
        place = placer(script.text, script.chars, lines, script.span, cell)
        found = shell_commands(script.text, place, {**(variables or {}), **env}, base_dir)
        return [merge_context(c, env=env, env_open_ended=env_open_ended, image=image,
                              base_dir=base_dir) for c in found]
    return [Command(words=[t.word() for t in toks], env=dict(env), env_open_ended=env_open_ended,
                    image=image, base_dir=base_dir)]
