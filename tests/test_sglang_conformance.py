"""SGLang-only conformance checks (tests/conformance/sglang/); the checks every engine shares
(verdicts, values, messages, fixed launches) are in tests/test_conformance.py.

The records were made by running each SGLang release's real parser and ServerArgs
resolution on a CPU with a pretend Hopper or Blackwell GPU (scripts/conformance/
sglang_record.py); here they are replayed without SGLang.  SGLang accepted a launch =>
no finding that means "SGLang refuses"; SGLang refused it with a ReplaySSM-related error
=> the code for that error is among the findings, worded as SGLang words it; and what the
linter derives (the radix-cache strategy, the overlap scheduler, the decode backend)
equals what SGLang resolved.  Deliberate differences are listed, with the reason, in
tests/conformance/sglang/sglang_replay.py and README.md; records the linter does not agree
with yet are listed, by class, in expected-disagreements.jsonl (issue 19), and must still
disagree (a fix removes their lines).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "conformance" / "sglang"))

import sglang_replay  # noqa: E402

RELEASES = sglang_replay.releases()


def test_every_release_is_recorded():
    from flake8_replayssm.engines.sglang.knowledge import knowledge

    assert RELEASES == sorted(knowledge().releases, key=lambda v: [int(x) for x in v.split(".")])


def test_records_cover_the_dimensions_of_issue_19():
    """Both GPUs, both CUDA versions where CUDA matters, the environment, every entry form."""
    records = [r for release in RELEASES for r in sglang_replay.load(release)]
    assert {(r["gpu"], r["cuda"]) for r in records} == {
        ("hopper", "12.9"), ("hopper", "13.0"), ("blackwell", "12.9"), ("blackwell", "13.0")}
    assert {r["entry"] for r in records} == {"serve", "launch_server", "router"}
    modes = {r["env"].get("SGLANG_RAGGED_VERIFY_MODE") for r in records}
    assert {"static", "cap-accept", "compact"} <= modes
    assert any(r.get("post") and r["post"].get("error") for r in records)


def test_the_router_check_holds_where_the_launcher_failed_at_import():
    """RSM309's check of ``python -m sglang_router.launch_server`` (sglang.toml) applies to
    exactly the releases whose recorded router launches all failed at import."""
    from flake8_replayssm.engines.sglang.knowledge import knowledge

    outcomes = {release: {"import" if r["outcome"] != "ok" and r["outcome"]["stage"] == "import" else "read"
                          for r in sglang_replay.load(release) if r["entry"] == "router"}
                for release in RELEASES}
    assert all(len(seen) == 1 for seen in outcomes.values()), outcomes
    failing = {release for release, seen in outcomes.items() if seen == {"import"}}
    checked = {version for version, release in knowledge().releases.items()
               if any(c.id == "router_launcher_import" for c in release.checks)}
    assert failing == checked == {"0.5.15", "0.5.16", "0.5.17", "0.5.18", "0.5.19"}


def test_expected_disagreements_still_disagree(tmp_path):
    """Every line of expected-disagreements.jsonl names a record that exists and still
    disagrees in that way: when the linter learns a class, its lines must go."""
    by_key = {sglang_replay.record_key(r): r for path in sglang_replay.record_files()
              for r in sglang_replay.load(path.name[:-len(".jsonl")])}
    listed: dict[tuple, set[str]] = {}
    for release, lid, gpu, cuda, kind in sglang_replay.EXPECTED:
        listed.setdefault((release, lid, gpu, cuda), set()).add(kind)
    stale = []
    for number, (key, kinds) in enumerate(sorted(listed.items())):
        assert key in by_key, key
        workdir = tmp_path / str(number)
        workdir.mkdir()
        result = sglang_replay.replay(by_key[key], workdir)
        found = {kind for kind, _ in sglang_replay.disagreements_of(result)}
        stale += [f"{key} {kind}" for kind in sorted(kinds - found)]
    assert stale == []


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
