"""A cheap screen before the libcst frontend: can this Python file hold a launch?

libcst costs about ten times ``ast.parse`` (plus as much again for positions),
and the text pre-filter lets through files that merely mention a trigger token,
such as vLLM's own config code.  This screen parses with :mod:`ast` and keeps
only files with a call that could be a launch we judge: an engine constructor
(``LLM``/``EngineArgs``/``AsyncEngineArgs``) given one of the options we read
or a ``**mapping``, or a process call (``subprocess``, ``os.system``,
``shlex.split``, ``asyncio.create_subprocess_*``) whose arguments hold or name
a string that can be part of a vLLM command line.  It only ever says "skip" when the full
frontend would find nothing to report.
"""

from __future__ import annotations

import ast
import re
import warnings
from functools import lru_cache

from .. import engines
from ..frameworks import RAY_SERVE_LLM
from ..triggers import PROCESS_WORDS

PROCESS_NAMES = frozenset({"run", "Popen", "call", "check_call", "check_output", "system", "popen",
                           "split", "create_subprocess_exec", "create_subprocess_shell"})


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _launch_string(value: str) -> bool:
    """A string that can be part of an engine's command line: the program itself, ``vllm serve``,
    an entry-point module, or an engine's image (``vllm.model_executor...`` alone is not)."""
    return any(program in value for program in engines.programs()) and engines.launch_word().search(value) is not None


def _mentions_vllm(node: ast.AST, vllm_names: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _launch_string(sub.value):
            return True
        if isinstance(sub, ast.Name) and sub.id in vllm_names:
            return True
    return False


def _names_built_from_launch_words(assignments: list[tuple[list[ast.expr], ast.expr]]) -> set[str]:
    """Names assigned a launch-word string, and names built from those (``base = "vllm serve m"``;
    ``cmd = base + " --flag"``), followed through the assignments once each."""
    users: dict[str, set[str]] = {}  # name -> names assigned from it
    found: set[str] = set()
    for targets, value in assignments:
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if not names:
            continue  # `x.attr = ...`, `d[k] = ...`: no name to follow
        for sub in ast.walk(value):  # one walk: the launch words and the names it is built from
            if isinstance(sub, ast.Name):
                users.setdefault(sub.id, set()).update(names)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _launch_string(sub.value):
                found.update(names)
    todo = list(found)
    while todo:
        for name in users.get(todo.pop(), ()):
            if name not in found:
                found.add(name)
                todo.append(name)
    return found


@lru_cache(maxsize=None)
def _option_keyword(engine: str) -> re.Pattern[str]:
    """One of an engine's options written as a keyword or a dict literal's quoted key.

    ``**unknown`` alone cannot make a finding: only keywords we can read can.
    """
    return _keyword_pattern(set(engines.get(engine).keyword_options()))


def _mentioned_engines(text: str) -> list[str]:
    """The engines a text names (their keyword options are read only where they are imported)."""
    return [name for name in engines.NAMES if any(p in text for p in engines.get(name).WORDS.programs)]


#: a keyword that may be a misspelt ReplaySSM option (``use_replaysm=``): a TypeError to report
_REPLAY_KEYWORD = r"[a-z_]*replay[a-z_]*"


def _keyword_pattern(names: set[str]) -> re.Pattern[str]:
    alternatives = "|".join([*sorted(re.escape(n) for n in names if not n.startswith("-")), _REPLAY_KEYWORD])
    return re.compile(rf"(?<![.\w])(?:{alternatives})\s*=(?!=)|[\"'](?:{alternatives})[\"']\s*:")


def _text_could_launch(text: str) -> bool:
    """Before any parse: a process call near a launch-word string, or an engine call (or a Ray
    Serve LLM config's ``engine_kwargs``) near one of our options written as a keyword."""
    if any(w in text for w in engines.launch_strings()) and any(w in text for w in PROCESS_WORDS):
        return True
    if not any(w in text for w in engines.call_words()):
        return False
    return _ray_config(text) or any(_option_keyword(name).search(text) is not None
                                    for name in _mentioned_engines(text))


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


def candidate_lines(text: str) -> frozenset[int] | None | bool:
    """The lines of the calls in ``text`` that can be a vLLM launch we judge; False when
    there is none, None when that cannot be told by lines (every statement is read)."""
    if not _text_could_launch(text):
        return False
    if _ray_config(text):
        return None  # a Ray Serve LLM config: engine_kwargs hold vLLM's options
    options = set().union(*(engines.get(name).keyword_options() for name in _mentioned_engines(text)))
    tree = parsed(text)
    if tree is None:
        return None  # the frontend parses again and reports what is wrong
    classes = set(engines.keyword_classes())
    assignments: list[tuple[list[ast.expr], ast.expr]] = []
    process_calls: list[ast.Call] = []
    engine_calls: list[ast.Call] = []
    for node in ast.walk(tree):  # one pass; the checks below look only at what it collected
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name in PROCESS_NAMES:
                process_calls.append(node)
            elif name is not None and node.keywords:
                engine_calls.append(node)
        elif isinstance(node, ast.ImportFrom) and node.module:
            classes.update(a.asname for a in node.names
                           if a.asname and engines.keyword_class(node.module, a.name) is not None)
        elif isinstance(node, ast.Assign):
            assignments.append((node.targets, node.value))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            assignments.append(([node.target], node.value))
    found = [call for call in engine_calls
             if _name(call.func) in classes
             and any(k.arg is None or k.arg in options or "replay" in k.arg for k in call.keywords)]
    if process_calls and _mentioned_engines(text):
        vllm_names = _names_built_from_launch_words(assignments)
        found += [call for call in process_calls
                  if any(_mentions_vllm(arg, vllm_names) for arg in [*call.args, *call.keywords])]
    if not found:
        return False
    return frozenset(line for call in found for line in range(call.lineno, (call.end_lineno or call.lineno) + 1))
