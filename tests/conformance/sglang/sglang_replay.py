"""Replay recorded SGLang outcomes through the linter (used by tests/test_sglang_conformance.py).

Each record (README.md here) is one launch that a real SGLang release parsed and resolved
on a CPU with a pretend Hopper or Blackwell GPU.  Replaying it means: rebuild the command
as the linter sees it (``sglang serve ...`` or ``python -m sglang.launch_server ...``, its
environment and --config files, the tiny model folders' architectures as extra models),
judge it for the same release and GPU, and compare.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flake8_replayssm.recognise import launch_from_command
from flake8_replayssm.config import LintConfig
from flake8_replayssm.judging import judge
from flake8_replayssm.model import Command, Span, Word
from flake8_replayssm.engines.sglang import form
from flake8_replayssm.engines.sglang.checks import model_verdict
from flake8_replayssm.engines.sglang.knowledge import knowledge
from flake8_replayssm.engines.sglang.resolve import scenarios
from flake8_replayssm.engines.sglang.target import resolve_target

HERE = Path(__file__).resolve().parent

#: SGLang's message -> the codes the linter may report for it (None: not a ReplaySSM matter)
ERROR_CODES: list[tuple[str, frozenset[str] | None]] = [
    (r"^--enable-linear-replayssm requires (the )?Triton", frozenset({"RSM301"})),
    (r"requires --mamba-(radix-cache|scheduler)-strategy no_buffer|no attribute 'mamba_scheduler_strategy'",
     frozenset({"RSM302"})),
    (r"^--enable-linear-replayssm is not supported under PD", frozenset({"RSM303"})),
    (r"^--linear-replayssm-cache-len must be >= 1", frozenset({"RSM304", "RSM306"})),
    (r"^no_buffer (only supports|do not support)", frozenset({"RSM305"})),
    (r"^--enable-(linear|gdn)-replayssm-spec|^--linear-replayssm-cache-len must be a power of two",
     frozenset({"RSM306"})),
    (r"needs mamba state", frozenset({"RSM307"})),
    (r"unrecognized arguments|ambiguous option|invalid choice|invalid int value|ignored explicit argument"
     r"|expected one argument", frozenset({"RSM104", "RSM106"})),
]
#: codes that mean "SGLang refuses the launch"
FAILING_CODES = frozenset({"RSM301", "RSM302", "RSM303", "RSM304", "RSM305", "RSM306", "RSM307",
                           "RSM104", "RSM106"})


def error_codes(message: str) -> frozenset[str] | None:
    for pattern, codes in ERROR_CODES:
        if re.search(pattern, message):
            return codes
    return None


def load(release: str) -> list[dict[str, Any]]:
    with open(HERE / f"{release}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def releases() -> list[str]:
    names = (p.name[:-len(".jsonl")] for p in HERE.glob("*.jsonl"))
    return sorted((n for n in names if re.fullmatch(r"\d+\.\d+\.\d+", n)), key=lambda v: [int(x) for x in v.split(".")])


def fix_releases() -> list[str]:
    """The releases whose fixed launches were asked again (files named fixes-RELEASE.jsonl)."""
    return sorted(p.name[len("fixes-"):-len(".jsonl")] for p in HERE.glob("fixes-*.jsonl"))


@dataclass
class Replay:
    record: dict[str, Any]
    codes: list[str]
    facts: dict[str, Any] | None
    #: (code, message) of every finding
    messages: list[tuple[str, str]]


def command_words(record: dict[str, Any]) -> list[str]:
    head = ["sglang", "serve"] if record["entry"] == "serve" else ["python3", "-m", "sglang.launch_server"]
    return head + list(record["argv"])


def replay(record: dict[str, Any], workdir: Path) -> Replay:
    files = dict(record.get("files", {}))
    for folder, config in record.get("models", {}).items():  # the tiny models, as local checkpoints
        files[f"{folder}/config.json"] = json.dumps(config)
    for rel, text in files.items():
        target = workdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    words = [Word(text, Span(1, i, 1, i + 1)) for i, text in enumerate(command_words(record))]
    env = {k: Word(v, Span(1, 0, 1, 1)) for k, v in record.get("env", {}).items()}
    launch = launch_from_command(Command(words, env, base_dir=str(workdir)))
    assert launch is not None and launch.engine == "sglang", record["id"]
    config = LintConfig(sglang_version=record["release"], gpu=record["gpu"])
    verdict = judge(launch, config)
    know = knowledge()
    release = resolve_target(config, None, know).release
    options = {n: s for n, s in launch.options.items() if form.accepted(s, launch, release, know)}
    mv = model_verdict(launch, know, extra_models=config.extra_models, model_dirs=())
    readings = list(scenarios(launch, options, release, [record["gpu"]], mv.architectures, know,
                              mamba_layers=mv.mamba_layers))
    facts = readings[0].facts if len(readings) == 1 else None
    return Replay(record, sorted({f.code for f in verdict.findings}), facts,
                  [(f.code, f.message) for f in verdict.findings])


def _replayssm_written(record: dict[str, Any]) -> bool:
    """Whether the launch writes a ReplaySSM switch (the decode or the spec-verify flag)."""
    words = " ".join(record["argv"]) + " ".join(record.get("files", {}).values())
    return re.search(r"enable[-_](linear|gdn)[-_]replayssm", words) is not None


def _blackwell_override(record: dict[str, Any]) -> bool:
    archs = {c["architectures"][0] for c in record.get("models", {}).values()}
    return record["gpu"] == "blackwell" and "--attention-backend" not in record["argv"] \
        and bool(archs & knowledge().models.blackwell_attention_overrides)


def _refused_with(record: dict[str, Any], *codes: str) -> bool:
    outcome = record["outcome"]
    return outcome != "ok" and bool((error_codes(outcome["error"]) or frozenset()) & set(codes))


#: where the linter knowingly differs from SGLang: (test, why); documented in README.md
KNOWN_DIFFERENCES: list[tuple[Any, str]] = [
    (lambda rec, codes: not _replayssm_written(rec) and _refused_with(rec, "RSM305", "RSM307"),
     "the no_buffer asserts (R5-R7) and R9 refuse launches without ReplaySSM too; the linter reports "
     "them only where a ReplaySSM flag is written"),
    (lambda rec, codes: _blackwell_override(rec) and _refused_with(rec, "RSM302", "RSM305"),
     "on Blackwell the Nemotron-H / Qwen3-Next families choose the attention backend (trtllm_mha) and "
     "page size themselves when --attention-backend is unset, differently per release; the linter "
     "takes both as unknown there, so it does not report the no_buffer assert or the paged "
     "extra_buffer that follow"),
]


def known_difference(result: Replay) -> str | None:
    for test, why in KNOWN_DIFFERENCES:
        if test(result.record, result.codes):
            return why
    return None


def disagreement(result: Replay, *, allow_known: bool = True) -> str | None:
    """Why the linter and SGLang disagree on this record, or None (documented differences
    count as agreement unless ``allow_known`` is False)."""
    outcome = result.record["outcome"]
    failing = sorted(FAILING_CODES & set(result.codes))
    if allow_known and known_difference(result):
        return None
    if outcome == "ok":
        return f"SGLang accepted it, linter says {failing}" if failing else None
    codes = error_codes(outcome["error"])
    if codes is None:
        return None  # an error the linter does not model (not a ReplaySSM matter)
    if not codes & set(result.codes):
        return f"SGLang: {outcome['error'][:110]!r} ({'/'.join(sorted(codes))}); linter: {result.codes}"
    return None


def message_mismatches(result: Replay) -> list[str]:
    """SGLang's own message must be in the finding for the code it maps to (DESIGN.md:
    messages carry the engine's wording, so searching the runtime error finds the lint)."""
    outcome = result.record["outcome"]
    if outcome == "ok" or outcome["stage"] != "server_args" or known_difference(result):
        return []
    codes = error_codes(outcome["error"]) or frozenset()
    messages = [m for code, m in result.messages if code in codes]
    if not messages or any(outcome["error"] in m for m in messages):
        return []
    release = knowledge().releases[result.record["release"]]
    same_code = [c for c in release.checks if c.code in codes and _wording(c.message) in outcome["error"]]
    if same_code:
        return []  # another check of the same code failed first in SGLang (its order differs)
    return [f"message: SGLang {outcome['error'][:90]!r}, linter {messages[0][:90]!r}"]


def _wording(template: str) -> str:
    """The fixed start of a check's message (up to its first placeholder)."""
    return template.split("{", 1)[0]


def value_mismatches(result: Replay) -> list[str]:
    """Values the linter derives that differ from what SGLang resolved (accepted launches)."""
    facts, resolved = result.facts, result.record.get("resolved")
    if facts is None or not resolved or result.record["outcome"] != "ok":
        return []
    pairs = [
        ("enable_linear_replayssm", facts["replay"], resolved["enable_linear_replayssm"]),
        ("spec", facts["spec"], resolved["spec"]),
        ("decode_backend", facts["decode"], resolved["decode_backend"]),
        ("disable_radix_cache", facts["radix_disabled"], resolved["disable_radix_cache"]),
    ]
    if facts["radix"]:  # SGLang resolves the strategy and the overlap scheduler only for these
        pairs += [
            ("mamba_radix_cache_strategy", facts["strategy"], resolved["mamba_radix_cache_strategy"]),
            ("disable_overlap_schedule", not facts["overlap"], resolved["disable_overlap_schedule"]),
        ]
    if resolved.get("uses_mamba_radix_cache") is not None:
        pairs.append(("uses_mamba_radix_cache", facts["radix"], resolved["uses_mamba_radix_cache"]))
    return [f"{name}: linter {ours!r}, SGLang {theirs!r}" for name, ours, theirs in pairs if ours != theirs]


if __name__ == "__main__":  # a quick agreement report: python tests/conformance/sglang/sglang_replay.py [FILE...]
    import collections
    import sys
    import tempfile

    paths = [Path(p) for p in sys.argv[1:]] or [HERE / f"{r}.jsonl" for r in releases()]
    for path in paths:
        records = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
        bad: collections.Counter[str] = collections.Counter()
        values: collections.Counter[str] = collections.Counter()
        examples: dict[str, Any] = {}
        for rec in records:
            with tempfile.TemporaryDirectory() as tmp:
                result = replay(rec, Path(tmp))
            why = disagreement(result)
            if why:
                key = why[:100]
                bad[key] += 1
                examples.setdefault(key, (rec["id"], rec["gpu"], rec["entry"], rec["argv"], rec["env"]))
            for m in value_mismatches(result) + message_mismatches(result):
                values[m] += 1
                examples.setdefault(m, (rec["id"], rec["gpu"], rec["argv"]))
        print(f"{path.name}: {len(records)} records, {len(records) - sum(bad.values())} agree")
        for key, n in bad.most_common():
            print(f"   {n:4d} {key}\n        {examples[key]}")
        for key, n in values.most_common():
            print(f"   value {n:4d} {key}\n        {examples[key]}")
