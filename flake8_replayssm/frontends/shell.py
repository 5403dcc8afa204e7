"""Shell frontend: the simple commands of a shell script, Makefile recipe or sbatch file.

The script is parsed once with tree-sitter-bash and walked once, in file order,
with a small model of the shell's variables, so that every command comes out as
argv :class:`~flake8_replayssm.model.Word` objects (quotes removed, same-file
variables resolved, unknowns marked) plus the environment it runs with.  The
vLLM meaning of the words is :mod:`flake8_replayssm.argv`'s business.

What is resolved, and what is left unknown (precision first):

- literal words, ``'...'``, ``"..."``, ``$'...'``, backslash escapes;
- ``$VAR`` / ``${VAR}`` assigned earlier in the file to a value that is the same
  on every path seen so far (``VAR=x``, ``export``/``declare``/``local``/
  ``readonly``); a later assignment on the same straight-line path replaces an
  earlier one; an assignment inside a branch, loop, ``&&``/``||`` arm or
  function makes the variable unknown unless every assignment agrees (an
  ``if``/``else`` or a ``case`` with ``*)`` counts as exhaustive);
- ``${VAR:-x}`` / ``${VAR-x}`` / ``${VAR:+x}`` when VAR itself is known; when VAR
  is never assigned in the file (``${1:-x}``, ``${MODEL:-x}`` left to the caller)
  the default ``x`` is taken, as the script's own choice; a plain ``$1`` or
  ``$MODEL`` from the caller's environment is unknown;
- literal arrays ``A=(...)`` / ``A+=(...)`` expanded by ``"${A[@]}"``, each word
  placed on its element in the array assignment;
- ``variables`` given by the caller (Dockerfile ``ENV``, compose
  ``environment``...) are known values in the environment (``None``: set, value
  unknown); values may be ``str``, ``None`` or a :class:`Word` (then placed).
- ``source`` of anything but an environment activation script, ``eval`` of an
  unknown string and ``export $(...)`` may set any variable: what was known
  before becomes unknown and later commands get ``env_open_ended``.

A word that is wholly unknown has ``text=None``; a word with a literal part and
an unknown part keeps the literal and has :data:`~flake8_replayssm.model.UNKNOWN_PART`
where the unknown part is (``--port=\\x00``, ``VLLM_X=\\x00``), which
:mod:`flake8_replayssm.argv` treats as not static.  ``splat`` is set for a word
that may expand to any number of words: an unquoted unknown expansion,
``"$@"``, ``"${A[@]}"`` of an unknown array, an unquoted ``$(...)``.

``bash -c STRING`` / ``sh -c`` and ``eval STRING`` with a known string are parsed
again as shell (positions mapped back into the file, exactly where the
string's characters are written in the file); a ``bash`` reading a here-document
is too.  The words in front of the shell (``nohup``, ``srun ...``) are kept in
front of each inner command so that argv.py still sees the wrappers.

Nothing here raises: broken parts of a script (tree-sitter ``ERROR`` nodes) are
skipped, the rest is still read.
"""

from __future__ import annotations

import bisect
import itertools
import posixpath
import re
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import engines
from ..containers import CONTAINER_RUNTIMES, read_container
from ..model import UNKNOWN_PART, Command, Span, Word
from ..recognise import Elsewhere, elsewhere
from ..unchecked import not_followed
from ..wrappers import wrappers

Placer = Callable[[int, int, int, int], Span]

#: raise internal errors instead of returning what was found so far (tests)
_STRICT = False

#: only commands whose words mention one of these are returned
_INTERESTING = ("replayssm", *sorted(engines.programs()))
#: programs that print, search or manage: their arguments are never a launch
_NON_LAUNCH = frozenset({
    "echo", "printf", "cat", "tee", "grep", "egrep", "fgrep", "rg", "sed", "awk", "gawk",
    "logger", "test", "[", "[[", "true", "false", ":", "pip", "pip3", "pipx", "git", "curl",
    "wget", "kill", "pkill", "pgrep", "killall", "ps", "ls", "mkdir", "rm", "cp", "mv", "ln",
    "chmod", "chown", "touch", "sleep", "cd", "pushd", "popd", "tail", "head", "less", "more",
    "which", "type", "hash", "whereis", "wc", "sort", "uniq", "cut", "tr", "jq", "yq", "read",
    "alias", "trap", "local", "return", "exit", "shift", "wait", "huggingface-cli", "hf",
    "nvidia-smi", "find", "du", "df", "tar", "unzip", "basename", "dirname", "realpath",
    "readlink", "date", "apt", "apt-get", "yum", "dnf", "brew", "npm", "scancel", "squeue",
    "scontrol", "sinfo", "lsof", "netstat", "ss", "nc", "cmp", "diff", "log", "info", "warn",
    "die", "fail", "error", "debug", "msg", "say", "banner",
})
#: builtins that change what the shell knows about its variables
_STATE_BUILTINS = frozenset({"source", ".", "eval", "unset", "read", "mapfile", "readarray",
                             "getopts", "let", "printf", "set"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "busybox"})
#: programs that run the rest of their argv (so `X bash -c STRING` runs STRING), besides the
#: wrappers of data/launchers.toml and the container runtimes argv.py knows
_PASS_THROUGH = frozenset({
    "screen", "script", "systemd-run", "ray", "sbatch", "su", "nerdctl",
})
#: `source FILE` that only sets up tools (never the launch's variables)
_BENIGN_SOURCE = re.compile(
    r"activate|bashrc|bash_profile|(^|/)\.?profile|conda\.sh|mamba\.sh|setvars|modules?\.sh|"
    r"lmod|spack|cargo/env|nvm\.sh|/etc/profile|init\.sh|setup_env\.sh$", re.IGNORECASE)
#: `eval "$(...)"` that only sets up tools
_BENIGN_EVAL = re.compile(r"conda|mamba|pyenv|rbenv|direnv|ssh-agent|brew|module|lmod|spack|"
                          r"hook|starship|zoxide|keychain", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_BRACE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")
_FIELD = re.compile(r"[^ \t\n]+")
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
#: variables that are never split into several words
_NUMERIC_SPECIALS = frozenset({"#", "?", "$", "!", "-"})
#: nesting (statements and words together) beyond which a part is skipped / unknown
_MAX_DEPTH = 60
_MAX_NESTED_PARSES = 6
#: function calls read inside function calls, at most
_MAX_CALL_DEPTH = 3
_UNKNOWN_MARK = "__rsm_unknown_"
_TEMPLATE_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+\}")
_HOLE = re.compile(r"\$\{" + _UNKNOWN_MARK + r"\d+\}")


# --------------------------------------------------------------------------
# Located strings: text whose characters know where they are in the file
# --------------------------------------------------------------------------

class _L:
    """A string plus, for each run of characters, where it is written in the file.

    ``segs`` covers ``text`` with ``(start, end, exact, file_start, file_end)``:
    an exact run maps character ``k`` to ``file_start + k - start``; a
    fallback run maps all its characters to the file range (an escape sequence,
    a substituted variable).  ``file_start == -1`` means "wherever the
    expansion that produced it is" (caller-supplied values).
    """

    __slots__ = ("text", "segs", "_starts")

    def __init__(self, text: str, segs: list[tuple[int, int, bool, int, int]]) -> None:
        self.text = text
        self.segs = segs
        self._starts: list[int] | None = None

    @staticmethod
    def exact(text: str, fs: int) -> _L:
        return _L(text, [(0, len(text), True, fs, fs + len(text))] if text else [])

    @staticmethod
    def fallback(text: str, fs: int, fe: int) -> _L:
        return _L(text, [(0, len(text), False, fs, fe)] if text else [])

    def __add__(self, other: _L) -> _L:
        if not other.text:
            return self
        if not self.text:
            return other
        n = len(self.text)
        segs = list(self.segs)
        for k, (ts, te, ex, fs, fe) in enumerate(other.segs):
            if k == 0:
                lts, _, lex, lfs, lfe = segs[-1]
                if ex and lex and lfe == fs and lfs >= 0:
                    segs[-1] = (lts, te + n, True, lfs, fe)
                    continue
                if not ex and not lex and lfs == fs and lfe == fe:
                    segs[-1] = (lts, te + n, False, fs, fe)
                    continue
            segs.append((ts + n, te + n, ex, fs, fe))
        return _L(self.text + other.text, segs)

    def _index(self, i: int) -> int:
        if self._starts is None:
            self._starts = [s[0] for s in self.segs]
        return max(0, bisect.bisect_right(self._starts, i) - 1)

    def slice(self, i: int, j: int) -> _L:
        if i >= j or not self.segs:
            return _EMPTY
        out = []
        for ts, te, ex, fs, fe in self.segs[self._index(i):]:
            if ts >= j:
                break
            a, b = max(ts, i), min(te, j)
            if a >= b:
                continue
            if ex:
                out.append((a - i, b - i, True, fs + a - ts, fs + b - ts))
            else:
                out.append((a - i, b - i, False, fs, fe))
        return _L(self.text[i:j], out)

    def locate(self, i: int, j: int) -> tuple[int, int] | None:
        """The file range of ``text[i:j]`` (None when nothing is known)."""
        if not self.segs:
            return None
        n = len(self.text)
        i = min(max(i, 0), n)
        j = min(max(j, i), n)
        if i >= n:
            end = self.segs[-1][4]
            return (end, end) if end >= 0 else None
        ts, _, ex, fs, _ = self.segs[self._index(i)]
        start = fs + (i - ts) if ex else fs
        if j <= i:
            return (start, start) if start >= 0 else None
        ts2, _, ex2, fs2, fe2 = self.segs[self._index(j - 1)]
        end = fs2 + (j - 1 - ts2) + 1 if ex2 else fe2
        if start < 0 or end < 0:
            return None
        return (start, max(start, end))

    def relocate(self, fs: int, fe: int) -> _L:
        if not any(s[3] < 0 for s in self.segs):
            return self
        return _L(self.text, [(a, b, False, fs, fe) if f < 0 else (a, b, ex, f, e)
                              for a, b, ex, f, e in self.segs])


_EMPTY = _L("", [])


def _join(parts: Sequence[_L], sep: str = " ") -> _L:
    out = _EMPTY
    for k, part in enumerate(parts):
        if k:
            loc = out.locate(len(out.text), len(out.text)) or (-1, -1)
            out = out + _L.fallback(sep, loc[0], loc[1]) if sep else out
        out = out + part
    return out


class _FileMap:
    """File character offsets -> :class:`Span`, through the caller's ``place``."""

    def __init__(self, text: str, place: Placer | None) -> None:
        self.starts = [0]
        find = text.find
        k = find("\n")
        while k >= 0:
            self.starts.append(k + 1)
            k = find("\n", k + 1)
        self.place = place or _identity_place

    def point(self, off: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, off) - 1
        return row, off - self.starts[row]

    def span(self, fs: int, fe: int) -> Span:
        r0, c0 = self.point(fs)
        r1, c1 = self.point(max(fs, fe))
        return self.place(r0, c0, r1, c1)


def _identity_place(sr: int, sc: int, er: int, ec: int) -> Span:
    return Span(sr + 1, sc, er + 1, ec)


class _ByteMap:
    """tree-sitter byte offsets -> character offsets of the parsed text."""

    def __init__(self, text: str, data: bytes) -> None:
        self.ascii = len(data) == len(text)
        if self.ascii:
            return
        self.data = data
        self.byte_starts = [0]
        self.char_starts = [0]
        find = data.find
        k = find(b"\n")
        c = 0
        prev = 0
        while k >= 0:
            c += len(_decode(data[prev:k + 1]))
            prev = k + 1
            self.byte_starts.append(prev)
            self.char_starts.append(c)
            k = find(b"\n", prev)

    def __call__(self, b: int) -> int:
        if self.ascii:
            return b
        row = bisect.bisect_right(self.byte_starts, b) - 1
        start = self.byte_starts[row]
        return self.char_starts[row] + len(_decode(self.data[start:b]))


def _same_offset(b: int) -> int:
    return b


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "ignore")


_LANGUAGE: Any = None


def new_parser() -> Any:
    global _LANGUAGE
    import tree_sitter

    if _LANGUAGE is None:
        import tree_sitter_bash

        _LANGUAGE = tree_sitter.Language(tree_sitter_bash.language())
    return tree_sitter.Parser(_LANGUAGE)


# --------------------------------------------------------------------------
# Variables
# --------------------------------------------------------------------------

class _Field:
    """One word of an expansion: text (None: unknown), splat, and its file range.

    ``partial`` is the text with UNKNOWN_PART for unknown parts; ``shadow`` the
    text with shell expansions nothing assigns for them (to read it as shell again)."""

    __slots__ = ("l", "splat", "loc", "partial", "shadow", "label")

    def __init__(self, value: _L | None, splat: bool, loc: tuple[int, int] | None,
                 partial: str | None = None, shadow: _L | None = None, label: str | None = None) -> None:
        self.l, self.splat, self.loc, self.partial = value, splat, loc, partial
        self.shadow = shadow if shadow is not None else value
        self.label = label  # the word as written, for an unknown one

    @property
    def text(self) -> str | None:
        return self.l.text if self.l is not None else None


class _Var:
    """What the shell knows about one variable at one point of the script."""

    __slots__ = ("kind", "value", "loc", "exported", "env", "local", "gen", "span")

    def __init__(self, kind: str, value: Any = None, loc: tuple[int, int] | None = None,
                 exported: bool | None = False, env: bool = False, local: bool = False,
                 gen: int = 0, span: Span | None = None) -> None:
        self.kind = kind        # "scalar" | "partial" | "array" | "unknown" | "unset" | "choice"
        # _L for scalars (with holes when partial), list[_Field] for arrays, list[_Var] (one
        # per branch that set it differently: `if`/`else`, `case`) for a choice
        self.value = value
        self.loc = loc          # file range of the value (for env words); None: the command
        self.exported = exported  # True / False / None (maybe)
        self.env = env          # handed in by the caller (always part of the environment)
        self.local = local
        self.gen = gen
        self.span = span        # where a caller-supplied value is written (another file)

    def with_(self, **changes: Any) -> _Var:
        v = _Var(self.kind, self.value, self.loc, self.exported, self.env, self.local, self.gen,
                 self.span)
        for key, value in changes.items():
            setattr(v, key, value)
        return v


def _same(a: _Var | None, b: _Var | None) -> bool:
    if a is None or b is None or a.kind != b.kind:
        return False
    if a.kind == "scalar":
        return bool(a.value.text == b.value.text)
    if a.kind == "array":
        ta = [(f.text, f.splat) for f in a.value]
        tb = [(f.text, f.splat) for f in b.value]
        return ta == tb and all(t is not None for t, _ in ta)
    if a.kind == "choice":
        return len(a.value) == len(b.value) and all(_same(x, y) for x, y in zip(a.value, b.value))
    return a.kind == "unset"


#: a variable whose value grows past this (`A="$A $A"` doubling) is unknown from then on
_MAX_VALUE_CHARS = 65_536
_MAX_VALUE_ITEMS = 4_096
#: how the words of a command past _MAX_VALUE_ITEMS are named (in the assumption note)
_CUT_WORDS = "the rest of the command"


def _too_large(kind: str, value: Any) -> bool:
    if kind in ("scalar", "partial"):
        return len(value.text) > _MAX_VALUE_CHARS
    if kind == "array":
        return len(value) > _MAX_VALUE_ITEMS or sum(len(f.text or "") for f in value) > _MAX_VALUE_CHARS
    if kind == "choice":
        return any(_too_large(v.kind, v.value) for v in value)
    return False


#: more values than this in one choice, or more combinations than this in one command: unknown
_MAX_CHOICES = 8
_MAX_COMBINATIONS = 16


def _choice(values: list[_Var | None]) -> _Var | None:
    """One variable set differently by the branches of an ``if``/``case``: its finite set of
    values (DESIGN.md), or None when the set is not small and readable."""
    alternatives: list[_Var] = []
    for v in values:
        options = v.value if v is not None and v.kind == "choice" else [
            v if v is not None else _Var("unknown")]  # not set in this file: the caller's value
        for option in options:
            if option.kind not in ("scalar", "partial", "array", "unset", "unknown"):
                return None
            if not any(_same(option, seen) or option.kind == seen.kind == "unknown" for seen in alternatives):
                alternatives.append(option)
    if len(alternatives) > _MAX_CHOICES or all(a.kind == "unknown" for a in alternatives):
        return None
    return _Var("choice", alternatives)


def _merged_export(values: Iterable[_Var | None]) -> bool | None:
    seen = {v.exported if v is not None else False for v in values}
    return seen.pop() if len(seen) == 1 else None


class _Scope:
    """The variables of one shell process: a stack of frames, as the walk goes."""

    def __init__(self, base: dict[str, _Var], open_ended: bool) -> None:
        self.frames: list[tuple[str, dict[str, _Var]]] = [("base", base), ("top", {})]
        self.sticky: dict[str, _Var] = {}   # what function bodies assign
        self.functions: dict[str, dict[str, _Var]] = {}   # name -> the globals its body sets
        #: name -> (the shell whose text holds it, its body, the commands read at its definition)
        self.bodies: dict[str, tuple[Any, Any, list[Command]]] = {}
        #: the arguments of the function call being read ($1, "$@"); empty: the script's own
        self.args: list[list[_Field]] = []
        self.gen = 1
        self.barrier = 0
        self.allexport = False
        self.open_ended = open_ended
        self.env_names = {k for k, v in base.items() if v.env}
        #: the branch being read ended with `exit` / `return`: nothing after it runs
        self.exited = False

    def next_gen(self) -> int:
        self.gen += 1
        return self.gen

    def lookup(self, name: str) -> _Var | None:
        func = -1
        for k in range(len(self.frames) - 1, -1, -1):
            if self.frames[k][0] == "func":
                func = k
                break
        found, where = None, -1
        for k in range(len(self.frames) - 1, -1, -1):
            v = self.frames[k][1].get(name)
            if v is not None:
                found, where = v, k
                break
        if found is not None and found.gen < self.barrier and found.kind != "unknown":
            found = found.with_(kind="unknown", value=None)
        sticky = self.sticky.get(name)
        if sticky is not None and found is not None and (func < 0 or where < func) \
                and not _same(found, sticky):
            found = found.with_(kind="unknown", value=None,
                                exported=_merged_export((found, sticky)))
        return found

    def set(self, name: str, var: _Var) -> None:
        var.gen = self.next_gen()
        self.frames[-1][1][name] = var

    def push(self, kind: str) -> None:
        self.frames.append((kind, {}))

    def pop(self) -> dict[str, _Var]:
        return self.frames.pop()[1]

    def merge(self, branches: list[dict[str, _Var]], exhaustive: bool, choices: bool = True) -> None:
        """Fold branch frames (just popped) into the current frame; a variable the branches set
        differently is the set of their values (``choices``; not for loops, which repeat)."""
        names: dict[str, None] = {}
        for frame in branches:
            names.update(dict.fromkeys(frame))
        for name in names:
            before = self.lookup(name)
            values = [frame.get(name) or before for frame in branches]
            if not exhaustive:
                values.append(before)
            last = next((frame[name] for frame in reversed(branches) if name in frame), None)
            assert last is not None
            choice = None
            if all(v is not None for v in values) and all(_same(values[0], v) for v in values):
                result = last.with_(exported=_merged_export(values))
            elif choices and (choice := _choice(values)) is not None:
                result = last.with_(kind="choice", value=choice.value, exported=_merged_export(values))
            else:
                result = last.with_(kind="unknown", value=None, exported=_merged_export(values))
            result.local = any(v is not None and v.local for v in values)
            result.env = any(v is not None and v.env for v in values)
            self.set(name, result)

    def end_function(self, name: str, frame: dict[str, _Var]) -> None:
        """A function body was read: its globals may be set whenever it is called."""
        body = {k: v for k, v in frame.items() if not v.local}
        if name:
            self.functions[name] = body
        for var_name, v in body.items():
            old = self.sticky.get(var_name)
            self.sticky[var_name] = v if old is None or _same(old, v) else v.with_(kind="unknown", value=None)
        self.merge([body], exhaustive=False)

    def visible(self) -> dict[str, _Var]:
        names: dict[str, None] = {}
        for _, frame in self.frames:
            names.update(dict.fromkeys(frame))
        out = {}
        for name in names:
            v = self.lookup(name)
            if v is not None:
                out[name] = v
        return out

    def mark_barrier(self) -> None:
        self.barrier = self.next_gen()
        self.open_ended = True


# --------------------------------------------------------------------------
# Word building
# --------------------------------------------------------------------------

_HOLES = itertools.count(1)


def _hole(loc: tuple[int, int] | None) -> _L:
    """Text standing for an unknown part when a string is read again as shell:
    an expansion of a variable that nothing assigns."""
    fs, fe = loc if loc is not None else (-1, -1)
    return _L.fallback(f"${{{_UNKNOWN_MARK}{next(_HOLES)}}}", fs, fe)


class _Builder:
    __slots__ = ("parts", "shadow", "unknown", "splat", "quoted", "elem", "adds")

    def __init__(self) -> None:
        self.parts: list[_L | None] = []   # None marks an unknown part
        self.shadow: list[_L] = []         # the same with holes for the unknown parts
        self.unknown = False
        self.splat = False
        self.quoted = False
        self.elem: _Field | None = None
        self.adds = 0


class _Acc:
    """Collects the fields one shell word expands to (quote removal, field splitting)."""

    def __init__(self, nosplit: bool = False) -> None:
        self.nosplit = nosplit
        self.fields: list[_Builder] = []
        self.cur: _Builder | None = None
        self.broke = False
        self.where: Callable[[], tuple[int, int] | None] = lambda: None

    def _b(self) -> _Builder:
        if self.cur is None:
            self.cur = _Builder()
        return self.cur

    def _break(self) -> None:
        if self.cur is not None:
            self.fields.append(self.cur)
            self.cur = None
        self.broke = True

    def lit(self, value: _L, quoted: bool) -> None:
        b = self._b()
        if value.text:
            b.parts.append(value)
            b.shadow.append(value)
        b.quoted |= quoted
        b.adds += 1

    def mark_quoted(self) -> None:
        self._b().quoted = True

    def unknown(self, splat: bool, quoted: bool, loc: tuple[int, int] | None = None,
                shadow: _L | None = None) -> None:
        b = self._b()
        b.unknown = True
        b.parts.append(None)
        b.shadow.append(shadow if shadow is not None else _hole(loc or self.where()))
        b.splat |= splat and not self.nosplit
        b.quoted |= quoted or not splat
        b.adds += 1

    def split(self, value: _L) -> None:
        """An unquoted known value: IFS splitting (default IFS)."""
        if self.nosplit:
            self.lit(value, False)
            return
        text = value.text
        pieces = [(m.start(), m.end()) for m in _FIELD.finditer(text)]
        if not pieces:
            if text:
                self._break()
            return
        if pieces[0][0] > 0:
            self._break()
        for k, (a, e) in enumerate(pieces):
            if k:
                self._break()
            b = self._b()
            piece = value.slice(a, e)
            b.parts.append(piece)
            b.shadow.append(piece)
            b.adds += 1
        if pieces[-1][1] < len(text):
            self._break()

    def elements(self, fields: Sequence[_Field], quoted: bool) -> None:
        if self.nosplit:
            if any(f.l is None for f in fields):
                self.unknown(False, True, fields[0].loc)
            else:
                self.lit(_join([f.l for f in fields if f.l is not None]), True)
            return
        if not fields and quoted and self.cur is not None and self.cur.adds == 0:
            self.cur.quoted = False  # "${EMPTY[@]}" is no word at all
        for k, f in enumerate(fields):
            if quoted:
                if k:
                    self._break()
                fresh = self.cur is None or (self.cur.adds == 0 and not self.cur.parts)
                b = self._b()
                if f.l is None:
                    b.unknown = True
                    b.parts.append(None)
                    b.shadow.append(f.shadow if f.shadow is not None else _hole(f.loc))
                    b.splat |= f.splat
                else:
                    b.parts.append(f.l)
                    b.shadow.append(f.l)
                b.quoted = True
                b.adds += 1
                if fresh:
                    b.elem = f
            elif f.l is None:
                if k:
                    self._break()
                fresh = self.cur is None or (self.cur.adds == 0 and not self.cur.parts)
                self.unknown(True, False, f.loc)
                if fresh:
                    self._b().elem = f
            else:
                if k:
                    self._break()
                self.split(f.l)

    def finish(self) -> list[_Builder]:
        if self.cur is not None:
            self.fields.append(self.cur)
            self.cur = None
        return [b for b in self.fields if b.quoted or b.unknown or any(p and p.text for p in b.parts)]


# --------------------------------------------------------------------------
# The walk
# --------------------------------------------------------------------------

class _Ctx:
    """What every (nested) parse of one input shares."""

    def __init__(self, fmap: _FileMap, base_dir: str | None) -> None:
        self.fmap = fmap
        self.base_dir = base_dir
        self.commands: list[Command] = []
        #: files the script writes with a here-document (path -> text), for `--config PATH`
        self.files: dict[str, _L] = {}
        self.parses = 0
        self.parser: Any = None
        # reading a command once per combination of the choice variables it uses:
        self.pins: dict[int, int] = {}     # choice (id of its value list) -> alternative read now
        self.seen: dict[int, int] = {}     # choices met while reading, with their sizes
        self.choices_unknown = False       # too many combinations: every choice is unknown
        self.groups = itertools.count(1)
        #: how many times the loop bodies being read are read (nested loops over listed words)
        self.loop_readings = 1
        #: parts of the text not followed because a bound was hit: (file range, why)
        self.not_followed: list[tuple[tuple[int, int], str]] = []

    def bounded(self, loc: tuple[int, int], why: str) -> None:
        """Say that part of the text was not followed (a bound was hit), once per place."""
        if (loc, why) not in self.not_followed:
            self.not_followed.append((loc, why))


class _Shell:
    """One parsed text (a file, a ``bash -c`` string, a recipe line) and its walk."""

    def __init__(self, ctx: _Ctx, src: _L, scope: _Scope, *, prefix: Sequence[Word] = (),
                 nested: int = 0, image: str | None = None) -> None:
        self.ctx = ctx
        self.src = src
        self.text = src.text
        self.scope = scope
        self.prefix = list(prefix)
        self.nested = nested
        self.image = image  # a vLLM image the commands run in (its tag is the release)
        self.written = self.text  # the text as written (labels), where self.text masks templates
        self.depth = 0
        self.bytemap: _ByteMap | None = None

    # -- positions -----------------------------------------------------------
    def c(self, b: int) -> int:
        assert self.bytemap is not None
        return self.bytemap(b)

    def raw(self, n: Any) -> str:
        return self.text[self.c(n.start_byte):self.c(n.end_byte)]

    def loc(self, cs: int, ce: int) -> tuple[int, int]:
        found = self.src.locate(cs, ce)
        if found is not None:
            return found
        whole = self.src.locate(0, len(self.text))
        return whole if whole is not None else (0, 0)

    def node_loc(self, n: Any) -> tuple[int, int]:
        return self.loc(self.c(n.start_byte), self.c(n.end_byte))

    def span(self, loc: tuple[int, int]) -> Span:
        return self.ctx.fmap.span(*loc)

    # -- entry ---------------------------------------------------------------
    def run(self) -> None:
        if self.ctx.parses >= 2000 or self.nested > _MAX_NESTED_PARSES:
            return
        self.ctx.parses += 1
        if self.ctx.parser is None:
            self.ctx.parser = new_parser()
        if "${" in self.text and _TEMPLATE_REF.search(self.text):
            # `${accelerator.dtypeArgs}`: a template's placeholder (bash would call it a bad
            # substitution, and tree-sitter drops the command): an unknown variable of the same length
            self.written = self.text
            self.src = _relocated_text(self.src, _TEMPLATE_REF.sub(lambda m: m.group(0).replace(".", "_"), self.text))
            self.text = self.src.text
        if self.text.endswith(("\\", "\\\n")):
            # a continuation at the very end (`--flag \` on the last line): bash ends the
            # command there, tree-sitter reads nothing; a blank line makes them agree
            end = len(self.text)
            where = self.src.locate(end, end) or (-1, -1)
            added = "\n\n" if self.text.endswith("\\") else "\n"
            self.src = self.src + _L.fallback(added, *where)
            self.text = self.src.text
            self.written += added
        for _ in range(20):
            data = self.text.encode("utf-8", "surrogatepass")
            tree = self.ctx.parser.parse(data)
            self.bytemap = _ByteMap(self.text, data)
            self.c = _same_offset if self.bytemap.ascii else self.bytemap  # type: ignore[method-assign]
            if not self._repair_heredoc(tree):
                break
        if len(self.written) != len(self.text):  # repaired: labels read the text as parsed
            self.written = self.text
        self.block(tree.root_node.children)

    def _repair_heredoc(self, tree: Any) -> bool:
        """tree-sitter-bash reads ``<<EOF;`` as the delimiter ``EOF;`` (and then the
        rest of the file as the body); bash ends the word at ``;``.  Put a blank
        there and parse again."""
        if "<<" not in self.text:
            return False
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "heredoc_start":
                raw = self.raw(node)
                m = re.search(r"[;&|()<>]", raw)
                if m and not raw.startswith(("'", '"')):
                    at = self.c(node.start_byte) + m.start()
                    where = self.src.locate(at, at) or (-1, -1)
                    self.src = self.src.slice(0, at) + _L.fallback(" ", *where) \
                        + self.src.slice(at, len(self.text))
                    self.text = self.src.text
                    return True
                continue
            stack.extend(node.children)
        return False

    # -- statements ----------------------------------------------------------
    def block(self, children: Sequence[Any]) -> None:
        """Statements run one after the other in the current frame.

        A part tree-sitter could not read (``ERROR``) is skipped, and so is a
        statement on the same logical line as one (it may be cut short); the
        complete statements tree-sitter recovered inside it are kept."""
        n = len(children)
        for k, child in enumerate(children):
            if not child.is_named or child.type == "comment":
                continue
            if child.type != "ERROR":
                if k + 1 < n and children[k + 1].type == "ERROR" and self._glued(child, children[k + 1]):
                    continue
                if k > 0 and children[k - 1].type == "ERROR" and self._glued(children[k - 1], child):
                    continue
            self.stmt(child)

    def _glued(self, a: Any, b: Any) -> bool:
        between = self.text[self.c(a.end_byte):self.c(b.start_byte)]
        return "\n" not in between.replace("\\\n", "") and not re.search(r"[;&|]", between)

    def stmt(self, n: Any) -> None:
        if self.depth > _MAX_DEPTH:
            self.too_deep(n)
            return
        self.depth += 1
        try:
            self._stmt(n)
        finally:
            self.depth -= 1

    def too_deep(self, n: Any) -> None:
        """The nesting bound was hit at ``n``: say so once, at the construct whose contents are
        not followed (its parent: the siblings cut there are one part)."""
        where = n.parent if n.parent is not None else n
        self.ctx.bounded(self.node_loc(where), f"shell nesting deeper than {_MAX_DEPTH} levels")

    def _stmt(self, n: Any) -> None:
        t = n.type
        scope = self.scope
        if t == "command":
            name = n.child_by_field_name("name")
            if name is not None and self.raw(name) in ("exit", "return"):
                scope.exited = True
            self.command(n)
        elif t in ("program", "compound_statement", "do_group", "negated_command"):
            if n.children and n.children[0].type == "((":
                self.arithmetic(n)
            else:
                self.block(n.children)
        elif t == "redirected_statement":
            self.redirected(n)
        elif t == "variable_assignment":
            if not n.has_error:
                self.assign(n)
        elif t == "variable_assignments":
            for c in n.named_children:
                if c.type == "variable_assignment" and not c.has_error:
                    self.assign(c)
        elif t == "declaration_command":
            if not n.has_error:
                self.declaration(n)
        elif t == "unset_command":
            self.unset([self.raw(c) for c in n.named_children if c.type in ("variable_name", "word")])
        elif t == "list":
            self.and_or(n)
        elif t == "pipeline":
            for c in n.named_children:
                if c.type != "comment":
                    scope.push("sub")
                    self.stmt(c)
                    scope.pop()
        elif t == "subshell":
            scope.push("sub")
            self.block(n.children)
            scope.pop()
        elif t == "if_statement":
            self.if_statement(n)
        elif t == "case_statement":
            self.case_statement(n)
        elif t in ("for_statement", "c_style_for_statement", "select_statement", "while_statement"):
            self.loop(n)
        elif t == "function_definition":
            body = n.child_by_field_name("body")
            name = n.child_by_field_name("name")
            if body is not None:
                mark = len(self.ctx.commands)
                scope.push("func")
                self.stmt(body)
                func = self.raw(name) if name is not None else ""
                scope.end_function(func, scope.pop())
                if func:  # read again at each call, with its arguments
                    scope.bodies[func] = (self, body, self.ctx.commands[mark:])
        elif t == "ERROR":
            self.block(n.children)
        elif t in ("test_command", "heredoc_body", "comment"):
            return
        else:
            self.block(n.children)

    def arithmetic(self, n: Any) -> None:
        """``(( N = ... ))``: the variables it assigns become unknown."""
        stack = list(n.named_children)
        while stack:
            c = stack.pop()
            if c.type in ("binary_expression", "postfix_expression", "unary_expression"):
                ops = [self.raw(x) for x in c.children if not x.is_named]
                if any(op in ("++", "--") or (op.endswith("=") and op not in ("==", "!=", "<=", ">="))
                       for op in ops):
                    for x in c.named_children:
                        if x.type == "variable_name":
                            self.set_unknown(self.raw(x), x)
            stack.extend(c.named_children)

    def and_or(self, n: Any) -> None:
        chain: list[tuple[str, Any]] = []
        node = n
        while node.type == "list" and node.child_count >= 3:
            kids = node.children
            op = next((k for k in kids if not k.is_named), None)
            named = [k for k in kids if k.is_named and k.type != "comment"]
            if op is None or len(named) < 2:
                break
            chain.append((op.type, named[-1]))
            node = named[0]
        chain.append(("", node))
        chain.reverse()
        self.stmt(chain[0][1])
        scope = self.scope
        defaulted = self._test_z(self.raw(chain[0][1])) if len(chain) == 2 and chain[1][0] == "&&" else None
        before = scope.lookup(defaulted) if defaulted else None
        saved: list[dict[str, _Var]] = []
        scope.push("branch")
        for op, part in chain[1:]:
            if op == "||":
                saved.append(scope.pop())
                scope.push("branch")
            self.stmt(part)
        saved.append(scope.pop())
        scope.merge(saved, exhaustive=False)
        if defaulted and before is None and defaulted in saved[0]:
            scope.set(defaulted, saved[0][defaulted].with_())  # `[ -z "$M" ] && M=x`: a default

    def if_statement(self, n: Any) -> None:
        scope = self.scope
        branches: list[dict[str, _Var]] = []
        exhaustive = False
        seen_then = False
        body: list[Any] = []
        for c in n.children:
            if not c.is_named:
                if c.type == "then":
                    seen_then = True
                continue
            if c.type in ("elif_clause", "else_clause"):
                continue
            if not seen_then:
                self.stmt(c)
            else:
                body.append(c)
        defaulted = self._defaulted_name(n)
        before = scope.lookup(defaulted) if defaulted else None
        branches += self.branch(body)
        for c in n.named_children:
            if c.type == "elif_clause":
                branches += self.branch(c.children)
            elif c.type == "else_clause":
                exhaustive = True
                branches += self.branch(c.children)
        scope.merge(branches, exhaustive)
        if defaulted and before is None and branches and defaulted in branches[0] and not exhaustive:
            # `if [ -z "$MODEL" ]; then MODEL=x; fi` is `MODEL=${MODEL:-x}`: the script's own default
            scope.set(defaulted, branches[0][defaulted].with_())

    def branch(self, nodes: Sequence[Any]) -> list[dict[str, _Var]]:
        """Read one branch of an ``if``/``case``: its frame, or nothing if it ends the script
        (``exit``, ``return``): then nothing it sets is seen after the statement."""
        scope = self.scope
        scope.exited = False
        scope.push("branch")
        self.block(nodes)
        frame = scope.pop()
        exited, scope.exited = scope.exited, False
        return [] if exited else [frame]

    def _defaulted_name(self, n: Any) -> str | None:
        """X in ``if [ -z "$X" ]; then X=...`` (a default being set)."""
        condition = n.child_by_field_name("condition")
        return self._test_z(self.raw(condition)) if condition is not None else None

    @staticmethod
    def _test_z(text: str) -> str | None:
        """X in ``[ -z "$X" ]`` / ``[[ -z $X ]]`` / ``test -z "$X"``."""
        text = text.strip().rstrip(";").strip()
        m = re.fullmatch(r'(?:\[\[?|test)\s+-z\s+"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?\s*(?:\]\]?)?', text)
        return m.group(1) if m else None

    def case_statement(self, n: Any) -> None:
        scope = self.scope
        branches: list[dict[str, _Var]] = []
        exhaustive = False
        for item in n.named_children:
            if item.type != "case_item":
                continue
            body = []
            for k, c in enumerate(item.children):
                if item.field_name_for_child(k) == "value":
                    if self.raw(c) == "*":
                        exhaustive = True
                    continue
                if c.is_named:
                    body.append(c)
            branches += self.branch(body)
        scope.merge(branches, exhaustive)

    def loop(self, n: Any) -> None:
        """A loop's body, read once per value of ``for m in a b c`` (each value is launched:
        its own launch, the way a function called twice is read twice), else once with the
        loop variable unknown.  What the body sets is unknown after the loop (it repeats)."""
        scope = self.scope
        var = n.child_by_field_name("variable")
        values = self.loop_values(n) if var is not None else None
        frames: list[dict[str, _Var]] = []
        outer = self.ctx.loop_readings
        self.ctx.loop_readings = outer * len(values or [None])
        try:
            for value in values or [None]:
                scope.push("branch")
                if var is not None:
                    self.set_loop_variable(var, value)
                self.loop_body(n)
                frames.append(scope.pop())
        finally:
            self.ctx.loop_readings = outer
        scope.merge(frames, exhaustive=False, choices=False)

    def loop_body(self, n: Any) -> None:
        for k, c in enumerate(n.children):
            if not c.is_named or n.field_name_for_child(k) in ("variable", "value"):
                continue
            if n.type == "c_style_for_statement" and c.type != "do_group" and c.type != "compound_statement":
                continue
            self.stmt(c)

    def loop_values(self, n: Any) -> list[_L] | None:
        """The words of ``for m in a b c`` when they are few and all known (and reading the body
        once per word keeps nested loops within _MAX_COMBINATIONS readings); else None."""
        words = [c for k, c in enumerate(n.children) if n.field_name_for_child(k) == "value"]
        fields = [f for group in self._groups(words) for f in self.expand(group)] if words else []
        if not fields or len(fields) > _MAX_CHOICES or any(f.l is None or f.splat for f in fields):
            return None
        if self.ctx.loop_readings * len(fields) > _MAX_COMBINATIONS:
            return None
        return [f.l for f in fields if f.l is not None]

    def set_loop_variable(self, var: Any, value: _L | None) -> None:
        """``$m`` in one reading of the body: the listed word, or unknown."""
        name = self.raw(var)
        if value is None:
            self.set_unknown(name, var)
            return
        before = self.scope.lookup(name)
        self.scope.set(name, _Var("scalar", value, self.node_loc(var), exported=self._exported(before),
                                  env=bool(before and before.env)))

    def redirected(self, n: Any) -> None:
        body = n.child_by_field_name("body")
        heredocs = [c for c in n.named_children if c.type == "heredoc_redirect"]
        if body is not None:
            if body.type == "command" and heredocs:
                self.command(body, heredoc=heredocs[0])
            else:
                self.stmt(body)
        if body is not None and body.type == "command" and heredocs:
            self.written_file(n, body, heredocs[0])
        # tree-sitter keeps the rest of a here-document's first line inside the redirect
        # (`cat <<EOF && vllm serve ...`, `cat <<'EOF' | bash`)
        for heredoc in heredocs:
            for c in heredoc.named_children:
                if c.type == "pipeline" and body is not None and body.type == "command" \
                        and self.raw(body).strip() == "cat" and self._reads_stdin_shell(c):
                    text = self.heredoc_text(heredoc)
                    if text is not None:
                        self.nested_shell(text, [], None)
                elif c.type == "pipeline" and body is not None and self.raw(body).strip() == "cat" \
                        and re.search(r"\b(?:kubectl|oc)\s+(?:apply|create|replace)\b.*-f\s+-", self.raw(c)):
                    text = self.heredoc_text(heredoc)
                    if text is not None:  # `cat <<EOF | kubectl apply -f -`: a manifest
                        self.ctx.commands += self.located_documents(text, "yaml")
                elif c.type in ("command", "pipeline", "list", "subshell", "compound_statement",
                                "redirected_statement", "negated_command"):
                    self.stmt(c)

    def written_file(self, n: Any, body: Any, heredoc: Any) -> None:
        """``cat > cfg.yaml <<EOF`` / ``cat <<EOF > cfg.yaml`` / ``tee cfg.yaml <<EOF``: the file
        a later ``vllm serve --config cfg.yaml`` of this script reads."""
        words = self.raw(body).split()
        target = None
        if words and words[0] == "tee" and len(words) > 1:
            target = next((w for w in words[1:] if not w.startswith("-")), None)
        elif words == ["cat"]:
            for redirect in [c for c in n.named_children if c.type == "file_redirect"] + \
                    [c for c in heredoc.named_children if c.type == "file_redirect"]:
                raw = self.raw(redirect)
                if raw.startswith(">") and not raw.startswith(">>"):
                    target = raw.lstrip(">").strip().strip("'\"")
        text = self.heredoc_text(heredoc)
        if target and text is not None and not target.startswith("/dev/"):
            self.ctx.files[posixpath.normpath(target)] = text

    def located_documents(self, text: _L, kind: str) -> list[Command]:
        """The commands of a document written inside the script (a here-document), placed in
        the file."""
        from . import yaml_manifests

        if kind != "yaml" or _UNKNOWN_MARK in text.text:
            return []
        place = self.placer_for(text)
        return [_placed(c, place) for c in yaml_manifests.commands_in_yaml(text.text, base_dir=self.ctx.base_dir)]

    def placer_for(self, text: _L) -> Callable[[Span], Span]:
        """Spans of ``text`` (a string read out of this file) moved to where it is written."""
        from ._common import LineIndex

        inner = LineIndex(text.text)
        fmap = self.ctx.fmap

        def place(span: Span) -> Span:
            if span.source is not None:
                return span
            a, b = inner.index(span.line, span.col), inner.index(span.end_line, span.end_col)
            found = text.locate(a, max(b, a + 1))
            if found is None:
                return span
            return fmap.span(*found)

        return place

    def _reads_stdin_shell(self, pipeline: Any) -> bool:
        """``| bash`` / ``| sh -s``: a shell that runs what it reads."""
        cmds = [c for c in pipeline.named_children if c.type == "command"]
        if len(cmds) != 1:
            return False
        words = self.raw(cmds[0]).split()
        return bool(words) and posixpath.basename(words[0]) in _SHELLS and \
            all(w.startswith("-") and "c" not in w for w in words[1:])

    # -- assignments ---------------------------------------------------------
    def set_unknown(self, name: str, node: Any, *, local: bool = False) -> None:
        before = self.scope.lookup(name)
        self.scope.set(name, _Var("unknown", None, self.node_loc(node),
                                  exported=self._exported(before), env=bool(before and before.env),
                                  local=local))

    def _exported(self, before: _Var | None) -> bool | None:
        if self.scope.allexport:
            return True
        if before is None:
            return False
        return True if before.env else before.exported

    def unset(self, names: Iterable[str]) -> None:
        for name in names:
            if name.startswith("-"):
                continue
            if _NAME.match(name):
                self.scope.set(name, _Var("unset", None, None, exported=False))

    def assignment_value(self, n: Any) -> tuple[str, Any, tuple[int, int], str]:
        """(kind, value, file range of the value, operator) of a ``variable_assignment``."""
        kids = n.children
        op_index = next((k for k, c in enumerate(kids) if not c.is_named and c.type in ("=", "+=")), None)
        op = kids[op_index].type if op_index is not None else "="
        values = [c for c in kids[op_index + 1:]] if op_index is not None else []
        values = [c for c in values if c.type != "comment"]
        if not values:
            end = self.c(n.end_byte)
            return "scalar", _EMPTY, self.loc(end, end), op
        loc = self.loc(self.c(values[0].start_byte), self.c(values[-1].end_byte))
        if len(values) == 1 and values[0].type == "array":
            fields: list[_Field] = []
            for group in self._groups([c for c in values[0].children if c.is_named and c.type != "comment"]):
                if self.raw(group[0]).startswith("["):
                    return "unknown", None, loc, op
                fields.extend(self.expand(group))
            return "array", fields, loc, op
        acc = _Acc(nosplit=True)
        first = values[0]
        if first.type in ("word", "concatenation") and self.raw(first).startswith("~"):
            return "unknown", None, loc, op
        for c in values:
            self.emit(c, acc, False)
        built = acc.finish()
        if not built:
            return "scalar", _EMPTY, loc, op
        b = built[0]
        if b.unknown:
            if any(p is not None and p.text for p in b.parts):
                return "partial", _join(b.shadow, ""), loc, op   # `CMD="vllm serve $M ..."`
            return "unknown", None, loc, op
        return "scalar", _join([p for p in b.parts if p is not None], ""), loc, op

    def assign(self, n: Any, *, local: bool = False, export: bool | None = None, flags: str = "") -> None:
        name_node = n.child_by_field_name("name")
        if name_node is None:
            return
        if name_node.type == "subscript":
            inner = name_node.child_by_field_name("name")
            if inner is not None:
                self.set_unknown(self.raw(inner), n, local=local)
            return
        name = self.raw(name_node)
        readings = self.with_choices(lambda: self.assignment_value(n))
        kind, value, loc, op = readings[0]
        if len(readings) > 1:  # `CMD="vllm serve $MODEL"` with MODEL one of a few values: so is CMD
            choice = _choice([_Var(k, v, where) for k, v, where, _ in readings])
            kind, value = ("choice", choice.value) if choice is not None else ("unknown", None)
        if "A" in flags or ("i" in flags and kind == "scalar" and not value.text.strip().isdigit()):
            kind, value = "unknown", None
        before = self.scope.lookup(name)
        if op == "+=" and before is not None and before.kind == "choice" and kind in ("scalar", "partial"):
            # `CMD+=" --flag"` after an if/else chose CMD: every value grows
            grown = [_Var("partial" if "partial" in (alt.kind, kind) else "scalar", alt.value + value, alt.loc)
                     if alt.kind in ("scalar", "partial") else _Var("unknown") for alt in before.value]
            choice = _choice(list(grown))
            kind, value, op = ("choice", choice.value, "=") if choice is not None else ("unknown", None, "=")
        if op == "+=" and before is None and kind == "array":
            before = _Var("array", [])   # arrays are never inherited from the environment
        if op == "+=":
            if before is not None and before.kind in ("scalar", "partial") and kind in ("scalar", "partial"):
                # `CMD+=" --max-model-len $LEN"`: a command string growing, holes and all
                value = before.value + value
                kind = "partial" if "partial" in (before.kind, kind) else "scalar"
            elif before is None or before.kind not in ("scalar", "array", "unset") \
                    or kind in ("unknown", "partial"):
                kind, value = "unknown", None
            elif kind == "array":
                old = before.value if before.kind == "array" else (
                    [_Field(before.value, False, before.loc)] if before.kind == "scalar" else [])
                value = list(old) + list(value)
            elif before.kind == "array":
                kind, value = "unknown", None
            elif before.kind == "scalar":
                value = before.value + value
        if _too_large(kind, value):
            # `A="$A $A"` doubling, a huge array: not followed further (bounded time and memory)
            self.ctx.bounded(loc, f"the value of ${name} grew past {_MAX_VALUE_CHARS} characters or "
                                  f"{_MAX_VALUE_ITEMS} words")
            kind, value = "unknown", None
        exported = self._exported(before) if export is None else export
        self.scope.set(name, _Var(kind, value, loc, exported=exported,
                                  env=bool(before and before.env), local=local))

    def declaration(self, n: Any) -> None:
        keyword = n.children[0].type if n.children else ""
        opts = [self.raw(c) for c in n.children[1:] if c.type == "word" and self.raw(c)[:1] in "-+"]
        flags = "".join(o[1:] for o in opts if o.startswith("-"))
        local = keyword == "local" or (keyword in ("declare", "typeset") and "g" not in flags
                                       and self._in_function())
        export: bool | None = True if keyword == "export" else None
        for c in n.children[1:]:
            if c.type == "word" and self.raw(c)[:1] in "-+" and len(self.raw(c)) > 1:
                text = self.raw(c)
                if text[0] == "-" and "x" in text:
                    export = True
                if text[0] == "+" and "x" in text or (keyword == "export" and text == "-n"):
                    export = False
                continue
            if c.type == "variable_assignment":
                if "f" in flags or "F" in flags:
                    continue
                self.assign(c, local=local, export=export, flags=flags)
            elif c.type == "variable_name":
                name = self.raw(c)
                before = self.scope.lookup(name)
                if keyword == "export" or export is not None:
                    if before is None:
                        self.scope.set(name, _Var("unknown", None, self.node_loc(c), exported=export))
                    else:
                        self.scope.set(name, before.with_(exported=export))
                elif keyword in ("local", "declare", "typeset") and "p" not in flags:
                    if "a" in flags and before is None:
                        self.scope.set(name, _Var("array", [], self.node_loc(c), local=local))
                    else:
                        self.set_unknown(name, c, local=local)
            elif c.is_named and c.type != "comment":
                # `export $(cat .env | xargs)`, `export "$line"`: any variable may change
                self.scope.mark_barrier()

    def _in_function(self) -> bool:
        return any(kind == "func" for kind, _ in self.scope.frames)

    # -- words ---------------------------------------------------------------
    def _groups(self, nodes: Sequence[Any]) -> list[list[Any]]:
        """Argument nodes that touch form one shell word."""
        groups: list[list[Any]] = []
        for c in nodes:
            if groups and groups[-1][-1].end_byte == c.start_byte:
                groups[-1].append(c)
            else:
                groups.append([c])
        return groups

    def expand(self, group: Sequence[Any]) -> list[_Field]:
        """The fields one shell word expands to, each placed in the file."""
        acc = _Acc()
        first_raw = self.raw(group[0]) if group else ""
        for c in group:
            self.emit(c, acc, False)
        built = acc.finish()
        whole = self.loc(self.c(group[0].start_byte), self.c(group[-1].end_byte))
        if first_raw.startswith("~") and group[0].type in ("word", "concatenation"):
            return [_Field(None, False, whole)]
        out = []
        single = len(built) == 1 and not acc.broke
        for b in built:
            if b.elem is not None and b.adds == 1 and len(b.parts) == 1:
                loc = b.elem.loc or whole
            elif single:
                loc = whole
            else:
                known = [p for p in b.parts if p is not None and p.text]
                loc = (_join(known, "").locate(0, sum(len(p.text) for p in known))
                       if known else None) or whole
            if b.unknown:
                known_parts = [p for p in b.parts if p is not None and p.text]
                partial = None
                if known_parts:
                    partial = "".join(p.text if p is not None else UNKNOWN_PART for p in b.parts)
                label = self.written[self.c(group[0].start_byte):self.c(group[-1].end_byte)]
                if b.elem is not None and b.adds == 1 and b.elem.label:
                    label = b.elem.label  # an array's unseen element: as its assignment wrote it
                out.append(_Field(None, b.splat, loc, partial, _join(b.shadow, ""), label))
            else:
                joined = _join([p for p in b.parts if p is not None], "")
                if _UNKNOWN_MARK in joined.text:  # holes of an outer string: unknown, but readable again
                    out.append(_Field(None, False, loc, None, joined))
                else:
                    out.append(_Field(joined, False, loc))
        return out

    def emit(self, n: Any, acc: _Acc, quoted: bool) -> None:
        if self.depth > _MAX_DEPTH:
            self.too_deep(n)
            acc.unknown(not quoted, quoted)
            return
        self.depth += 1
        old = acc.where
        acc.where = lambda: self.node_loc(n)
        try:
            self._emit(n, acc, quoted)
        finally:
            self.depth -= 1
            acc.where = old

    def _emit(self, n: Any, acc: _Acc, quoted: bool) -> None:
        t = n.type
        # tree-sitter-bash reads `meta-llama` in `${M:-meta-llama/x}` as the variable_name
        # `meta` and the word `-llama/x`: without a `$` it is literal text
        if t in ("word", "number", "extglob_pattern", "regex", "variable_name"):
            cs, ce = self.c(n.start_byte), self.c(n.end_byte)
            raw = self.text[cs:ce]
            if not quoted and _BRACE.search(raw):
                acc.unknown(True, False)
                return
            acc.lit(self.literal(cs, ce, "dq" if quoted else "plain"), quoted)
        elif t == "raw_string":
            cs, ce = self.c(n.start_byte), self.c(n.end_byte)
            acc.lit(self.src.slice(cs + 1, max(cs + 1, ce - 1)), True)
        elif t == "ansi_c_string":
            acc.lit(self.ansi_c(self.c(n.start_byte), self.c(n.end_byte)), True)
        elif t in ("string", "translated_string"):
            acc.mark_quoted()
            self.emit_string(n, acc)
        elif t == "concatenation":
            for c in n.children:
                if c.is_named:
                    self.emit(c, acc, quoted)
                elif c.type not in ("$",):
                    cs, ce = self.c(c.start_byte), self.c(c.end_byte)
                    acc.lit(self.literal(cs, ce, "dq" if quoted else "plain"), quoted)
        elif t in ("simple_expansion", "expansion"):
            self.emit_expansion(n, acc, quoted)
        elif t in ("command_substitution", "process_substitution"):
            self.substitution(n)
            acc.unknown(t == "command_substitution" and not quoted, quoted)
        elif t == "arithmetic_expansion":
            acc.unknown(False, True)
        elif t == "brace_expression":
            acc.unknown(True, False)
        elif t == "string_content":
            acc.lit(self.literal(self.c(n.start_byte), self.c(n.end_byte), "dq"), True)
        elif not n.is_named:
            if t != "$":
                cs, ce = self.c(n.start_byte), self.c(n.end_byte)
                acc.lit(self.literal(cs, ce, "dq" if quoted else "plain"), quoted)
        else:
            acc.unknown(not quoted, quoted)

    def emit_string(self, n: Any, acc: _Acc, mode: str = "dq") -> None:
        """The inside of ``"..."`` (or of a here-document body)."""
        kids = list(n.children)
        start = self.c(n.start_byte)
        end = self.c(n.end_byte)
        if kids and not kids[0].is_named and kids[0].type in ('"', '$"'):
            start = self.c(kids[0].end_byte)
            kids = kids[1:]
        if kids and not kids[-1].is_named and kids[-1].type == '"':
            end = self.c(kids[-1].start_byte)
            kids = kids[:-1]
        pos = start
        for c in kids:
            if not c.is_named:
                continue  # anonymous tokens (a lone `$`) are literal text, taken from the gaps
            if c.type in ("string_content", "heredoc_content"):
                continue
            cs = self._true_start(c)
            if cs > pos:
                acc.lit(self.literal(pos, cs, mode), True)
            if c.type in ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion"):
                self.emit(c, acc, True)
            else:
                acc.unknown(False, True)
            pos = max(pos, self.c(c.end_byte))
        if end > pos:
            acc.lit(self.literal(pos, end, mode), True)

    def _true_start(self, n: Any) -> int:
        """Where an expansion really starts (tree-sitter counts blanks before it in strings)."""
        if n.children:
            return self.c(n.children[0].start_byte)
        cs = self.c(n.start_byte)
        raw = self.text[cs:self.c(n.end_byte)]
        return cs + (len(raw) - len(raw.lstrip()))

    def literal(self, cs: int, ce: int, mode: str) -> _L:
        """Source text ``[cs, ce)`` after backslash removal (``plain``, ``dq`` or ``heredoc``)."""
        raw = self.text[cs:ce]
        if "\\" not in raw:
            return self.src.slice(cs, ce)
        out = _EMPTY
        keep = {"dq": '$`"\\\n', "heredoc": "$`\\\n"}.get(mode)
        pos = 0
        k = raw.find("\\")
        while k >= 0:
            if k + 1 >= len(raw):
                break
            nxt = raw[k + 1]
            if keep is not None and nxt not in keep:
                k = raw.find("\\", k + 2)
                continue
            out = out + self.src.slice(cs + pos, cs + k)
            if nxt == "\n":
                pos = k + 2
            else:
                pos = k + 1  # keep the escaped character
            k = raw.find("\\", k + 2)
        return out + self.src.slice(cs + pos, ce)

    def ansi_c(self, cs: int, ce: int) -> _L:
        body_s, body_e = cs + 2, max(cs + 2, ce - 1)
        raw = self.text[body_s:body_e]
        if "\\" not in raw:
            return self.src.slice(body_s, body_e)
        simple = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
                  "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
        out = _EMPTY
        pos = 0
        k = raw.find("\\")
        while k >= 0 and k + 1 < len(raw):
            out = out + self.src.slice(body_s + pos, body_s + k)
            c = raw[k + 1]
            m = None
            if c in simple:
                rep, length = simple[c], 2
            elif c in "01234567":
                m = re.match(r"[0-7]{1,3}", raw[k + 1:])
                assert m is not None
                rep, length = chr(int(m.group(), 8) & 0xFF), 1 + len(m.group())
            elif c in "xuU":
                m = re.match({"x": r"[0-9a-fA-F]{1,2}", "u": r"[0-9a-fA-F]{1,4}",
                              "U": r"[0-9a-fA-F]{1,8}"}[c], raw[k + 2:])
                if m:
                    code = int(m.group(), 16)
                    rep, length = (chr(code) if code < 0x110000 else "?"), 2 + len(m.group())
                else:
                    rep, length = "\\" + c, 2
            elif c == "c" and k + 2 < len(raw):
                rep, length = chr(ord(raw[k + 2]) & 0x1F), 3
            else:
                rep, length = "\\" + c, 2
            loc = self.loc(body_s + k, body_s + k + length)
            out = out + _L.fallback(rep, loc[0], loc[1])
            pos = k + length
            k = raw.find("\\", pos)
        return out + self.src.slice(body_s + pos, body_e)

    def substitution(self, n: Any) -> None:
        """Commands inside ``$(...)`` / ``<(...)`` run in a subshell: find them."""
        self.scope.push("sub")
        try:
            self.block(n.children)
        finally:
            self.scope.pop()

    def emit_expansion(self, n: Any, acc: _Acc, quoted: bool) -> None:
        kids = n.children
        fs, fe = self.node_loc(n)
        if n.type == "simple_expansion":
            named = [c for c in kids if c.is_named]
            if not named:
                acc.lit(self.literal(self.c(n.start_byte), self.c(n.end_byte), "plain"), quoted)
                return
            self.emit_name(self.raw(named[0]), None, acc, quoted, (fs, fe))
            return
        # ${...}
        inner = [c for c in kids if c.type not in ("${", "}")]
        if not inner:
            acc.unknown(not quoted, quoted)
            return
        head = inner[0]
        if head.type not in ("variable_name", "special_variable_name", "subscript"):
            acc.unknown(not quoted, quoted)   # ${#X}, ${!X}
            return
        rest = inner[1:]
        index = None
        if head.type == "subscript":
            name_node = head.child_by_field_name("name")
            index_node = head.child_by_field_name("index")
            if name_node is None or index_node is None:
                acc.unknown(not quoted, quoted)
                return
            name = self.raw(name_node)
            index = self.raw(index_node)
        else:
            name = self.raw(head)
        if not rest:
            self.emit_name(name, index, acc, quoted, (fs, fe))
            return
        op = self.raw(rest[0]) if not rest[0].is_named else ""
        op_index = len(kids) - len(rest) - (1 if kids and kids[-1].type == "}" else 0)
        if op not in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            acc.unknown(not quoted, quoted)
            return
        var = self._value(name, index, (fs, fe))
        if var is None and op in (":-", "-", ":=", "="):
            if not self.raw(n)[self.c(kids[op_index].end_byte) - self.c(n.start_byte):-1]:
                # an empty default (`${VLLM_ARGS:-}`): whatever the caller passes, if anything;
                # DESIGN.md: empty for extra arguments, unknown for a value
                acc.unknown(not quoted, quoted)
                return
            # never assigned in this file (`${MODEL:-org/x}`, `${1:-org/x}`): the default is what
            # the script serves unless its caller says otherwise (reference anchors.md §5)
            self._emit_word_parts(n, op_index, acc, quoted)
            return
        if var is None or var[0] in ("unknown", "partial"):
            acc.unknown(index == "@" or (not quoted and name not in _NUMERIC_SPECIALS), quoted)
            return
        kind, value = var
        is_set = kind != "unset"
        non_empty = is_set and (kind == "array" and bool(value) or kind == "scalar" and bool(value.text))
        cond = non_empty if op.startswith(":") else is_set
        if op in (":-", "-", ":=", "=", ":?", "?"):
            if cond:
                self._emit_value(kind, value, acc, quoted)
            elif "?" in op:
                acc.unknown(False, quoted)
            else:
                self._emit_word_parts(n, op_index, acc, quoted)
                if "=" in op and index is None and _NAME.match(name):
                    self._assign_default(name, n, op_index)
        else:  # :+ / +
            if cond:
                self._emit_word_parts(n, op_index, acc, quoted)
            elif quoted:
                acc.lit(_EMPTY, True)

    def _assign_default(self, name: str, n: Any, op_index: int) -> None:
        acc = _Acc(nosplit=True)
        self._emit_word_parts(n, op_index, acc, True)
        built = acc.finish()
        loc = self.loc(self.c(n.children[op_index].end_byte), self.c(n.end_byte) - 1)
        before = self.scope.lookup(name)
        if built and not built[0].unknown:
            value = _join([p for p in built[0].parts if p is not None], "")
            self.scope.set(name, _Var("scalar", value, loc, exported=self._exported(before),
                                      env=bool(before and before.env)))
        elif built:
            self.set_unknown(name, n)

    def _emit_word_parts(self, n: Any, op_index: int, acc: _Acc, quoted: bool) -> None:
        """The word after the operator of ``${X:-word}``, in the quoting it appears in."""
        kids = n.children
        start = self.c(kids[op_index].end_byte)
        has_close = bool(kids) and kids[-1].type == "}"
        end = self.c(kids[-1].start_byte) if has_close else self.c(n.end_byte)
        parts = kids[op_index + 1:len(kids) - 1 if has_close else len(kids)]
        pos = start
        for c in parts:
            cs = self.c(c.start_byte)
            if cs > pos:
                gap = self.literal(pos, cs, "dq" if quoted else "plain")
                acc.lit(gap, quoted) if quoted else acc.split(gap)
            if c.type == "word" and not quoted:
                acc.split(self.literal(cs, self.c(c.end_byte), "plain"))
            elif c.type == "concatenation" and not quoted:
                for cc in c.children:
                    if cc.type in ("word", "variable_name"):
                        acc.split(self.literal(self.c(cc.start_byte), self.c(cc.end_byte), "plain"))
                    elif cc.is_named:
                        self.emit(cc, acc, quoted)
            elif c.is_named:
                self.emit(c, acc, quoted)
            else:
                acc.lit(self.literal(cs, self.c(c.end_byte), "dq" if quoted else "plain"), quoted)
            pos = max(pos, self.c(c.end_byte))
        if end > pos:
            gap = self.literal(pos, end, "dq" if quoted else "plain")
            acc.lit(gap, quoted) if quoted else acc.split(gap)
        if quoted:
            acc.lit(_EMPTY, True)

    def resolve(self, var: _Var | None) -> _Var | None:
        """A choice variable as the combination being read has it (its first value while the
        command is first read, to learn which choices it uses)."""
        if var is None or var.kind != "choice":
            return var
        ctx = self.ctx
        if ctx.choices_unknown:
            return var.with_(kind="unknown", value=None)
        key = id(var.value)
        index = ctx.pins.get(key)
        if index is None:
            ctx.seen.setdefault(key, len(var.value))
            index = 0
        option = var.value[index]
        return var.with_(kind=option.kind, value=option.value, loc=option.loc or var.loc)

    def with_choices(self, read: Callable[[], Any]) -> list[Any]:
        """``read()`` once per combination of the choice variables it uses (one result when it
        uses none); with too many combinations, once with every choice unknown."""
        ctx = self.ctx
        outer_seen, outer_pins, outer_unknown = ctx.seen, ctx.pins, ctx.choices_unknown
        ctx.seen = {}
        try:
            first = read()
            new = {key: size for key, size in ctx.seen.items() if key not in outer_pins}
            if not new:
                return [first]
            keys, sizes = list(new), list(new.values())
            total = 1
            for size in sizes:
                total *= size
            if total > _MAX_COMBINATIONS:
                ctx.choices_unknown = True
                return [read()]
            results = [first]
            for combo in itertools.islice(itertools.product(*map(range, sizes)), 1, None):
                ctx.pins = {**outer_pins, **dict(zip(keys, combo))}
                results.append(read())
            return results
        finally:
            ctx.seen, ctx.pins, ctx.choices_unknown = outer_seen, outer_pins, outer_unknown

    def _value(self, name: str, index: str | None, where: tuple[int, int]) -> tuple[str, Any] | None:
        """("scalar", _L) / ("array", fields) / ("unset", None) / ("unknown", None); None: never set."""
        if name.isdigit() and name != "0" and self.scope.args:
            args = self.scope.args[-1]  # inside a call of a function: its arguments
            k = int(name)
            if k > len(args):
                return "unset", None
            arg = args[k - 1]
            if arg.l is None or arg.splat:
                return "unknown", None
            return "scalar", arg.l.relocate(*where)
        if not _NAME.match(name):
            return None  # positional and special parameters
        var = self.resolve(self.scope.lookup(name))
        if var is None:
            return None
        if var.kind in ("unknown", "unset"):
            return var.kind, None
        if var.kind in ("scalar", "partial"):
            value = var.value.relocate(*where)
            if index is None or index in ("0", "@", "*"):
                return var.kind, value
            return "unset", None
        fields: list[_Field] = [
            _Field(f.l.relocate(*where) if f.l is not None else None, f.splat, f.loc, label=f.label)
            for f in var.value]
        if index in ("@", "*"):
            # known elements stay words; an unseen splat element (`ARGS+=("$@")`) stays one
            # unseen extra-arguments word among them
            return "array", fields
        if index is None or index.isdigit():
            k = int(index or 0)
            if any(f.splat for f in fields[:k + 1]):
                return "unknown", None
            if k >= len(fields):
                return "unset", None
            f = fields[k]
            return ("scalar", f.l) if f.l is not None else ("unknown", None)
        return "unknown", None

    def _emit_value(self, kind: str, value: Any, acc: _Acc, quoted: bool, star: bool = False) -> None:
        if kind == "scalar":
            acc.lit(value, True) if quoted else acc.split(value)
        elif kind == "partial":
            pos = 0
            for m in _HOLE.finditer(value.text):
                chunk = value.slice(pos, m.start())
                if chunk.text:
                    acc.lit(chunk, True) if quoted else acc.split(chunk)
                acc.unknown(not quoted, quoted, value.locate(m.start(), m.end()))
                pos = m.end()
            tail = value.slice(pos, len(value.text))
            if tail.text:
                acc.lit(tail, True) if quoted else acc.split(tail)
        elif kind == "array":
            if star and quoted:
                if any(f.l is None for f in value):
                    acc.unknown(False, True)
                else:
                    acc.lit(_join([f.l for f in value]), True)
            else:
                acc.elements(value, quoted)
        elif kind == "unset":
            if quoted:
                acc.lit(_EMPTY, True)
        else:
            acc.unknown(not quoted, quoted)

    def emit_name(self, name: str, index: str | None, acc: _Acc, quoted: bool,
                  where: tuple[int, int]) -> None:
        if name in ("@", "*") and self.scope.args:  # a function's arguments
            self._emit_value("array", self.scope.args[-1], acc, quoted, star=name == "*")
            return
        if name in ("@", "*"):
            # read again (`eval "... $@"`) it is the same shell's arguments: keep it as written
            acc.unknown(name == "@" or not quoted, quoted, shadow=_L.fallback(f"${name}", *where))
            return
        multi = index == "@"   # "${A[@]}": any number of words
        var = self._value(name, index, where)
        if var is None or var[0] == "unknown":
            acc.unknown(multi or (not quoted and name not in _NUMERIC_SPECIALS), quoted)
            return
        kind, value = var
        if kind == "array" and index == "@":
            self._emit_value(kind, value, acc, quoted)
        elif kind == "array":
            self._emit_value(kind, value, acc, quoted, star=True)
        else:
            self._emit_value(kind, value, acc, quoted)

    # -- commands ------------------------------------------------------------
    def command(self, n: Any, heredoc: Any = None) -> None:
        if n.has_error or not self._worth_reading(n, heredoc):
            return
        ctx = self.ctx
        mark = len(ctx.commands)

        def read() -> list[Command]:
            del ctx.commands[mark:]
            self._command(n, heredoc)
            return ctx.commands[mark:]

        runs = self.with_choices(read)
        del ctx.commands[mark:]
        if len(runs) == 1:
            ctx.commands.extend(runs[0])
            return
        # one written command read with each combination of values: the commands at the same
        # place of each reading are one launch (a code is reported only if all of them fail)
        group = next(ctx.groups)
        for found in runs:
            ctx.commands.extend(replace(c, group=group * 1000 + k) for k, c in enumerate(found))

    def _command(self, n: Any, heredoc: Any = None) -> None:
        prefix_nodes: list[Any] = []
        arg_nodes: list[Any] = []
        name_seen = False
        for k, c in enumerate(n.children):
            field = n.field_name_for_child(k)
            if c.type == "comment" and not name_seen:
                # `A=1 \` / `# B=2 \` / `vllm ...`: bash ends the command at the comment, so
                # the assignments before it only set shell variables (tree-sitter glues them)
                for a in prefix_nodes:
                    self.assign(a)
                prefix_nodes = []
                continue
            if c.type in _REDIRECTS or c.type == "comment":
                continue
            if field == "name" or c.type == "command_name":
                name_seen = True
                arg_nodes.extend(x for x in c.children if x.type != "comment")
                continue
            if not name_seen:
                if c.type == "variable_assignment":
                    prefix_nodes.append(c)
                continue
            if field == "argument" or c.is_named or c.type == "$":
                arg_nodes.append(c)
        if not name_seen:
            for c in prefix_nodes:
                self.assign(c)
            return
        fields: list[_Field] = []
        groups, cut = self._bounded_words(self._groups(arg_nodes))
        for group in groups:
            fields.extend(self.expand(group))
        if cut is not None:
            fields.append(_Field(None, True, cut, label=_CUT_WORDS))
        words = [self.word(f) for f in fields]
        # prefix assignments: in the command's environment (each sees the ones before it),
        # not in its words and not in the shell after it
        scope = self.scope
        prefix_env: dict[str, Word] = {}
        scope.push("prefix")
        try:
            for c in prefix_nodes:
                name_node = c.child_by_field_name("name")
                if name_node is None or name_node.type != "variable_name":
                    continue
                name = self.raw(name_node)
                before = scope.lookup(name)
                kind, value, loc, _ = self.assignment_value(c)
                scope.set(name, _Var(kind, value, loc, exported=True, env=bool(before and before.env)))
                if name.startswith("VLLM_") or name in scope.env_names or (before is not None and before.env):
                    prefix_env[name] = Word(value.text if kind == "scalar" else None, self.span(loc))
        finally:
            prefix_frame = scope.pop()
        self.after_words(n, words, fields, prefix_env, prefix_frame, heredoc)

    def _bounded_words(self, groups: list[list[Any]]) -> tuple[list[list[Any]], tuple[int, int] | None]:
        """A command's words up to the bound a variable's value has (a hostile one-line command
        of 500,000 words), and where the rest is: it is reported not followed and read as one
        unseen word, like extra arguments."""
        if len(groups) <= _MAX_VALUE_ITEMS:
            return groups, None
        rest = groups[_MAX_VALUE_ITEMS:]
        cut = self.loc(self.c(rest[0][0].start_byte), self.c(rest[-1][-1].end_byte))
        self.ctx.bounded(cut, f"a command of more than {_MAX_VALUE_ITEMS} words")
        return groups[:_MAX_VALUE_ITEMS], cut

    def _worth_reading(self, n: Any, heredoc: Any) -> bool:
        """Cheap test: can this command be a launch or change what we know?"""
        raw = self.raw(n)
        lower = raw.lower()
        if any(s in lower for s in _INTERESTING):
            return True
        if heredoc is not None and any(s in self.raw(heredoc).lower() for s in _INTERESTING):
            return True
        name = n.child_by_field_name("name")
        first = self.raw(name) if name is not None else ""
        if first in _STATE_BUILTINS or first == "export" or first in self.scope.functions:
            return True
        if "$" not in raw and "`" not in raw:
            return not first  # bare assignments
        return first not in _NON_LAUNCH

    def word(self, f: _Field) -> Word:
        span = self.span(f.loc) if f.loc is not None else self.span(self.loc(0, 0))
        if f.l is not None:
            return Word(f.l.text, span, False)
        return Word(f.partial, span, f.splat, f.label)

    def after_words(self, n: Any, words: list[Word], fields: list[_Field], prefix_env: dict[str, Word],
                    prefix_frame: dict[str, _Var], heredoc: Any) -> None:
        if not words:
            return
        program = words[0].text
        base = posixpath.basename(program) if program else ""
        scope = self.scope
        texts = [w.text for w in words]
        if base in ("source", ".") and len(words) > 1:
            target = texts[1]
            if target is None or not _BENIGN_SOURCE.search(target):
                scope.mark_barrier()
            return
        if base == "eval":
            args = fields[1:]
            if args and all(f.shadow is not None for f in args):
                self.nested_parse(_join([f.shadow for f in args if f.shadow is not None]), scope, [])
            if any(f.l is None for f in args) and not _BENIGN_EVAL.search(self.raw(n)):
                scope.mark_barrier()   # an unknown string may assign anything
            return
        if base == "unset":
            self.unset([t for t in texts[1:] if t is not None])
            return
        if program in scope.bodies and len(scope.args) < _MAX_CALL_DEPTH:
            self.call(program, fields[1:])
            return
        if program in scope.functions:
            # a call of a function defined above: what its body assigns is now set
            for name, var in scope.functions[program].items():
                scope.set(name, var.with_())
        if base in ("read", "mapfile", "readarray", "getopts", "let", "printf"):
            self.builtin_assigns(base, texts, n)
            return
        if base == "set":
            for t in texts[1:]:
                if t and t[0] in "-+" and not t.startswith("--") and "a" in t[1:]:
                    scope.allexport = t[0] == "-"
            for k, t in enumerate(texts[:-1]):
                if t in ("-o", "+o") and texts[k + 1] == "allexport":
                    scope.allexport = t == "-o"
            return
        inner = self.shell_string(words, fields)
        if inner is None and heredoc is not None and base in _SHELLS \
                and all((t or "-").startswith("-") for t in texts[1:]):
            body = self.heredoc_text(heredoc)
            if body is not None:
                inner = (0, body)
        if inner is None:
            inner = self.remote_string(words, fields)
        if inner is not None:
            k, string = inner
            scope.frames.append(("prefix", prefix_frame))
            try:
                host_env = self.environment(n)
                host_env.update(prefix_env)
                away = elsewhere(words[:k], host_env)
                self.nested_shell(string, words[:k] if away is None else [], away)
            finally:
                scope.frames.pop()
            return
        if base in _NON_LAUNCH or (base == "command" and len(texts) > 1 and texts[1] in ("-v", "-V")):
            return
        if program is not None and program.startswith("-"):
            return  # flags cut off from their command (`# --flag \` inside a continuation)
        if not any(t is not None and any(s in t.lower() for s in _INTERESTING) for t in texts):
            return
        scope.frames.append(("prefix", prefix_frame))
        try:
            env = self.environment(n)
        finally:
            scope.frames.pop()
        env.update(prefix_env)
        ctx = self.ctx
        files = {path: (text.text, self.placer_for(text)) for path, text in ctx.files.items()}
        ctx.commands.append(Command(self.prefix + words, env, scope.open_ended, self.image, ctx.base_dir,
                                    files=files))

    def call(self, name: str, args: list[_Field]) -> None:
        """A call of a function defined above: its body read again with these arguments ($1,
        "$@"), in place of the reading at its definition (where they were unknown)."""
        scope = self.scope
        shell, body, at_definition = scope.bodies[name]
        done = {id(c) for c in at_definition}
        self.ctx.commands[:] = [c for c in self.ctx.commands if id(c) not in done]
        scope.bodies[name] = (shell, body, [])
        scope.args.append(args)
        scope.push("func")
        saved = shell.scope
        shell.scope = scope
        try:
            shell.stmt(body)
        finally:
            shell.scope = saved
            frame = scope.pop()
            scope.args.pop()
        for var_name, var in frame.items():  # its globals are set now
            if not var.local:
                scope.set(var_name, var.with_())

    def builtin_assigns(self, base: str, texts: list[str | None], n: Any) -> None:
        names: list[str] = []
        args = texts[1:]
        if base == "printf":
            for k, t in enumerate(args[:-1]):
                if t == "-v" and args[k + 1]:
                    names.append(args[k + 1] or "")
        elif base == "getopts":
            if len(args) >= 2 and args[1]:
                names.append(args[1])
        elif base == "let":
            for t in args:
                m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*([-+*/%&|^]?=|\+\+|--)", t or "")
                if m:
                    names.append(m.group(1))
        else:
            skip = False
            for t in args:
                if skip:
                    skip = False
                    continue
                if t is None:
                    continue
                if t.startswith("-"):
                    skip = t in ("-d", "-n", "-N", "-p", "-t", "-u", "-C", "-c", "-O", "-s", "-i")
                    if t == "-a":
                        continue
                    continue
                names.append(t)
            if base in ("mapfile", "readarray") and not names:
                names.append("MAPFILE")
            if base == "read" and not names:
                names.append("REPLY")
        for name in names:
            if _NAME.match(name):
                self.set_unknown(name, n)

    def environment(self, n: Any) -> dict[str, Word]:
        env: dict[str, Word] = {}
        command_loc = self.node_loc(n)
        for name, v in self.scope.visible().items():
            if not (v.env or name in self.scope.env_names or name.startswith("VLLM_")):
                continue
            v = self.resolve(v)  # type: ignore[assignment]
            if v.kind == "unset":
                continue
            in_env = v.env or name in self.scope.env_names
            if not in_env and v.exported is False and v.kind == "unknown" and v.loc is None:
                continue
            if v.loc is not None:
                span = self.span(v.loc)
            else:
                span = v.span if v.span is not None else self.span(command_loc)
            exported = True if in_env else v.exported
            if v.kind == "scalar" and exported is True:
                env[name] = Word(v.value.text, span)
            else:
                env[name] = Word(None, span)
        return env

    def shell_string(self, words: list[Word], fields: list[_Field]) -> tuple[int, _L] | None:
        """``[wrappers] bash [-opts] -c STRING``: (index of the shell, STRING)."""
        texts = [w.text for w in words]
        first = posixpath.basename(texts[0] or "")
        passes = _passes_through(first)
        if first in CONTAINER_RUNTIMES:  # `docker run --entrypoint bash IMAGE -c STRING`
            box = read_container(words, 0, {})
            if box is not None and box.entrypoint is not None \
                    and posixpath.basename(box.entrypoint.text or "") in _SHELLS:
                at = len(words) - len(box.args)
                for j in range(at, len(texts) - 1):
                    o = texts[j] or ""
                    if not o.startswith("-"):
                        break
                    if not o.startswith("--") and "c" in o[1:] and fields[j + 1].shadow is not None:
                        return at, fields[j + 1].shadow
                return None
        for i, t in enumerate(texts):
            if t is None:
                return None
            base = posixpath.basename(t)
            if base in _SHELLS and (i == 0 or passes):
                j = i + 1
                if base == "busybox" and j < len(texts) and texts[j] in ("sh", "ash"):
                    j += 1
                while j < len(texts):
                    o = texts[j]
                    if o is None or not o[:1] in ("-", "+") or o in ("-", "--"):
                        return None
                    if o in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                        j += 2
                        continue
                    if not o.startswith("--") and "c" in o[1:]:
                        if j + 1 < len(fields) and fields[j + 1].shadow is not None:
                            return i, fields[j + 1].shadow
                        return None
                    j += 1
                return None
            if i > 0 and not passes:
                return None
        return None

    def remote_string(self, words: list[Word], fields: list[_Field]) -> tuple[int, _L] | None:
        """``ssh [options] HOST COMMAND...``: the remote shell runs the words joined by blanks."""
        if posixpath.basename(words[0].text or "") != "ssh":
            return None
        values = wrappers()["ssh"].values
        j = 1
        while j < len(words) and (words[j].text or "").startswith("-"):
            j += 2 if words[j].text in values else 1
        rest = fields[j + 1:]
        if not rest or any(f.shadow is None or f.splat for f in rest):
            return None
        return j + 1, _join([f.shadow for f in rest if f.shadow is not None])

    def heredoc_text(self, heredoc: Any) -> _L | None:
        start = next((c for c in heredoc.children if c.type == "heredoc_start"), None)
        body = next((c for c in heredoc.children if c.type == "heredoc_body"), None)
        if start is None or body is None:
            return None
        delim = self.raw(start)
        cs, ce = self.c(body.start_byte), self.c(body.end_byte)
        if any(q in delim for q in "'\"\\"):
            return self.src.slice(cs, ce)
        acc = _Acc(nosplit=True)
        acc.mark_quoted()
        self.emit_string(body, acc, mode="heredoc")
        built = acc.finish()
        return _join(built[0].shadow, "") if built else None

    def nested_shell(self, string: _L, prefix: Sequence[Word], away: Elsewhere | None) -> None:
        """A new shell process reads ``string``: it sees the exported variables only.

        ``away``: it runs in a container or on another host, with only the
        environment given there (``docker run -e``) or one the file does not show, or
        behind a wrapper that changed the environment (``srun --export=ALL,V=0``).
        """
        base: dict[str, _Var] = {} if away is not None and not away.inherits else self.exported_variables()
        if away is not None and away.inherits:  # a wrapper changed some variables (`env -u V`, `-x V=0`)
            for name in [k for k, v in base.items() if (v.env or k.startswith("VLLM_")) and k not in away.env]:
                del base[name]
        if away is not None:
            for name, word in away.env.items():
                value = _L(word.text, [(0, len(word.text), False, -1, -1)]) if word.text else _EMPTY
                base[name] = _Var("scalar" if word.text is not None else "unknown",
                                  value if word.text is not None else None, None,
                                  exported=True, env=True, span=word.span)
        open_ended = self.scope.open_ended if away is None else \
            away.open_ended or (away.inherits and self.scope.open_ended)
        scope = _Scope(base, open_ended)
        scope.env_names = {k for k, v in base.items() if v.env}
        image = away.image if away is not None and not away.inherits else self.image
        shell = _Shell(self.ctx, string, scope, prefix=[*self.prefix, *prefix] if away is None else [],
                       nested=self.nested + 1, image=image)
        shell.run()

    def exported_variables(self) -> dict[str, _Var]:
        """What a new shell process started here sees: the exported variables."""
        base: dict[str, _Var] = {}
        for name, v in self.scope.visible().items():
            if v.kind == "unset":
                continue
            in_env = v.env or name in self.scope.env_names
            if in_env or v.exported is True:
                base[name] = v.with_(env=in_env, exported=True, local=False, gen=0)
            elif v.exported is None:
                base[name] = v.with_(kind="unknown", value=None, env=in_env, exported=None,
                                     local=False, gen=0)
        return base

    def nested_parse(self, string: _L, scope: _Scope, prefix: Sequence[Word]) -> None:
        """``eval STRING``: the same shell reads ``string``."""
        shell = _Shell(self.ctx, string, scope, prefix=[*self.prefix, *prefix], nested=self.nested + 1,
                       image=self.image)
        shell.run()


# --------------------------------------------------------------------------
# Public API: shell
# --------------------------------------------------------------------------

def _placed(command: Command, place: Callable[[Span], Span]) -> Command:
    return replace(command, words=[replace(w, span=place(w.span)) for w in command.words],
                   env={k: replace(w, span=place(w.span)) for k, w in command.env.items()})


def _relocated_text(src: _L, text: str) -> _L:
    """``src`` with its characters replaced by ``text`` (same length), positions kept."""
    return _L(text, list(src.segs))


def _passes_through(program: str) -> bool:
    """Whether ``program ... bash -c STRING`` runs STRING (a wrapper or a container runtime)."""
    return program in _PASS_THROUGH or program in CONTAINER_RUNTIMES or program in wrappers()


def _caller_value(value: Any) -> tuple[str | None, Span | None]:
    if isinstance(value, Word):
        text = value.text
        return (None if text is None or UNKNOWN_PART in text else text), value.span
    if isinstance(value, str):
        return (None if UNKNOWN_PART in value else value), None
    return None, None


def _caller_vars(variables: Mapping[str, Any] | None) -> dict[str, _Var]:
    """The caller's variables: set in the environment (exported), value known or not."""
    base: dict[str, _Var] = {}
    for name, value in (variables or {}).items():
        if not isinstance(name, str):
            continue
        text, span = _caller_value(value)
        if text is None:
            base[name] = _Var("unknown", None, None, exported=True, env=True, span=span)
        else:
            # no place in this text: placed wherever it is expanded (file_start -1)
            value_l = _L(text, [(0, len(text), False, -1, -1)]) if text else _EMPTY
            base[name] = _Var("scalar", value_l, None, exported=True, env=True, span=span)
    return base


_SBATCH_EXPORT = re.compile(r"#SBATCH[ \t]+--export(?:=|[ \t]+)(\S+)")
_DIRECTIVE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _sbatch_exports(text: str) -> dict[str, _Var]:
    """``#SBATCH --export=ALL,V=0``: variables the whole batch script runs with.

    sbatch reads its ``#SBATCH`` lines up to the first command and does not expand
    them; ``NAME`` alone (or a value with ``$``) is the submitter's value, unknown here."""
    found: dict[str, _Var] = {}
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        m = _SBATCH_EXPORT.match(stripped)
        if m is not None:
            at = offset + line.index(m.group(1))
            pos = 0
            for item in m.group(1).split(","):
                name, eq, value = item.partition("=")
                if _DIRECTIVE_NAME.fullmatch(name) and name not in ("ALL", "NONE", "NIL"):
                    start = at + pos + len(name) + 1
                    loc = (start, start + len(value)) if eq else (at + pos, at + pos + len(name))
                    known = eq and "$" not in value
                    found[name] = _Var("scalar" if known else "unknown", _L.exact(value, start) if known else None,
                                       loc, exported=True, env=True)
                pos += len(item) + 1
        offset += len(line)
    return found


def _relevant(text: str, variables: Mapping[str, Any] | None) -> bool:
    lower = text.lower()
    if any(s in lower for s in _INTERESTING):
        return True
    for value in (variables or {}).values():
        v, _ = _caller_value(value)
        if v is not None and any(s in v.lower() for s in _INTERESTING):
            return True
    return False


def commands_in_shell(text: str, *, place: Placer | None = None,
                      variables: Mapping[str, Any] | None = None,
                      base_dir: str | None = None) -> list[Command]:
    """Every simple command of a shell script that mentions vLLM, as argv words and env.

    ``place(start_row0, start_col0, end_row0, end_col0)`` turns positions in
    ``text`` (0-based rows, character columns) into file spans; by default
    ``Span(row + 1, col, end_row + 1, end_col)``.  ``variables`` are known
    environment variables (values ``str``, ``None`` for set-but-unknown, or
    :class:`Word`).  Never raises.
    """
    ctx: _Ctx | None = None
    try:
        if not isinstance(text, str) or not _relevant(text, variables):
            return []
        fmap = _FileMap(text, place)
        ctx = _Ctx(fmap, base_dir)
        scope = _Scope({**_caller_vars(variables), **_sbatch_exports(text)}, False)
        _Shell(ctx, _L.exact(text, 0), scope).run()
        _report_bounds(ctx)
        return ctx.commands
    except Exception:  # a frontend never breaks a lint run (RecursionError included)
        if _STRICT:
            raise
        if ctx is not None:
            _report_bounds(ctx)
            not_followed(ctx.fmap.span(0, 0), "the shell script could not be read to its end")
        return ctx.commands if ctx is not None else []


def _report_bounds(ctx: _Ctx) -> None:
    """Bounds hit while reading: RSM900 says which part was not followed (:mod:`..unchecked`)."""
    for (start, end), why in ctx.not_followed:
        not_followed(ctx.fmap.span(max(start, 0), max(end, 0)), why)


# --------------------------------------------------------------------------
# Makefiles
# --------------------------------------------------------------------------

_MAKE_ASSIGN = re.compile(
    r"^(?P<prefix>(?:(?:override|export|private)\s+)*)(?P<name>[^\s:#=?+!$()]+)\s*"
    r"(?P<op>:::=|::=|:=|\?=|\+=|!=|=)(?P<value>.*)$")
_MAKE_RULE = re.compile(r"^(?P<targets>[^\t#=:][^=:]*?)\s*::?(?!=)(?P<rest>.*)$")
_MAKE_NAME = re.compile(r"[A-Za-z0-9_.\-]+\Z")
_MAKE_AUTOMATIC = re.compile(r"[@<^+*?%|][DF]?\Z")
_PLAIN_OPS = frozenset({"=", ":=", "::=", ":::="})


class _MakeVar:
    __slots__ = ("values", "unknown", "exported")

    def __init__(self) -> None:
        self.values: list[tuple[str, _L, int]] = []  # (operator or "cond", value, includes before)
        self.unknown = False
        self.exported = False


class _Make:
    """The parts of a Makefile that matter here: simple variables and recipe lines."""

    def __init__(self, text: str, variables: Mapping[str, Any] | None) -> None:
        self.text = text
        self.vars: dict[str, _MakeVar] = {}
        self.env: dict[str, str | None] = {}
        for name, value in (variables or {}).items():
            self.env[name] = _caller_value(value)[0]
        self.export_all = False
        self.includes = 0      # `include` lines seen so far: an included file may set anything
        self.recipes: list[_L] = []
        self.resolved: dict[str, _L | None] = {}
        self.counter = 0

    # -- reading -------------------------------------------------------------
    def read(self) -> None:
        lines: list[tuple[int, str]] = []   # (file offset, physical line without "\n")
        off = 0
        for line in self.text.split("\n"):
            lines.append((off, line))
            off += len(line) + 1
        k, n = 0, len(lines)
        in_rule = False
        cond_depth = 0
        while k < n:
            start, line = lines[k]
            if line.startswith("\t") and in_rule:
                k = self.recipe(lines, k)
                continue
            logical = _L.exact(line, start)
            while logical.text.endswith("\\") and k + 1 < n:
                k += 1
                nstart, nline = lines[k]
                head = logical.text[:-1].rstrip()
                rest = nline.lstrip()
                logical = (logical.slice(0, len(head)) + _L.fallback(" ", nstart - 1, nstart - 1)
                           + _L.exact(rest, nstart + len(nline) - len(rest)))
            k += 1
            body = logical.text
            stripped = body.strip()
            if not stripped or stripped.startswith("#"):
                continue  # comments and blank lines do not end a recipe
            word = stripped.split(None, 1)[0]
            if word == "define":
                parts = stripped.split(None, 1)
                head = parts[1].strip() if len(parts) > 1 else ""
                name = re.split(r"\s|:?:?=|\?=|\+=|!=", head, maxsplit=1)[0]
                if name:
                    self._var(name).unknown = True
                while k < n and lines[k][1].strip() != "endef":
                    k += 1
                k += 1
                in_rule = False
                continue
            if word in ("ifeq", "ifneq", "ifdef", "ifndef"):
                cond_depth += 1
                continue
            if word == "else":
                continue
            if word == "endif":
                cond_depth = max(0, cond_depth - 1)
                continue
            if word in ("include", "-include", "sinclude"):
                self.includes += 1
                continue
            if word in ("unexport", "vpath"):
                continue
            lead = len(body) - len(body.lstrip())
            m = _MAKE_ASSIGN.match(body, lead)
            if word == "export" and m is None:
                names = stripped.split()[1:]
                if not names:
                    self.export_all = True
                for name in names:
                    self._var(name).exported = True
                continue
            if m is not None:
                self.assignment(m, logical, cond_depth > 0)
                in_rule = False
                continue
            r = _MAKE_RULE.match(body, lead)
            if r is None:
                in_rule = False
                continue
            in_rule = True
            if r.group("targets").strip() == ".EXPORT_ALL_VARIABLES":
                self.export_all = True
            rest = r.group("rest")
            target_var = _MAKE_ASSIGN.match(rest.strip())
            if target_var is not None:  # target-specific variable: not the same everywhere
                self._var(target_var.group("name")).unknown = True
                continue
            semi = rest.find(";")
            if semi >= 0:
                inline_start = r.start("rest") + semi + 1
                inline = logical.slice(inline_start, len(body))
                lead2 = len(inline.text) - len(inline.text.lstrip("@-+ \t"))
                self.add_recipe(inline.slice(lead2, len(inline.text)))

    def _var(self, name: str) -> _MakeVar:
        v = self.vars.get(name)
        if v is None:
            v = self.vars[name] = _MakeVar()
        return v

    def assignment(self, m: re.Match[str], logical: _L, conditional: bool) -> None:
        v = self._var(m.group("name"))
        op = m.group("op")
        if "export" in m.group("prefix").split():
            v.exported = True
        raw = m.group("value")
        lead = len(raw) - len(raw.lstrip())
        body = raw[lead:]
        hash_at = re.search(r"(?<!\\)#", body)
        if hash_at:
            body = body[:hash_at.start()]
        body = body.rstrip()
        start = m.start("value") + lead
        value = logical.slice(start, start + len(body))
        if op in ("+=", "!="):
            v.unknown = True
            return
        v.values.append(("cond" if conditional else op, value, self.includes))

    def recipe(self, lines: list[tuple[int, str]], k: int) -> int:
        """One recipe command (a tab line and its backslash continuations) -> shell text.

        Make hands backslash-newline to the shell as written, minus the next
        line's leading tab; ``@``, ``-`` and ``+`` in front are make's own."""
        start, line = lines[k]
        content = line[1:]
        lead = len(content) - len(content.lstrip("@-+ \t"))
        text = _L.exact(content[lead:], start + 1 + lead)
        k += 1
        while content.endswith("\\") and k < len(lines):
            nstart, nline = lines[k]
            cut = 1 if nline.startswith("\t") else 0
            content = nline[cut:]
            text = text + _L.exact("\n", nstart - 1) + _L.exact(content, nstart + cut)
            k += 1
        self.add_recipe(text)
        return k

    def add_recipe(self, text: _L) -> None:
        if text.text.strip():
            self.recipes.append(text)

    # -- values --------------------------------------------------------------
    def _env_value(self, name: str) -> _L | None:
        env = self.env.get(name)
        if env is None:
            return None
        return _L(env, [(0, len(env), False, -1, -1)]) if env else _EMPTY

    def value(self, name: str, depth: int = 0) -> _L | None:
        """The value a recipe sees for ``$(name)``; None when it is not the same everywhere."""
        if name in self.resolved:
            return self.resolved[name]
        self.resolved[name] = None  # cycle guard
        v = self.vars.get(name)
        result: _L | None = None
        if v is None or (not v.values and not v.unknown):
            result = self._env_value(name) if not self.includes else None
        elif not v.unknown:
            plain = [val for op, val, _ in v.values if op in _PLAIN_OPS]
            weak = [val for op, val, _ in v.values if op == "?="]
            cond = [val for op, val, _ in v.values if op == "cond"]
            # an included file may set the variable too, unless a plain assignment follows it
            last_plain_after_includes = any(op in _PLAIN_OPS and seen == self.includes
                                            for op, _, seen in v.values)
            chosen: _L | None = None
            if self.includes and not last_plain_after_includes:
                chosen = None
            elif cond:
                everything = [val for _, val, _ in v.values]
                if (plain or weak) and len({val.text for val in everything}) == 1:
                    chosen = everything[-1]
            elif plain:
                chosen = plain[-1]        # the last assignment wins (recipes expand late)
            elif name in self.env:
                chosen = self._env_value(name)
            elif weak:
                chosen = weak[0]          # a later ?= does nothing
            if chosen is not None:
                result = self.expand(chosen, depth + 1)
                if result is not None and _UNKNOWN_MARK in result.text:
                    result = None
        self.resolved[name] = result
        return result

    def expand(self, src: _L, depth: int = 0) -> _L | None:
        """Make's expansion of ``src`` (``$$`` -> ``$``).  Unknown references become shell
        expansions that nothing assigns, so the shell side reads them as unknown."""
        text = src.text
        if "$" not in text:
            return src
        if depth > 20:
            return None
        out = _EMPTY
        pos = 0
        i = text.find("$")
        while i >= 0:
            out = out + src.slice(pos, i)
            if i + 1 >= len(text):
                pos = i
                break
            c = text[i + 1]
            if c == "$":
                where = src.locate(i, i + 2)
                out = out + (_L.fallback("$", *where) if where is not None else src.slice(i + 1, i + 2))
                pos = i + 2
            elif c in "({":
                close = ")" if c == "(" else "}"
                j, level = i + 2, 1
                while j < len(text) and level:
                    if text[j] == c:
                        level += 1
                    elif text[j] == close:
                        level -= 1
                    j += 1
                if level:
                    pos = i
                    break
                out = out + self.reference(text[i + 2:j - 1], src.locate(i, j), depth)
                pos = j
            else:
                out = out + self.reference(c, src.locate(i, i + 2), depth)
                pos = i + 2
            i = text.find("$", pos)
        return out + src.slice(pos, len(text))

    def reference(self, inner: str, where: tuple[int, int] | None, depth: int) -> _L:
        fs, fe = where if where is not None else (-1, -1)
        value: _L | None = None
        if _MAKE_NAME.match(inner) and not _MAKE_AUTOMATIC.match(inner):
            value = self.value(inner, depth)
        if value is None:
            self.counter += 1
            return _L.fallback(f"${{{_UNKNOWN_MARK}{self.counter}}}", fs, fe)
        if re.search(r"\s", value.text):
            return value.relocate(fs, fe)   # several words: each stays where it is written
        return _L.fallback(value.text, fs, fe) if value.text else _EMPTY

    def exported(self) -> dict[str, _L | None]:
        out: dict[str, _L | None] = {}
        for name, v in self.vars.items():
            if v.exported or (self.export_all and _NAME.match(name)):
                out[name] = self.value(name)
        return out


def commands_in_makefile(text: str, *, place: Placer | None = None,
                         variables: Mapping[str, Any] | None = None,
                         base_dir: str | None = None) -> list[Command]:
    """Every recipe command of a Makefile that mentions vLLM (see :func:`commands_in_shell`).

    Recipe lines (tab-indented after a ``target:`` line, or after ``target: ;``)
    are joined on trailing backslashes, ``@``/``-``/``+`` prefixes dropped, and
    ``$(VAR)``/``${VAR}`` replaced by the values of simple ``VAR = value`` /
    ``:=`` / ``?=`` assignments (unknown when conditional-only, appended,
    computed, target-specific or a function); ``$$`` is ``$``.  Each recipe line
    is its own shell, whose environment holds the exported make variables and
    ``variables``.  Words are placed where they are written in the Makefile (a
    substituted one-word value on its ``$(VAR)``).  Never raises.
    """
    ctx: _Ctx | None = None
    try:
        if not isinstance(text, str) or not _relevant(text, variables):
            return []
        make = _Make(text, variables)
        make.read()
        ctx = _Ctx(_FileMap(text, place), base_dir)
        exported = make.exported()
        for recipe in make.recipes:
            shell_text = make.expand(recipe)
            if shell_text is None or not any(s in shell_text.text.lower() for s in _INTERESTING):
                continue
            base = _caller_vars(variables)
            for name, value in exported.items():
                if value is None:
                    base[name] = _Var("unknown", None, None, exported=True, env=True)
                else:
                    where = value.locate(0, len(value.text)) if value.text else None
                    base[name] = _Var("scalar", value, where, exported=True, env=True)
            _Shell(ctx, shell_text, _Scope(base, False)).run()
        return ctx.commands
    except Exception:  # a frontend never breaks a lint run
        if _STRICT:
            raise
        return ctx.commands if ctx is not None else []
