"""Run an SGLang release's checks (``[[checks]]`` of data/sglang.toml): RSM301-RSM309.

As on the vLLM side (:mod:`flake8_replayssm.validator`), SGLang stops at its first
failure but the linter reports every code a launch violates, once each: every
check is evaluated, and the first failing check of each code gives the message.
Unknown parts of the launch are enumerated as scenarios (:mod:`.resolve`), and a code is
reported only when it fails in all of them.  The GPU generation and CUDA version are the
*target*: when they are not set, the launch is judged on each (Hopper and Blackwell; CUDA
12 and 13), and a code that fails on some of them only is reported for those, named in
the message ("[SGLang 0.5.23 on Blackwell]"), as a launch meant to run anywhere must run there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from ...architectures import local_config, resolve_model
from ...model import UNKNOWN, Finding, Launch, Setting, Span
from ...validation import MAX_SCENARIOS, Check
from .knowledge import Knowledge, Release
from .resolve import Scenario, dimensions_for, scenarios

_GPU_NAMES = {"hopper": "Hopper", "blackwell": "Blackwell"}


@dataclass(frozen=True)
class ModelVerdict:
    """Which architectures a launch's model may be, and how we know."""

    architectures: tuple[str, ...]
    resolved: bool
    detail: str
    #: whether the checkpoint has Mamba layers (its config.json's layer_types), when read
    mamba_layers: bool | None = None


def _mamba_layers(model: str, base: Path | None, model_dirs: Sequence[Path]) -> bool | None:
    """``"mamba" in layer_types`` of a local checkpoint's config.json (GraniteMoeHybrid is
    dense or hybrid by its layers, not by its architecture); None when there is none.
    The folder is the one the architecture came from, read under the same confinement."""
    config = local_config(model, model_dirs=model_dirs, base_dir=base)
    layers = config.get("layer_types") if config is not None else None
    return "mamba" in layers if isinstance(layers, list) else None


def model_verdict(launch: Launch, know: Knowledge, *, extra_models: Mapping[str, str],
                  model_dirs: Sequence[Path]) -> ModelVerdict:
    stand_ins = know.models.unresolved_stand_ins
    setting = launch.model
    if setting is None:
        return ModelVerdict(stand_ins, False, "the model is not visible (SGLang needs --model-path)")
    if setting.value is UNKNOWN or not isinstance(setting.value, str):
        return ModelVerdict(stand_ins, False, "the model is not static")
    base = Path(launch.base_dir) if launch.base_dir else None
    resolution = resolve_model(setting.value, extra_models=extra_models, model_dirs=model_dirs, base_dir=base)
    if resolution.architecture is None:
        return ModelVerdict(stand_ins, False, resolution.detail)
    layers = _mamba_layers(setting.value, base, model_dirs) \
        if resolution.architecture in know.models.radix_by_layer_types else None
    return ModelVerdict((resolution.architecture,), True, resolution.detail, layers)


def _flag_span(launch: Launch, options: Mapping[str, Setting], check: Check, facts: Mapping[str, Any]) -> Span:
    """Where a finding goes: the check's own option, else the ReplaySSM flag it is about."""
    for name in (check.at,) if check.at else ():
        if name in options:
            return options[name].span
    replay, spec = options.get("enable_linear_replayssm"), options.get("enable_linear_replayssm_spec")
    first = (spec, replay) if check.applies == "spec" else (replay, spec)
    for setting in first:
        if setting is not None:
            return setting.span
    return launch.anchor


def _applies(check: Check, facts: Mapping[str, Any]) -> bool:
    if check.applies == "replay":
        return bool(facts["replay"])
    if check.applies == "spec":
        return bool(facts["spec"])
    return bool(facts["replay"] or facts["spec"])


_FLAG = re.compile(r"--([a-z0-9][a-z0-9-]*)(?: ([A-Za-z0-9_.]+))?")


def as_keywords(fix: str, know: Knowledge) -> str:
    """A fix for a command line, said for ``Engine(...)`` keywords: ``--page-size 1`` ->
    ``page_size=1``, ``--disable-overlap-schedule`` -> ``disable_overlap_schedule=True``."""
    def keyword(match: re.Match[str]) -> str:
        option = know.by_cli.get("--" + match.group(1))
        if option is None:
            return match.group(0)
        name = option.same_as or option.name
        if option.kind == "bool":
            return f"{name}=True" + (f" {match.group(2)}" if match.group(2) else "")
        value = match.group(2)
        if value is None:
            return f"{name}="
        return f"{name}={value}" if value.lstrip("-").isdigit() else f"{name}={value!r}"

    return _FLAG.sub(keyword, fix)


def _message(check: Check, scenario: Scenario, release: Release, target: str, launch: Launch,
             know: Knowledge) -> str:
    facts = scenario.facts
    text = check.message.format(**facts)
    notes = [scenario.notes[name] for name in sorted(check.when.names) if name in scenario.notes]
    where = f"SGLang {release.version}" + (f" on {target}" if target else "")
    why = f" ({'; '.join(notes)})" if notes else ""
    fix = check.fix.format(**facts)
    if launch.form == "kwargs":  # the user's form: keywords, not flags (SGLang's own text stays)
        fix = as_keywords(fix, know)
    return f"{text} [{where}]{why}; fix: {fix}"


#: the CUDA versions a launch is judged for when neither a setting nor its image says
CUDA_VERSIONS = ("12", "13")
#: "accepted without effect": reported only on the targets where no refusal holds (a message
#: never says that a launch starts where it does not)
NO_EFFECT = "RSM308"


def _target_text(hits: Sequence[tuple[str, str]], gpus: Sequence[str], cudas: Sequence[str]) -> str:
    """Where a code fails, said for a message: "Blackwell", "Blackwell with CUDA 12"."""
    parts = []
    for gpu in gpus:
        on = [cuda for g, cuda in hits if g == gpu]
        if on:
            parts.append(_GPU_NAMES[gpu] + ("" if len(on) == len(cudas) else
                                            " with CUDA " + " or ".join(on)))
    return " and ".join(parts)


def run_checks(launch: Launch, options: Mapping[str, Setting], release: Release, gpu: str | None,
               verdict: ModelVerdict, know: Knowledge, cuda: str | None = None) -> list[Finding]:
    """RSM301-RSM309: the codes that fail in every scenario of the launch, on every target or,
    named, on the targets (GPU, CUDA version) where they do."""
    gpus = [gpu] if gpu else ["hopper", "blackwell"]
    cudas = [cuda] if cuda else list(CUDA_VERSIONS)
    targets = [(g, c) for g in gpus for c in cudas]

    def readings(read: frozenset[str]) -> Iterator[Scenario]:
        return scenarios(launch, options, release, gpus, verdict.architectures, know, vary=dimensions_for(read),
                         mamba_layers=verdict.mamba_layers, cudas=cudas)

    fails = _failures_by_target(release.checks, readings, targets)
    if NO_EFFECT in fails:  # "starts without effect" only where nothing refuses the launch
        check, scenario, where = fails[NO_EFFECT]
        where -= {t for code, (_, _, on) in fails.items() if code != NO_EFFECT for t in on}
        if not where:
            del fails[NO_EFFECT]
    found = []
    for code, (check, scenario, where) in fails.items():
        target = (_GPU_NAMES[gpu] if gpu else "") if where == set(targets) else \
            _target_text(sorted(where, key=targets.index), gpus, cudas)
        found.append(Finding(_flag_span(launch, options, check, scenario.facts), check.code,
                             _message(check, scenario, release, target, launch, know)))
    return found


def _failures_by_target(checks: Sequence[Check], readings: Callable[[frozenset[str]], Iterator[Scenario]],
                        targets: Sequence[tuple[str, str]]) -> dict[str, tuple[Check, Scenario, set[tuple[str, str]]]]:
    """Per code, its first failing check and scenario, and the targets on which it fails in every
    scenario (:func:`~flake8_replayssm.validation.first_failures`, per target in one pass: the
    enumeration of a code stops once every target it can see has a scenario where it passes)."""
    by_code: dict[str, list[Check]] = {}
    for check in checks:
        by_code.setdefault(check.code, []).append(check)
    out: dict[str, tuple[Check, Scenario, set[tuple[str, str]]]] = {}
    for code, group in by_code.items():
        read = frozenset().union(*(c.when.names for c in group)) | {"replay", "spec"}
        seen = dimensions_for(read)
        sees_gpu, sees_cuda = "gpu" in seen, "cuda" in seen

        def key(facts: Mapping[str, Any]) -> tuple[str, str]:
            return (facts["gpu"] if sees_gpu else "*", facts["cuda_version"] if sees_cuda else "*")

        keys = {(g if sees_gpu else "*", c if sees_cuda else "*") for g, c in targets}
        first: dict[tuple[str, str], tuple[Check, Scenario]] = {}
        for count, scenario in enumerate(readings(read)):
            if count >= MAX_SCENARIOS:
                keys = set()  # give up rather than enumerate without bound
                break
            at = key(scenario.facts)
            if at not in keys:
                continue
            check = next((c for c in group if _applies(c, scenario.facts) and c.when(scenario.facts)), None)
            if check is None:
                keys.discard(at)
                if not keys:
                    break
            else:
                first.setdefault(at, (check, scenario))
        where = {t for t in targets if key({"gpu": t[0], "cuda_version": t[1]}) in keys and
                 key({"gpu": t[0], "cuda_version": t[1]}) in first}
        if where:
            check, scenario = next(first[key({"gpu": t[0], "cuda_version": t[1]})] for t in targets if t in where)
            out[code] = (check, scenario, where)
    return out


def unresolved_model_finding(launch: Launch, options: Mapping[str, Setting],
                             verdict: ModelVerdict) -> Finding | None:
    """RSM201: ReplaySSM is on but the model cannot be resolved statically."""
    flag = options.get("enable_linear_replayssm") or options.get("enable_linear_replayssm_spec")
    if verdict.resolved or flag is None or flag.value is not True:
        return None
    return Finding(flag.span, "RSM201", (
        f"{flag.spelling.rstrip('=') or 'ReplaySSM'} with a model that cannot be resolved statically "
        f"({verdict.detail}); its architecture decides whether SGLang accepts the launch; fix: use a "
        "literal model id, or map it in [tool.flake8-replayssm] extra-models"))
