"""Judge launches: pick the release, run the checks, apply the code selection.

This is the one path every file kind shares after its frontend:
launch -> target release -> validator checks + form findings -> selected findings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from .config import LintConfig
from .form import form_findings, value_findings
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


def judge(launch: Launch, config: LintConfig, know: Knowledge | None = None) -> Verdict:
    if launch.engine == "sglang":  # the second engine: its own release, checks and spellings
        from .sglang.judge import judge as judge_sglang

        return judge_sglang(launch, config)
    know = know or knowledge()
    target = resolve_target(config, launch.release_hint, know)
    release = target.release
    verdict = model_verdict(launch, know, extra_models=config.extra_models,
                            model_dirs=config.model_dirs)
    found: list[Finding] = []
    found += run_checks(launch, release, config.platform, verdict, know)
    found += form_findings(launch, release)
    found += value_findings(launch, know)
    unresolved = unresolved_model_finding(launch, verdict)
    if unresolved is not None:
        found.append(unresolved)
    selected = [replace(f, release=release.version, release_reason=target.reason)
                for f in _dedupe(f for f in found if config.is_enabled(f.code))]
    return Verdict(launch, target, verdict.detail, tuple(selected))


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[tuple[object, ...]] = set()
    out = []
    for f in findings:
        key = (f.span.source, f.span.cell, f.span.line, f.span.col, f.code)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
