"""What a lint code is: its documentation in ruff's rule-doc shape, with examples the tests run.

Every engine documents its codes as data (``engines/<name>/data/rules.toml``, read by
:func:`load_rules`); the registry of all codes is :mod:`flake8_replayssm.rules`.  ``replayssm-lint explain``
prints :meth:`Rule.doc`, and the test suite runs each example through the linter
(each ``invalid`` example must give the code, each ``valid`` one must not).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .data_files import read_data


@dataclass(frozen=True)
class Example:
    code: str  # the launch, as a file of `kind`
    kind: str = "shell"
    release: str = "0.33.0"
    engine: str = ""  # the engine whose release `release` is (flake8_replayssm.engines.NAMES)
    #: how the documentation names that engine ("vLLM"); the registry of rules fills it in
    title: str = ""


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    why: str
    fix: str
    fix_safety: str
    invalid: tuple[Example, ...]
    valid: tuple[Example, ...]
    default_enabled: bool = True
    known_problems: str = ""
    #: "error" (vLLM refuses the launch), "warning" (it starts, but not as written) or
    #: "note" (something the linter could not see); text, SARIF, GitHub and LSP use it
    severity: str = "error"
    #: what ``fix`` may do: "safe" edits, "unsafe" ones only with --unsafe (``unsafe_because``
    #: says why), or "report-only" (no edit is right without a choice only the user can make)
    fix_policy: str = "safe"
    unsafe_because: str = ""

    def doc(self) -> str:
        """The rule's documentation as Markdown."""
        bad = self.invalid[0]
        good = self.valid[0]
        parts = [
            f"# {self.name} ({self.code})",
            "" if self.default_enabled else "\n*Off by default: enable with `--enable "
            f"{self.code}` or `enable = [\"{self.code}\"]`.*",
            f"\n## What it does\n{self.summary}",
            f"\n## Why is this bad?\n{self.why}",
            f"\n## Example ({_engine(bad)} {bad.release})\n```{_fence(bad.kind)}\n{bad.code.rstrip()}\n```",
            f"\nUse instead ({_engine(good)} {good.release}):\n```{_fence(good.kind)}\n{good.code.rstrip()}\n```",
            f"\n## Fix\n{self.fix}",
            f"\n## Fix safety\n{self.fix_safety}",
        ]
        if self.known_problems:
            parts.append(f"\n## Known problems\n{self.known_problems}")
        return "\n".join(p for p in parts if p) + "\n"


def _engine(example: Example) -> str:
    return example.title or example.engine


def _fence(kind: str) -> str:
    return {"shell": "bash", "python": "python", "yaml": "yaml", "dockerfile": "dockerfile"}.get(kind, "")


def load_rules(name: str, engine: str) -> tuple[tuple[Rule, ...], dict[str, str]]:
    """An engine's rules from its ``rules.toml`` (``name``, relative to the package), and the
    sentences it adds to codes another engine documents (``[addenda]``)."""
    raw = read_data(name)
    release = raw["defaults"]["release"]

    def examples(items: list[Mapping[str, Any]]) -> tuple[Example, ...]:
        return tuple(Example(item["code"], kind=item.get("kind", "shell"), release=item.get("release", release),
                             engine=engine) for item in items)

    rules = tuple(Rule(t["code"], t["name"], t["summary"], t["why"], t["fix"], t["fix_safety"],
                       examples(t["invalid"]), examples(t["valid"]),
                       default_enabled=t.get("default_enabled", True), known_problems=t.get("known_problems", ""),
                       severity=t.get("severity", "error"), fix_policy=t.get("fix_policy", "safe"),
                       unsafe_because=t.get("unsafe_because", ""))
                  for t in raw["rules"])
    return rules, dict(raw.get("addenda", {}))
