"""Replay recorded SGLang outcomes through the linter (used by tests/test_sglang_conformance.py).

Each record (README.md here) is one launch that a real SGLang release parsed and resolved
on a CPU with a pretend Hopper or Blackwell GPU (and CUDA version).  Replaying it means:
rebuild the command as the linter sees it (``sglang serve ...``, ``python -m
sglang.launch_server ...`` or ``python -m sglang_router.launch_server ...``, its environment
and --config files, the tiny model folders' architectures as extra models), judge it for the
same release and GPU, and compare.

Where the linter does not yet agree, the record is listed in ``expected-disagreements.jsonl``
with its class (issue 19); such a record must still disagree (a fix that makes it agree
removes its line), and every other record must agree.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from flake8_replayssm.recognise import launch_from_command
from flake8_replayssm.config import LintConfig
from flake8_replayssm.judging import judge
from flake8_replayssm.frontends.shell import commands_in_shell
from flake8_replayssm.model import Command, Span, Word
from flake8_replayssm.engines.sglang import form
from flake8_replayssm.engines.sglang.checks import model_verdict
from flake8_replayssm.engines.sglang.knowledge import knowledge
from flake8_replayssm.engines.sglang.resolve import scenarios
from flake8_replayssm.engines.sglang.target import resolve_target

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness  # noqa: E402
from harness import Record, Replay  # noqa: E402

HERE = Path(__file__).resolve().parent
MINIMUM_RECORDS = 500

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
    (r"^invalid SGLANG_RAGGED_VERIFY_MODE", frozenset({"RSM306"})),
    # argument checks outside the ReplaySSM flags that SGLang runs on the launches of issue 19
    # (unified memory's page-major KV layout, flashinfer prefill on SM100 with CUDA 12, a model's
    # attention-backend restriction): RSM309
    (r"^--enable-page-major-kv-layout|^--enable-unified-memory|on SM100\+ requires CUDA 13"
     r"|does not support triton attention backend", frozenset({"RSM309"})),
    # python -m sglang_router.launch_server with SGLang 0.5.15-0.5.19: every sglang-router release
    # fails at import (sglang_oracle.ROUTERS); the launch never starts, so any refusal agrees
    (r"^cannot import name 'is_port_available' from 'sglang\.srt\.utils'", frozenset({"RSM309", "RSM104", "RSM106"})),
    (r"unrecognized arguments|ambiguous option|invalid choice|invalid int value|ignored explicit argument"
     r"|expected one argument", frozenset({"RSM104", "RSM106"})),
]
#: codes that mean "SGLang refuses the launch"
FAILING_CODES = frozenset({"RSM301", "RSM302", "RSM303", "RSM304", "RSM305", "RSM306", "RSM307",
                           "RSM309", "RSM104", "RSM106"})


def error_codes(message: str) -> frozenset[str] | None:
    return harness.first_error_codes(ERROR_CODES, message)


def load(release: str) -> list[Record]:
    return harness.read_records(HERE / f"{release}.jsonl")


def releases() -> list[str]:
    return harness.releases(HERE)


def label(record: Record) -> str:
    return f"{record['id']}/{record['gpu']}"


def record_key(record: Record) -> tuple[str, str, str, str]:
    """A record's identity across files: release, launch id, GPU, CUDA version."""
    return (record["release"], record["id"], record["gpu"], record.get("cuda", "12.9"))


def load_expected() -> dict[tuple[str, str, str, str, str], str]:
    """{(release, id, gpu, cuda, kind): class} of expected-disagreements.jsonl; kind is
    "verdict", "value" or "message" (the check that disagrees)."""
    path = HERE / "expected-disagreements.jsonl"
    if not path.exists():
        return {}
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                e = json.loads(line)
                out[(e["release"], e["id"], e["gpu"], e["cuda"], e["kind"])] = e["class"]
    return out


EXPECTED = load_expected()


def expected_class(record: Record, kind: str) -> str | None:
    return EXPECTED.get(record_key(record) + (kind,))


def fix_releases() -> list[str]:
    return harness.fix_releases(HERE)


def fixed_launches(release: str) -> list[Record]:
    """Launches SGLang refused, after ``replayssm-lint fix``, and what SGLang said of them."""
    return load(f"fixes-{release}")


HEADS = {"serve": ["sglang", "serve"], "launch_server": ["python3", "-m", "sglang.launch_server"],
         "router": ["python3", "-m", "sglang_router.launch_server"]}


def command_words(record: Record) -> list[str]:
    return HEADS[record["entry"]] + list(record["argv"])


def replay(record: Record, workdir: Path) -> Replay:
    files = dict(record.get("files", {}))
    for folder, config in record.get("models", {}).items():  # the tiny models, as local checkpoints
        files[f"{folder}/config.json"] = json.dumps(config)
    harness.write_files(files, workdir)
    if record.get("env"):  # as a shell file writes it: the environment as a prefix of the command
        text = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(record["env"].items()))
        commands = commands_in_shell(f"{text} {shlex.join(command_words(record))}\n", base_dir=str(workdir))
        assert len(commands) == 1, record["id"]
        command = commands[0]
    else:
        words = [Word(text, Span(1, i, 1, i + 1)) for i, text in enumerate(command_words(record))]
        command = Command(words, {}, base_dir=str(workdir))
    launch = launch_from_command(command)
    if launch is None or launch.engine != "sglang":
        assert record["entry"] == "router", record["id"]  # the linter does not read this form yet
        return Replay(record, [], None, [], recognised=False)
    config = LintConfig(sglang_version=record["release"], gpu=record["gpu"], cuda=record.get("cuda", "12.9"))
    verdict = judge(launch, config)
    know = knowledge()
    release = resolve_target(config, None, know).release
    options = {n: s for n, s in launch.options.items() if form.accepted(s, launch, release, know)}
    mv = model_verdict(launch, know, extra_models=config.extra_models, model_dirs=())
    readings = list(scenarios(launch, options, release, [record["gpu"]], mv.architectures, know,
                              mamba_layers=mv.mamba_layers, cudas=[record.get("cuda", "12.9")]))
    facts = readings[0].facts if len(readings) == 1 else None
    return Replay(record, sorted({f.code for f in verdict.findings}), facts,
                  [(f.code, f.message) for f in verdict.findings])


def _replayssm_written(record: Record) -> bool:
    """Whether the launch writes a ReplaySSM switch (the decode or the spec-verify flag)."""
    words = " ".join(record["argv"]) + " ".join(record.get("files", {}).values())
    return re.search(r"enable[-_](linear|gdn)[-_]replayssm", words) is not None


def _blackwell_override(record: Record) -> bool:
    archs = {c["architectures"][0] for c in record.get("models", {}).values()}
    return record["gpu"] == "blackwell" and "--attention-backend" not in record["argv"] \
        and bool(archs & knowledge().blackwell_override_archs)


def _flag_on_command_line(record: Record) -> bool:
    """Whether the command line itself writes a ReplaySSM switch (the router merges no --config)."""
    return re.search(r"enable[-_](linear|gdn)[-_]replayssm", " ".join(record["argv"])) is not None


def _refused_with(record: Record, *codes: str) -> bool:
    outcome = record["outcome"]
    return outcome != "ok" and bool((error_codes(outcome["error"]) or frozenset()) & set(codes))


#: where the linter knowingly differs from SGLang: (test, why); documented in README.md
KNOWN_DIFFERENCES: list[harness.KnownDifference] = [
    (lambda rec, codes: not _replayssm_written(rec) and _refused_with(rec, "RSM305", "RSM307"),
     "the no_buffer asserts (R5-R7) and R9 refuse launches without ReplaySSM too; the linter reports "
     "them only where a ReplaySSM flag is written"),
    (lambda rec, codes: rec["entry"] == "router" and not _flag_on_command_line(rec) and _refused_with(rec, "RSM309")
     and not FAILING_CODES & set(codes),
     "python -m sglang_router.launch_server fails at import with SGLang 0.5.15-0.5.19 (every sglang-router "
     "release); the linter reports it (RSM309) only where a ReplaySSM flag is written"),
]


def known_difference(result: Replay) -> str | None:
    return harness.known_difference(KNOWN_DIFFERENCES, result)


def disagreement(result: Replay, *, allow_known: bool = True, allow_expected: bool = True) -> str | None:
    """Why the linter and SGLang disagree on this record, or None (documented differences and
    the records of expected-disagreements.jsonl count as agreement unless told otherwise)."""
    if allow_known and known_difference(result):
        return None
    if allow_expected and expected_class(result.record, "verdict"):
        return None
    return raw_disagreement(result)


#: the linter's messages for SGLang's refusals after argument resolution (model loader, pools,
#: Mamba radix cache: scripts/conformance/sglang_post_resolution.py has their rules)
POST_RESOLUTION_MESSAGES = re.compile(
    r"has no SGlang implementation|MambaComponent requires page_size=1|only supports hybrid Mamba and hybrid"
    r"|^spec-verify ring|DSPARK/DFLASH requires a KDA")


def _post_resolution_only(result: Replay) -> bool:
    """Whether every refusal the linter reports is one SGLang makes after argument resolution."""
    refusals = [message for code, message in result.messages if code in FAILING_CODES]
    return bool(refusals) and all(POST_RESOLUTION_MESSAGES.search(m) for m in refusals)


def raw_disagreement(result: Replay) -> str | None:
    record = result.record
    outcome = record["outcome"]
    failing = sorted(FAILING_CODES & set(result.codes))
    post = (record.get("post") or {}).get("error")
    if outcome == "ok" and post:
        if not failing:
            return f"SGLang refuses after resolution ({record['post']['rule']}): {post[:90]!r}; linter: {result.codes}"
        return None
    if outcome == "ok" and "post" not in record and _post_resolution_only(result):
        return None  # the recorder did not ask this category what happens after resolution
    if outcome == "ok":
        return f"SGLang accepted it, linter says {failing}" if failing else None
    if "RSM308" in result.codes and not failing:  # "starts without effect" on a launch that never starts
        return f"SGLang refuses ({outcome['error'][:90]!r}); linter says only RSM308 (starts without effect)"
    codes = error_codes(outcome["error"])
    if codes is None:
        return None  # an error the linter does not model (not a ReplaySSM matter)
    if not result.recognised:
        return f"SGLang: {outcome['error'][:90]!r}; linter: not read as an SGLang launch ({record['entry']})"
    if not codes & set(result.codes):
        return f"SGLang: {outcome['error'][:110]!r} ({'/'.join(sorted(codes))}); linter: {result.codes}"
    return None


def message_mismatches(result: Replay) -> list[str]:
    """SGLang's own message must be in the finding for the code it maps to (DESIGN.md:
    messages carry the engine's wording, so searching the runtime error finds the lint)."""
    outcome = result.record["outcome"]
    if outcome == "ok" or outcome["stage"] != "server_args" or known_difference(result) \
            or expected_class(result.record, "message"):
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


def mismatches(result: Replay) -> list[str]:
    """Derived values and messages that differ from SGLang's (accepted and refused launches)."""
    return value_mismatches(result) + message_mismatches(result)


def _wording(template: str) -> str:
    """The fixed start of a check's message (up to its first placeholder)."""
    return template.split("{", 1)[0]


def value_mismatches(result: Replay) -> list[str]:
    """Values the linter derives that differ from what SGLang resolved (accepted launches)."""
    facts, resolved = result.facts, result.record.get("resolved")
    if facts is None or not resolved or result.record["outcome"] != "ok" \
            or expected_class(result.record, "value"):
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


#: the classes of issue 19, in the order a disagreeing record is assigned to one
CLASSES: list[tuple[str, Any]] = [
    ("router_form", lambda rec, why: rec["entry"] == "router"),
    ("ragged_verify_env", lambda rec, why: "SGLANG_RAGGED_VERIFY_MODE" in rec.get("env", {})),
    ("flashinfer_prefill_cuda", lambda rec, why: "requires CUDA 13" in why),
    ("post_resolution", lambda rec, why: why.startswith("SGLang refuses after resolution")),
    ("unified_memory", lambda rec, why: "--enable-unified-memory" in rec["argv"]),
    ("pd_decode_radix", lambda rec, why: "--disaggregation-decode-enable-radix-cache" in rec["argv"]),
    ("list_options", lambda rec, why: rec["id"].startswith("list-")),
    ("blackwell_override", lambda rec, why: _blackwell_override(rec)),
    ("page_size", lambda rec, why: "--page-size" in rec["argv"]),
    ("registration", lambda rec, why: rec["id"].startswith("arch-")),
]


def classify(record: Record, why: str) -> str:
    for name, test in CLASSES:
        if test(record, why):
            return name
    return "other"


def disagreements_of(result: Replay) -> list[tuple[str, str]]:
    """[(kind, why)] of every check this record fails, ignoring expected-disagreements.jsonl."""
    out = []
    why = disagreement(result, allow_expected=False)
    if why:
        out.append(("verdict", why))
    saved = EXPECTED.copy()
    EXPECTED.clear()
    try:
        out += [("value", m) for m in value_mismatches(result)]
        out += [("message", m) for m in message_mismatches(result)]
    finally:
        EXPECTED.update(saved)
    return out


def write_expected(paths: list[Path]) -> None:
    """Replay every record and write expected-disagreements.jsonl (one line per disagreeing
    record and kind, with its class and why), sorted."""
    import tempfile

    lines = []
    for path in paths:
        for rec in (json.loads(line) for line in open(path, encoding="utf-8") if line.strip()):
            with tempfile.TemporaryDirectory() as tmp:
                result = replay(rec, Path(tmp))
            for kind, why in disagreements_of(result):
                release, lid, gpu, cuda = record_key(rec)
                lines.append({"release": release, "id": lid, "gpu": gpu, "cuda": cuda, "kind": kind,
                              "class": classify(rec, why), "why": why[:160]})
    lines.sort(key=lambda e: ([int(x) for x in e["release"].split(".")], e["id"], e["gpu"], e["cuda"], e["kind"]))
    with open(HERE / "expected-disagreements.jsonl", "w", encoding="utf-8") as fh:
        for e in lines:
            fh.write(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"{len(lines)} expected disagreements written")


def record_files() -> list[Path]:
    """Every record file: the releases', then the fixed launches' (fixes-RELEASE.jsonl)."""
    return [HERE / f"{r}.jsonl" for r in releases()] + [HERE / f"fixes-{r}.jsonl" for r in fix_releases()]


if __name__ == "__main__":  # python tests/conformance/sglang/sglang_replay.py --write-expected
    if sys.argv[1:2] == ["--write-expected"]:
        write_expected(record_files())
    else:
        harness.report(sys.modules[__name__], [Path(p) for p in sys.argv[1:]]  # type: ignore[arg-type]
                       or [HERE / f"{r}.jsonl" for r in releases()])
