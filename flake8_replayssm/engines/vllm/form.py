"""Findings about how a launch is written rather than what vLLM's validator says.

RSM101, RSM103 and RSM106 do not depend on the release and are found by the
interpreters (:mod:`argv`, :mod:`kwargs`) while they read the launch; this
module adds the release-dependent ones: RSM102 (a YAML ``false`` that this
release drops), RSM104 (a spelling or value this release does not have) and
RSM105 (a deprecated option that has no effect).
"""

from __future__ import annotations

from .resolve import false_key_applies, is_disable_alias
from .knowledge import Knowledge, Release
from ...model import UNKNOWN, Finding, Launch, Setting

#: the options that exist only from the first release with ReplaySSM
REPLAYSSM_OPTIONS = ("use_replayssm", "replayssm_buffer_len")
#: findings about how a launch is written that hold in every release, old ones too
RELEASE_INDEPENDENT = frozenset({"RSM101", "RSM103"})


def _rsm104_spelling(setting: Setting, release: Release) -> Finding | None:
    if not is_disable_alias(setting.spelling) or release.disable_aliases:
        return None
    alternative = "--no-enable-prefix-caching" if setting.name == "enable_prefix_caching" else ""
    fix = f"; fix: use {alternative}" if alternative else ""
    return Finding(
        setting.span, "RSM104",
        f"{setting.spelling} does not exist in vLLM {release.version} (argparse rejects it: "
        f"unrecognized arguments){fix}",
    )


def _cache_mode_findings(launch: Launch, setting: Setting, release: Release) -> Finding | None:
    value = setting.value
    if not isinstance(value, str):
        return None
    choices = release.cache_mode_choices
    rejected = value not in choices
    if rejected and not (launch.form == "kwargs" and release.cache_mode_deprecated):
        shown = ", ".join(repr(c) for c in choices)
        how = ("argument --mamba-cache-mode: invalid choice" if launch.form == "argv"
               else "mamba_cache_mode must be one of the CacheConfig choices")
        fix = "drop it (it has no effect in this release)" if release.cache_mode_deprecated else \
            "use --mamba-cache-mode align" + (" or drop it" if "all" not in choices else "")
        return Finding(  # at the flag, where the user reads the option, not at its value
            setting.span, "RSM104",
            f"{how}: {value!r} (choose from {shown}) [vLLM {release.version}]; fix: {fix}",
        )
    if release.cache_mode_deprecated:
        return Finding(
            setting.span, "RSM105",
            f"{setting.spelling or 'mamba_cache_mode'} is deprecated and has no effect in vLLM "
            f"{release.version}: Mamba prefix caching follows --enable-prefix-caching; "
            "fix: drop it (use --disable-prefix-caching to turn prefix caching off)",
        )
    return None


def value_findings(launch: Launch, know: Knowledge) -> list[Finding]:
    """Values vLLM rejects before its validator runs, whatever the release."""
    findings: list[Finding] = []
    options = launch.options
    backend = options.get("mamba_backend")
    if backend is not None and isinstance(backend.value, str) \
            and backend.value.lower() not in know.valid_backends:
        valid = ", ".join(b.upper() for b in know.valid_backends)
        findings.append(Finding(
            backend.span, "RSM106",
            f"Unknown Mamba SSU backend: {backend.value.upper()!r}. Valid options are: {valid}; "
            "fix: use --mamba-backend triton or flashinfer"))
    buffer = options.get("replayssm_buffer_len")
    if buffer is not None and isinstance(buffer.value, int) and buffer.value <= 0:
        findings.append(Finding(
            buffer.span, "RSM007",
            f"replayssm_buffer_len must be greater than 0 (CacheConfig), got {buffer.value}; "
            "fix: use a length from 1 + the speculative tokens up to 16"))
    block = options.get("mamba_block_size")
    if block is not None and isinstance(block.value, int) and block.value <= 0:
        findings.append(Finding(
            block.span, "RSM106",
            f"mamba_block_size must be greater than 0 (CacheConfig), got {block.value}; "
            "fix: drop it or give a positive size"))
    kv = options.get("kv_transfer_config")
    if kv is not None and isinstance(kv.value, dict) and kv.value.get("kv_connector") not in (None, UNKNOWN) \
            and kv.value.get("kv_role", None) is None:
        findings.append(Finding(
            kv.span, "RSM106",
            "Please specify kv_role when kv_connector is set, supported roles are "
            "('kv_producer', 'kv_consumer', 'kv_both'); fix: add \"kv_role\""))
    runner = launch.env.get("VLLM_USE_V2_MODEL_RUNNER")
    if runner is not None and isinstance(runner.value, str) and runner.value not in ("0", "1"):
        findings.append(Finding(
            runner.span, "RSM106",
            f"VLLM_USE_V2_MODEL_RUNNER={runner.value!r} makes vLLM fail at startup: it is read as "
            "bool(int(value)), so only 0 and 1 work; fix: use 0 or 1"))
    return findings


def form_findings(launch: Launch, release: Release) -> list[Finding]:
    """The release-dependent form findings, plus those the interpreter found."""
    findings = list(launch.form_findings)
    for setting in launch.history or list(launch.options.values()):
        spelling_problem = _rsm104_spelling(setting, release)
        if spelling_problem is not None:
            findings.append(spelling_problem)
    mode = launch.options.get("mamba_cache_mode")
    if mode is not None:
        problem = _cache_mode_findings(launch, mode, release)
        if problem is not None:
            findings.append(problem)
    for setting in launch.yaml_false:
        if not false_key_applies(release, launch.entry, setting.spelling):
            findings.append(Finding(
                setting.span, "RSM102",
                f"'{setting.spelling}: false' is silently dropped by vLLM {release.version} when "
                f"this file is loaded with --config, so {setting.name} keeps its default; fix: "
                + _false_fix(setting, release),
            ))
    return findings


def _false_fix(setting: Setting, release: Release) -> str:
    if setting.name == "enable_prefix_caching" and release.disable_aliases:
        return "write 'disable-prefix-caching: true'"
    return f"write 'no-{setting.spelling}: true'"


def before_first_release_findings(launch: Launch, version: str, know: Knowledge) -> list[Finding]:
    """A launch targeted at a release older than the first with ReplaySSM.

    The flags do not exist there: argparse exits with "unrecognized arguments"
    (EngineArgs raises TypeError for the keyword).  Nothing else is judged: no
    known release stands in for an older one.
    """
    first = min(know.releases.values(), key=lambda r: r.key).version
    findings = [f for f in launch.form_findings if f.code in RELEASE_INDEPENDENT]
    for name in REPLAYSSM_OPTIONS:
        setting = launch.options.get(name)
        if setting is None:
            continue
        shown = setting.spelling or name
        if launch.form == "kwargs":
            how = f"EngineArgs.__init__() got an unexpected keyword argument '{name}'"
        else:
            how = f"vLLM's argument parser rejects it (unrecognized arguments: {shown})"
        findings.append(Finding(
            setting.span, "RSM104",
            f"{shown} does not exist in vLLM {version}: ReplaySSM first appeared in {first}, so "
            f"{how} [vLLM {version}]; fix: target vLLM {first} or later, or drop it"))
    return findings
