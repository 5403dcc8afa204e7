"""The linter agrees with vLLM: every recorded launch replayed (tests/conformance/).

The records were made by running each vLLM release's real parser and config
validation on a CPU (scripts/conformance/); here they are replayed without
vLLM.  vLLM accepted a launch => no finding that means "vLLM fails"; vLLM
rejected it with a ReplaySSM error => the code for that error is among the
findings; and the values the linter derives (prefix caching, cache mode,
runner, speculative tokens, ...) equal vLLM's.  Deliberate differences are
listed, with the reason, in tests/conformance/replay.py and README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "conformance"))

import replay  # noqa: E402

RELEASES = replay.releases()


def test_records_exist():
    assert RELEASES, "no recorded releases under tests/conformance/"


@pytest.mark.parametrize("release", RELEASES)
def test_verdicts_agree_with_vllm(release, tmp_path):
    records = replay.load(release)
    assert len(records) >= 200
    problems = []
    for number, record in enumerate(records):
        workdir = tmp_path / str(number)
        workdir.mkdir()
        result = replay.replay(record, workdir)
        why = replay.disagreement(result)
        if why:
            problems.append(f"{record['id']} {record['argv']} env={record['env']}: {why}")
        problems += [f"{record['id']}: {m}" for m in replay.parsed_mismatches(result)]
    assert problems == []


def test_error_mapping_covers_every_replayssm_message():
    """Every ReplaySSM message vLLM gave in the records maps to a code."""
    unmapped = set()
    for release in RELEASES:
        for record in replay.load(release):
            outcome = record["outcome"]
            if outcome != "ok" and "replayssm" in outcome["error"].lower() \
                    and replay.error_code(outcome["error"]) is None:
                unmapped.add(outcome["error"][:120])
    assert unmapped == set()
