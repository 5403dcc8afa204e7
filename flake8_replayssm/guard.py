"""Before a frontend runs: can this text be parsed, and parsed safely?

A text that holds a trigger token but does not parse is reported (RSM900, with
the parser's line), like flake8's E999 and shellcheck's parse errors, instead of
silently giving no findings.  And some texts must never reach the parsers:

- libcst's native parser overflows the C stack on deep nesting (a list 1,500
  levels deep kills the process, whatever ``sys.getrecursionlimit`` says) and
  takes quadratic time on long operator chains (4,000 ``+`` terms: 3.5 s;
  20,000: minutes);
- the frontends walk trees recursively, so past about 150 nested Python nodes a
  ``RecursionError`` would drop the whole file.

So a Python text is measured with :mod:`ast` first (C code, iterative depth
count); deeper than :data:`MAX_PYTHON_DEPTH` nodes it is not parsed further.
When :mod:`ast` rejects the text (a grammar newer than this interpreter may
still be libcst's), libcst gets it only if a raw scan finds it shallow and short.
YAML and notebook JSON are measured the same way after their own parse.  A shell
script's syntax errors are found next to its parser
(:func:`flake8_replayssm.frontends.shell.shell_syntax_errors`).
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from typing import Any

from . import yaml_nodes
from .unchecked import NotChecked

#: nodes from the module to the deepest leaf; measured: the frontends lose findings
#: from ~150 nested lists or calls, ~500 chained operators (tests/test_hostile.py)
MAX_PYTHON_DEPTH = 100
#: a text :mod:`ast` rejects goes to libcst only below these (bracket depth, operators)
MAX_RAW_BRACKETS = 100
MAX_RAW_OPERATORS = 3000
#: YAML nodes / JSON containers from the root to the deepest value
MAX_DOCUMENT_DEPTH = yaml_nodes.MAX_DEPTH

_TOO_DEEP = ("too many nested parentheses", "too complex", "too many levels of indentation",
             "too many statically nested blocks")
_OPERATOR = re.compile(r"[-+*/%@&|^~<>]=?|\bnot\b|\band\b|\bor\b|\bif\b")


def _too_deep(depth: int | None, line: int = 1, limit: int = MAX_PYTHON_DEPTH) -> NotChecked:
    measured = f" ({depth} levels at line {line}; the limit is {limit})" if depth else ""
    return NotChecked(f"too deeply nested to parse safely{measured}", line)


def _syntax_error(exc: SyntaxError) -> NotChecked:
    message = exc.msg or "invalid syntax"
    return NotChecked(f"could not be parsed (line {exc.lineno or 1}: {message})", exc.lineno or 1,
                      max((exc.offset or 1) - 1, 0), kind="syntax")


def _python_depth(tree: ast.AST) -> tuple[int, int]:
    """(depth, line) of the deepest node; iterative, so any depth is measured."""
    best, best_line = 0, 1
    stack: list[tuple[ast.AST, int, int]] = [(tree, 1, 1)]
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)
        if depth > best:
            best, best_line = depth, line
        stack.extend((child, depth + 1, line) for child in ast.iter_child_nodes(node))
    return best, best_line


def _raw_brackets(text: str) -> int:
    depth = best = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            best = max(best, depth)
        elif ch in ")]}" and depth:
            depth -= 1
    return best


def check_python(text: str, tree: ast.Module | None = None) -> SyntaxError | None:
    """Raise :class:`NotChecked` for Python the parsers and the frontend must not see.

    Returns None when :mod:`ast` parses the text, or the SyntaxError when it does
    not but libcst may try (the caller reports it if that fails too).  ``tree`` is
    the text's :mod:`ast` tree when the caller has it already.
    """
    source = text.lstrip("\ufeff")
    try:
        if tree is None:
            with warnings.catch_warnings():  # invalid escapes etc. are the user's business, not ours
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
    except (RecursionError, MemoryError):
        raise _too_deep(None) from None
    except SyntaxError as exc:
        if any(marker in (exc.msg or "") for marker in _TOO_DEEP):
            raise _too_deep(None, exc.lineno or 1) from None
        if _raw_brackets(source) > MAX_RAW_BRACKETS or len(_OPERATOR.findall(source)) > MAX_RAW_OPERATORS:
            raise _syntax_error(exc) from None
        return exc
    except ValueError as exc:  # NUL bytes and the like
        raise NotChecked(f"could not be parsed ({exc})", kind="syntax") from None
    depth, line = _python_depth(tree)
    if depth > MAX_PYTHON_DEPTH:
        raise _too_deep(depth, line)
    return None


def python_parse_failure(ast_error: SyntaxError | None, libcst_error: BaseException) -> NotChecked:
    """The RSM900 reason when the Python frontend failed: libcst could not parse the text (the
    first parser's line wins), or -- ``ast`` parsed it -- an error of the frontend itself."""
    if ast_error is not None:
        return _syntax_error(ast_error)
    if type(libcst_error).__name__ != "ParserSyntaxError":
        return NotChecked(f"an error of the linter's Python frontend ({type(libcst_error).__name__}); "
                          "please report it", kind="internal")
    line = getattr(libcst_error, "raw_line", None) or getattr(libcst_error, "line", None) or 1
    message = str(libcst_error).splitlines()[0] if str(libcst_error) else type(libcst_error).__name__
    return NotChecked(f"could not be parsed (line {line}: {message})", int(line), kind="syntax")


def check_yaml(text: str) -> None:
    """Raise :class:`NotChecked` for YAML that does not compose or nests too deeply."""
    import yaml

    from .yaml_templates import compose_documents

    try:  # as the YAML frontend reads it: Helm/Go template actions are unknown values, not errors
        _, documents = compose_documents(text)
    except RecursionError:
        raise _too_deep(None, limit=MAX_DOCUMENT_DEPTH) from None
    except MemoryError:
        raise NotChecked("the linter ran out of memory parsing it") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or exc.context or "invalid YAML"
        raise NotChecked(f"could not be parsed (line {line}: {problem})", line,
                         mark.column if mark is not None else 0, kind="syntax") from None
    except yaml.YAMLError as exc:
        raise NotChecked(f"could not be parsed ({str(exc).splitlines()[0] if str(exc) else 'invalid YAML'})",
                         kind="syntax") from None
    for document in documents:
        depth, line = yaml_nodes.node_depth(document)
        if depth > MAX_DOCUMENT_DEPTH:
            raise _too_deep(depth, line, MAX_DOCUMENT_DEPTH)


def check_structured(text: str, kind: str) -> None:
    """Raise :class:`NotChecked` for a YAML, TOML or JSON text that does not parse or nests too deeply
    (TOML and JSON by their own parsers: the frontend reads them into nodes only if they do)."""
    if kind == "yaml":
        check_yaml(text)
        return
    if kind == "toml":
        from .frontends.structured.toml_nodes import check_toml

        data: Any = check_toml(text)
    else:
        data = _json(text)
    depth = _json_depth(data)
    if depth > MAX_DOCUMENT_DEPTH:
        raise _too_deep(depth, 1, MAX_DOCUMENT_DEPTH)


def _json_depth(value: Any) -> int:
    best = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        best = max(best, depth)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return best


def _json(text: str) -> Any:
    """``text`` as JSON; :class:`NotChecked` with the parser's line when it is not."""
    try:
        return json.loads(text)
    except RecursionError:
        raise _too_deep(None, limit=MAX_DOCUMENT_DEPTH) from None
    except json.JSONDecodeError as exc:
        raise NotChecked(f"could not be parsed (line {exc.lineno}: {exc.msg})", exc.lineno,
                         max(exc.colno - 1, 0), kind="syntax") from None


def check_notebook(text: str) -> None:
    """Raise :class:`NotChecked` for a notebook that is not JSON with a list of cells."""
    from .notebook_json import parsed

    data, error = parsed(text)  # the one parse the frontend reads its cells from
    if isinstance(error, RecursionError):
        raise _too_deep(None, limit=MAX_DOCUMENT_DEPTH)
    if isinstance(error, json.JSONDecodeError):
        raise NotChecked(f"could not be parsed (line {error.lineno}: {error.msg})", error.lineno,
                         max(error.colno - 1, 0), kind="syntax")
    if error is not None:
        raise NotChecked(f"could not be parsed ({error})", kind="syntax")
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotChecked("could not be parsed (not a notebook: no list of cells)", kind="syntax")
    depth = _json_depth(data)
    if depth > MAX_DOCUMENT_DEPTH:
        raise _too_deep(depth, 1, MAX_DOCUMENT_DEPTH)
