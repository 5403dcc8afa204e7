"""An engine's startup checks as data, and how a launch is judged against them.

Every engine refuses a launch in checks it runs in order (vLLM's config validators,
SGLang's server-argument resolution); each check is kept as data (the engine's release
tables) with its condition over the values the engine derives from the launch.  Where a
launch leaves something unknown (a model in a variable, ``"$@"``, an unset GPU), each
possible value is a *scenario*, and a code is reported only when it fails in every
scenario: an unknown never causes a finding by itself (DESIGN.md).  The engine stops at
its first failing check; the linter reports every code once, with the message of the
first check of that code that fails.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from .conditions import Condition, compile_condition
from .model import UNKNOWN

#: give up (report nothing from the checks) rather than enumerate without bound
MAX_SCENARIOS = 50_000

S = TypeVar("S")


@dataclass(frozen=True)
class Check:
    """One refusal (or silent no-op) of an engine's startup validation, as data."""

    id: str
    code: str
    when: Condition
    message: str
    fix: str
    #: which launches it applies to, in the engine's words ("replayssm", "always", "spec"...)
    applies: str
    #: the option whose token the finding is reported at ("" : the engine's own choice)
    at: str
    #: where in the engine's startup it runs, when that is worth saying ("" otherwise)
    stage: str = ""
    #: the releases it is in (None: unbounded), for tables that list a check once
    since: str | None = None
    until: str | None = None


def check_from_table(table: Mapping[str, Any], *, applies: str | None = None, at: str = "") -> Check:
    """A check from its table in an engine's data (``applies`` and ``at`` are the defaults)."""
    return Check(id=table["id"], code=table["code"], when=compile_condition(table["when"]),
                 message=table["message"], fix=table["fix"], applies=table.get("applies", applies),
                 at=table.get("at", at), stage=table.get("stage", ""), since=table.get("since"),
                 until=table.get("until"))


def first_failures(checks: Sequence[Check], readings: Callable[[frozenset[str]], Iterable[S]],
                   applies: Callable[[Check, S], bool], facts: Callable[[S], Mapping[str, Any]],
                   always_read: frozenset[str]) -> list[tuple[Check, S]]:
    """Per code, the first failing check and its scenario, for the codes that fail in every
    scenario.

    ``readings(names)`` enumerates the launch's scenarios over the dimensions the named facts
    depend on (so a code is enumerated only over what its checks can see); ``applies`` says
    whether a check applies in a scenario; ``always_read`` are facts every code reads.
    Enumeration stops at the first scenario where no check of the code fails.
    """
    by_code: dict[str, list[Check]] = {}
    for check in checks:
        by_code.setdefault(check.code, []).append(check)
    failing = []
    for group in by_code.values():
        read = frozenset().union(*(c.when.names for c in group)) | always_read
        first: tuple[Check, S] | None = None
        holds = True
        for count, scenario in enumerate(readings(read)):
            check = next((c for c in group if applies(c, scenario) and c.when(facts(scenario))), None)
            if check is None or count >= MAX_SCENARIOS:
                holds = False
                break
            first = first or (check, scenario)
        if holds and first is not None:
            failing.append(first)
    return failing


def choices(value: Any, unknown: Sequence[Any]) -> list[Any]:
    """The values a launch's setting may have: itself, or every candidate when it is unknown."""
    return list(unknown) if value is UNKNOWN else [value]


def dimension_table(lines: str) -> dict[str, frozenset[str]]:
    """``fact: dimension dimension ...`` lines as a table: which scenario dimensions each
    derived fact depends on, so that a check is enumerated only over what it can see (a fact
    written on several lines depends on all their dimensions)."""
    table: dict[str, frozenset[str]] = {}
    for line in lines.strip().splitlines():
        fact, _, dimensions = line.partition(":")
        table[fact.strip()] = table.get(fact.strip(), frozenset()) | frozenset(dimensions.split())
    return table


def dimensions_of(table: Mapping[str, frozenset[str]], fact_names: Iterable[str]) -> frozenset[str]:
    return frozenset().union(*(table[name] for name in fact_names))


def combinations(dims: Mapping[str, Sequence[Any]], vary: frozenset[str] | None) -> Iterator[dict[str, Any]]:
    """Every combination of the dimensions' values, as a dimension -> value mapping; a dimension
    not in ``vary`` (when given) keeps its first value: checks that cannot see it need no more."""
    if vary is not None:
        dims = {name: values if name in vary else values[:1] for name, values in dims.items()}
    names = list(dims)
    for combo in itertools.product(*dims.values()):
        yield dict(zip(names, combo))
