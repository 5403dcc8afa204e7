"""Run a release's checks (data/releases.toml) over a launch: RSM001-RSM009, RSM201.

vLLM stops at its first failing check; a linter is more useful when it reports
every code a launch violates, once each, so every check is evaluated and the
first failing check of each code gives the message.  Unknown parts of the
launch are enumerated as scenarios (:mod:`facts`), and a code is reported only
when it fails in all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...architectures import resolve_model
from .resolve import Dimensions, Scenario, default_note, dimensions, dimensions_for, readings
from ...validation import Check, first_failures
from .knowledge import Knowledge, Release
from ...model import UNKNOWN, Finding, Launch, Span

#: an architecture that no release supports: what ``--model-impl transformers`` selects
TRANSFORMERS_BACKEND = "TransformersForCausalLM"


@dataclass(frozen=True)
class ModelVerdict:
    """Which architectures a launch's model may be, and how we know."""

    architectures: tuple[str, ...]
    resolved: bool
    detail: str
    model: str | None
    #: the speculative method vLLM infers from the draft model's config, when none is given
    draft_method: str | None = None


#: draft architectures vLLM gives a method of its own (EAGLE, MTP, Medusa, DFlash...): anything
#: else that is a model of its own is a ``draft_model`` (config/speculative.py, "Automatically
#: detect the method")
_SPECIAL_DRAFT = ("eagle", "mtp", "medusa", "speculator", "dflash", "dspark", "glimmer")


def draft_method(launch: Launch, *, extra_models: Mapping[str, str], model_dirs: Sequence[Path]) -> str | None:
    """``draft_model`` when the launch names a draft (``{"model": ...}`` / ``--spec-model``) with
    no method, and the draft resolves to a plain causal LM; None when that is not known."""
    config = launch.options.get("speculative_config")
    spec_model = launch.options.get("spec_model")
    draft = config.value.get("model") if config is not None and isinstance(config.value, dict) else (
        spec_model.value if spec_model is not None else None)
    if not isinstance(draft, str) or draft in ("ngram", "[ngram]"):
        return None
    base = Path(launch.base_dir) if launch.base_dir else None
    arch = resolve_model(draft, extra_models=extra_models, model_dirs=model_dirs, base_dir=base).architecture
    if arch is None or any(marker in arch.lower() for marker in _SPECIAL_DRAFT):
        return None
    return "draft_model"


def model_verdict(launch: Launch, know: Knowledge, *, extra_models: Mapping[str, str],
                  model_dirs: Sequence[Path]) -> ModelVerdict:
    """Resolve the served model to architectures: overrides, then the model id (and the
    draft model, for the speculative method vLLM would infer from it)."""
    verdict = _model_verdict(launch, know, extra_models=extra_models, model_dirs=model_dirs)
    method = draft_method(launch, extra_models=extra_models, model_dirs=model_dirs)
    return replace(verdict, draft_method=method) if method else verdict


def _model_verdict(launch: Launch, know: Knowledge, *, extra_models: Mapping[str, str],
                   model_dirs: Sequence[Path]) -> ModelVerdict:
    stand_ins = know.unresolved_stand_ins
    impl = launch.options.get("model_impl")
    if impl is not None and impl.value == "transformers":
        return ModelVerdict((TRANSFORMERS_BACKEND,), True, "--model-impl transformers", None)
    overrides = launch.options.get("hf_overrides")
    if overrides is not None:
        value = overrides.value
        if value is UNKNOWN:
            return ModelVerdict(stand_ins, False, "hf_overrides is not static", None)
        if isinstance(value, dict) and "architectures" in value:
            archs = value["architectures"]
            if isinstance(archs, list) and archs and isinstance(archs[0], str):
                return ModelVerdict((archs[0],), True, "hf_overrides architectures", None)
            return ModelVerdict(stand_ins, False, "hf_overrides architectures is not static", None)
    setting = launch.model
    if setting is None:
        if launch.open_ended:
            return ModelVerdict(stand_ins, False, "the model is not visible", None)
        return ModelVerdict((know.default_model_architecture,), True,
                            f"no model given: vLLM serves its default {know.default_model}",
                            know.default_model)
    elif setting.value is UNKNOWN or not isinstance(setting.value, str):
        return ModelVerdict(stand_ins, False, "the model is not static", None)
    else:
        model = setting.value
    base = Path(launch.base_dir) if launch.base_dir else None
    resolution = resolve_model(model, extra_models=extra_models, model_dirs=model_dirs, base_dir=base)
    if resolution.architecture is None:
        return ModelVerdict(stand_ins, False, resolution.detail, model)
    return ModelVerdict((resolution.architecture,), True, resolution.detail, model)


def _span_for(launch: Launch, check: Check) -> Span:
    setting = launch.options.get(check.at)
    return setting.span if setting is not None else launch.replayssm_span


def _message(check: Check, scenario: Scenario, release: Release, platform: str) -> str:
    facts: dict[str, Any] = dict(scenario.facts)
    text = check.message.format(**facts)
    # a derived value is explained only where vLLM's message names it
    names = [name for name in sorted(check.when.names) if name != "cache_mode" or "--mamba-cache-mode" in text]
    notes = [note for note in (default_note(name, scenario, release, platform) for name in names) if note]
    platform_name = {"rocm": "ROCm", "xpu": "XPU"}.get(platform, platform)
    where = f"vLLM {release.version}" + ("" if platform == "cuda" else f" on {platform_name}")
    stage = f", at {check.stage}" if check.stage else ""
    why = f" ({'; '.join(notes)})" if notes else ""
    return f"{text} [{where}{stage}]{why}; fix: {check.fix.format(**facts)}"


def run_checks(launch: Launch, release: Release, platform: str, verdict: ModelVerdict,
               know: Knowledge) -> list[Finding]:
    """RSM001-RSM009: the codes that fail in every scenario of the launch.

    Each code is enumerated only over the dimensions its checks read, and stops
    at the first scenario where none of its checks fails.  Launches that read the
    same to the validator (a tree of similar launch files) are judged once.
    """
    prepared = dimensions(launch, release, verdict.architectures, know, verdict.draft_method)
    key = (release.version, platform, _frozen(prepared.values), prepared.backend_given, prepared.max_len)
    failing = _JUDGED.get(key)
    if failing is None:
        failing = _failing_checks(release, platform, prepared)
        if len(_JUDGED) >= _JUDGED_SIZE:
            _JUDGED.clear()
        _JUDGED[key] = failing
    return [Finding(_span_for(launch, check), check.code, _message(check, scenario, release, platform))
            for check, scenario in failing]


#: judged launches, by what the validator reads of them (release, platform, dimensions)
_JUDGED: dict[tuple[Any, ...], list[tuple[Check, Scenario]]] = {}
_JUDGED_SIZE = 4096


def _failing_checks(release: Release, platform: str, prepared: Dimensions) -> list[tuple[Check, Scenario]]:
    """Per code, the first check and scenario that fail, if the code fails in every scenario."""
    return first_failures(release.checks, lambda read: readings(prepared, release, platform, dimensions_for(read)),
                          _applies, lambda scenario: scenario.facts, frozenset({"use_replayssm"}))


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a dimension's values (dicts and lists of option values)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if value is UNKNOWN:
        return ("\0unknown",)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return (type(value).__name__, value)


def _applies(check: Check, scenario: Scenario) -> bool:
    return check.applies != "replayssm" or bool(scenario.facts["use_replayssm"])


def unresolved_model_finding(launch: Launch, verdict: ModelVerdict) -> Finding | None:
    """RSM201: ReplaySSM is on but the model cannot be resolved statically."""
    use = launch.options.get("use_replayssm")
    if verdict.resolved or use is None or use.value is not True:
        return None
    return Finding(
        launch.replayssm_span,
        "RSM201",
        f"--use-replayssm with a model that cannot be resolved statically ({verdict.detail}); "
        "its architecture decides whether vLLM accepts the launch; fix: use a literal model id, "
        "or map it in [tool.flake8-replayssm] extra-models",
    )
