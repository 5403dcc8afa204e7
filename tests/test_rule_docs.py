"""docs/rules/ and the README's compatibility tables are generated and stay in sync.

``scripts/rule_docs.py`` writes one page per code from the rules registry and two tables
from the linter's own verdicts on generated launches; these tests regenerate both and
compare them with what the repository holds, so a rule, a message or a release table
that changes without ``python scripts/rule_docs.py`` fails here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from flake8_replayssm.config import DEFAULT_DOCS_URL, LintConfig, docs_page
from flake8_replayssm.rules import RULES

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import rule_docs  # noqa: E402


@pytest.fixture(scope="module")
def tables() -> dict[str, str]:
    return rule_docs.tables()


def test_every_code_has_its_page_and_every_page_is_current():
    generated = rule_docs.pages()
    assert set(generated) == {f"{rule.code}.md" for rule in RULES} | {"README.md"}
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "rules").glob("*.md")}
    stale = sorted(name for name in generated.keys() | on_disk.keys() if generated.get(name) != on_disk.get(name))
    assert stale == [], "run python scripts/rule_docs.py"


def test_a_page_has_what_explain_says_and_the_releases(tables):
    page = (ROOT / "docs" / "rules" / "RSM008.md").read_text(encoding="utf-8")
    for heading in ("## What it does", "## Why is this bad?", "## Example (vLLM 0.33.0)", "## Fix",
                    "## Fix safety", "## Releases"):
        assert heading in page
    # Triton ReplaySSM fails under the default runner from 0.30 on: the example says so, per release
    assert "- The example above is reported on vLLM 0.30.0–0.33.0 (written for 0.33.0)." in page


def test_the_readme_tables_are_the_linters_verdicts(tables):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert rule_docs.readme_with_tables(readme, tables) == readme, "run python scripts/rule_docs.py"


def test_the_tables_say_what_the_release_data_says(tables):
    """Spot checks against the facts the tables rest on (vLLM's and SGLang's own checks)."""
    rows = {tuple(cells[:3]): cells[3:] for cells in _rows(tables["vllm"])}
    header = _header(tables["vllm"])[3:]
    plain = dict(zip(header, rows[("triton (default)", "default", "default")]))
    assert plain["0.29.0"] == "ok" and plain["0.30.0"] == "RSM008"  # V2 becomes the CUDA default in 0.30
    assert set(rows[("triton (default)", "default", "V1 (`=0`)")]) == {"ok"}
    assert dict(zip(header, rows[("flashinfer", "off", "default")]))["0.29.0"] == "RSM004"  # triton only before 0.30
    sglang = {tuple(cells[:3]): set(cells[3:]) for cells in _rows(tables["sglang"])}
    assert sglang[("hopper", "auto (default)", "on (default)")] == {"RSM302"}
    assert sglang[("hopper", "no_buffer", "on (default)")] == {"RSM305"}
    assert sglang[("hopper", "no_buffer", "off")] == {"ok"}


def _header(table: str) -> list[str]:
    return [c.strip() for c in table.splitlines()[0].strip("|").split("|")]


def _rows(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]


def test_the_default_docs_url_is_each_pages_path_in_the_repository():
    for rule in RULES:
        url = LintConfig().docs_page(rule.code)
        assert url == docs_page(DEFAULT_DOCS_URL, rule.code)
        assert url.endswith(f"/docs/rules/{rule.code}.md") and (ROOT / "docs" / "rules" / f"{rule.code}.md").is_file()
    assert docs_page("https://example.org/lint/{code}.html", "RSM008") == "https://example.org/lint/RSM008.html"
    assert docs_page("https://example.org/rules/", "RSM008") == "https://example.org/rules/RSM008.md"


def test_sarif_links_follow_the_docs_url_setting(tmp_path, monkeypatch, capsys):
    import json

    from flake8_replayssm import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "serve.sh").write_text("vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm\n")
    assert cli.main(["check", "--output-format", "sarif", "--docs-url", "https://lint.example/{code}.html",
                     "serve.sh"]) == 1
    rules = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    assert {r["id"]: r["helpUri"] for r in rules}["RSM008"] == "https://lint.example/RSM008.html"
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-replayssm]\ndocs-url = "not a url"\n')
    assert cli.main(["check", "serve.sh"]) == 2
    assert "docs-url = not a url: expected an http(s) or file URL" in capsys.readouterr().err


def test_each_rule_says_what_fix_may_do_as_data():
    """The fix command reads its policy from the rules' data (no engine's codes in its code):
    every rule's policy is one of three, and every unsafe one says why."""
    from flake8_replayssm.rules import RULES, fix_policy, unsafe_because

    assert {rule.fix_policy for rule in RULES} == {"safe", "unsafe", "report-only"}
    for rule in RULES:
        assert (rule.fix_policy == "unsafe") == bool(rule.unsafe_because), rule.code
    assert fix_policy("RSM900") == "report-only" and fix_policy("RSM007") == "report-only"
    assert "VLLM_USE_V2_MODEL_RUNNER" in unsafe_because("RSM008")
    assert unsafe_because("RSM777") == "the fix changes what the launch does"


def test_the_fix_check_compares_what_each_engine_says_without_its_release_tag():
    from flake8_replayssm.verdicts import without_release_tag

    assert without_release_tag("Triton ReplaySSM requires V1 [vLLM 0.30.0–0.33.0]; fix: set it") == \
        "Triton ReplaySSM requires V1"
    assert without_release_tag("page size 64 is refused [SGLang 0.5.23] (assuming SM 9.0)") == \
        "page size 64 is refused"
    assert without_release_tag("choose one of [triton, flashinfer]") == "choose one of [triton, flashinfer]"
