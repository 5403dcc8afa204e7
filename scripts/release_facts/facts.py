"""What one release's wheel says: generated facts (values a data table holds) and rules.

A *fact* is a value the linter's data holds and that the wheel states literally: a list
of option names, of architecture classes, a choice list, a default.  Each carries where
it was read (``path:line`` in the wheel) and, for a list, where each item was read.
A *rule* is a refusal (``raise``/``assert``), a Model Runner V1 fallback or a computed
default: its condition is code, so it is never turned into data here; it is listed with
its location and source text for a person to read into ``releases.toml``/``sglang.toml``.

``Facts`` round-trip through JSON so the extraction of a real wheel can be recorded
(names, messages and locations: facts, never code) and compared without the wheel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from .astutil import Rule

Value = Union[list, str, bool, int, None]


@dataclass
class Fact:
    name: str
    value: Value
    at: str
    items: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict:
        out: dict[str, Any] = {"value": self.value, "at": self.at}
        if self.items:
            out["items"] = dict(sorted(self.items.items()))
        return out


@dataclass
class Facts:
    engine: str
    release: str
    facts: dict[str, Fact] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, value: Value, at: object, items: dict[str, str] | None = None) -> None:
        self.facts[name] = Fact(name, value, str(at), dict(items or {}))

    def value(self, name: str, default: Value = None) -> Value:
        fact = self.facts.get(name)
        return default if fact is None else fact.value

    def as_json(self) -> dict:
        return {
            "engine": self.engine,
            "release": self.release,
            "facts": {name: fact.as_json() for name, fact in sorted(self.facts.items())},
            "rules": [rule.as_json() for rule in self.rules],
            "notes": list(self.notes),
        }

    def dumps(self, record: bool = False) -> str:
        """JSON; ``record``: only facts (names, messages, ``file:line``), no source text
        of conditions, so the extraction of a real wheel can be committed as test data."""
        raw = self.as_json()
        if record:
            for fact in raw["facts"].values():
                if len(fact.get("items", ())) > 60:  # the option lists: where each was read is bulk
                    del fact["items"]
            raw["rules"] = [dict(r, conditions=[]) for r in raw["rules"] if r["kind"] != "default"]
            raw["recorded"] = "conditions left out (source text): compare messages and locations only"
        return json.dumps(raw, indent=1) + "\n"

    @classmethod
    def from_json(cls, raw: dict) -> "Facts":
        facts = cls(raw["engine"], raw["release"], notes=list(raw.get("notes", [])))
        for name, fact in raw["facts"].items():
            facts.add(name, fact["value"], fact["at"], fact.get("items"))
        facts.rules = [Rule.from_json(r) for r in raw["rules"]]
        return facts
