"""Where a string that names an engine's entry point is written in Python, and whether that
place can run it.

A launch in Python is recognised by what it says (DESIGN.md): an argv list or a command
string whose words begin with an engine's entry point, wherever it is written.  The place
only decides whether the text is there to be *run* or to be *read by people*:

- it is part of a larger value first: a list element, an operand of ``+`` or ``%``, an
  f-string, ``" ".join(...)``, ``shlex.split(...)``, ``a if c else b``...; the largest such
  expression is the command (:func:`place_of`);
- that command is then handed to a call (any call: a cloud SDK's container arguments, a
  serving framework's method, a notebook helper), returned or yielded, stored (a variable,
  an attribute, a dict value, a default), which are places that run or keep a command;
- or it is talk: a docstring or a bare string statement, an argument of ``print``, logging,
  ``warnings.warn``, an exception, ``assert``, a ``help=``/``description=`` keyword, a
  comparison or a membership test, a pattern handed to ``re`` or a string method
  (``line.startswith("vllm serve")``), a dict key or a subscript, a loop over words.

Only the syntax decides here; whether the command's words really start an engine is the
recogniser's business (:mod:`flake8_replayssm.recognise`).  The screen
(:mod:`..python_screen`) and the collector (:mod:`.collect`) both ask this module, so a file
the screen lets through is read the way the screen judged it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Sequence

#: calls whose arguments are text for people, by the name called (``print``, ``log.info``)
TALK_CALLS = frozenset({
    "print", "pprint", "echo", "secho", "log", "debug", "info", "warning", "warn", "error", "exception",
    "critical", "fatal", "fail", "skip", "xfail", "notice", "success", "trace", "display", "Markdown",
    "markdown", "HTML", "caption", "header", "subheader", "title", "text", "code", "help", "add_note",
    "deprecated",
})
#: keywords whose value is text for people (argparse, click, typer, pydantic ``Field``, loggers)
TALK_KEYWORDS = frozenset({
    "help", "description", "epilog", "usage", "msg", "message", "doc", "docstring", "summary", "title",
    "comment", "reason", "hint", "example", "examples", "note", "notes", "metavar", "prog",
})
#: methods and functions that take a string as a pattern to look for, not a command to run
PATTERN_CALLS = frozenset({
    "startswith", "endswith", "find", "rfind", "index", "rindex", "count", "replace", "removeprefix",
    "removesuffix", "partition", "rpartition", "search", "match", "fullmatch", "sub", "subn", "findall",
    "finditer", "compile", "escape", "fnmatch", "contains", "glob", "__contains__",
})
#: a call of these passes a string or list on as part of a larger command value
_BUILDERS = frozenset({"join", "split", "strip", "lstrip", "rstrip", "format", "dedent", "quote", "str",
                       "list", "tuple"})
#: what a command value is handed to: a call's argument, a return, a stored value
CALL, RETURN, STORE, NAME = "call", "return", "store", "name"


@dataclass(frozen=True)
class Place:
    """Where a command value is written: ``value`` is the largest expression the string is part
    of, ``role`` one of CALL (``holder`` the call), RETURN, STORE (an attribute, a subscript, a
    dict value, a default...) or NAME (assigned to a variable: ``holder`` the assignment)."""

    value: ast.expr
    role: str
    holder: ast.AST | None = None


def called_name(func: ast.expr) -> str:
    """The last name of what a call calls (``print``, ``info`` for ``log.info``)."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def is_talk_call(call: ast.Call) -> bool:
    """Calls whose arguments are there to be read (printed, logged, raised) or searched for:
    also their variants (``warning_once``, ``print_rank0``, ``log_info``, ``assertIn``)."""
    name = called_name(call.func)
    return name in TALK_CALLS or name in PATTERN_CALLS or name.split("_", 1)[0] in TALK_CALLS \
        or name.startswith("assert") or name.endswith(("Error", "Exception", "Warning", "Exit"))


def _builds(parent: ast.AST, child: ast.AST) -> bool:
    """Whether ``child`` is part of the larger value ``parent`` (not a place of its own)."""
    if isinstance(parent, (ast.List, ast.Tuple, ast.Starred, ast.JoinedStr, ast.FormattedValue, ast.BoolOp)):
        return True
    if isinstance(parent, ast.BinOp):
        return isinstance(parent.op, (ast.Add, ast.Mod))
    if isinstance(parent, ast.IfExp):
        return child is not parent.test
    if isinstance(parent, ast.Call):
        name = called_name(parent.func)
        if name == "join" and not _joins_words(parent.func):
            return False  # os.path.join, "/".join: a path, not a command line
        return name in _BUILDERS and (parent.func is child or any(a is child for a in parent.args))
    if isinstance(parent, ast.Attribute):
        return isinstance(parent.ctx, ast.Load)  # `"...".join`, `"...".format`: the call above decides
    return False


def _joins_words(func: ast.expr) -> bool:
    """``" ".join`` or ``shlex.join``: words joined into a command line."""
    if not isinstance(func, ast.Attribute):
        return False
    receiver = func.value
    if isinstance(receiver, ast.Constant):
        return isinstance(receiver.value, str) and receiver.value.isspace()
    return isinstance(receiver, ast.Name) and receiver.id == "shlex"


def place_of(node: ast.expr, parents: Sequence[ast.AST]) -> Place | None:
    """Where the string ``node`` (with its ancestors ``parents``, nearest last) is written as a
    command, or None when it is talk (see the module's docstring)."""
    value: ast.AST = node
    k = len(parents) - 1
    while k >= 0 and _builds(parents[k], value):
        value, k = parents[k], k - 1
    if k < 0 or not isinstance(value, ast.expr):
        return None
    parent = parents[k]
    if isinstance(parent, ast.Call):
        if value is parent.func or is_talk_call(parent):
            return None
        return Place(value, CALL, parent)
    if isinstance(parent, ast.keyword):
        call = parents[k - 1] if k > 0 else None
        if parent.arg in TALK_KEYWORDS or not isinstance(call, ast.Call) or is_talk_call(call):
            return None
        return Place(value, CALL, call)
    if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom, ast.Lambda)):
        return Place(value, RETURN, parent)
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
        if value is not parent.value:
            return None
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and isinstance(parent, (ast.Assign, ast.AnnAssign)):
            return Place(value, NAME, parent)
        return Place(value, STORE, parent)
    if isinstance(parent, ast.Dict):
        return Place(value, STORE, parent) if any(v is value for v in parent.values) else None
    if isinstance(parent, ast.arguments):  # a default: `def serve(cmd=["vllm", "serve", ...])`
        return Place(value, STORE, parent)
    return None  # docstrings and bare strings, comparisons, subscripts, raise/assert, loops
