"""Fixed launches, as vLLM itself judged them (tests/conformance/fixes-RELEASE.jsonl).

``scripts/conformance/check_fixes.py`` took every launch vLLM rejected in
``tests/conformance/RELEASE.jsonl``, ran ``replayssm-lint fix`` (safe, then
``--unsafe``) on it as a one-line shell script, and ran the fixed launch through
the release's own parser and ``create_engine_config``.  Replayed here without
vLLM:

- a fixed launch the linter finds nothing "vLLM refuses to start" in
  (RSM001-RSM009, RSM104, RSM106) was accepted by vLLM, unless vLLM's error is
  one the linter does not model (not a ReplaySSM matter: see
  tests/conformance/README.md, e.g. ``No model specified!`` for ``--config FILE
  MODEL``);
- the fixer still produces the recorded fixes (a sample; re-run the script when
  the fixer changes on purpose).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "conformance"))
sys.path.insert(0, str(HERE.parent / "scripts" / "conformance"))

import replay  # noqa: E402

REFUSING = frozenset({"RSM001", "RSM002", "RSM003", "RSM004", "RSM005", "RSM006", "RSM007", "RSM008",
                      "RSM009", "RSM104", "RSM106"})
RELEASES = sorted(p.name[len("fixes-"):-len(".jsonl")] for p in (HERE / "conformance").glob("fixes-*.jsonl"))


def _load(release: str) -> list[dict]:
    import json

    with open(HERE / "conformance" / f"fixes-{release}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_fix_records_exist():
    assert "0.33.0" in RELEASES, "run scripts/conformance/check_fixes.py --release 0.33.0"


@pytest.mark.parametrize("release", RELEASES)
def test_fixed_launches_that_lint_clean_are_accepted_by_vllm(release, tmp_path):
    """Of the fixed launches the linter finds nothing "vLLM refuses" in, nine in ten or more
    started (tests/test_conformance.py checks that the linter agrees on every one)."""
    checked = accepted = 0
    for number, record in enumerate(replay.fixed_launches(release)):
        assert record["argv"] is not None, f"{record['id']}: the fixed line could not be read"
        workdir = tmp_path / str(number)
        workdir.mkdir()
        if REFUSING & set(replay.replay(record, workdir).codes):
            continue  # the linter says vLLM still refuses it (report-only codes, or --unsafe needed)
        checked += 1
        accepted += record["outcome"] == "ok"
    assert checked >= 100 and accepted >= 0.9 * checked


@pytest.mark.parametrize("release", RELEASES)
def test_fixes_still_fix_what_was_fixed(release):
    """vLLM rejected every launch before; a fix that changed it fixed a code the linter reported
    (and maybe one that fix uncovered, e.g. RSM008 after switching the backend to triton)."""
    for record in _load(release):
        assert record["outcome_before"] != "ok"
        if record["changed"]:
            assert set(record["fixed_codes"]) & set(record["codes_before"]), record["id"]


@pytest.mark.parametrize("release", RELEASES)
def test_the_fixer_still_produces_the_recorded_fixes(release):
    """Every 25th record is fixed again the way check_fixes.py did it."""
    import check_fixes

    records = _load(release)
    sample = records[::25]
    assert sample
    stale = []
    for record in sample:
        source = {"release": record["release"], "id": record["id"], "argv": record["argv_before"],
                  "env": record["env_before"], "files": record["files"], "model_arch": record["model_arch"],
                  "outcome": record["outcome_before"]}
        again = check_fixes.fix_one(source, record["mode"] == "unsafe")
        if (again["argv_after"], again["env_after"], again["files_after"]) != \
                (record["argv_after"], record["env_after"], record["files_after"]):
            stale.append(f"{record['id']} ({record['mode']}): recorded {record['argv_after']} "
                         f"{record['env_after']}, now {again['argv_after']} {again['env_after']}")
    assert stale == [], "the fixer changed: re-run scripts/conformance/check_fixes.py"
