"""The verdict for one vLLM launch: target release, checks, form findings, code selection.

launch -> target release -> validator checks + form findings -> selected findings,
one per code; unseen extra arguments are read as DESIGN.md's "judge what is written"
says (each finding that rests on them says so, or none with ``extra-args = "open"``).
"""

from __future__ import annotations

from dataclasses import replace

from ...config import LintConfig
from ...model import Finding, Launch
from ...release_sets import label
from ...verdicts import Verdict, closed_environment, one_per_code, over_releases, unseen_note, with_note
from .checks import ModelVerdict, model_verdict, run_checks, unresolved_model_finding
from .form import before_first_release_findings, form_findings, value_findings
from .knowledge import Knowledge, Release, knowledge
from .target import Target, known_releases, resolve_targets


#: the environment variables vLLM's checks read (resolve.py): what an unseen environment could set
ENVIRONMENT = "VLLM_USE_V2_MODEL_RUNNER"


def judge(launch: Launch, config: LintConfig, know: Knowledge | None = None) -> Verdict:
    """The verdict for every release the launch is judged for (one, or a set: DESIGN.md)."""
    know = know or knowledge()
    targets = resolve_targets(config, launch, know)
    reading = config.extra_args if launch.unseen else ""
    if reading == "open":
        launch = replace(launch, open_ended=True)
    verdict = model_verdict(launch, know, extra_models=config.extra_models,
                            model_dirs=config.model_dirs)
    parts = [(target, tuple(_judged_for(launch, target, config, verdict, reading, know))) for target in targets]
    newest = targets[-1]
    if len(parts) == 1:
        return Verdict(launch, newest, verdict.detail, parts[0][1], verdict.architectures, reading)
    known = known_releases(know)
    merged = over_releases(parts, "vLLM", known)
    return Verdict(launch, newest, verdict.detail, tuple(merged), verdict.architectures, reading,
                   by_release=tuple(parts), set_label=label([t.name for t in targets], known))


def _judged_for(launch: Launch, target: Target, config: LintConfig, verdict: ModelVerdict, reading: str,
                know: Knowledge) -> list[Finding]:
    """The findings of one release: checks, form and value findings, one per code, selected."""
    release = target.release
    found: list[Finding] = []
    if release is None:
        found += before_first_release_findings(launch, target.version, know)
    else:
        # unseen extra arguments can undo any check of the validator (`--no-use-replayssm`,
        # `--hf-overrides`, a later `--mamba-backend`): the strict reading reports none, and
        # the default reading says, on each one, what it assumed
        if reading != "open":
            platform = launch.platform_hint or config.platform
            checks = closed_environment(launch, lambda it: run_checks(it, release, platform, verdict, know),
                                        ENVIRONMENT, strict=config.extra_args == "open")
            found += _say_what_was_assumed(checks, launch, release) if reading == "closed" else checks
        found += form_findings(launch, release)
        found += value_findings(launch, know)
        unresolved = unresolved_model_finding(launch, verdict)
        if unresolved is not None:
            found.append(unresolved)
    return [replace(f, release=target.name, release_reason=target.reason, engine="vllm", releases=(target.name,))
            for f in _moot_while_unsupported(one_per_code(f for f in found if config.is_enabled(f.code)))]


def _moot_while_unsupported(findings: list[Finding]) -> list[Finding]:
    """RSM008 beside RSM001 stays reported (every violated code is, once), but its message says
    that RSM001 is the finding to act on: no model runner makes an unsupported architecture start."""
    if not any(f.code == "RSM001" for f in findings):
        return findings
    return [replace(f, message=with_note(f.message, "moot while the architecture is unsupported: see RSM001"))
            if f.code == "RSM008" else f for f in findings]


def _say_what_was_assumed(findings: list[Finding], launch: Launch, release: Release) -> list[Finding]:
    """Findings of a launch with unseen extra arguments hold only if those add nothing that
    changes them; each says so."""
    replayssm_checks = {c.code for c in release.checks if c.applies == "replayssm"}

    def note(code: str) -> str:  # what the unseen part is assumed not to hold
        return unseen_note(launch, "ReplaySSM option" if code in replayssm_checks else "option that changes this")

    return [replace(f, message=with_note(f.message, note(f.code))) for f in findings]


def model_note(verdict: Verdict, config: LintConfig) -> str:
    """The model and the architecture it resolved to, for ``--verbose``."""
    model = model_verdict(verdict.launch, knowledge(), extra_models=config.extra_models,
                          model_dirs=config.model_dirs)
    if not model.resolved:
        return f"model: unresolved ({verdict.model_detail})"
    return f"model: {model.model or 'as configured'} -> architecture {model.architectures[0]} " \
           f"({verdict.model_detail})"


def check_settings(config: LintConfig) -> None:
    """An explicit ``vllm-version`` this linter cannot judge is a configuration error."""
    if config.vllm_version:
        from .target import explicit_releases

        explicit_releases(config, knowledge())


def releases() -> tuple[str, ...]:
    """Every vLLM release this linter knows, oldest first."""
    return known_releases(knowledge())


def release_note(config: LintConfig) -> str:
    """What the summary says about explicit releases newer than every release known (one, or
    members of a list: each is judged by the newest release's rules)."""
    if not config.vllm_version:
        return ""
    from ...release_sets import releases_of
    from ...versions import version_key

    know = knowledge()
    newer = [v for v in releases_of(config.vllm_version, known_releases(know)) if version_key(v) > know.newest.key]
    if not newer:
        return ""
    one = len(newer) == 1
    return (f"note: vLLM {', '.join(newer)} {'is' if one else 'are'} newer than the newest release this "
            f"linter knows ({know.newest.version}); {'its' if one else 'their'} launches were judged by "
            f"{know.newest.version}'s rules")
