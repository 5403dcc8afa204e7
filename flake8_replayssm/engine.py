"""Judge launches: pick the release, run the checks, apply the code selection.

This is the one path every file kind shares after its frontend:
launch -> target release -> validator checks + form findings -> selected findings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from .config import LintConfig
from .form import before_first_release_findings, form_findings, value_findings
from .knowledge import Knowledge, knowledge
from .model import Finding, Launch
from .target import Target, resolve_target
from .validator import model_verdict, run_checks, unresolved_model_finding


@dataclass(frozen=True)
class Verdict:
    """What was decided for one launch; ``--verbose`` and SARIF show it."""

    launch: Launch
    target: Target
    model_detail: str
    findings: tuple[Finding, ...]
    #: the architectures the model may be (one when resolved)
    architectures: tuple[str, ...] = ()
    #: how the unseen extra arguments were read: "" (there are none), "closed" or "open"
    extra_args: str = ""


def judge(launch: Launch, config: LintConfig, know: Knowledge | None = None) -> Verdict:
    if launch.engine == "sglang":  # the second engine: its own release, checks and spellings
        from .sglang.judge import judge as judge_sglang

        return judge_sglang(launch, config)
    know = know or knowledge()
    target = resolve_target(config, launch.release_hint, know)
    release = target.release
    reading = config.extra_args if launch.unseen else ""
    if reading == "open":
        launch = replace(launch, open_ended=True)
    verdict = model_verdict(launch, know, extra_models=config.extra_models,
                            model_dirs=config.model_dirs)
    found: list[Finding] = []
    if release is None:
        found += before_first_release_findings(launch, target.version, know)
    else:
        # unseen extra arguments can undo any check of the validator (`--no-use-replayssm`,
        # `--hf-overrides`, a later `--mamba-backend`): the strict reading reports none, and
        # the default reading says, on each one, what it assumed
        if reading != "open":
            checks = run_checks(launch, release, config.platform, verdict, know)
            found += _say_what_was_assumed(checks, launch, release) if reading == "closed" else checks
        found += form_findings(launch, release)
        found += value_findings(launch, know)
        unresolved = unresolved_model_finding(launch, verdict)
        if unresolved is not None:
            found.append(unresolved)
    selected = [replace(f, release=target.name, release_reason=target.reason)
                for f in one_per_code(f for f in found if config.is_enabled(f.code))]
    return Verdict(launch, target, verdict.detail, tuple(selected), verdict.architectures, reading)


def _say_what_was_assumed(findings: list[Finding], launch: Launch, release) -> list[Finding]:
    """Findings of a launch with unseen extra arguments hold only if those add nothing that
    changes them; each says so."""
    unseen = " and ".join(launch.unseen)
    verb = "add" if len(launch.unseen) > 1 else "adds"
    replayssm_checks = {c.code for c in release.checks if c.applies == "replayssm"}

    def note(code: str) -> str:  # what the unseen part is assumed not to hold
        what = "ReplaySSM option" if code in replayssm_checks else "option that changes this"
        return f"assuming {unseen} {verb} no {what}"

    return [replace(f, message=_with_note(f.message, note(f.code))) for f in findings]


def _with_note(message: str, note: str) -> str:
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
