"""SGLang's facts, loaded once from ``data/sglang.toml``, ``data/sglang_argv.toml`` and
``data/sglang_router_argv.toml`` (the options sglang-router's launcher adds).

Like the vLLM side (:mod:`flake8_replayssm.knowledge`), everything that changes
from one release to the next is data; this module only types it.  A check
applies to the releases from its ``since`` to its ``until``, so a release's
checks are the ones whose range holds it, in the file's (SGLang's) order.

The argv table's ``[argv.nargs_by_release]`` (where a release's nargs differ from the
newest's) is empty for every known release; the argv walk runs before the release is
known, so it reads ``[argv.nargs]`` alone, and a test fails when a release starts to differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from ...conditions import Condition, compile_condition
from ...data_files import read_data
from ...validation import Check, check_from_table
from ...versions import in_range, resolve_extends, version_key


@dataclass(frozen=True)
class OverrideCase:
    """What one branch of a model override sets (None: leaves it alone)."""

    when: Condition
    attention_backend: str | None = None
    #: replaces a written --page-size
    page_size: int | None = None
    #: only when --page-size is not written
    default_page_size: int | None = None
    #: what --mamba-radix-cache-strategy auto becomes
    auto_strategy: str | None = None


@dataclass(frozen=True)
class ModelOverride:
    """A per-model override of SGLang's (``_register_for``) that picks the attention backend and
    page size on Blackwell when ``--attention-backend`` is not written (``[[model_overrides]]``)."""

    id: str
    archs: frozenset[str]
    when: Condition
    cases: tuple[OverrideCase, ...]
    #: the values arrive after the no_buffer asserts (only the Mamba radix cache reads them)
    after_checks: bool = False
    since: str | None = None
    until: str | None = None


@dataclass(frozen=True)
class Release:
    """How one SGLang release treats a ReplaySSM launch."""

    version: str
    source: str
    linear_attn_backends: tuple[str, ...]
    kimi_decode_override: bool
    sm100_skips_helion: bool
    radix_archs: frozenset[str]
    extra_buffer_archs: frozenset[str]
    checks: tuple[Check, ...]
    #: architectures the model loader refuses in this release (no EntryClass, no compatible fallback)
    unregistered_archs: frozenset[str] = frozenset()
    #: the model overrides of this release, in SGLang's order
    overrides: tuple[ModelOverride, ...] = ()
    #: when SGLang's generic SM100 default for MHA models is trtllm_mha (else flashinfer)
    sm100_trtllm: Condition | None = None

    @property
    def key(self) -> tuple[int, ...]:
        return version_key(self.version)


@dataclass(frozen=True)
class Option:
    """A ServerArgs field the linter reads: its kind and the CLI names that set it."""

    name: str
    kind: str  # bool, int, str, model
    cli: tuple[str, ...]
    default: Any = None
    choices: tuple[str, ...] = ()
    #: the field another name stands for (0.5.16's enable_gdn_replayssm_spec)
    same_as: str | None = None
    keyword_since: str | None = None
    keyword_until: str | None = None
    #: values accepted besides the release's linear-attn backends (a backend option's own)
    extra_choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Spelling:
    """A CLI spelling that exists only in some releases, or is deprecated."""

    text: str
    option: str
    since: str | None
    until: str | None
    deprecated_since: str | None
    instead: str | None
    instead_before: str | None


@dataclass(frozen=True)
class Models:
    unresolved_stand_ins: tuple[str, ...]
    gdn: frozenset[str]
    kda: frozenset[str]
    no_effect: frozenset[str]
    effect_unknown: frozenset[str]
    radix_by_layer_types: frozenset[str]
    kimi_decode_override: frozenset[str]
    blackwell_attention_unknown: frozenset[str]
    hybrid_swa: frozenset[str]


@dataclass(frozen=True)
class RouterOptions:
    """The options ``python -m sglang_router.launch_server`` adds to ServerArgs' (its own
    parser: RouterArgs with the ``router-`` prefix; data/sglang_router_argv.toml)."""

    #: the sglang-router release they were read from
    release: str
    long_options: frozenset[str]
    valueless: frozenset[str]
    nargs: Mapping[str, str | int]
    choices: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Knowledge:
    name: str
    package: str
    image: str
    first_release: str
    positional_model_since: str
    releases: Mapping[str, Release]
    models: Models
    options: Mapping[str, Option]
    spellings: Mapping[str, Spelling]
    proposal_names: Mapping[str, str]
    long_options: tuple[str, ...]
    valueless: frozenset[str]
    #: every CLI spelling the linter interprets -> its option
    by_cli: Mapping[str, Option]
    #: argparse's nargs of the options that take other than one word ("+", "*", "?", N)
    nargs: Mapping[str, str | int]
    #: the list options whose words argparse converts: option -> "int" or "float"
    list_types: Mapping[str, str]
    #: the first / last release of the options that are not in every release
    option_since: Mapping[str, str]
    option_until: Mapping[str, str]
    router: RouterOptions

    @property
    def replayssm_options(self) -> tuple[str, ...]:
        """The ReplaySSM flags (every release's spellings): a near-miss of one is reported with
        "did you mean"."""
        return tuple(flag for flag in self.by_cli if "replayssm" in flag and flag not in self.proposal_names)

    @property
    def blackwell_override_archs(self) -> frozenset[str]:
        """Every architecture whose attention backend on Blackwell an override (or the unknown
        list) decides when ``--attention-backend`` is not written."""
        archs = {a for r in self.releases.values() for o in r.overrides for a in o.archs}
        return frozenset(archs) | self.models.blackwell_attention_unknown

    @property
    def newest(self) -> Release:
        return max(self.releases.values(), key=lambda r: r.key)


def _option(name: str, t: Mapping[str, Any]) -> Option:
    return Option(
        name=name,
        kind=t["kind"],
        cli=tuple(t.get("cli", ["--" + name.replace("_", "-")])),
        default=t.get("default"),
        choices=tuple(t.get("choices", ())),
        same_as=t.get("same_as"),
        keyword_since=t.get("keyword_since"),
        keyword_until=t.get("keyword_until"),
        extra_choices=tuple(t.get("extra_choices", ())),
    )


def _override(t: Mapping[str, Any]) -> ModelOverride:
    cases = tuple(OverrideCase(compile_condition(c["when"]), c.get("attention_backend"), c.get("page_size"),
                               c.get("default_page_size"), c.get("auto_strategy")) for c in t["cases"])
    return ModelOverride(t["id"], frozenset(t["archs"]), compile_condition(t["when"]), cases,
                         bool(t.get("after_checks", False)), t.get("since"), t.get("until"))


def _release(version: str, t: Mapping[str, Any], checks: tuple[Check, ...], overrides: tuple[ModelOverride, ...],
             defaults: tuple[tuple[Condition, str | None, str | None], ...]) -> Release:
    return Release(
        version=version,
        source=t["source"],
        linear_attn_backends=tuple(t["linear_attn_backends"]),
        kimi_decode_override=bool(t["kimi_decode_override"]),
        sm100_skips_helion=bool(t["sm100_skips_helion"]),
        radix_archs=frozenset(t["radix_archs"]),
        extra_buffer_archs=frozenset(t["extra_buffer_archs"]),
        unregistered_archs=frozenset(t.get("unregistered_archs", ())),
        checks=tuple(c for c in checks if in_range(version, c.since, c.until)),
        overrides=tuple(o for o in overrides if in_range(version, o.since, o.until)),
        sm100_trtllm=next((c for c, since, until in defaults if in_range(version, since, until)), None),
    )


@lru_cache(maxsize=1)
def knowledge() -> Knowledge:
    """Load and cache the packaged SGLang data (once per process)."""
    raw = read_data("engines/sglang/data/sglang.toml")
    argv = read_data("engines/sglang/data/sglang_argv.toml")["argv"]
    router = read_data("engines/sglang/data/sglang_router_argv.toml")["router"]
    checks = tuple(check_from_table(c) for c in raw["checks"])
    overrides = tuple(_override(t) for t in raw["model_overrides"])
    defaults = tuple((compile_condition(t["trtllm_mha"]), t.get("since"), t.get("until"))
                     for t in raw["sm100_default_attention"])
    merged = resolve_extends(raw["releases"], "sglang.toml")
    models = raw["models"]
    options = {name: _option(name, t) for name, t in raw["options"].items()}
    spellings = {text: Spelling(text, t["option"], t.get("since"), t.get("until"), t.get("deprecated_since"),
                                t.get("instead"), t.get("instead_before"))
                 for text, t in raw["spellings"].items()}
    by_cli = {flag: option for option in options.values() for flag in option.cli}
    by_cli.update((s.text, options[s.option]) for s in spellings.values())
    return Knowledge(
        name=raw["engine"]["name"],
        package=raw["engine"]["package"],
        image=raw["engine"]["image"],
        first_release=raw["engine"]["first_release"],
        positional_model_since=raw["engine"]["positional_model_since"],
        releases={v: _release(v, t, checks, overrides, defaults) for v, t in merged.items()},
        models=Models(
            unresolved_stand_ins=tuple(models["unresolved_stand_ins"]),
            gdn=frozenset(models["gdn"]),
            kda=frozenset(models["kda"]),
            no_effect=frozenset(models["no_effect"]),
            effect_unknown=frozenset(models["effect_unknown"]),
            radix_by_layer_types=frozenset(models["radix_by_layer_types"]),
            kimi_decode_override=frozenset(models["kimi_decode_override"]),
            blackwell_attention_unknown=frozenset(models["blackwell_attention_unknown"]),
            hybrid_swa=frozenset(models["hybrid_swa"]),
        ),
        options=options,
        spellings=spellings,
        proposal_names=dict(raw["proposal_names"]),
        long_options=tuple(argv["long_options"]),
        valueless=frozenset(argv["valueless"]),
        by_cli=by_cli,
        nargs=dict(argv.get("nargs", {})),
        list_types=dict(argv.get("list_types", {})),
        option_since=dict(argv.get("since", {})),
        option_until=dict(argv.get("until", {})),
        router=RouterOptions(router["release"], frozenset(router["long_options"]), frozenset(router["valueless"]),
                             dict(router.get("nargs", {})),
                             {name: tuple(c) for name, c in router.get("choices", {}).items()}),
    )
