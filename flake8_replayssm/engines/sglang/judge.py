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
from ...release_sets import label, newer_than_known
from ...verdicts import Verdict, closed_environment, one_per_code, over_releases, unseen_note, with_note
from . import form
from .checks import ModelVerdict, model_verdict, run_checks, unresolved_model_finding
from .knowledge import Knowledge, Release, knowledge
from .target import Target, cuda_version, explicit_releases, known_releases, resolve_targets


#: the environment variables SGLang's checks read (resolve.py): what an unseen environment could set
ENVIRONMENT = "SGLANG_RAGGED_VERIFY_MODE"


def judge(launch: Launch, config: LintConfig) -> Verdict:
    """The verdict for every release the launch is judged for (one, or a set: DESIGN.md)."""
    know = knowledge()
    targets = resolve_targets(config, launch, know)
    reading = config.extra_args if launch.unseen else ""
    if reading == "open":
        launch = replace(launch, open_ended=True)
    verdict = model_verdict(launch, know, extra_models=config.extra_models, model_dirs=config.model_dirs)
    parts = [(target, tuple(_judged_for(launch, target, config, verdict, reading, know))) for target in targets]
    newest = targets[-1]
    if len(parts) == 1:
        return Verdict(launch, newest, verdict.detail, parts[0][1], verdict.architectures, reading)
    known = known_releases(know)
    return Verdict(launch, newest, verdict.detail, tuple(over_releases(parts, "SGLang", known)),
                   verdict.architectures, reading, by_release=tuple(parts),
                   set_label=label([t.name for t in targets], known))


def _judged_for(launch: Launch, target: Target, config: LintConfig, verdict: ModelVerdict, reading: str,
                know: Knowledge) -> list[Finding]:
    """The findings of one release: spellings, checks, form findings, one per code, selected."""
    release = target.release
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
    return [replace(f, release=release.version, release_reason=target.reason, engine="sglang",
                    releases=(release.version,))
            for f in one_per_code(f for f in found if config.is_enabled(f.code))]


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
        explicit_releases(config, knowledge())


def releases() -> tuple[str, ...]:
    """Every SGLang release this linter knows, oldest first."""
    return known_releases(knowledge())


def release_note(config: LintConfig) -> str:
    """What the summary says about explicit releases newer than every release known."""
    return newer_than_known(config.sglang_version, releases(), "SGLang")
