"""The vLLM facts the linter encodes, loaded once from the packaged TOML files.

Everything release-specific lives in ``data/releases.toml`` and everything about
option spellings in ``data/options.toml`` (both in this engine's folder); this module only reads them into
typed objects, so that a new vLLM release is a data change.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Mapping

from ...conditions import Condition, compile_condition
from ...data_files import read_data
from ...validation import Check, check_from_table
from ...versions import normalize_version, resolve_extends, version_key

PLATFORMS = ("cuda", "rocm", "xpu")


@dataclass(frozen=True)
class Release:
    """How one vLLM release treats a ReplaySSM launch."""

    version: str
    profile: str
    source: str
    supported: Mapping[str, frozenset[str]]
    kimi: frozenset[str]
    prefix_caching_default: Mapping[str, bool]
    cache_mode: str
    cache_mode_all_classes: frozenset[str]
    cache_mode_choices: tuple[str, ...]
    cache_mode_deprecated: bool
    runner: str
    v1_spec_methods: frozenset[str]
    v2_spec_methods: frozenset[str]
    v1_cache_mode_all: bool
    v1_conditions: tuple[tuple[Condition, str], ...]
    runner_unknown_conditions: tuple[Condition, ...]
    disable_aliases: bool
    yaml_false: str
    checks: tuple[Check, ...]

    @property
    def key(self) -> tuple[int, ...]:
        return version_key(self.version)

    def supports(self, architecture: str, platform: str) -> bool:
        return architecture in self.supported.get(platform, frozenset())


@dataclass(frozen=True)
class OptionSpec:
    name: str
    kind: str
    short: tuple[str, ...] = ()


@dataclass(frozen=True)
class Knowledge:
    releases: Mapping[str, Release]
    options: Mapping[str, OptionSpec]
    flags_without_value: frozenset[str]
    long_options: tuple[str, ...]
    valid_backends: tuple[str, ...]
    default_backend: str
    default_buffer_len: int
    kv_instance_roles: frozenset[str]
    #: entry points: `vllm SUBCOMMAND` and `python -m MODULE` -> serve/api_server/cli/module
    entry_commands: Mapping[str, str]
    entry_modules: Mapping[str, str]
    cli_module: str
    #: another package's module whose parser is vLLM's plus its own -> the options that give the model
    foreign_modules: Mapping[str, tuple[str, ...]]
    unresolved_stand_ins: tuple[str, ...]
    default_model: str
    default_model_architecture: str
    #: image name (its last path part, without tag) -> the platform it runs on
    image_platforms: Mapping[str, str]

    @cached_property
    def long_option_set(self) -> frozenset[str]:
        return frozenset(self.long_options)

    @cached_property
    def replayssm_options(self) -> tuple[str, ...]:
        """The ReplaySSM flags: a near-miss of one is reported with "did you mean"."""
        return tuple(o for o in self.long_options if "replayssm" in o)

    @property
    def newest(self) -> Release:
        return max(self.releases.values(), key=lambda r: r.key)

    def release(self, version: str) -> Release | None:
        return self.releases.get(normalize_version(version))


def _release(version: str, t: Mapping[str, Any]) -> Release:
    return Release(
        version=version,
        profile=t["profile"],
        source=t["source"],
        supported={p: frozenset(t["supported"].get(p, ())) for p in PLATFORMS},
        kimi=frozenset(t["kimi"]),
        prefix_caching_default=dict(t["prefix_caching_default"]),
        cache_mode=t["cache_mode"],
        cache_mode_all_classes=frozenset(t["cache_mode_all_classes"]),
        cache_mode_choices=tuple(t["cache_mode_choices"]),
        cache_mode_deprecated=bool(t["cache_mode_deprecated"]),
        runner=t["runner"],
        v1_spec_methods=frozenset(t["v1_spec_methods"]),
        v2_spec_methods=frozenset(t.get("v2_spec_methods", ())),
        v1_cache_mode_all=bool(t["v1_cache_mode_all"]),
        v1_conditions=tuple((compile_condition(c["when"]), c["feature"]) for c in t["v1_conditions"]),
        runner_unknown_conditions=tuple(compile_condition(c) for c in t["runner_unknown_conditions"]),
        disable_aliases=bool(t["disable_aliases"]),
        yaml_false=t["yaml_false"],
        checks=tuple(check_from_table(c, applies="replayssm", at="use_replayssm") for c in t["checks"]),
    )


@lru_cache(maxsize=1)
def knowledge() -> Knowledge:
    """Load and cache the packaged data (once per process; safe under fork and spawn)."""
    releases_raw = read_data("engines/vllm/data/releases.toml")
    options_raw = read_data("engines/vllm/data/options.toml")
    merged = resolve_extends(releases_raw["releases"], "releases.toml")
    options = {
        name: OptionSpec(name, spec["kind"], tuple(spec.get("short", ())))
        for name, spec in options_raw["options"].items()
    }
    return Knowledge(
        releases={v: _release(v, t) for v, t in merged.items()},
        options=options,
        flags_without_value=frozenset(options_raw["argv"]["flags_without_value"]),
        long_options=tuple(options_raw["abbreviations"]["long_options"]),
        valid_backends=tuple(options_raw["backends"]["valid"]),
        default_backend=options_raw["backends"]["default"],
        default_buffer_len=int(options_raw["buffer"]["default"]),
        kv_instance_roles=frozenset(options_raw["kv_roles"]["instance"]),
        entry_commands=dict(options_raw["entry_points"]["commands"]),
        entry_modules=dict(options_raw["entry_points"]["modules"]),
        cli_module=options_raw["entry_points"]["cli_module"],
        foreign_modules={module: tuple(entry["model_options"])
                         for module, entry in options_raw["entry_points"].get("foreign_modules", {}).items()},
        unresolved_stand_ins=tuple(releases_raw["model_kinds"]["unresolved_stand_ins"]),
        default_model=releases_raw["model_kinds"]["default_model"],
        default_model_architecture=releases_raw["model_kinds"]["default_model_architecture"],
        image_platforms=dict(options_raw["images"]["platforms"]),
    )
