"""The verdict for one SGLang launch: release, spellings, checks, code selection.

:func:`flake8_replayssm.judging.judge` hands SGLang launches here; the result is
the same :class:`~flake8_replayssm.verdicts.Verdict` the vLLM side returns, so
reports, ``noqa``, fixes and the flake8 plugin treat both engines alike, and
unseen extra arguments are read the same way (DESIGN.md, "judge what is written").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ...config import LintConfig
from ...model import Finding, Launch, Setting
from ...verdicts import Verdict, closed_environment, one_per_code, unseen_note, with_note
from . import form
from .checks import ModelVerdict, model_verdict, run_checks, unresolved_model_finding
from .knowledge import Knowledge, Release, knowledge
from .target import cuda_version, resolve_target


#: the environment variables SGLang's checks read (resolve.py): what an unseen environment could set
ENVIRONMENT = "SGLANG_RAGGED_VERIFY_MODE"


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
    cuda = cuda_version(config.cuda) or cuda_version(launch.platform_hint)
    checks = closed_environment(launch, lambda it: run_checks(it, options, release, config.gpu, verdict, know,
                                                              cuda),
                                ENVIRONMENT, strict=config.extra_args == "open")
    if reading == "closed":
        checks = _say_what_was_assumed(checks, launch, options, release, config, verdict, know, cuda)
    found += checks
    found += form.form_findings(launch, release, know)
    unresolved = unresolved_model_finding(launch, options, verdict)
    if unresolved is not None:
        found.append(unresolved)
    selected = [replace(f, release=release.version, release_reason=target.reason, engine="sglang")
                for f in one_per_code(f for f in found if config.is_enabled(f.code))]
    return Verdict(launch, target, verdict.detail, tuple(selected),
                   verdict.architectures, reading)


def _say_what_was_assumed(findings: list[Finding], launch: Launch, options: Mapping[str, Setting],
                          release: Release, config: LintConfig, verdict: ModelVerdict,
                          know: Knowledge, cuda: str | None) -> list[Finding]:
    """Findings that hold only because the unseen extra arguments are assumed empty say so."""
    strict = {f.code for f in run_checks(replace(launch, open_ended=True), options, release, config.gpu,
                                         verdict, know, cuda)}
    note = unseen_note(launch)
    return [f if f.code in strict else replace(f, message=with_note(f.message, note)) for f in findings]


def model_note(verdict: Verdict, config: LintConfig) -> str:
    """The model and the architecture it resolved to, for ``--verbose`` (the verdict names it)."""
    model_value = verdict.launch.model.value if verdict.launch.model is not None else None
    if len(verdict.architectures) != 1 or not isinstance(model_value, str):
        return f"model: unresolved ({verdict.model_detail})"
    return f"model: {model_value} -> architecture {verdict.architectures[0]} ({verdict.model_detail})"


def check_settings(config: LintConfig) -> None:
    """An explicit ``sglang-version`` this linter cannot judge is a configuration error."""
    if config.sglang_version:
        resolve_target(config, None, knowledge())


def release_note(config: LintConfig) -> str:
    return ""
