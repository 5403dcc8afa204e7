"""Each code's documented examples behave as documented (Fixit-style valid/invalid)."""

from __future__ import annotations

import pytest

from flake8_replayssm import check_source
from flake8_replayssm.cli import main
from flake8_replayssm.config import LintConfig
from flake8_replayssm.engines.vllm.resolve import FACT_DIMENSIONS
from flake8_replayssm.engines.vllm.knowledge import knowledge
from flake8_replayssm.rules import RULES

CASES = [(rule, example, True) for rule in RULES for example in rule.invalid] + \
        [(rule, example, False) for rule in RULES for example in rule.valid]


@pytest.mark.parametrize("rule,example,reported", CASES,
                         ids=[f"{r.code}-{'invalid' if bad else 'valid'}" for r, _, bad in CASES])
def test_documented_example(rule, example, reported):
    version = {"sglang_version" if example.engine == "sglang" else "vllm_version": example.release}
    config = LintConfig(**version, enable=("RSM201",))
    codes = [f.code for f in check_source(example.code, example.kind, config=config)]
    assert (rule.code in codes) is reported, codes


def test_every_code_is_documented_once():
    codes = [rule.code for rule in RULES]
    assert codes == sorted(set(codes))
    release_codes = {check.code for release in knowledge().releases.values() for check in release.checks}
    assert release_codes <= set(codes)


def test_explain_prints_the_doc(capsys):
    assert main(["explain", "RSM008"]) == 0
    out = capsys.readouterr().out
    for heading in ("# replayssm-model-runner (RSM008)", "## What it does", "## Why is this bad?",
                    "## Example", "Use instead", "## Fix safety"):
        assert heading in out
    assert main(["explain", "--all"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert len(listing) == len(RULES) and "off by default" in next(line for line in listing if "RSM201" in line)
    assert main(["explain", "RSM999"]) == 2


def test_release_data_reads_only_known_facts():
    """A typo in a check's condition in releases.toml fails here, not in a user's run."""
    for release in knowledge().releases.values():
        for check in release.checks:
            assert check.when.names <= set(FACT_DIMENSIONS), (release.version, check.id)
            assert check.at in ("use_replayssm", "mamba_block_size", "mamba_cache_mode")


def test_every_release_from_027_to_033_is_known():
    versions = sorted(knowledge().releases)
    assert versions == ["0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0"]
