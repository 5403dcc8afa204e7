"""From a :class:`~flake8_replayssm.model.Launch` to the values vLLM's validator sees.

vLLM does not judge what the user typed but what it derives from it: prefix
caching takes a per-release default, the mamba cache mode is re-derived from
prefix caching, the model runner depends on the environment and on the
speculative method, ``--kv-offloading-size`` creates a KV connector.  This
module mirrors those derivations for one release.

Where a launch leaves something unknown (a model in a variable, ``"$@"``), each
possible value becomes a *scenario*; the validator reports a code only if it
fails in every scenario, so an unknown never causes a finding by itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ...architectures import architecture_kind
from ...model import UNKNOWN, Launch, Setting
from ...validation import choices, combinations, dimension_table, dimensions_of
from .knowledge import Knowledge, Release

#: fact name -> note added to a message when that fact came from a default
DEFAULT_NOTES = {
    "v2": "VLLM_USE_V2_MODEL_RUNNER is unset, and vLLM {version} then uses Model Runner V2 on {platform}",
    "prefix_caching": "prefix caching is not set, and vLLM {version} turns it {pc_word} for this model",
    "backend": "--mamba-backend defaults to triton",
    # a value vLLM derives, named in its message though the launch never wrote it
    "cache_mode": "the launch does not set --mamba-cache-mode {mode}: vLLM {version} derives it from prefix "
                  "caching being {pc_word}{pc_how}",
}

#: candidate values for an unknown speculative method (one keeps V2 in every
#: release, the others fall back to V1 in some)
_UNKNOWN_SPEC_METHODS = ("eagle", "ngram", "suffix")


#: which scenario dimensions each fact depends on: a check is enumerated only over
#: the dimensions its condition can see, which keeps open-ended launches cheap
FACT_DIMENSIONS = dimension_table("""
    architecture:        architecture
    supported:           architecture
    kimi:                architecture
    use_replayssm:       use_replayssm
    spec:                spec
    query_len:           spec
    backend:             backend
    prefix_caching:      architecture pc_explicit
    cache_mode:          architecture pc_explicit user_mode
    mode_arg:            user_mode
    env_v2_forced:       env_v2
    v2_unsupported:      architecture dbo executor logits_processors parallel_drafting pc_explicit pp spec
    v2_unsupported:      user_mode
    v2:                  architecture compile_mode dbo env_v2 executor logits_processors parallel_drafting
    v2:                  pc_explicit pp runner_guess spec user_mode
    kv:                  kv
    buffer_len:          buffer_len
    pp:                  pp
    stochastic_rounding: stochastic_rounding
    block_size_conflict: block_size
""")


def dimensions_for(fact_names: Iterable[str]) -> frozenset[str]:
    return dimensions_of(FACT_DIMENSIONS, fact_names)


@dataclass
class Scenario:
    """One concrete reading of a launch: the facts the checks' conditions read."""

    facts: dict[str, Any]
    defaults: set[str] = field(default_factory=set)


def false_key_applies(release: Release, entry: str, spelling: str) -> bool:
    """Whether ``key: false`` in a --config YAML reaches vLLM as ``--no-key``.

    0.27 drops every false key; from 0.28 a false key becomes ``--no-KEY`` only
    when the parser that loads the file has that option, which for the ``vllm``
    console script's sub-commands (loaded by the top-level parser) is never, and
    for a ``python -m`` module's own parser only for dash-spelled keys
    (argparse_utils.py:576 in 0.28).
    """
    if release.yaml_false == "dropped-everywhere" or entry not in ("api_server", "module"):
        return False
    return "_" not in spelling


def effective_options(launch: Launch, release: Release) -> dict[str, Setting]:
    """The launch's options as ``release`` reads them (YAML false keys included)."""
    options = dict(launch.options)
    for setting in launch.yaml_false:
        if setting.name not in options and false_key_applies(release, launch.entry, setting.spelling):
            options[setting.name] = setting
    pc = options.get("enable_prefix_caching")
    if pc is not None and accepted(pc, release) is None:
        del options["enable_prefix_caching"]
    return options


def _value(launch: Launch, options: Mapping[str, Setting], name: str, absent: Any = None) -> Any:
    """The value of ``name``; UNKNOWN if unset in an open-ended launch."""
    setting = options.get(name)
    if setting is None:
        return UNKNOWN if launch.open_ended else absent
    return setting.value


def _int_or_unknown(value: Any) -> Any:
    if value is UNKNOWN or value is None:
        return value
    if isinstance(value, bool):
        return UNKNOWN
    try:
        return int(value)
    except (TypeError, ValueError):
        return UNKNOWN


def spec_candidates(launch: Launch, options: Mapping[str, Setting],
                    draft_method: str | None = None) -> list[tuple[int, str | None]]:
    """(num_speculative_tokens, method) pairs the launch may mean.

    ``draft_method`` is what vLLM infers from the draft model's own config when no method is
    given (the validator resolved the draft through the model table: a plain causal LM is
    ``draft_model``)."""
    config = _value(launch, options, "speculative_config")
    tokens = _int_or_unknown(_value(launch, options, "spec_tokens"))
    method = _value(launch, options, "spec_method")
    if config is UNKNOWN:
        return [(0, None)] + [(k, m) for k in (1, 4, 32) for m in _UNKNOWN_SPEC_METHODS]
    if isinstance(config, dict):
        if config.get("num_speculative_tokens", None) is not None:
            tokens = _int_or_unknown(config["num_speculative_tokens"])
        elif tokens is None:
            tokens = UNKNOWN  # taken from the draft model's n_predict
        method = config.get("method", method)
    elif tokens is None and method is None and _value(launch, options, "spec_model") is None:
        return [(0, None)]
    if tokens is None:
        tokens = UNKNOWN
    token_choices = [tokens] if tokens is not UNKNOWN else [1, 4, 32]
    token_choices = [t for t in token_choices if isinstance(t, int) and t > 0] or [1]
    if method is None:
        draft = config.get("model") if isinstance(config, dict) else _value(launch, options, "spec_model")
        method = infer_spec_method(draft) or draft_method
    if method is UNKNOWN or not isinstance(method, str):
        methods: Sequence[str | None] = _UNKNOWN_SPEC_METHODS
    else:
        methods = [method]
    return [(k, m) for k in token_choices for m in methods]


def infer_spec_method(model: Any) -> str | None:
    """The method vLLM infers from a draft model's name (config/speculative.py), if it can.

    Names decide for n-gram, EAGLE, DFlash and DSpark drafts; anything else is
    decided by the draft's own config (draft_model, MTP, Medusa, ...), which the
    linter does not read, so it stays unknown.
    """
    if not isinstance(model, str):
        return None
    name = model.lower()
    if name in ("ngram", "[ngram]"):
        return "ngram"
    for marker, method in (("eagle-", "eagle"), ("eagle3", "eagle3"), ("dflash", "dflash"),
                           ("dspark", "dspark")):
        if marker in name:
            return method
    return None


def kv_candidates(launch: Launch, options: Mapping[str, Setting], know: Knowledge) -> list[bool]:
    config = _value(launch, options, "kv_transfer_config")
    offloading = _value(launch, options, "kv_offloading_size")
    if offloading is UNKNOWN:
        offload_choices = [False, True]
    else:
        offload_choices = [offloading is not None and offloading != 0]
    if config is UNKNOWN:
        config_choices = [False, True]
    elif isinstance(config, dict):
        connector, role = config.get("kv_connector"), config.get("kv_role")
        if connector is UNKNOWN or role is UNKNOWN:
            config_choices = [False, True]
        else:
            config_choices = [connector is not None and role in know.kv_instance_roles]
    else:
        config_choices = [False]
    return sorted({a or b for a in offload_choices for b in config_choices})


def effective_cache_mode(release: Release, user_mode: str | None, prefix_caching: bool,
                         architecture: str, kind: str) -> str:
    """mamba_cache_mode as the validator sees it (model_executor/models/config.py)."""
    if kind == "transformer":  # MambaModelConfig never runs: the value stays as given
        if release.cache_mode_deprecated:
            return "none"
        return user_mode or "none"
    if release.cache_mode == "follows-prefix-caching" or not prefix_caching:
        return "align" if prefix_caching else "none"
    keeps_all = architecture in release.cache_mode_all_classes
    if user_mode == "all":
        return "all" if keeps_all else "align"
    if release.cache_mode == "none-becomes-all" and user_mode in (None, "none"):
        return "all" if keeps_all else "align"
    return "align"


def v2_unsupported_features(release: Release, spec: int, method: str | None, cache_mode: str,
                            runner_facts: Mapping[str, Any]) -> list[str]:
    """What Model Runner V2 cannot run (config/vllm.py _get_v2_model_runner_unsupported_features)."""
    features = []
    if spec > 0 and (method in release.v1_spec_methods
                     or (release.v2_spec_methods and method not in release.v2_spec_methods)):
        features.append(f"speculative method '{method}'")
    features += [feature for condition, feature in release.v1_conditions if condition(runner_facts)]
    if release.v1_cache_mode_all and cache_mode == "all":
        features.append("mamba cache mode 'all'")
    return features


def runner_is_v2(release: Release, env_value: str | None, unsupported: Sequence[str]) -> bool:
    """use_v2_model_runner on CUDA (config/vllm.py property of that release)."""
    if release.runner == "v1":
        return False
    if env_value is not None:
        return env_value == "1"
    return not unsupported


def _bool_choices(value: Any, absent: bool = False) -> list[bool]:
    if value is UNKNOWN:
        return [absent, not absent]
    if value is None:
        return [absent]
    return [bool(value)]


def _env_choices(launch: Launch) -> list[str | None]:
    setting = launch.env.get("VLLM_USE_V2_MODEL_RUNNER")
    if setting is None:
        return ["0", "1"] if launch.env_open_ended else [None]
    value = setting.value
    if value is UNKNOWN or value not in ("0", "1"):
        return ["0", "1"]
    return [value]


def accepted(setting: Setting | None, release: Release) -> Setting | None:
    """The setting, unless this release rejects its spelling (then vLLM never sees it)."""
    if setting is None:
        return None
    if is_disable_alias(setting.spelling) and not release.disable_aliases:
        return None
    return setting


def is_disable_alias(spelling: str) -> bool:
    """``--disable-X`` for an ``--enable-X`` flag (EnableDisableAction, 0.33+)."""
    return spelling.replace("_", "-").startswith("--disable-")


@dataclass
class Dimensions:
    """The values each unknown of a launch may take on one release (worked out once per
    launch, then enumerated per code over only the dimensions its checks read)."""

    values: dict[str, list[Any]]
    backend_given: bool
    max_len: Any


def scenarios(launch: Launch, release: Release, platform: str, architectures: Sequence[str],
              know: Knowledge, vary: frozenset[str] | None = None,
              draft_method: str | None = None, prepared: Dimensions | None = None) -> Iterator[Scenario]:
    """Every concrete reading of ``launch`` on ``release``, likeliest-valid first.

    Only the dimensions in ``vary`` (all when None) take all their values; the
    others keep their first, which is enough for conditions that cannot see them.
    ``prepared`` is :func:`dimensions` of the same launch, when the caller has it.
    """
    prepared = prepared or dimensions(launch, release, architectures, know, draft_method)
    return readings(prepared, release, platform, vary)


def dimensions(launch: Launch, release: Release, architectures: Sequence[str], know: Knowledge,
               draft_method: str | None = None) -> Dimensions:
    """What each unknown of ``launch`` may be on ``release``."""
    options = effective_options(launch, release)

    def value(name: str, absent: Any = None) -> Any:
        return _value(launch, options, name, absent)

    pc_value = value("enable_prefix_caching")
    mode_value = value("mamba_cache_mode")
    if isinstance(mode_value, str) and mode_value not in release.cache_mode_choices:
        mode_value = None  # rejected by argparse / the Literal (RSM104), as if not given
    backend_value = value("mamba_backend")
    buffer_value = _int_or_unknown(value("replayssm_buffer_len"))
    pp_value = _int_or_unknown(value("pipeline_parallel_size"))
    block_value = _int_or_unknown(value("mamba_block_size"))
    max_len_value = _int_or_unknown(value("max_model_len"))
    spec_config = value("speculative_config")
    drafting = spec_config.get("parallel_drafting", False) if isinstance(spec_config, dict) else (
        UNKNOWN if spec_config is UNKNOWN else False)
    executor = value("distributed_executor_backend")
    compilation = value("compilation_config")
    compile_mode = compilation.get("mode", compilation.get("level")) if isinstance(compilation, dict) \
        else (UNKNOWN if compilation is UNKNOWN else None)
    use_value = value("use_replayssm", absent=False)

    dims = {
        "architecture": list(architectures),
        "use_replayssm": _bool_choices(use_value),
        "spec": spec_candidates(launch, options, draft_method),
        "backend": choices(backend_value if backend_value is not None else know.default_backend,
                           know.valid_backends),
        "pc_explicit": [None] if pc_value is None else _bool_choices(pc_value),
        "user_mode": choices(mode_value, (None,) + release.cache_mode_choices),
        "env_v2": _env_choices(launch),
        "kv": kv_candidates(launch, options, know),
        "buffer_len": choices(buffer_value if buffer_value is not None else know.default_buffer_len,
                              (know.default_buffer_len, 1, 64)),
        "pp": choices(pp_value if pp_value is not None else 1, (1, 2)),
        "stochastic_rounding": _bool_choices(value("enable_mamba_cache_stochastic_rounding")),
        "block_size": choices(block_value, (None, 128)),
        "dbo": _bool_choices(value("enable_dbo")),
        "executor": choices(executor, (None, "external_launcher")),
        "parallel_drafting": _bool_choices(drafting),
        "compile_mode": choices(_int_or_unknown(compile_mode), (None, 1)),
        "logits_processors": _bool_choices(value("logits_processors")),
        "runner_guess": [False, True],
    }
    return Dimensions(dims, backend_value is not None, max_len_value)


def readings(prepared: Dimensions, release: Release, platform: str,
             vary: frozenset[str] | None) -> Iterator[Scenario]:
    """The scenarios of prepared dimensions (see :func:`scenarios`)."""
    dims = prepared.values
    max_len_value = prepared.max_len
    for d in combinations(dims, vary):
        arch = d["architecture"]
        kind = architecture_kind(arch)
        defaults: set[str] = set()
        pc = d["pc_explicit"]
        if pc is None:
            pc = release.prefix_caching_default[kind]
            defaults.add("prefix_caching")
        spec, method = d["spec"]
        backend = str(d["backend"]).lower()
        if not prepared.backend_given:
            defaults.add("backend")
        cache_mode = effective_cache_mode(release, d["user_mode"], pc, arch, kind)
        if d["user_mode"] is None:
            defaults.add("cache_mode")
        runner_facts = {"dbo": d["dbo"], "executor": d["executor"], "pp": d["pp"],
                        "parallel_drafting": bool(d["parallel_drafting"]), "method": method,
                        "compile_mode": d["compile_mode"],
                        "logits_processors": bool(d["logits_processors"])}
        unsupported = v2_unsupported_features(release, spec, method, cache_mode, runner_facts)
        v2 = runner_is_v2(release, d["env_v2"], unsupported)
        if d["env_v2"] is None and release.runner != "v1" \
                and any(condition(runner_facts) for condition in release.runner_unknown_conditions):
            v2 = d["runner_guess"]
        elif d["runner_guess"]:
            continue  # the guess only matters where the runner cannot be told
        if d["env_v2"] is None:
            defaults.add("v2")
        block = d["block_size"]
        facts = {
            "env_v2_forced": d["env_v2"] == "1",
            "v2_unsupported": ", ".join(unsupported),
            "architecture": arch,
            "use_replayssm": d["use_replayssm"],
            "supported": release.supports(arch, platform),
            "kimi": arch in release.kimi,
            "spec": spec,
            "query_len": 1 + spec,
            "backend": backend,
            "prefix_caching": pc,
            "cache_mode": cache_mode,
            "mode_arg": d["user_mode"],
            "v2": v2,
            "kv": d["kv"],
            "buffer_len": d["buffer_len"],
            "pp": d["pp"],
            "stochastic_rounding": d["stochastic_rounding"],
            "block_size_conflict": block is not None and block != max_len_value,
        }
        yield Scenario(facts, defaults)


def default_note(fact: str, scenario: Scenario, release: Release, platform: str) -> str | None:
    if fact not in scenario.defaults:
        return None
    return DEFAULT_NOTES[fact].format(
        version=release.version,
        platform={"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU"}.get(platform, platform),
        pc_word="on" if scenario.facts["prefix_caching"] else "off",
        pc_how=" (its default for this model)" if "prefix_caching" in scenario.defaults else "",
        mode=scenario.facts.get("cache_mode", ""),
    )
