"""The linter agrees with each engine: every recorded launch replayed (tests/conformance/).

The records were made by running each release's real parser and config validation on a
CPU (scripts/conformance/: vLLM's, and SGLang's with a pretend Hopper or Blackwell GPU);
here they are replayed without the engine, through one harness (tests/conformance/
harness.py) and each engine's replay module. The engine accepted a launch => no finding
that means "it refuses to start"; it refused with a ReplaySSM error => the code for that
error is among the findings; and the values the linter derives (prefix caching, cache mode,
runner, radix-cache strategy, decode backend, ...) equal the engine's. Deliberate
differences are listed, with the reason, in the replay modules and README.md.
vLLM-only checks follow below; SGLang-only ones are in tests/test_sglang_conformance.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flake8_replayssm.architectures import architecture_kind
from flake8_replayssm.engines.vllm.knowledge import knowledge

sys.path.insert(0, str(Path(__file__).resolve().parent / "conformance"))

import harness  # noqa: E402

replay = harness.engine("vllm")
RELEASES = replay.releases()
PAIRS = [(name, release) for name in harness.ENGINES for release in harness.engine(name).releases()]
FIX_PAIRS = [(name, release) for name in harness.ENGINES for release in harness.engine(name).fix_releases()]


@pytest.mark.parametrize("name", harness.ENGINES)
def test_records_exist(name):
    chosen = harness.engine(name)
    assert chosen.releases(), f"no recorded releases under {chosen.HERE}"
    assert chosen.fix_releases(), f"no recorded fixed launches under {chosen.HERE}"


@pytest.mark.parametrize(("name", "release"), PAIRS)
def test_verdicts_agree_with_the_engine(name, release, tmp_path):
    chosen = harness.engine(name)
    records = chosen.load(release)
    assert len(records) >= chosen.MINIMUM_RECORDS
    assert harness.problems(chosen, records, tmp_path) == []


@pytest.mark.parametrize("name", harness.ENGINES)
def test_error_mapping_covers_every_replayssm_message(name):
    """Every ReplaySSM message the engine gave in the records maps to a code."""
    chosen = harness.engine(name)
    unmapped = set()
    for release in chosen.releases():
        for record in chosen.load(release):
            outcome = record["outcome"]
            if outcome != "ok" and "replayssm" in outcome["error"].lower() \
                    and chosen.error_codes(outcome["error"]) is None:
                unmapped.add(outcome["error"][:120])
    assert unmapped == set()


@pytest.mark.parametrize(("name", "release"), FIX_PAIRS)
def test_fixed_launches_agree_with_the_engine(name, release, tmp_path):
    """Launches the engine refused, after `replayssm-lint fix` (safe, then --unsafe), asked
    again (scripts/conformance/*check_fixes.py): the linter agrees on what the engine said of
    the fixed launch, and most fixed launches start."""
    chosen = harness.engine(name)
    records = chosen.fixed_launches(release)
    assert len(records) >= 100
    assert harness.problems(chosen, records, tmp_path) == []
    assert sum(r["outcome"] == "ok" for r in records) > len(records) / 2


# -- RSM107: the mode vLLM's hybrid config update sets to "none" -------------------------

def _without_mode(argv: list[str]) -> list[str]:
    """``argv`` without its --mamba-cache-mode option (any spelling)."""
    out: list[str] = []
    skip = False
    for word in argv:
        name = word.split("=", 1)[0].replace("_", "-")
        if skip:
            skip = False
        elif name == "--mamba-cache-mode":
            skip = "=" not in word
        else:
            out.append(word)
    return out


def _key(record: dict, argv: list[str]) -> str:
    return json.dumps([argv, record["env"], record["files"]], sort_keys=True)


@pytest.mark.parametrize("release", RELEASES)
def test_dropping_an_overridden_mode_changes_nothing(release):
    """RSM107's fix (drop the mode) is safe: every launch whose mode vLLM set to "none" was
    recorded as its twin without the mode too, with the same outcome and the same config."""
    records = replay.load(release)
    overridden = [r for r in records if replay.mode_overridden(r)]
    if knowledge().release(release).cache_mode_deprecated:
        assert overridden == []  # 0.33 never passes the mode on: RSM105, not RSM107
        return
    assert len(overridden) >= 50
    twins = {_key(r, r["argv"]): r for r in records}
    compared = 0
    for record in overridden:
        twin = twins.get(_key(record, _without_mode(record["argv"])))
        if twin is None:
            continue
        compared += 1
        ours = {k: v for k, v in record["parsed"].items() if k != "mamba_cache_mode_arg"}
        theirs = {k: v for k, v in twin["parsed"].items() if k != "mamba_cache_mode_arg"}
        assert (ours, record["outcome"]) == (theirs, twin["outcome"]), record["id"]
    assert compared >= 0.9 * len(overridden)


def test_mode_comparison_reads_the_override_warning():
    record = {"parsed": {"mamba_cache_mode": "none"}, "config_warnings": [replay.OVERRIDE_WARNING]}
    assert replay.mode_overridden(record) is True
    assert replay.mode_overridden({**record, "config_warnings": []}) is False
    assert replay.mode_overridden({"parsed": {"mamba_cache_mode": "none"}}) is None  # older records
    assert replay.mode_overridden({**record, "parsed": None}) is None  # stopped before the config


# -- test data, no code: the chunked-prefill assertion of the same config update ---------

@pytest.mark.parametrize("release", RELEASES)
def test_chunked_prefill_off_with_mamba_prefix_caching_is_refused(release, tmp_path):
    """vLLM refuses `--no-enable-chunked-prefill` on a hybrid/Mamba model with prefix caching on
    (MambaModelConfig: `assert ... enable_chunked_prefill`; 0.27-0.31 only in mode align, from
    0.32 whenever prefix caching is on).  The linter has no code for it, but what it derives
    (prefix caching, the effective mode, the kind of model) predicts every recorded refusal."""
    rel = knowledge().release(release)
    seen = {True: 0, False: 0}
    for number, record in enumerate(replay.load(release)):
        if "--no-enable-chunked-prefill" not in record["argv"] or replay.mode_overridden(record) is None:
            continue
        workdir = tmp_path / str(number)
        workdir.mkdir()
        facts = replay.replay(record, workdir).facts
        assert facts is not None, record["id"]
        predicted = facts["prefix_caching"] and architecture_kind(facts["architecture"]) != "transformer" \
            and (rel.cache_mode == "follows-prefix-caching" or facts["cache_mode"] == "align")
        outcome = record["outcome"]
        refused = outcome != "ok" and outcome["error"].startswith("Assertion failed, Chunked prefill is required")
        assert refused == predicted, (record["id"], record["argv"], outcome)
        seen[refused] += 1
    assert seen[True] >= 5 and seen[False] >= 5, seen
