"""A cheap screen before the Python frontend: can this file hold a launch, and on which lines?

The text pre-filter lets through files that merely mention a trigger token, such as vLLM's
own config code.  This screen keeps only files with something the frontend would judge: an
engine constructor (``LLM``/``EngineArgs``/``AsyncEngineArgs``, SGLang's ``Engine``/
``ServerArgs``, under any import alias) given one of the options we read or a ``**mapping``,
or a string naming an engine's entry point (``"vllm"``, ``"vllm serve ..."``,
``"...api_server"``, ``"python3 -m sglang.launch_server ..."``) written where a command is
handed on, returned or stored, not in talk (a docstring, ``print``, logging, ``help=``:
:mod:`.python.places`).  Which of those strings start an engine is the recogniser's business.

It never walks a whole syntax tree: only the lines that mention an engine by name (or an
imported engine class's alias) are looked at, by descending from the module only into the
statements and expressions that span one of them.  The lines it returns are those of the
possible launches and of the uses of the variables that hold one; the frontend reads only
the functions and classes that contain one of them.  It only ever says "skip" when the full
frontend would find nothing to report.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from functools import lru_cache
from typing import Iterator

from .. import engines
from ..frameworks import RAY_SERVE_LLM
from ..model import Span, Word
from ..recognise import find_entry, written_as_command
from .python.places import NAME, STORE, place_of


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


@lru_cache(maxsize=None)
def _option_keyword(engine: str) -> re.Pattern[str]:
    """One of an engine's options written as a keyword or a dict literal's quoted key.

    ``**unknown`` alone cannot make a finding: only keywords we can read can.
    """
    return _keyword_pattern(set(engines.get(engine).keyword_options()))


def _mentioned_engines(text: str) -> list[str]:
    """The engines a text names (their keyword options are read only where they are imported)."""
    words = [engines.get(name).WORDS for name in engines.NAMES]
    return [name for name, w in zip(engines.NAMES, words)
            if any(p in text for p in w.programs) or any(m in text for m in w.forwarded_classes)]


#: a keyword that may be a misspelt ReplaySSM option (``use_replaysm=``): a TypeError to report
_REPLAY_KEYWORD = r"[a-z_]*replay[a-z_]*"


def _keyword_pattern(names: set[str]) -> re.Pattern[str]:
    alternatives = "|".join([*sorted(re.escape(n) for n in names if not n.startswith("-")), _REPLAY_KEYWORD])
    return re.compile(rf"(?<![.\w])(?:{alternatives})\s*=(?!=)|[\"'](?:{alternatives})[\"']\s*:")


def _text_could_launch(text: str) -> bool:
    """Before any parse: a string that can be part of an engine's command line, or an engine
    call (or a Ray Serve LLM config's ``engine_kwargs``) near one of our options written as a
    keyword."""
    return _strings_could_launch(text) or _engine_call_text(text)


def _strings_could_launch(text: str) -> bool:
    """Whether a launch string (``"vllm"``, ``vllm serve``, ``vllm.entrypoints.``) may be inside a
    string literal: not on an import or a comment line, and after a quote on its line or inside
    a triple-quoted string.  vLLM's own modules name ``vllm.entrypoints`` in their imports and
    need no parse for that."""
    for needle in engines.launch_strings():
        at = text.find(needle)
        if at >= 0 and needle[0] in "'\"" and not _quotes_a_subcommand(text, needle[1:-1]):
            continue  # `backend == "vllm"`: the program alone, and no sub-command quoted anywhere
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            before = text[start:at]
            code = before.lstrip()
            if not code.startswith(("from ", "import ", "#")) and (
                    needle[0] in "'\"" or not before.endswith("`")  # `vllm serve` in prose: inline code
                    and ("'" in before or '"' in before
                         or text.count('"""', 0, at) % 2 or text.count("'''", 0, at) % 2)):
                return True
            at = text.find(needle, at + 1)
    return False


def _quotes_a_subcommand(text: str, program: str) -> bool:
    """Whether a string is the sub-command (``"serve"``) or starts with it (``"serve --port 1"``):
    ``"served_model_name"`` is neither."""
    engine = engines.for_program(program)
    return engine is None or any(f"{q}{sub}{end}" in text for sub in engine.WORDS.subcommands
                                 for q in "'\"" for end in (q, " "))


def _engine_call_text(text: str) -> bool:
    if not any(_outside_comment_lines(text, w) for w in engines.call_words()):
        return False
    return _ray_config(text) or any(_option_keyword(name).search(text) is not None
                                    for name in _mentioned_engines(text))


def _outside_comment_lines(text: str, word: str) -> bool:
    """Whether ``word`` occurs on a line that is neither a comment nor a class statement
    (``# EngineArgs(...)`` and ``class AsyncEngineArgs(EngineArgs):`` in vLLM's own sources are
    no calls)."""
    at = text.find(word)
    while at >= 0:
        if not text[text.rfind("\n", 0, at) + 1:at].lstrip().startswith(("#", "class ")):
            return True
        at = text.find(word, at + 1)
    return False


def _ray_config(text: str) -> bool:
    return "engine_kwargs" in text and _option_keyword(RAY_SERVE_LLM[0]).search(text) is not None


#: the last text parsed and its tree: the screen and the frontend read one parse
_LAST_PARSE: list[tuple[str, ast.Module | None]] = []


def remember_tree(text: str, tree: ast.AST | None) -> None:
    """Take ``tree`` as ``text``'s parse (flake8 has parsed the file already; its tree is
    ``ast.parse`` of the same text)."""
    if isinstance(tree, ast.Module):
        _LAST_PARSE[:] = [(text, tree)]


def parsed(text: str) -> ast.Module | None:
    """``text``'s :mod:`ast` tree (None if it does not parse), parsed once for the screen and
    the frontend both."""
    for seen, tree in _LAST_PARSE:
        if seen is text or seen == text:
            return tree
    try:
        with warnings.catch_warnings():  # invalid escapes etc. are the user's business, not ours
            warnings.simplefilter("ignore")
            tree = ast.parse(text.lstrip("\ufeff"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    _LAST_PARSE[:] = [(text, tree)]
    return tree


def might_launch(text: str) -> bool:
    """False only when no call in ``text`` can be a vLLM launch that we judge."""
    return candidate_lines(text) is not False


class _Lines:
    """The line numbers (1-based) at which a pattern matches a text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def of(self, pattern: re.Pattern[str]) -> set[int]:
        starts = self.starts
        return {bisect.bisect_right(starts, m.start()) for m in pattern.finditer(self.text)}


def _nodes_on(tree: ast.Module, lines: list[int]) -> Iterator[tuple[ast.AST, list[ast.AST]]]:
    """Every node spanning one of ``lines`` (sorted), with its ancestors (outermost first):
    the descent enters only the statements and expressions that span one of them."""
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(tree, [])]
    while stack:
        node, parents = stack.pop()
        yield node, parents
        inner = parents + [node]
        for child in ast.iter_child_nodes(node):
            first = getattr(child, "lineno", None)
            if first is None:  # arguments, keywords without a position, operators...
                stack.append((child, inner))
                continue
            k = bisect.bisect_left(lines, first)
            if k < len(lines) and lines[k] <= (getattr(child, "end_lineno", None) or first):
                stack.append((child, inner))


def _span(node: ast.AST) -> range:
    first = getattr(node, "lineno", 1)
    return range(first, (getattr(node, "end_lineno", None) or first) + 1)


def _target_names(holder: ast.AST | None) -> list[str]:
    targets = holder.targets if isinstance(holder, ast.Assign) else \
        [holder.target] if isinstance(holder, (ast.AnnAssign, ast.AugAssign)) else []
    return [t.id for t in targets if isinstance(t, ast.Name)]


class _Screen:
    """One file's possible launches, looked for on the lines that can hold one."""

    def __init__(self, text: str, tree: ast.Module) -> None:
        self.text, self.tree = text, tree
        self.lines = _Lines(text)
        self.found: set[int] = set()
        self.names: set[str] = set()
        mentioned = _mentioned_engines(text)
        self.options = set().union(*(engines.get(name).keyword_options() for name in mentioned))
        self.classes = set(engines.keyword_classes())
        self.launch_word = engines.launch_word()
        #: the values of the strings that name an entry point where a command can be, by id
        self.places: dict[int, ast.expr] = {}

    def run(self) -> None:
        for stmt in self.tree.body:  # engine classes imported under another name (`... import LLM as make`)
            if isinstance(stmt, ast.ImportFrom) and stmt.module:
                self.classes.update(a.asname for a in stmt.names
                                    if a.asname and engines.keyword_class(stmt.module, a.name) is not None)
        programs = "|".join(sorted(map(re.escape, engines.programs())))
        self.look(self.lines.of(re.compile(programs)))
        calls = self.lines.of(re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, self.classes))) + r")\b"))
        self.look(calls, calls_only=True)
        done: set[str] = set()
        for _ in range(8):  # variables built from variables that hold a command, a few steps deep
            new = self.names - done
            if not new:
                break
            done |= new
            uses = self.lines.of(re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, new))) + r")\b"))
            self.found |= uses
            self.look(uses, assignments_only=True)

    def look(self, lines: set[int], *, calls_only: bool = False, assignments_only: bool = False) -> None:
        if not lines:
            return
        for node, parents in _nodes_on(self.tree, sorted(lines)):
            if assignments_only:
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None \
                        and any(isinstance(n, ast.Name) and n.id in self.names for n in ast.walk(node.value)):
                    self.names.update(_target_names(node))
            elif isinstance(node, ast.ImportFrom) and node.module and not calls_only:
                self.classes.update(a.asname for a in node.names
                                    if a.asname and engines.keyword_class(node.module, a.name) is not None)
            elif isinstance(node, ast.Call) and node.keywords and _name(node.func) in self.classes:
                if any(k.arg is None or k.arg in self.options or "replay" in k.arg for k in node.keywords):
                    self.found.update(_span(node))
            elif not calls_only and isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and self.launch_word.search(node.value) is not None:
                place = place_of(node, parents)
                if place is not None and id(place.value) not in self.places:
                    self.places[id(place.value)] = place.value
                    parts = list(_parts(place.value))
                    said = "".join(part for part in parts if part is not None)
                    if None in parts or _may_start_engine(said, _is_list(place.value)):
                        self.found.update(_span(place.value))
                        if place.role in (NAME, STORE):
                            self.names.update(_target_names(place.holder))


#: the last text screened and its screen (the lint and its inventory screen a text once)
_LAST_SCREEN: list[tuple[str, _Screen]] = []


def _screen(text: str, tree: ast.Module) -> _Screen:
    for seen, screen in _LAST_SCREEN:
        if seen is text or seen == text:
            return screen
    screen = _Screen(text, tree)
    screen.run()
    _LAST_SCREEN[:] = [(text, screen)]
    return screen


def looking_lines(text: str) -> list[int]:
    """The lines of the strings in ``text`` that name an engine's entry point (``vllm serve``,
    ``["python", "-m", "vllm.entrypoints.openai.api_server"]``: the words of the value they build)
    where a command can be written, not in talk: the first string of each such value."""
    if not _strings_could_launch(text):
        return []
    tree = parsed(text)
    if tree is None:
        return []
    looking = engines.launch_looking()
    lines = []
    for value in _screen(text, tree).places.values():
        parts = list(_parts(value))
        said = "".join(part or _UNSEEN for part in parts)
        words = [Word(None if _UNSEEN in w else w, _NOWHERE) for w in said.split()]
        if looking.search(said) is not None and (_is_list(value) or written_as_command(words)):
            lines.append(min(n.lineno for n in ast.walk(value) if isinstance(n, ast.Constant)))
    return sorted(set(lines))


#: what separates two commands in a command string, or puts one inside another (``sh -c "..."``)
_SEPARATORS = re.compile(r"[;&|()\n`]|\$\(|\b(?:then|do|else|elif|if|while|until)\b|(?:^|\s)(?:ba|z|da|k)?sh\s+-c\b")


def _may_start_engine(said: str, argv: bool) -> bool:
    """Whether a value written in full (no name, no f-string field) holds a command that starts
    an engine, as the frontend would read it: an argv list's words, or one of a string's commands
    (split at shell operators, quotes dropped) written as a command, in which the recogniser
    finds an entry point."""
    for segment in [said] if argv else _SEPARATORS.split(said):
        words = [Word(w, _NOWHERE) for w in segment.replace('"', " ").replace("'", " ").split()]
        if words and (argv or written_as_command(words)) and find_entry(words, {}) is not None:
            return True
    return False


def _is_list(value: ast.AST) -> bool:
    """An argv list (words, not a command string a shell reads)."""
    if isinstance(value, ast.BinOp):
        return _is_list(value.left) or _is_list(value.right)
    return isinstance(value, (ast.List, ast.Tuple))


#: a part of a value the screen does not evaluate (a name, an f-string field)
_UNSEEN = "\0"
_NOWHERE = Span(1, 0, 1, 0)


def _parts(node: ast.AST) -> Iterator[str | None]:
    """The text of a value built from strings, in order; None for a part not written as one (a
    list's elements are blank-separated words)."""
    if isinstance(node, ast.Constant):
        yield node.value if isinstance(node.value, str) else None
    elif isinstance(node, ast.JoinedStr):
        for piece in node.values:
            yield from _parts(piece) if isinstance(piece, ast.Constant) else iter([None])
    elif isinstance(node, (ast.List, ast.Tuple)):
        for element in node.elts:
            yield from _parts(element)
            yield " "
    elif isinstance(node, ast.BinOp):
        yield from _parts(node.left)
        yield from _parts(node.right)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "join" and node.args:
            yield from _parts(node.args[0])  # " ".join([...])
        else:
            yield from _parts(node.func.value)  # "...".format(x), "...".strip()
    else:
        yield None


def candidate_lines(text: str) -> frozenset[int] | None | bool:
    """The lines of the possible launches in ``text`` (and of the uses of the variables that
    hold one); False when there is none, None when that cannot be told by lines (every
    statement is read)."""
    if not _text_could_launch(text):
        return False
    if _ray_config(text):
        return None  # a Ray Serve LLM config: engine_kwargs hold vLLM's options
    tree = parsed(text)
    if tree is None:
        return None  # the frontend parses again and reports what is wrong
    found = frozenset(_screen(text, tree).found)
    return found if found else False
