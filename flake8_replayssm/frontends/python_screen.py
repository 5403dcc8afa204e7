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

from ..knowledge import knowledge

ENGINE_NAMES = frozenset({"LLM", "EngineArgs", "AsyncEngineArgs", "Engine", "ServerArgs"})
PROCESS_NAMES = frozenset({"run", "Popen", "call", "check_call", "check_output", "system", "popen",
                           "split", "create_subprocess_exec", "create_subprocess_shell"})


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


#: a string that can be part of a vLLM command line: the program itself, ``vllm serve``,
#: the api_server module, or the vLLM image (``vllm.model_executor...`` alone is not)
_LAUNCH_WORDS = re.compile(r"^\s*(vllm|sglang)\s*$|\b(vllm|sglang)\b[^\n]*\bserve\b|api_server|vllm-openai"
                           r"|sglang\.launch_server|lmsysorg/sglang")


def _mentions_vllm(node: ast.AST, vllm_names: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) \
                and ("vllm" in sub.value or "sglang" in sub.value) and _LAUNCH_WORDS.search(sub.value):
            return True
        if isinstance(sub, ast.Name) and sub.id in vllm_names:
            return True
    return False


@lru_cache(maxsize=1)
def _option_keyword() -> re.Pattern[str]:
    """One of our options written as a keyword or a dict literal's quoted key.

    ``**unknown`` alone cannot make a finding: only keywords we can read can.
    """
    from ..sglang.knowledge import knowledge as sglang_knowledge

    ours = set(knowledge().options) | set(sglang_knowledge().options) | set(sglang_knowledge().proposal_names)
    names = "|".join(sorted(re.escape(n) for n in ours - {"model", "model_path"} if not n.startswith("-")))
    return re.compile(rf"(?<![.\w])(?:{names})\s*=(?!=)|[\"'](?:{names})[\"']\s*:")


_LAUNCH_STRINGS = ("'vllm'", '"vllm"', "vllm serve", "api_server", "vllm-openai", "'sglang'", '"sglang"',
                   "sglang serve", "sglang.launch_server", "lmsysorg/sglang")
_PROCESS_WORDS = ("subprocess", "system(", "popen(", "Popen", "shlex", "create_subprocess")
_ENGINE_WORDS = ("LLM(", "LLM as", "EngineArgs", "engine_kwargs", "Engine(", "Engine as", "ServerArgs")


def _text_could_launch(text: str) -> bool:
    """Before any parse: a process call near a launch-word string, or an engine call (or a Ray
    Serve LLM config's ``engine_kwargs``) near one of our options written as a keyword."""
    if any(w in text for w in _LAUNCH_STRINGS) and any(w in text for w in _PROCESS_WORDS):
        return True
    return any(w in text for w in _ENGINE_WORDS) and _option_keyword().search(text) is not None


def _ray_config(text: str) -> bool:
    return "engine_kwargs" in text and _option_keyword().search(text) is not None


def might_launch(text: str) -> bool:
    """False only when no call in ``text`` can be a vLLM launch that we judge."""
    if not _text_could_launch(text):
        return False
    if _ray_config(text):
        return True  # a Ray Serve LLM config: engine_kwargs hold vLLM's options
    options = set(knowledge().options) - {"model"}
    if "sglang" in text:
        from ..sglang.knowledge import knowledge as sglang_knowledge

        options |= set(sglang_knowledge().options) | set(sglang_knowledge().proposal_names)
    try:
        with warnings.catch_warnings():  # invalid escapes etc. are the user's business, not ours
            warnings.simplefilter("ignore")
            tree = ast.parse(text.lstrip("\ufeff"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # let libcst decide (it reads some files ast rejects, e.g. declared encodings)
    engines = set(ENGINE_NAMES)
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
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("vllm", "sglang")):
            engines.update(a.asname for a in node.names if a.name in ENGINE_NAMES and a.asname)
        elif isinstance(node, ast.Assign):
            assignments.append((node.targets, node.value))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            assignments.append(([node.target], node.value))
    for call in engine_calls:
        if _name(call.func) in engines and any(k.arg is None or k.arg in options for k in call.keywords):
            return True
    if not process_calls or ("vllm" not in text and "sglang" not in text):
        return False
    vllm_names = {t.id for targets, value in assignments if _mentions_vllm(value, set())
                  for t in targets if isinstance(t, ast.Name)}
    return any(_mentions_vllm(arg, vllm_names) for call in process_calls
               for arg in [*call.args, *call.keywords])
