"""What was decided for one launch, in the one shape every engine returns.

Reports, ``noqa``, fixes, the flake8 plugin and the language server read a
:class:`Verdict` whatever engine judged the launch; the conventions every engine
follows when it writes one live here too: one finding per code, and the note a
finding carries when it holds only if the unseen extra arguments add nothing
(DESIGN.md, "judge what is written").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator, Sequence

from .model import Finding, Launch, readable
from .release_sets import label
from .versions import version_key


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
    #: judged for a set of releases: each release's own part, oldest first, as (target,
    #: findings); ``target`` is then the newest and ``findings`` merged (:func:`over_releases`)
    by_release: tuple[tuple[Any, tuple[Finding, ...]], ...] = ()
    #: how messages name the whole set (``0.30.0–0.33.0``); "" for one release
    set_label: str = ""

    @property
    def judged_for(self) -> str:
        """The release, or the set of releases, the launch was judged for."""
        return self.set_label or self.target.name

    @property
    def releases(self) -> tuple[str, ...]:
        return tuple(target.name for target, _ in self.by_release) or (self.target.name,)

    def for_release(self, name: str) -> Verdict:
        """The verdict of one release of the set (itself, when it was judged for one)."""
        for target, findings in self.by_release:
            if target.name == name:
                return replace(self, target=target, findings=findings, by_release=(), set_label="")
        return self

    def releases_to_fix(self, findings: Sequence[Finding]) -> Iterator[tuple[Verdict, list[Finding]]]:
        """What the fix planner works on for a launch judged for a set of releases: each release
        where one of ``findings``' codes holds, oldest first, with its verdict and findings. The
        oldest is tried first (its fixes pin what it needs and newer ones mostly accept; a newer
        release still refused is planned in the next round, and a round that makes another
        release refuse the launch is left out: :func:`flake8_replayssm.fix.codemod.fix_text`);
        where no edit fixes it (vLLM 0.26.0 has no ReplaySSM option), the next. Judged for one
        release, the verdict and ``findings`` themselves."""
        if not self.by_release:
            yield self, list(findings)
            return
        codes = {f.code for f in findings}
        for target, found in self.by_release:
            mine = [f for f in found if f.code in codes]
            if mine:
                yield self.for_release(target.name), mine


def over_releases(parts: Sequence[tuple[Any, Sequence[Finding]]], title: str,
                  known: Sequence[str]) -> list[Finding]:
    """One finding per code of a launch judged for each release of a set (``parts``: each
    target with its findings, one per code already), saying on which releases it holds.

    A finding is placed where its code is first reported in file order (as :func:`one_per_code`
    places it) and carries the message of the newest release that reports it there, with the
    release in its ``[vLLM 0.33.0]`` tag replaced by the releases it holds on
    (``[vLLM 0.30.0–0.32.0]``, :func:`flake8_replayssm.release_sets.label`; ``known`` is the
    engine's releases, oldest first, ``title`` its name in messages).  Judged for one release,
    the findings are as that release gives them.
    """
    if len(parts) == 1:
        target, findings = parts[0]
        return [replace(f, releases=(target.name,)) for f in findings]
    by_code: dict[str, list[tuple[Finding, str]]] = {}
    for target, findings in parts:
        for f in findings:
            by_code.setdefault(f.code, []).append((f, target.name))
    out = []
    for found in by_code.values():
        names = tuple(sorted(dict.fromkeys(name for _, name in found), key=version_key))
        chosen, name = min(found, key=lambda item: (_place(item[0]), tuple(-k for k in version_key(item[1]))))
        out.append(replace(chosen, releases=names, message=retag(chosen.message, title, name, label(names, known))))
    return sorted(out, key=_place)


def retag(message: str, title: str, version: str, releases: str) -> str:
    """``message`` with its ``[vLLM 0.33.0`` tag naming ``releases`` instead (added before the
    ``; fix:`` part when the message has no tag)."""
    tag = f"[{title} {version}"
    if tag in message:
        return message.replace(tag, f"[{title} {releases}", 1)
    head, sep, fix = message.partition("; fix: ")
    return f"{head} [{title} {releases}]{sep}{fix}"


def without_release_tag(message: str) -> str:
    """``message`` up to its release tag (``[vLLM 0.33.0]``, ``[SGLang 0.5.23]``: an engine's
    title and a release): what the engine says, without the notes that follow it."""
    return _RELEASE_TAG.split(message, 1)[0]


_RELEASE_TAG = re.compile(r" \[[A-Za-z][\w-]* \d+\.\d")


def common_to_readings(members: Sequence[Verdict], title: str, known: Sequence[str]) -> tuple[Finding, ...]:
    """The findings of a group's first reading that every reading has (DESIGN.md: a finite set
    of values is that set): per release, when they were judged for a set of releases."""
    leader = members[0]
    if not leader.by_release:
        common = set.intersection(*({f.code for f in m.findings} for m in members))
        return tuple(f for f in leader.findings if f.code in common)
    parts = []
    for target, findings in leader.by_release:
        codes = set.intersection(*({f.code for f in m.for_release(target.name).findings}
                                   if target.name in m.releases else set() for m in members))
        parts.append((target, [f for f in findings if f.code in codes]))
    return tuple(over_releases(parts, title, known))


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


def rests_on_unseen_environment(message: str) -> bool:
    """Whether a finding's message says it holds only if an environment the file does not show
    sets none of the variables it names (:func:`unseen_env_note`)."""
    return _UNSEEN_ENV.search(message) is not None


_UNSEEN_ENV = re.compile(r"\(assuming .+? sets? no ")


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
