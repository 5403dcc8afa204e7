"""The linter agrees with SGLang: every recorded launch replayed (tests/conformance/sglang/).

The records were made by running each SGLang release's real parser and ServerArgs
resolution on a CPU with a pretend Hopper or Blackwell GPU (scripts/conformance/
sglang_record.py); here they are replayed without SGLang.  SGLang accepted a launch =>
no finding that means "SGLang refuses"; SGLang refused it with a ReplaySSM-related error
=> the code for that error is among the findings, worded as SGLang words it; and what the
linter derives (the radix-cache strategy, the overlap scheduler, the decode backend)
equals what SGLang resolved.  Deliberate differences are listed, with the reason, in
tests/conformance/sglang/sglang_replay.py and README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "conformance" / "sglang"))

import sglang_replay  # noqa: E402

RELEASES = sglang_replay.releases()


def test_every_release_is_recorded():
    from flake8_replayssm.engines.sglang.knowledge import knowledge

    assert RELEASES == sorted(knowledge().releases, key=lambda v: [int(x) for x in v.split(".")])


@pytest.mark.parametrize("release", RELEASES)
def test_verdicts_agree_with_sglang(release, tmp_path):
    records = sglang_replay.load(release)
    assert len(records) >= 500 and {r["gpu"] for r in records} == {"hopper", "blackwell"}
    problems = []
    for number, record in enumerate(records):
        workdir = tmp_path / str(number)
        workdir.mkdir()
        result = sglang_replay.replay(record, workdir)
        why = sglang_replay.disagreement(result)
        if why:
            problems.append(f"{record['id']}/{record['gpu']} {record['argv']}: {why}")
        problems += [f"{record['id']}/{record['gpu']}: {m}" for m in sglang_replay.value_mismatches(result)]
        problems += [f"{record['id']}/{record['gpu']}: {m}" for m in sglang_replay.message_mismatches(result)]
    assert problems == []


def test_error_mapping_covers_every_replayssm_message():
    """Every ReplaySSM message SGLang gave in the records maps to a code."""
    unmapped = set()
    for release in RELEASES:
        for record in sglang_replay.load(release):
            outcome = record["outcome"]
            if outcome != "ok" and "replayssm" in outcome["error"].lower() \
                    and sglang_replay.error_codes(outcome["error"]) is None:
                unmapped.add(outcome["error"][:120])
    assert unmapped == set()


def test_known_differences_are_few(tmp_path):
    """The documented differences stay exceptions (a rule change that widens them fails here)."""
    known = total = 0
    for release in RELEASES:
        for number, record in enumerate(sglang_replay.load(release)):
            workdir = tmp_path / f"{release}-{number}"
            workdir.mkdir()
            result = sglang_replay.replay(record, workdir)
            known += sglang_replay.disagreement(result, allow_known=False) is not None
            total += 1
    assert 0 < known < 0.01 * total


@pytest.mark.parametrize("release", sglang_replay.fix_releases())
def test_fixed_launches_agree_with_sglang(release, tmp_path):
    """Launches SGLang refused, after `replayssm-lint fix`, asked again (fixes-RELEASE.jsonl)."""
    records = sglang_replay.load(f"fixes-{release}")
    assert len(records) >= 100
    problems = []
    accepted = 0
    for number, record in enumerate(records):
        workdir = tmp_path / str(number)
        workdir.mkdir()
        result = sglang_replay.replay(record, workdir)
        why = sglang_replay.disagreement(result)
        if why:
            problems.append(f"{record['id']}/{record['gpu']} {record['argv']}: {why}")
        accepted += record["outcome"] == "ok"
    assert problems == []
    assert accepted > len(records) / 2
