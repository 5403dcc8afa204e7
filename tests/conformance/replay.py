"""Replay recorded vLLM outcomes through the linter (used by tests/test_conformance.py).

Each record (see README.md here) is one launch that a real vLLM release parsed
and validated on a CPU.  Replaying it means: rebuild the launch as the linter
sees it (argv words, environment, --config files, the tiny model directories'
architectures as extra models), judge it for the same release, and compare.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from flake8_replayssm.recognise import launch_from_command
from flake8_replayssm.config import LintConfig
from flake8_replayssm.judging import judge
from flake8_replayssm.engines.vllm.resolve import scenarios
from flake8_replayssm.engines.vllm.knowledge import knowledge
from flake8_replayssm.model import Command, Span, Word
from flake8_replayssm.engines.vllm.checks import model_verdict

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import Record, Replay  # noqa: E402

HERE = harness.HERE
MINIMUM_RECORDS = 200

#: vLLM's error text -> the code the linter reports for it (None: not a ReplaySSM matter)
ERROR_CODES: list[tuple[str, str]] = [
    (r"--use-replayssm is (only supported for Nemotron-H|not supported for architecture)", "RSM001"),
    (r"prefix caching only in align mode|does not support (--mamba-cache-mode align|prefix caching)"
     r"|speculative decoding requires --mamba-cache-mode none|RecoverSSM supports only none and align",
     "RSM002"),
    (r"does not support speculative decoding|RecoverSSM is only supported for Kimi"
     r"|speculative decoding requires --mamba-backend flashinfer|RecoverSSM supports bfloat16"
     r"|RecoverSSM currently requires pipeline", "RSM003"),
    (r"requires --mamba-backend triton|RecoverSSM requires --mamba-backend triton", "RSM004"),
    (r"incompatible with KV connectors", "RSM005"),
    (r"--mamba-block-size can only be set", "RSM006"),
    (r"invalid (int|float) value|ignored explicit argument|Unknown Mamba SSU backend"
     r"|mamba_block_size: Input should be greater|Please specify kv_role"
     r"|unrecognized arguments: (true|false|True|False|1|0)\b|unrecognized arguments: --[A-Z]",
     "RSM106"),
    (r"replayssm-buffer-len|replayssm_buffer_len", "RSM007"),
    (r"Model Runner V1|VLLM_USE_V2_MODEL_RUNNER=1|Model Runner V2 does not yet support", "RSM008"),
    (r"argument --mamba-cache-mode: invalid choice|unrecognized arguments: --(no-)?disable", "RSM104"),
]
FAILING_CODES = frozenset({"RSM001", "RSM002", "RSM003", "RSM004", "RSM005", "RSM006", "RSM007",
                           "RSM008", "RSM104", "RSM106"})

#: the warning vLLM's hybrid config update (MambaModelConfig) logs when it sets an explicit
#: mamba cache mode to "none" because prefix caching is off: what RSM107 reports
OVERRIDE_WARNING = "Mamba cache mode is set to 'none' when prefix caching is disabled"


def error_code(message: str) -> str | None:
    codes = error_codes(message)
    return None if codes is None else next(iter(codes))


def error_codes(message: str) -> frozenset[str] | None:
    return harness.first_error_codes(((p, frozenset({c})) for p, c in ERROR_CODES), message)


def load(release: str) -> list[Record]:
    return harness.read_records(HERE / f"{release}.jsonl")


def releases() -> list[str]:
    """The releases with records (files named RELEASE.jsonl)."""
    return harness.releases(HERE)


def fix_releases() -> list[str]:
    return harness.fix_releases(HERE)


def label(record: Record) -> str:
    return f"{record['id']} env={record.get('env')}"


def fixed_launches(release: str) -> list[Record]:
    """The launches ``replayssm-lint fix`` changed (fixes-RELEASE.jsonl), as records of the
    fixed launch and what vLLM said of it."""
    return [{"release": r["release"], "id": f"{r['id']} ({r['mode']})", "argv": r["argv_after"],
             "env": r["env_after"], "files": r["files_after"], "model_arch": r["model_arch"],
             "outcome": r["outcome_after"]}
            for r in harness.read_records(HERE / f"fixes-{release}.jsonl") if r["changed"]]


def _words(argv: list[str]) -> list[Word]:
    return [Word(text, Span(1, i, 1, i + 1)) for i, text in enumerate(["vllm", *argv])]


def replay(record: Record, workdir: Path) -> Replay:
    harness.write_files(record.get("files", {}), workdir)
    env = {k: Word(v, Span(1, 0, 1, 1)) for k, v in record.get("env", {}).items()}
    launch = launch_from_command(Command(_words(record["argv"]), env, base_dir=str(workdir)))
    assert launch is not None, record["id"]
    config = LintConfig(vllm_version=record["release"], extra_models=record.get("model_arch", {}))
    verdict = judge(launch, config)
    know = knowledge()
    release = verdict.target.release
    mv = model_verdict(launch, know, extra_models=config.extra_models, model_dirs=())
    readings = list(scenarios(launch, release, "cuda", mv.architectures, know, draft_method=mv.draft_method))
    parsed = readings[0].facts if len(readings) == 1 else None
    return Replay(record, sorted({f.code for f in verdict.findings}), parsed,
                  [(f.code, f.message) for f in verdict.findings])


def _block_size(record: Record) -> int | None:
    """The Mamba block size vLLM parsed, or (a fixed launch, recorded without it) the one written."""
    parsed = (record.get("parsed") or {}).get("mamba_block_size")
    if parsed is not None:
        return int(parsed)
    argv = record["argv"]
    for k, word in enumerate(argv):
        name, eq, value = word.partition("=")
        if name.replace("_", "-") == "--mamba-block-size":
            value = value if eq else (argv[k + 1] if k + 1 < len(argv) else "")
            return int(value) if value.isdigit() else None
    return None


#: where the linter knowingly differs from vLLM: (test, why); documented in README.md
KNOWN_DIFFERENCES: list[harness.KnownDifference] = [
    (lambda rec, codes: rec["outcome"] == "ok" and FAILING_CODES.intersection(codes) == {"RSM006"}
     and _block_size(rec) == 4096,
     "vLLM ignores a --mamba-block-size equal to the model's max_model_len (the tiny models have "
     "4096); the linter does not read a model's length, so it reports any block size without "
     "prefix caching"),
    (lambda rec, codes: rec["outcome"] != "ok" and "RSM008" not in codes
     and re.search(r'"mode": ?1\b', " ".join(rec["argv"])) is not None,
     "with stock torch.compile (compilation mode 1) vLLM may or may not fall back to Model Runner "
     "V1 (it resets the mode for some models first), so the linter leaves the runner unknown and "
     "does not report RSM008"),
]


def known_difference(result: Replay) -> str | None:
    return harness.known_difference(KNOWN_DIFFERENCES, result)


def mode_overridden(record: Record) -> bool | None:
    """Whether vLLM set an explicit mamba cache mode to "none" (it logged OVERRIDE_WARNING).

    None when the record cannot tell: made before the recorder kept ``config_warnings``, or
    vLLM stopped before it built the VllmConfig, whose ``__post_init__`` runs the hybrid
    config update first (so a config that was built has been through it).
    """
    parsed = record.get("parsed") or {}
    if "config_warnings" not in record or parsed.get("mamba_cache_mode") is None:
        return None
    return OVERRIDE_WARNING in record["config_warnings"]


def disagreement(result: Replay) -> str | None:
    """Why the linter and vLLM disagree on this record, or None."""
    outcome = result.record["outcome"]
    failing = sorted(FAILING_CODES & set(result.codes))
    if known_difference(result):
        return None
    overridden = mode_overridden(result.record)
    if overridden is not None and overridden != ("RSM107" in result.codes):
        done = "set the explicit mamba cache mode to 'none'" if overridden else "kept the mamba cache mode"
        return f"vLLM {done} (RSM107); linter: {result.codes}"
    if outcome == "ok":
        return f"vLLM accepted it, linter says {failing}" if failing else None
    code = error_code(outcome["error"])
    if code is None:
        return None  # an error the linter does not model (not a ReplaySSM matter)
    if code not in result.codes:
        return f"vLLM: {outcome['error'][:100]!r} ({code}); linter: {result.codes}"
    return None


def mismatches(result: Replay) -> list[str]:
    """Values the linter derives that differ from what vLLM's parser/config produced."""
    facts, vllm = result.facts, result.record.get("parsed") or {}
    if facts is None or not vllm or result.record["outcome"] != "ok":
        return []
    pairs = [
        ("use_replayssm", facts["use_replayssm"], vllm.get("use_replayssm")),
        ("mamba_backend", facts["backend"], str(vllm.get("mamba_backend")).lower()),
        ("enable_prefix_caching", facts["prefix_caching"], vllm.get("enable_prefix_caching")),
        ("num_speculative_tokens", facts["spec"], vllm.get("num_speculative_tokens")),
        ("replayssm_buffer_len", facts["buffer_len"], vllm.get("replayssm_buffer_len")),
        ("is_kv_transfer_instance", facts["kv"], vllm.get("is_kv_transfer_instance")),
        ("architecture", facts["architecture"], vllm.get("architecture")),
        ("mamba_cache_mode", facts["cache_mode"], vllm.get("mamba_cache_mode")),  # after the config update
    ]
    if facts["use_replayssm"]:
        release = knowledge().release(result.record["release"])
        if release is not None and release.runner != "v1":  # 0.27/0.28: the validator never asks
            pairs.append(("use_v2_model_runner", facts["v2"], vllm.get("use_v2_model_runner")))
    return [f"{name}: linter {ours!r}, vLLM {theirs!r}" for name, ours, theirs in pairs
            if theirs is not None and ours != theirs]
