"""From an SGLang :class:`~flake8_replayssm.model.Launch` to what SGLang's checks see.

SGLang does not judge what was typed but what its server-argument resolution makes
of it, and three silent resolutions decide most ReplaySSM verdicts (reference §5):

- **S3**, the mamba radix-cache strategy ``auto`` (the default): on a model using
  the mamba radix cache it becomes ``extra_buffer`` while the overlap scheduler is
  on (or pages are larger than 1) and the model supports it on the Triton
  backend, else ``no_buffer`` *and* the overlap scheduler is turned off; an
  explicit ``no_buffer`` leaves the overlap scheduler on;
- **S1/S2**, the decode backend: on Blackwell (SM100) with ``--mamba-ssm-dtype
  bfloat16`` an unset ``--linear-attn-decode-backend`` becomes ``flashinfer``,
  except for Kimi models (0.5.17+), which keep ``triton``;
- **S4**, a decode backend ``flashkda`` inherited from ``--linear-attn-backend``
  falls back to ``triton``.

Two more things change what the checks see: a PD decode server runs without the radix
cache unless ``--disaggregation-decode-enable-radix-cache`` turns it back on (even over a
written ``--disable-radix-cache``), and on Blackwell the models' overrides choose the
attention backend and page size when ``--attention-backend`` is unset (:mod:`.overrides`).

Where the launch leaves something unknown (a model in a variable, ``"$@"``, an
unset CUDA version), each possible value becomes a scenario; a code is reported only when
it fails in every scenario, so an unknown never causes a finding by itself.  The GPU and
CUDA version are the target (:mod:`.checks` judges each and names it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ...architectures import architecture_kind
from ...model import UNKNOWN, Launch, Setting
from ...validation import choices, combinations, dimension_table, dimensions_of
from . import overrides
from .knowledge import Knowledge, Release

_EXTRA = ("extra_buffer", "extra_buffer_lazy")

#: the values an unknown setting may take (enough to tell every check's outcome apart)
UNKNOWN_CHOICES: dict[str, tuple[Any, ...]] = {
    "page_size": (None, 1, 64),
    "attention_backend": (None, "trtllm_mha"),
    "mamba_ssm_dtype": (None, "float32", "bfloat16", "float16"),
    "linear_replayssm_cache_len": (16, 3, 0),
    "speculative_eagle_topk": (None, 1, 4),
    "device": (None, "cpu"),
    "speculative_algorithm": (None, "DFLASH", "EAGLE"),
    "linear_attn_verify_backend": (None, "triton"),
    "ragged": ("static", "cap-accept"),
}

#: which scenario dimensions each fact depends on: a code is enumerated only over the
#: dimensions its checks can see
FACT_DIMENSIONS = dimension_table("""
    replay:                 replay
    spec:                   spec
    architecture:           architecture
    radix_arch:             architecture radix_layers
    radix_disabled:         architecture decode_radix disaggregation radix_disabled radix_layers
    radix:                  architecture decode_radix disaggregation radix_disabled radix_layers
    strategy_given:         strategy_given
    page_size:              architecture attention_backend blackwell_unknown gpu page_size
    page_size:              decode_radix disaggregation radix_disabled spec_algorithm strategy_given topk
    attention_backend:      architecture attention_backend blackwell_unknown gpu page_size
    attention_backend:      decode_radix disaggregation radix_disabled spec_algorithm strategy_given topk
    final_page_size:        architecture attention_backend blackwell_unknown gpu page_size
    final_page_size:        decode_radix disaggregation radix_disabled spec_algorithm strategy_given topk
    strategy:               architecture attention_backend blackwell_unknown decode_radix disaggregation gpu
    strategy:               linear_backend overlap_off page_size radix_disabled radix_layers strategy_given
    strategy:               spec_algorithm topk
    decode:                 architecture decode_given gpu linear_backend ssm_dtype
    prefill:                linear_backend prefill_given
    disaggregation:         disaggregation
    cache_len:              cache_len
    cache_len_power_of_two: cache_len
    topk:                   topk
    ssm_dtype:              ssm_dtype
    ragged_mode:            ragged
    spec_algorithm:         spec_algorithm
    spec_algorithm_raw:     spec_algorithm
    verify_backend:         verify_backend
    unified_memory:         unified_memory
    device:                 device
    effect:                 architecture radix_layers
    gpu:                    gpu
    cuda:                   cuda
    cuda_version:           cuda
    extra_buffer:           architecture attention_backend blackwell_unknown decode_radix disaggregation gpu
    extra_buffer:           linear_backend overlap_off page_size radix_disabled radix_layers strategy_given
    extra_buffer:           spec_algorithm topk
    overlap:                architecture attention_backend blackwell_unknown decode_radix disaggregation gpu
    overlap:                linear_backend overlap_off page_size radix_disabled radix_layers strategy_given
    overlap:                spec_algorithm topk
    attention_resolved:     architecture attention_backend blackwell_unknown gpu page_size
    attention_resolved:     decode_radix disaggregation radix_disabled spec_algorithm strategy_given topk
    spec_algorithm_shown:   spec_algorithm
    unregistered:           architecture
    mamba_state:            architecture radix_layers
    hybrid_swa:             architecture
    draft_tokens:           draft_tokens
    router:                 router
    auto_fix:               architecture attention_backend blackwell_unknown decode_radix disaggregation gpu
    auto_fix:               linear_backend overlap_off page_size radix_disabled radix_layers strategy_given
    auto_fix:               spec_algorithm topk
""")


def dimensions_for(fact_names: Iterable[str]) -> frozenset[str]:
    return dimensions_of(FACT_DIMENSIONS, fact_names)


@dataclass
class Scenario:
    """One concrete reading of a launch: the facts the checks read, and why some hold."""

    facts: dict[str, Any]
    #: fact -> a sentence saying which silent default or resolution produced it
    notes: dict[str, str] = field(default_factory=dict)


def _bools(value: Any) -> list[bool]:
    return [False, True] if value is UNKNOWN else [bool(value)]


def _int(value: Any) -> Any:
    if value is UNKNOWN or value is None or isinstance(value, bool):
        return UNKNOWN if isinstance(value, bool) else value
    try:
        return int(value)
    except (TypeError, ValueError):
        return UNKNOWN


def effect_of(architecture: str, radix_layers: bool | None, release: Release, know: Knowledge) -> str:
    """What ReplaySSM does for this model: "gdn", "kda", "no-effect", "dense" or "unknown"."""
    models = know.models
    if architecture in models.gdn:
        return "gdn"
    if architecture in models.kda:
        return "kda"
    if architecture in models.no_effect:
        return "no-effect"
    if architecture in models.effect_unknown or architecture in release.radix_archs \
            or architecture in release.extra_buffer_archs or architecture_kind(architecture) != "transformer":
        return "unknown"
    return "dense"


def _mamba_state(architecture: str, radix_layers: bool | None, know: Knowledge) -> bool | None:
    """Whether the model has Mamba state (SGLang's mambaish_config): the GDN, KDA and Mamba-2 /
    short-conv hybrids (GraniteMoeHybrid by its layer types); None for the hybrids whose
    checkpoint decides, False for the rest."""
    models = know.models
    if architecture in models.effect_unknown:
        return None
    if architecture in models.gdn or architecture in models.kda or architecture in models.no_effect:
        return radix_layers is not False
    return False if architecture_kind(architecture) == "transformer" else None


def scenarios(launch: Launch, options: Mapping[str, Setting], release: Release, gpus: Sequence[str],
              architectures: Sequence[str], know: Knowledge, vary: frozenset[str] | None = None,
              mamba_layers: bool | None = None, cudas: Sequence[str] = ("12", "13")) -> Iterator[Scenario]:
    """Every concrete reading of ``launch`` on ``release``; ``options`` are those the release accepts.

    Only the dimensions in ``vary`` (all when None) take all their values; the others
    keep their first, which is enough for checks that cannot see them.  ``mamba_layers``
    is what a local config.json says about the model's layer types, if it was read;
    ``gpus`` and ``cudas`` (CUDA major versions) the targets to read it for.
    """
    def value(name: str) -> Any:
        setting = options.get(name)
        if setting is None:
            return UNKNOWN if launch.open_ended else know.options[name].default
        return setting.value

    strategy_value = value("mamba_radix_cache_strategy")
    ragged_env = launch.env.get("SGLANG_RAGGED_VERIFY_MODE")
    if ragged_env is None:
        ragged: Any = UNKNOWN if launch.env_open_ended else "static"
    else:
        ragged = ragged_env.value
    dims: dict[str, list[Any]] = {
        "architecture": list(architectures),
        "radix_layers": [True, False] if mamba_layers is None else [mamba_layers],
        "blackwell_unknown": [None, (None, 1), ("trtllm_mha", 64)],
        "replay": _bools(value("enable_linear_replayssm")),
        "spec": _bools(value("enable_linear_replayssm_spec")),
        "strategy_given": choices(strategy_value, know.options["mamba_radix_cache_strategy"].choices),
        "overlap_off": _bools(value("disable_overlap_schedule")),
        "radix_disabled": _bools(value("disable_radix_cache")),
        "decode_radix": _bools(value("disaggregation_decode_enable_radix_cache")),
        "page_size": choices(_int(value("page_size")), UNKNOWN_CHOICES["page_size"]),
        "attention_backend": choices(value("attention_backend"), UNKNOWN_CHOICES["attention_backend"]),
        "linear_backend": choices(value("linear_attn_backend"), release.linear_attn_backends),
        "prefill_given": choices(value("linear_attn_prefill_backend"), (None,) + release.linear_attn_backends),
        "decode_given": choices(value("linear_attn_decode_backend"), (None,) + release.linear_attn_backends),
        "ssm_dtype": choices(value("mamba_ssm_dtype"), UNKNOWN_CHOICES["mamba_ssm_dtype"]),
        "disaggregation": choices(value("disaggregation_mode"), know.options["disaggregation_mode"].choices),
        "cache_len": choices(_int(value("linear_replayssm_cache_len")),
                             UNKNOWN_CHOICES["linear_replayssm_cache_len"]),
        "topk": choices(_int(value("speculative_eagle_topk")), UNKNOWN_CHOICES["speculative_eagle_topk"]),
        "unified_memory": _bools(value("enable_unified_memory")),
        "device": choices(value("device"), UNKNOWN_CHOICES["device"]),
        "ragged": choices(ragged, UNKNOWN_CHOICES["ragged"]),
        "spec_algorithm": choices(value("speculative_algorithm"), UNKNOWN_CHOICES["speculative_algorithm"]),
        "verify_backend": choices(value("linear_attn_verify_backend"),
                                  UNKNOWN_CHOICES["linear_attn_verify_backend"]),
        "draft_tokens": choices(_int(value("speculative_num_draft_tokens")), (None,)),
        # started by sglang-router's launcher (python -m sglang_router.launch_server)
        "router": [launch.entry == "router"],
        # the target last: it varies fastest, so a code is seen on every target early
        "gpu": list(gpus),
        "cuda": list(cudas),
    }
    for d in combinations(dims, vary):
        arch = d["architecture"]
        layered = arch in know.models.radix_by_layer_types
        if not layered and not d["radix_layers"]:
            continue  # the checkpoint's layers matter only for these models
        if d["blackwell_unknown"] is not None and not (
                d["gpu"] == "blackwell" and arch in know.models.blackwell_attention_unknown
                and d["attention_backend"] is None):
            continue  # an unmodelled choice of the attention backend matters only there
        yield _scenario(d, arch, layered, "mamba_radix_cache_strategy" in options, release, know)


def _scenario(d: dict[str, Any], arch: str, layered: bool, strategy_written: bool, release: Release,
              know: Knowledge) -> Scenario:
    notes: dict[str, str] = {}
    radix_arch = arch in release.radix_archs and (d["radix_layers"] if layered else True)
    # handle_pd_disaggregation: a decode server's radix cache is what
    # --disaggregation-decode-enable-radix-cache says, whatever --disable-radix-cache says
    radix_disabled = not d["decode_radix"] if d["disaggregation"] == "decode" else d["radix_disabled"]
    if d["disaggregation"] == "decode" and d["decode_radix"] and d["radix_disabled"]:
        notes["radix_disabled"] = notes["radix"] = (
            "on a PD decode server --disaggregation-decode-enable-radix-cache turns the radix cache back on, "
            "over --disable-radix-cache")
    d = overrides.apply(dict(d, radix_disabled=radix_disabled), arch, release, notes)
    radix = radix_arch and not radix_disabled
    strategy, overlap, auto_fix = _resolve_strategy(d, arch, radix, release, notes, strategy_written)
    decode = _resolve_decode(d, arch, release, know, notes)
    cache_len = d["cache_len"]
    algorithm = d["spec_algorithm"]
    facts = {
        "replay": d["replay"],
        "spec": d["spec"],
        "architecture": arch,
        "radix_arch": radix_arch,
        "radix": radix,
        "radix_disabled": d["radix_disabled"],
        "strategy_given": d["strategy_given"],
        "strategy": strategy,
        "extra_buffer": not d["radix_disabled"] and strategy in _EXTRA,
        "overlap": overlap,
        "page_size": d["page_size"],
        "final_page_size": d["final_page_size"],
        "attention_backend": d["attention_backend"],
        "decode": decode,
        "disaggregation": d["disaggregation"],
        "cache_len": cache_len,
        "cache_len_power_of_two": isinstance(cache_len, int) and cache_len > 0 and cache_len & (cache_len - 1) == 0,
        "topk": d["topk"],
        "ssm_dtype": d["ssm_dtype"],
        "ragged_mode": d["ragged"],
        "spec_algorithm": (algorithm or "").upper(),
        "spec_algorithm_raw": algorithm,
        "verify_backend": d["verify_backend"],
        "unified_memory": d["unified_memory"],
        "device": d["device"],
        "effect": effect_of(arch, d["radix_layers"] if layered else None, release, know),
        "gpu": d["gpu"],
        "cuda": int(d["cuda"].split(".")[0]),
        "cuda_version": d["cuda"],
        "prefill": d["prefill_given"] or d["linear_backend"],
        "auto_fix": auto_fix,
        "attention_resolved": d["attention_resolved"],
        # SGLang has turned NEXTN into EAGLE by the time its unified-memory check prints it
        "spec_algorithm_shown": "EAGLE" if (algorithm or "").upper() == "NEXTN" else algorithm,
        "unregistered": arch in release.unregistered_archs,
        "mamba_state": _mamba_state(arch, d["radix_layers"] if layered else None, know),
        "hybrid_swa": arch in know.models.hybrid_swa,
        "draft_tokens": d["draft_tokens"],
        "router": d["router"],
    }
    return Scenario(facts, notes)


#: what to write when auto resolves to extra_buffer, by the reason it does
_AUTO_FIX = {
    "overlap": "add --disable-overlap-schedule (auto then resolves to no_buffer), or --disable-radix-cache",
    "page": "drop --page-size (auto resolves to extra_buffer with pages above 1), or --disable-radix-cache",
    "override": "write an --attention-backend (SGLang's Blackwell model override then leaves the page size and "
                "strategy alone) with --disable-overlap-schedule, or --disable-radix-cache",
}


def _resolve_strategy(d: dict[str, Any], arch: str, radix: bool, release: Release, notes: dict[str, str],
                      written: bool) -> tuple[str, bool, str]:
    """S3 (``_mamba_radix_cache_resolution``): the strategy, whether overlap stays on, and what
    to write when ``auto`` became ``extra_buffer``."""
    given = d["strategy_given"]
    overlap = not d["overlap_off"]
    if not radix or given != "auto":
        if radix and given == "no_buffer" and overlap:
            notes["overlap"] = ("an explicit no_buffer leaves the overlap scheduler on; only auto turns "
                                "it off")
        return given, overlap, _AUTO_FIX["overlap"]
    shown = "auto" if written else "is not set, and its default auto"
    if d["auto_strategy"] is not None:  # Nemotron-H's Blackwell override (0.5.19+), with speculative decoding
        notes["extra_buffer"] = (f"--mamba-radix-cache-strategy {shown} becomes {d['auto_strategy']}: "
                                 f"{notes.get('attention_backend', 'a Blackwell model override')}, and with "
                                 "speculative decoding it also sets the strategy")
        return d["auto_strategy"], overlap, _AUTO_FIX["override"]
    paging = isinstance(d["page_size"], int) and d["page_size"] > 1
    if (overlap or paging) and arch in release.extra_buffer_archs and d["linear_backend"] == "triton":
        why = "the overlap scheduler is on" if overlap else "--page-size is above 1"
        fix = "overlap" if overlap else "page"
        if not overlap and d["override"] and "page_size" in notes:
            why, fix = f"the page size is above 1 ({notes['page_size']})", "override"
        notes["extra_buffer"] = (f"--mamba-radix-cache-strategy {shown} resolves to extra_buffer for {arch} "
                                 f"because {why}, although SGLang's help calls no_buffer the default")
        return "extra_buffer", overlap, _AUTO_FIX[fix]
    return "no_buffer", False, _AUTO_FIX["overlap"]


def _resolve_decode(d: dict[str, Any], arch: str, release: Release, know: Knowledge,
                    notes: dict[str, str]) -> str:
    """S2, S1 and S4 (the linear-attn backend handler): the decode backend ReplaySSM sees."""
    given = d["decode_given"]
    base = d["linear_backend"]
    blackwell_bf16 = d["gpu"] == "blackwell" and d["ssm_dtype"] == "bfloat16"
    decode = given
    if decode is None and blackwell_bf16 and release.kimi_decode_override \
            and arch in know.models.kimi_decode_override:
        decode = "triton"  # S2: Kimi keeps triton (ReplaySSM requires it)
    if decode is None and blackwell_bf16 and not (release.sm100_skips_helion and base == "helion"):
        decode = "flashinfer"  # S1
        notes["decode"] = ("on Blackwell (SM100) with --mamba-ssm-dtype bfloat16, SGLang switches an unset "
                           "--linear-attn-decode-backend to flashinfer")
    resolved = decode or base
    if resolved == "flashkda" and given != "flashkda":
        resolved = "triton"  # S4: FlashKDA is prefill-only
    return resolved
