"""Every RSM code, whichever engine reports it: the registry ``explain``, SARIF and the docs read.

Each engine documents its own codes (``engines/<name>/rules.py``); a code two engines
share (the form codes RSM101, RSM104-RSM106) is documented by the first engine of the
registry that reports it, and the others add their sentences to its summary.  RSM900,
"not checked", is the core's own: no engine is involved when a file cannot be read.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from . import engines
from .rulebase import Example, Rule

NOT_CHECKED = Rule(
    "RSM900", "not-checked",
    "Reports a file, or part of one, that could not be checked, with the reason: it does not "
    "parse (with the parser's line, like flake8's E999 and shellcheck's parse errors), it is "
    "too large, not a regular file (a FIFO, a device), unreadable or binary, it nests deeper "
    "than the parsers can safely follow, or a bound kept the linter from following part of a "
    "launch (that part is then judged as unknown). Under flake8, Python syntax errors are "
    "left to flake8's own E999.",
    "A launch the linter cannot read is a launch nobody checked: without this report a CI run "
    "would pass in silence on exactly the files that could not be checked.",
    "Fix the syntax error, split the file, or exclude it (`--exclude`); `--ignore RSM900` "
    "accepts unchecked files knowingly.",
    "No automatic fix.",
    (Example("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm "
             "--served-model-name \"nano\n", engine="vllm"),),
    (Example("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm "
             "--served-model-name \"nano\"\n", engine="vllm"),),
    fix_policy="report-only",
)


@lru_cache(maxsize=1)
def _registry() -> tuple[tuple[Rule, ...], dict[str, Rule]]:
    by_code: dict[str, Rule] = {NOT_CHECKED.code: NOT_CHECKED}
    for engine in engines.all_engines():
        for rule in engine.rules():
            by_code.setdefault(rule.code, rule)
        for code, sentence in engine.rule_addenda().items():
            by_code[code] = replace(by_code[code], summary=by_code[code].summary + sentence)
    ordered = tuple(sorted((_titled(rule) for rule in by_code.values()), key=lambda rule: rule.code))
    return ordered, {rule.code: rule for rule in ordered}


def _titled(rule: Rule) -> Rule:
    """The rule with its examples naming their engine as the documentation does (``vLLM``)."""
    def titled(examples: tuple[Example, ...]) -> tuple[Example, ...]:
        return tuple(replace(e, title=engines.title(e.engine)) for e in examples)

    return replace(rule, invalid=titled(rule.invalid), valid=titled(rule.valid))


def __getattr__(name: str) -> object:
    """``RULES`` (every code, in order) and ``BY_CODE``, built on first use: the engines'
    documentation is imported only by what reads it (``explain``, SARIF, settings checks)."""
    if name == "RULES":
        return _registry()[0]
    if name == "BY_CODE":
        return _registry()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def severity(code: str) -> str:
    """The severity of ``code`` ("error", "warning" or "note"); unknown codes are errors."""
    rule = _registry()[1].get(code)
    return rule.severity if rule is not None else "error"


def fix_policy(code: str) -> str:
    """What ``fix`` may do for ``code``: "safe", "unsafe" (only with --unsafe) or "report-only"."""
    rule = _registry()[1].get(code)
    return rule.fix_policy if rule is not None else "safe"


def unsafe_because(code: str) -> str:
    """Why an edit for ``code`` is applied only with --unsafe (the rule's data)."""
    rule = _registry()[1].get(code)
    return rule.unsafe_because if rule is not None and rule.unsafe_because else "the fix changes what the launch does"
