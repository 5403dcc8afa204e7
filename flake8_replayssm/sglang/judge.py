"""The verdict for one SGLang launch: release, spellings, checks, code selection.

:func:`flake8_replayssm.engine.judge` hands SGLang launches here; the result is
the same :class:`~flake8_replayssm.engine.Verdict` the vLLM side returns, so
reports, ``noqa``, fixes and the flake8 plugin treat both engines alike.
"""

from __future__ import annotations

from dataclasses import replace

from ..config import LintConfig
from ..engine import Verdict, _dedupe
from ..model import Finding, Launch
from . import form
from .checks import model_verdict, run_checks, unresolved_model_finding
from .knowledge import knowledge
from .target import resolve_target


def judge(launch: Launch, config: LintConfig) -> Verdict:
    know = knowledge()
    target = resolve_target(config, launch.release_hint, know)
    release = target.release
    verdict = model_verdict(launch, know, extra_models=config.extra_models, model_dirs=config.model_dirs)
    options = {name: setting for name, setting in launch.options.items()
               if form.accepted(setting, launch, release, know)}
    found: list[Finding] = []
    found += run_checks(launch, options, release, config.gpu, verdict, know)
    found += form.form_findings(launch, release, know)
    unresolved = unresolved_model_finding(launch, options, verdict)
    if unresolved is not None:
        found.append(unresolved)
    reason = target.reason + " (SGLang)"
    selected = [replace(f, release=release.version, release_reason=reason)
                for f in _dedupe(f for f in found if config.is_enabled(f.code))]
    return Verdict(launch, target, verdict.detail, tuple(selected))  # type: ignore[arg-type]
