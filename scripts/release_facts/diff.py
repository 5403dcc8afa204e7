"""What changed between two releases' facts, as a checklist for the data tables.

Generated facts are compared value by value (lists item by item, each with where it was
read).  Rules are paired old -> new in four passes, so a moved line is not a change:
same function, conditions and message (unchanged, whatever the line); same message (its
condition changed); same conditions (its message changed); what is left was added or
removed.  Each changed rule is printed with both texts and both locations: a rule's
condition is code, and reading it into ``releases.toml``/``sglang.toml`` is a person's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .astutil import Rule
from .facts import Facts
from .tables import SLOTS


@dataclass
class RuleChange:
    change: str  # "added", "removed", "message", "condition"
    old: Rule | None
    new: Rule | None

    def as_json(self) -> dict:
        return {"change": self.change, "old": self.old.as_json() if self.old else None,
                "new": self.new.as_json() if self.new else None}


def _key(rule: Rule, *parts: str) -> tuple:
    return tuple(getattr(rule, p) for p in parts)


def pair_rules(old: list[Rule], new: list[Rule]) -> tuple[list[RuleChange], int]:
    """The rule changes, and how many rules are unchanged."""
    old_left, new_left = list(old), list(new)
    changes: list[RuleChange] = []
    unchanged = 0
    for parts, change in ((("kind", "function", "conditions", "message"), None),
                          (("kind", "function", "message"), "condition"),
                          (("kind", "function", "conditions"), "message")):
        for rule in list(new_left):
            match = next((o for o in old_left if _key(o, *parts) == _key(rule, *parts)), None)
            if match is None:
                continue
            old_left.remove(match)
            new_left.remove(rule)
            if change is None:
                unchanged += 1
            else:
                changes.append(RuleChange(change, match, rule))
    changes += [RuleChange("removed", rule, None) for rule in old_left]
    changes += [RuleChange("added", None, rule) for rule in new_left]
    return changes, unchanged


def fact_changes(old: Facts, new: Facts) -> list[dict]:
    out = []
    for name in sorted(set(old.facts) | set(new.facts)):
        before, after = old.facts.get(name), new.facts.get(name)
        old_value = before.value if before else None
        new_value = after.value if after else None
        if isinstance(old_value, dict) and isinstance(new_value, dict):  # option -> nargs: item by item
            pairs = [f"{k} = {v!r}" for k, v in new_value.items()]
            gone = [f"{k} = {v!r}" for k, v in old_value.items()]
            added = [p for p in pairs if p not in gone]
            removed = [p for p in gone if p not in pairs]
            if added or removed:
                out.append({"fact": name,
                            "added": [(v, after.items.get(v.split(" = ")[0], after.at)) for v in added],  # type: ignore
                            "removed": [(v, before.items.get(v.split(" = ")[0], before.at))  # type: ignore
                                        for v in removed],
                            "at": after.at})  # type: ignore
        elif isinstance(old_value, list) and isinstance(new_value, list):
            added = [v for v in new_value if v not in old_value]
            removed = [v for v in old_value if v not in new_value]
            if not added and not removed:
                continue
            out.append({"fact": name, "added": [(v, after.items.get(v, after.at)) for v in added],  # type: ignore
                        "removed": [(v, before.items.get(v, before.at)) for v in removed],  # type: ignore
                        "at": after.at if after else before.at})  # type: ignore
        elif old_value != new_value:
            out.append({"fact": name, "old": old_value, "new": new_value,
                        "at": after.at if after else before.at})  # type: ignore
    return out


def _where(engine: str, fact: str) -> str:
    if fact == "validator_source":
        return "the `source` of a new release table"
    for slot in SLOTS[engine]:
        if slot.fact == fact:
            table = slot.table or "releases.\"X\""
            return f"{slot.file} [{table}] {slot.key}" + (f".{slot.sub}" if slot.sub else "")
    return "not written: read it (no data key holds it)"


def _show(rule: Rule) -> list[str]:
    lines = []
    if rule.conditions:
        lines.append("      when  " + " and ".join(rule.conditions))
    lines.append("      says  " + (rule.message or "(no message)"))
    return lines


def _rule_lines(change: RuleChange) -> list[str]:
    old, new = change.old, change.new
    rule = new or old
    head = f"- [ ] {change.change}" + (" changed" if old and new else "") + f" ({rule.kind} in {rule.function}): "
    if old and new:
        lines = [head + f"{old.loc} -> {new.loc}"]
        if change.change == "message":
            lines += ["      when  " + " and ".join(new.conditions)] if new.conditions else []
            lines += ["      old   " + old.message, "      new   " + new.message]
        else:
            lines += ["      says  " + new.message,
                      "      old   when " + " and ".join(old.conditions),
                      "      new   when " + " and ".join(new.conditions)]
        return lines
    return [head + str(rule.loc)] + _show(rule)  # type: ignore[arg-type]


def report(old: Facts, new: Facts, limit: int = 40) -> str:
    title = {"vllm": "vLLM", "sglang": "SGLang"}[new.engine]
    lines = [f"{title} {old.release} -> {new.release}: what changed in the wheel", ""]
    facts = fact_changes(old, new)
    lines.append(f"Generated facts ({len(facts)} changed; `write` puts them into the data):")
    for change in facts:
        lines.append(f"- [ ] {change['fact']}  ->  {_where(new.engine, change['fact'])}")
        if "added" in change:
            for label, items in (("+", change["added"]), ("-", change["removed"])):
                for value, at in items[:limit]:
                    lines.append(f"      {label} {value}  ({at})")
                if len(items) > limit:
                    lines.append(f"      {label} ... {len(items) - limit} more")
        else:
            lines.append(f"      {change['old']!r} -> {change['new']!r}  ({change['at']})")
    changes, unchanged = pair_rules(old.rules, new.rules)
    lines += ["", f"Rules ({len(changes)} changed, {unchanged} unchanged; read each into the release table by hand):"]
    for change in changes:
        lines += _rule_lines(change)
    for note in sorted(set(new.notes) - set(old.notes)):
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def message_shape(text: str) -> str:
    """A message with its computed parts blanked, to match the source against the data."""
    return " ".join(_PLACEHOLDER.sub("{}", text.replace("{{", "{").replace("}}", "}")).split())


def unmatched_messages(facts: Facts, data_messages: list[str]) -> list[Rule]:
    """The wheel's refusals of the validator whose message no check of the data carries."""
    shapes = {message_shape(m) for m in data_messages}
    return [r for r in facts.rules if r.kind.startswith(("raise", "assert")) and r.message
            and message_shape(r.message) not in shapes]
