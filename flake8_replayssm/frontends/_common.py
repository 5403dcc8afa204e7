"""Helpers the non-shell frontends share (Dockerfile, YAML, notebooks, Markdown).

A character-level map from a derived text (a joined Dockerfile instruction, a
decoded JSON string, a YAML scalar's value) back to the file, turned into the
``place`` function the shell frontend wants; a POSIX-like word splitter and a
JSON string array reader that keep, for every character, where it came from;
``sh -c`` detection; and the ``vllm/vllm-openai`` image test.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import posixpath
import re
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Sequence

from .. import engines
from ..model import UNKNOWN_PART, Command, Span, Word

#: programs that run a script given with ``-c``
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "busybox"})


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
        script = _ANGLE_PLACEHOLDER.sub(one_word, script)
    if prose and ("[" in script or "{" in script):
        script = _ALTERNATIVES.sub(one_word, script)
    return script, originals


def doc_shell_commands(script: str, place: Callable[[int, int, int, int], Span],
                       variables: dict[str, Word] | None = None, base_dir: str | None = None, *,
                       prose: bool = False) -> list[Command]:
    """The commands of a shell snippet written in documentation (a Markdown fence, a notebook's
    ``!`` lines), its placeholders unknown values (DESIGN.md); with ``prose``, an optional
    ``[--flag value]`` group is read both with and without it, as one launch's two readings."""
    masked, originals = mask_doc_placeholders(script, prose)
    if prose and _OPTIONAL_GROUP.search(masked):
        present = _OPTIONAL_GROUP.sub(lambda m: " " + m.group(1) + " ", masked)
        absent = _OPTIONAL_GROUP.sub(_left_out, masked)
        found = _readings(shell_commands(present, place, variables, base_dir),
                          shell_commands(absent, place, variables, base_dir))
    else:
        found = _fresh_groups(shell_commands(masked, place, variables, base_dir))
    return [unmask_words(c, originals, prose) for c in found]


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


def is_vllm_image(image: str | None) -> bool:
    """A serving engine's image (its tag names the engine's release; its role is the engine's)."""
    text = (image or "").strip().lower()
    return bool(text) and engines.image_role(text) is not None


def image_for_command(image: str) -> str:
    """The image string to hand over in ``Command.image`` for an engine's image: the engine
    decides what its tag means (:meth:`~flake8_replayssm.engines.base.Engine.command_image`)."""
    cleaned = clean_image(image)
    return engines.command_image(image.strip().lower(), cleaned) or cleaned


def clean_image(image: str) -> str:
    """An image reference with unresolved ``$VAR`` parts and a digest after a tag dropped (a tag
    that is unresolved as a whole is kept as an unknown part: the engine reads it as any release)."""
    image = image.strip()
    last = image.rsplit("/", 1)[-1]
    if "@" in image and ":" in last.split("@", 1)[0]:
        image = image.split("@", 1)[0]  # repo:tag@sha256:... -> repo:tag
    if "$" not in image:
        return image
    name, sep, tag = image.rpartition(":")
    if sep and "/" not in tag and "$" in tag and "$" not in name:
        return f"{name}:{UNKNOWN_PART}"  # a tag the file leaves unknown: it may be any release
    return re.sub(r"[:@]?\$\{?[A-Za-z_][A-Za-z0-9_]*(?::?[-+?=][^}]*)?\}?", "", image)


class LineIndex:
    """Character offsets <-> (1-based line, 0-based column) for one text."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.length = len(text)

    def pos(self, index: int) -> tuple[int, int]:
        index = max(0, min(index, self.length))
        row = bisect.bisect_right(self.starts, index) - 1
        return row + 1, index - self.starts[row]

    def index(self, line: int, col: int) -> int:
        """Offset of (1-based line, column); clamped into the text."""
        row = max(0, min(line - 1, len(self.starts) - 1))
        return max(0, min(self.starts[row] + col, self.length))

    def span(self, start: int, end: int, cell: int | None = None) -> Span:
        if end < start:
            end = start
        l1, c1 = self.pos(start)
        l2, c2 = self.pos(end)
        return Span(l1, c1, l2, c2, cell=cell)


@dataclass
class Tok:
    """A word as a frontend reads it, with where each of its characters is in the file.

    ``chars[k]`` is the file offset of ``text[k]`` (``None`` when unknown);
    ``span`` covers the word as written (quotes included).
    """

    text: str | None
    span: Span
    chars: list[int] | None = None
    splat: bool = False
    #: how an unseen word is written (a template's ``{{ .Values.args }}``), for messages
    label: str | None = None

    def word(self) -> Word:
        return Word(self.text, self.span, self.splat, self.label)


def placer(sub_text: str, chars: Sequence[int] | None, lines: LineIndex, fallback: Span,
           cell: int | None = None) -> Callable[[int, int, int, int], Span]:
    """The ``place`` function for the shell frontend: positions in ``sub_text`` -> file spans.

    ``chars[k]`` is the file offset of ``sub_text[k]``.  Without a map every
    position is placed at ``fallback`` (the whole token), never on a wrong line.
    """
    starts = [0] + [m.end() for m in re.finditer("\n", sub_text)]
    n = len(sub_text)
    if chars is None or len(chars) != n or n == 0:
        def place_fallback(sr: int, sc: int, er: int, ec: int) -> Span:
            return fallback
        return place_fallback

    def offset(row: int, col: int) -> int:
        if row < 0:
            return 0
        if row >= len(starts):
            return n
        return max(0, min(starts[row] + col, n))

    def place(sr: int, sc: int, er: int, ec: int) -> Span:
        s = offset(sr, sc)
        e = offset(er, ec)
        fs = chars[s] if s < n else chars[n - 1] + 1
        fe = chars[e - 1] + 1 if e > 0 else chars[0]
        if fe < fs:
            fe = fs
        return lines.span(fs, fe, cell)

    return place


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
    except Exception:
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
    from ..guard import shell_syntax_errors
    from ..unchecked import not_followed

    try:
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


@contextlib.contextmanager
def relayed(change: Callable[[Span], Span]) -> Iterator[None]:
    """What a frontend could not follow in a snippet (RSM900, ``--verbose`` notes), moved by
    ``change`` to where the snippet is written in the file."""
    from ..unchecked import not_followed, note, recording

    with recording() as inner:
        yield
    for span, reason in inner.skipped:
        not_followed(change(span), reason)
    for text in inner.notes:
        note(text)


def split_words(s: str) -> list[tuple[str, list[int], int, int]]:
    """POSIX-like splitting without a shell (as compose does for a string ``command``).

    Returns ``(text, chars, raw_start, raw_end)`` per word: ``chars[k]`` is the
    index in ``s`` of ``text[k]``; ``raw_start:raw_end`` covers the word with
    its quotes.  Unterminated quotes run to the end; never raises.
    """
    words: list[tuple[str, list[int], int, int]] = []
    i, n = 0, len(s)
    while i < n:
        while i < n and s[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        start = i
        text: list[str] = []
        idx: list[int] = []
        while i < n and s[i] not in " \t\r\n":
            ch = s[i]
            if ch == "'":
                i += 1
                while i < n and s[i] != "'":
                    text.append(s[i])
                    idx.append(i)
                    i += 1
                i += 1
            elif ch == '"':
                i += 1
                while i < n and s[i] != '"':
                    if s[i] == "\\" and i + 1 < n and s[i + 1] in '"\\$`\n':
                        if s[i + 1] != "\n":
                            text.append(s[i + 1])
                            idx.append(i + 1)
                        i += 2
                        continue
                    text.append(s[i])
                    idx.append(i)
                    i += 1
                i += 1
            elif ch == "\\" and i + 1 < n:
                if s[i + 1] != "\n":
                    text.append(s[i + 1])
                    idx.append(i + 1)
                i += 2
            else:
                text.append(ch)
                idx.append(i)
                i += 1
        words.append(("".join(text), idx, start, min(i, n)))
    return words


_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_string_array(s: str) -> list[tuple[str, list[int], int, int]] | None:
    """The strings of a JSON array of strings with per-character positions, else None.

    Same shape as :func:`split_words`.  ``None`` when ``s`` is not a JSON array
    of strings (Docker then takes the instruction as shell form).
    """
    try:
        value = json.loads(s)
    except Exception:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    out: list[tuple[str, list[int], int, int]] = []
    i, n = 0, len(s)
    while i < n and len(out) < len(value):
        if s[i] != '"':
            i += 1
            continue
        start = i
        i += 1
        text: list[str] = []
        idx: list[int] = []
        while i < n and s[i] != '"':
            if s[i] == "\\" and i + 1 < n:
                esc = s[i + 1]
                if esc == "u" and i + 6 <= n:
                    try:
                        code = int(s[i + 2:i + 6], 16)
                    except ValueError:
                        code = 0xFFFD
                    width = 6
                    if 0xD800 <= code < 0xDC00 and s[i + 6:i + 8] == "\\u":
                        try:
                            low = int(s[i + 8:i + 12], 16)
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            width = 12
                        except ValueError:
                            pass
                    try:
                        text.append(chr(code))
                    except ValueError:
                        text.append("\ufffd")
                    idx.append(i + width - 1)  # an escaped character sits at its escape's end
                    i += width
                    continue
                text.append(_JSON_ESCAPES.get(esc, esc))
                idx.append(i + 1)
                i += 2
                continue
            text.append(s[i])
            idx.append(i)
            i += 1
        i += 1
        out.append(("".join(text), idx, start, min(i, n)))
    if [t for t, _, _, _ in out] != value:
        return None
    return out


def shell_script_index(toks: Sequence[Tok]) -> int | None:
    """Index of the script in ``sh -c SCRIPT`` / ``bash -lc SCRIPT`` argv, else None."""
    if not toks or toks[0].text is None:
        return None
    if posixpath.basename(toks[0].text) not in SHELLS:
        return None
    seen_c = False
    j = 1
    while j < len(toks):
        text = toks[j].text
        if text is None:
            return None
        if text in ("-o", "+o", "-O", "+O"):
            j += 2
            continue
        if text.startswith("--") and len(text) > 2:
            j += 1
            continue
        if text.startswith(("-", "+")) and len(text) > 1 and text[1:].isalpha():
            if "c" in text[1:]:
                seen_c = True
            j += 1
            continue
        if text == "--" or text == "-":
            j += 1
            continue
        return j if seen_c else None
    return None


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


def merge_context(command: Command, *, env: dict[str, Word] | None = None,
                  env_open_ended: bool = False, image: str | None = None,
                  base_dir: str | None = None) -> Command:
    """A shell frontend command placed in its container/stage: outer env first."""
    merged = dict(env or {})
    for key, word in command.env.items():
        outer = merged.get(key)
        # a variable the caller handed in keeps the caller's span (the ENV / env: entry)
        if outer is None or outer.text != word.text:
            merged[key] = word
    return replace(command, env=merged, env_open_ended=command.env_open_ended or env_open_ended,
                   image=command.image or image, base_dir=command.base_dir or base_dir)


def shift_command(command: Command, line_offset: int, col_offset: Callable[[int], int] | None = None,
                  cell: int | None = None) -> Command:
    """``command`` found in a snippet, moved to where the snippet sits in a file."""
    def move(span: Span) -> Span:
        if span.source is not None:
            return span
        c1 = span.col + (col_offset(span.line) if col_offset else 0)
        c2 = span.end_col + (col_offset(span.end_line) if col_offset else 0)
        return Span(span.line + line_offset, c1, span.end_line + line_offset, c2,
                    cell if cell is not None else span.cell, span.source)

    return replace(command, words=[replace(w, span=move(w.span)) for w in command.words],
                   env={k: replace(v, span=move(v.span)) for k, v in command.env.items()})


# ---------------------------------------------------------------------------
# the Dockerfile frontend
# ---------------------------------------------------------------------------
