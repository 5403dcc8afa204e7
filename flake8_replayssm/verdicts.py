"""What was decided for one launch, in the one shape every engine returns.

Reports, ``noqa``, fixes, the flake8 plugin and the language server read a
:class:`Verdict` whatever engine judged the launch; the conventions every engine
follows when it writes one live here too: one finding per code, and the note a
finding carries when it holds only if the unseen extra arguments add nothing
(DESIGN.md, "judge what is written").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

from .model import Finding, Launch, readable


@dataclass(frozen=True)
class Verdict:
    """What was decided for one launch; ``--verbose`` and SARIF show it."""

    launch: Launch
    #: the engine's target: the release judged (``.release``, ``.name``) and why (``.reason``)
    target: Any
    model_detail: str
    findings: tuple[Finding, ...]
    #: the architectures the model may be (one when resolved)
    architectures: tuple[str, ...] = ()
    #: how the unseen extra arguments were read: "" (there are none), "closed" or "open"
    extra_args: str = ""


def unseen_note(launch: Launch, what: str = "ReplaySSM option") -> str:
    """What a finding assumes of the launch's unseen extra arguments (``"$@"``, ``**kwargs``)."""
    verb = "add" if len(launch.unseen) > 1 else "adds"
    return f"assuming {' and '.join(launch.unseen)} {verb} no {what}"


def unseen_env_note(launch: Launch, variables: str) -> str:
    """What a finding assumes of the environment sources the file does not show (an env
    file, ``envFrom``, ``ssh``): that they set none of ``variables``."""
    labels = [readable(label) for label in launch.env_unseen] or ["an environment the file does not show"]
    verb = "set" if len(labels) > 1 else "sets"
    return f"assuming {' and '.join(labels)} {verb} no {variables}"


def closed_environment(launch: Launch, judge: Callable[[Launch], list[Finding]], variables: str,
                       strict: bool) -> list[Finding]:
    """``judge(launch)``'s findings under DESIGN.md's reading of unseen environments: like unseen
    extra arguments, they are assumed to set no variable that changes the verdict, and a finding
    that holds only because of that says so.  ``strict`` (``extra-args = "open"``) reads them as
    able to set anything: no finding depends on them then."""
    if not launch.env_open_ended or strict:
        return judge(launch)
    as_open = {f.code for f in judge(launch)}
    note = unseen_env_note(launch, variables)
    return [f if f.code in as_open else replace(f, message=with_note(f.message, note))
            for f in judge(replace(launch, env_open_ended=False))]


def with_note(message: str, note: str) -> str:
    """``message`` with ``note`` in parentheses before its ``; fix:`` part."""
    head, sep, fix = message.partition("; fix: ")
    return f"{head} ({note}){sep}{fix}"


def one_per_code(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per code of a launch: the first place it is reported, in file order."""
    chosen: dict[str, Finding] = {}
    for f in findings:
        kept = chosen.get(f.code)
        if kept is None or _place(f) < _place(kept):
            chosen[f.code] = f
    return sorted(chosen.values(), key=_place)


def _place(f: Finding) -> tuple[int, str, int, int, int]:
    span = f.span
    return (0 if span.source is None else 1, span.source or "", -1 if span.cell is None else span.cell,
            span.line, span.col)
