"""The verdict for one SGLang launch: release, spellings, checks, code selection.

:func:`flake8_replayssm.engine.judge` hands SGLang launches here; the result is
the same :class:`~flake8_replayssm.engine.Verdict` the vLLM side returns, so
reports, ``noqa``, fixes and the flake8 plugin treat both engines alike, and
unseen extra arguments are read the same way (DESIGN.md, "judge what is written").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ..config import LintConfig
from ..engine import Verdict, _with_note, one_per_code
from ..model import Finding, Launch, Setting
from . import form
from .checks import ModelVerdict, model_verdict, run_checks, unresolved_model_finding
from .knowledge import Knowledge, Release, knowledge
from .target import resolve_target


def judge(launch: Launch, config: LintConfig) -> Verdict:
    know = knowledge()
    target = resolve_target(config, launch.release_hint, know)
    release = target.release
    reading = config.extra_args if launch.unseen else ""
    if reading == "open":
        launch = replace(launch, open_ended=True)
    verdict = model_verdict(launch, know, extra_models=config.extra_models, model_dirs=config.model_dirs)
    options = {name: setting for name, setting in launch.options.items()
               if form.accepted(setting, launch, release, know)}
    found: list[Finding] = []
    checks = run_checks(launch, options, release, config.gpu, verdict, know)
    if reading == "closed":
        checks = _say_what_was_assumed(checks, launch, options, release, config, verdict, know)
    found += checks
    found += form.form_findings(launch, release, know)
    unresolved = unresolved_model_finding(launch, options, verdict)
    if unresolved is not None:
        found.append(unresolved)
    selected = [replace(f, release=release.version, release_reason=target.reason, engine="sglang")
                for f in one_per_code(f for f in found if config.is_enabled(f.code))]
    return Verdict(launch, target, verdict.detail, tuple(selected),  # type: ignore[arg-type]
                   verdict.architectures, reading)


def _say_what_was_assumed(findings: list[Finding], launch: Launch, options: Mapping[str, Setting],
                          release: Release, config: LintConfig, verdict: ModelVerdict,
                          know: Knowledge) -> list[Finding]:
    """Findings that hold only because the unseen extra arguments are assumed empty say so."""
    strict = {f.code for f in run_checks(replace(launch, open_ended=True), options, release, config.gpu,
                                         verdict, know)}
    unseen = " and ".join(launch.unseen)
    verb = "add" if len(launch.unseen) > 1 else "adds"
    note = f"assuming {unseen} {verb} no ReplaySSM option"
    return [f if f.code in strict else replace(f, message=_with_note(f.message, note)) for f in findings]
