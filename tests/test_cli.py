"""Tests for the ``replayssm-lint`` command line (flake8_replayssm.cli).

Launch files are Python (``LLM(..., use_replayssm=True)``) written to tmp_path;
the CLI runs in-process through ``cli.main([...])`` and its output is read with
capsys.  One test runs the installed ``replayssm-lint`` console script.

Facts used (reference/vllm-replayssm-rules.md): on 0.33.0 the plain Nemotron-H
launch is RSM008 (Triton ReplaySSM under Model Runner V2, the CUDA default from
0.30) and passes on 0.28.0; Falcon-H1 with ReplaySSM is RSM001 on every release.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_replayssm import cli, target
from flake8_replayssm.rules import BY_CODE, RULES

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FALCON = "tiiuae/Falcon-H1-1.5B-Instruct"

NANO_SRC = f'from vllm import LLM\nllm = LLM("{NANO}", use_replayssm=True)\n'
FALCON_SRC = f'from vllm import LLM\nllm = LLM("{FALCON}", use_replayssm=True)\n'
UNRESOLVED_SRC = "import sys\nfrom vllm import LLM\nllm = LLM(sys.argv[1], use_replayssm=True)\n"
CLEAN_SRC = "from vllm import LLM\nllm = LLM('facebook/opt-125m')\n"


@pytest.fixture(autouse=True)
def _no_installed_vllm(monkeypatch):
    """Verdicts must not depend on whether this machine has vllm installed."""
    monkeypatch.setattr(target, "installed_version", lambda package: None)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty directory that is the working directory of the run."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


SUMMARY = re.compile(r"(No findings|Found \d+ findings?) .*\.\n\Z")


def run(capsys, *args: str) -> tuple[int, str, str]:
    """Exit code, findings output (text output's closing count line removed), stderr."""
    code, out, err = run_raw(capsys, *args)
    lines = out.splitlines(keepends=True)
    if lines and SUMMARY.match(lines[-1]):
        out = "".join(lines[:-1])
    return code, out, err


def run_raw(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *args: str) -> tuple[int, list[dict]]:
    code, out, err = run(capsys, "check", "--format", "json", *args)
    assert "Traceback" not in err
    return code, json.loads(out)


def codes_of(items: list[dict]) -> list[tuple[str, str]]:
    return sorted((Path(i["path"]).name, i["code"]) for i in items)


def replayssm_column(src: str, line: int) -> int:
    """flake8's 1-based column of the ``use_replayssm`` keyword on ``line``."""
    return src.splitlines()[line - 1].index("use_replayssm") + 1


# ---------------------------------------------------------------- exit codes


def test_exit_0_when_clean(project, capsys):
    write(project / "ok.py", CLEAN_SRC)
    code, out, err = run(capsys, "check", "ok.py")
    assert (code, out) == (0, "")
    assert "Traceback" not in err


def test_exit_0_for_launch_the_release_accepts(project, capsys):
    write(project / "nano.py", NANO_SRC)
    code, out, _ = run(capsys, "check", "--vllm-version", "0.28.0", "nano.py")
    assert (code, out) == (0, "")


def test_exit_1_with_findings(project, capsys):
    write(project / "nano.py", NANO_SRC)
    code, out, _ = run(capsys, "check", "--vllm-version", "0.33.0", "nano.py")
    assert code == 1
    assert out.startswith(f"nano.py:2:{replayssm_column(NANO_SRC, 2)}: RSM008 ")
    assert "[vLLM 0.33.0]" in out


@pytest.mark.parametrize("args", [
    ["check", "--vllm-version", "banana", "x.py"],  # not a version
    ["check", "--select", "RSM999", "x.py"],
    ["check", "--ignore", "E501", "x.py"],
    ["check", "--enable", "XYZ1", "x.py"],
    ["check", "--format", "xml", "x.py"],
    ["check", "--platform", "tpu", "x.py"],
    ["check", "--no-such-option", "x.py"],
    ["frobnicate"],
    [],
    ["explain", "RSM999"],
])
def test_exit_2_on_bad_usage(project, capsys, args):
    write(project / "x.py", NANO_SRC)
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.strip(), "a usage error must say what is wrong"
    assert "Traceback" not in err


def test_release_before_replayssm_is_a_verdict_not_a_usage_error(project, capsys):
    """DESIGN: a launch targeted at a release before 0.27.0 is RSM104 (the flag does not exist)."""
    write(project / "x.py", NANO_SRC)
    code, out, err = run(capsys, "check", "--format", "json", "--vllm-version", "0.26.0", "x.py")
    assert code == 1, err
    [finding] = json.loads(out)
    assert finding["code"] == "RSM104" and finding["line"] == 2
    assert "0.26.0" in finding["message"] and "0.27.0" in finding["message"]
    assert "unexpected keyword argument 'use_replayssm'" in finding["message"]
    assert finding["vllm_version"] == "0.26.0"


def test_unknown_release_after_the_known_ones_is_judged_by_the_newest(project, capsys):
    write(project / "nano.py", NANO_SRC)
    code, out, err = run(capsys, "check", "--verbose", "--vllm-version", "0.99.0", "nano.py")
    assert code == 1
    assert "RSM008" in out
    assert "0.99.0" in err


def test_bad_pyproject_is_a_config_error(project, capsys):
    write(project / "pyproject.toml", "[tool.flake8-replayssm\n")
    write(project / "nano.py", NANO_SRC)
    code, out, err = run(capsys, "check", ".")
    assert (code, out) == (2, "")
    assert "pyproject.toml" in err and "Traceback" not in err


def test_bad_platform_in_pyproject_is_a_config_error(project, capsys):
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nplatform = "tpu"\n')
    write(project / "nano.py", NANO_SRC)
    code, _, err = run(capsys, "check", ".")
    assert code == 2
    assert "tpu" in err


def test_version_and_help_exit_0(capsys):
    assert cli.main(["--version"]) == 0
    assert "replayssm-lint" in capsys.readouterr().out
    assert cli.main(["check", "--help"]) == 0
    assert "--vllm-version" in capsys.readouterr().out


# ---------------------------------------------------------------- formats


def test_text_format(project, capsys):
    write(project / "falcon.py", FALCON_SRC)
    code, out, _ = run(capsys, "check", "--vllm-version", "0.28.0", "falcon.py")
    assert code == 1
    col = replayssm_column(FALCON_SRC, 2)
    assert out.splitlines() == [out.splitlines()[0]]
    assert out.startswith(f"falcon.py:2:{col}: RSM001 error: --use-replayssm is only supported for Nemotron-H")
    assert "FalconH1ForCausalLM" in out and "[vLLM 0.28.0]" in out


def test_json_format(project, capsys):
    write(project / "nano.py", NANO_SRC)
    write(project / "falcon.py", FALCON_SRC)
    code, items = run_json(capsys, "--vllm-version", "0.33.0", "nano.py", "falcon.py")
    assert code == 1
    assert isinstance(items, list)
    for item in items:
        assert {"path", "line", "column", "code", "message"} <= item.keys()
        assert isinstance(item["line"], int) and isinstance(item["column"], int)
        assert "cell" not in item  # only for notebooks
        assert not item["message"].startswith("RSM")  # the code is not repeated in the message
    assert codes_of(items) == [("falcon.py", "RSM001"), ("falcon.py", "RSM008"), ("nano.py", "RSM008")]
    nano = next(i for i in items if i["path"].endswith("nano.py"))
    assert (nano["line"], nano["column"]) == (2, replayssm_column(NANO_SRC, 2))  # 1-based
    assert "Triton ReplaySSM requires Model Runner V1" in nano["message"]


def test_json_empty_array_when_clean(project, capsys):
    write(project / "ok.py", CLEAN_SRC)
    code, items = run_json(capsys, "ok.py")
    assert (code, items) == (0, [])


def test_sarif_format(project, capsys):
    write(project / "falcon.py", FALCON_SRC)
    code, out, _ = run(capsys, "check", "--format", "sarif", "--vllm-version", "0.33.0", "falcon.py")
    assert code == 1
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    assert "sarif" in doc["$schema"] and "2.1.0" in doc["$schema"]
    assert len(doc["runs"]) == 1
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["name"] == "replayssm-lint"
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [r.code for r in RULES]
    for rule in rules:
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"] == BY_CODE[rule["id"]].doc()
    results = doc["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["RSM001", "RSM008"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == "error"
        assert result["message"]["text"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"].endswith("falcon.py")
        region = physical["region"]
        assert region["startLine"] == 2
        assert region["startColumn"] == replayssm_column(FALCON_SRC, 2)
        assert region["endLine"] == 2
        assert region["endColumn"] == region["startColumn"] + len("use_replayssm")


def test_sarif_with_no_findings_still_lists_rules(project, capsys):
    write(project / "ok.py", CLEAN_SRC)
    code, out, _ = run(capsys, "check", "--format", "sarif", "ok.py")
    doc = json.loads(out)
    assert code == 0
    assert doc["runs"][0]["results"] == []
    assert len(doc["runs"][0]["tool"]["driver"]["rules"]) == len(RULES)


def test_github_format(project, capsys):
    write(project / "falcon.py", FALCON_SRC)
    code, out, _ = run(capsys, "check", "--format", "github", "--vllm-version", "0.33.0", "falcon.py")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2
    col = replayssm_column(FALCON_SRC, 2)
    for line, rsm in zip(lines, ("RSM001", "RSM008")):
        assert line.startswith(f"::error file=falcon.py,line=2,col={col},")
        props, _, message = line[len("::error "):].partition("::")
        assert "\n" not in message
        assert message.startswith(f"{rsm} ")
        assert f"title=replayssm-lint {rsm}" in props


def test_github_format_escapes_property_separators(project, capsys):
    write(project / "a,b" / "x:y.py", FALCON_SRC)
    code, out, _ = run(capsys, "check", "--format", "github", "--select", "RSM001", ".")
    assert code == 1
    (line,) = out.splitlines()
    assert "file=./a%2Cb/x%3Ay.py,line=2," in line


def test_all_formats_agree_on_findings(project, capsys):
    write(project / "nano.py", NANO_SRC)
    write(project / "falcon.py", FALCON_SRC)
    counts = {}
    for fmt in ("text", "json", "sarif", "github"):
        code, out, _ = run(capsys, "check", "--format", fmt, "--vllm-version", "0.33.0", ".")
        assert code == 1
        if fmt == "json":
            counts[fmt] = len(json.loads(out))
        elif fmt == "sarif":
            counts[fmt] = len(json.loads(out)["runs"][0]["results"])
        else:
            counts[fmt] = len(out.splitlines())
    assert set(counts.values()) == {3}, counts


# ---------------------------------------------------------------- code selection


def test_select_keeps_only_selected_codes(project, capsys):
    write(project / "falcon.py", FALCON_SRC)
    code, items = run_json(capsys, "--vllm-version", "0.33.0", "--select", "RSM001", "falcon.py")
    assert code == 1
    assert [i["code"] for i in items] == ["RSM001"]


def test_select_by_prefix_and_lowercase(project, capsys):
    write(project / "falcon.py", FALCON_SRC)
    _, items = run_json(capsys, "--vllm-version", "0.33.0", "--select", "rsm00", "falcon.py")
    assert sorted(i["code"] for i in items) == ["RSM001", "RSM008"]
    _, items = run_json(capsys, "--vllm-version", "0.33.0", "--select", "RSM1", "falcon.py")
    assert items == []


def test_ignore_drops_codes(project, capsys):
    write(project / "falcon.py", FALCON_SRC)
    code, items = run_json(capsys, "--vllm-version", "0.33.0", "--ignore", "RSM008", "falcon.py")
    assert (code, [i["code"] for i in items]) == (1, ["RSM001"])
    code, items = run_json(capsys, "--vllm-version", "0.33.0", "--ignore", "RSM001,RSM008", "falcon.py")
    assert (code, items) == (0, [])


def test_ignore_then_select_longest_prefix_wins(project, capsys):
    write(project / "falcon.py", FALCON_SRC)
    _, items = run_json(capsys, "--vllm-version", "0.33.0", "--ignore", "RSM0", "--select", "RSM001",
                        "falcon.py")
    assert [i["code"] for i in items] == ["RSM001"]


def test_rsm201_off_by_default(project, capsys):
    write(project / "unresolved.py", UNRESOLVED_SRC)
    code, items = run_json(capsys, "--vllm-version", "0.28.0", "unresolved.py")
    assert (code, items) == (0, [])
    # `--select RSM` (the default) does not turn it on either
    code, items = run_json(capsys, "--vllm-version", "0.28.0", "--select", "RSM", "unresolved.py")
    assert (code, items) == (0, [])


@pytest.mark.parametrize("args", [["--enable", "RSM201"], ["--select", "RSM201"]])
def test_rsm201_when_enabled(project, capsys, args):
    write(project / "unresolved.py", UNRESOLVED_SRC)
    code, items = run_json(capsys, "--vllm-version", "0.28.0", *args, "unresolved.py")
    assert code == 1
    assert [(i["code"], i["line"], i["column"]) for i in items] == [
        ("RSM201", 3, replayssm_column(UNRESOLVED_SRC, 3))]


def test_unresolved_model_still_gets_codes_that_hold_for_every_architecture(project, capsys):
    write(project / "unresolved.py", UNRESOLVED_SRC)
    _, items = run_json(capsys, "--vllm-version", "0.33.0", "unresolved.py")
    assert [i["code"] for i in items] == ["RSM008"]
    _, items = run_json(capsys, "--vllm-version", "0.33.0", "--enable", "RSM201", "unresolved.py")
    assert sorted(i["code"] for i in items) == ["RSM008", "RSM201"]


def test_noqa_in_python_file(project, capsys):
    src = NANO_SRC.replace("use_replayssm=True)", "use_replayssm=True)  # noqa: RSM008")
    write(project / "nano.py", src)
    assert run(capsys, "check", "--vllm-version", "0.33.0", "nano.py")[0] == 0
    write(project / "nano.py", NANO_SRC.replace("True)", "True)  # noqa: RSM001"))
    assert run(capsys, "check", "--vllm-version", "0.33.0", "nano.py")[0] == 1


# ---------------------------------------------------------------- walking directories


def test_walks_directories_and_skips_tool_dirs(project, capsys):
    for rel in ("top.py", "src/pkg/launch.py", ".git/hooks/x.py", "node_modules/p/x.py",
                ".venv/lib/x.py", "sub/__pycache__/x.py", ".tox/py/x.py"):
        write(project / rel, FALCON_SRC)
    code, items = run_json(capsys, "--select", "RSM001", ".")
    assert code == 1
    paths = sorted(Path(i["path"]).as_posix() for i in items)
    assert paths == ["src/pkg/launch.py", "top.py"]


def test_walks_absolute_directory(project, capsys):
    write(project / "a" / "b" / "falcon.py", FALCON_SRC)
    _, items = run_json(capsys, "--select", "RSM001", str(project))
    assert [Path(i["path"]) for i in items] == [project / "a" / "b" / "falcon.py"]


def test_default_path_is_current_directory(project, capsys):
    write(project / "falcon.py", FALCON_SRC)
    code, out, _ = run(capsys, "check", "--select", "RSM001")
    assert code == 1
    assert "falcon.py:2:" in out


@pytest.mark.parametrize("pattern", ["gen", "gen,other", "*_pb2.py", "*/gen/*"])
def test_exclude_globs(project, capsys, pattern):
    write(project / "keep.py", FALCON_SRC)
    write(project / "gen" / "launch.py", FALCON_SRC)
    write(project / "api_pb2.py", FALCON_SRC)
    write(project / "deep" / "gen" / "x.py", FALCON_SRC)
    _, items = run_json(capsys, "--select", "RSM001", "--exclude", pattern, str(project))
    names = {Path(i["path"]).relative_to(project).as_posix() for i in items}
    assert "keep.py" in names
    if pattern == "*_pb2.py":
        assert "api_pb2.py" not in names and "gen/launch.py" in names
    else:
        assert "gen/launch.py" not in names and "deep/gen/x.py" not in names


def test_exclude_relative_glob_with_slash(project, capsys):
    write(project / "keep.py", FALCON_SRC)
    write(project / "gen" / "launch.py", FALCON_SRC)
    _, items = run_json(capsys, "--select", "RSM001", "--exclude", "gen/*", ".")
    assert sorted(Path(i["path"]).as_posix() for i in items) == ["keep.py"]


def test_only_known_file_kinds_are_read(project, capsys):
    write(project / "falcon.py", FALCON_SRC)
    write(project / "notes.txt", FALCON_SRC)
    write(project / "launch.py.bak", FALCON_SRC)
    _, items = run_json(capsys, "--select", "RSM001", ".")
    assert [Path(i["path"]).name for i in items] == ["falcon.py"]


def test_jobs_gives_the_same_findings(project, capsys):
    for i in range(6):
        write(project / f"m{i}" / "falcon.py", FALCON_SRC)
        write(project / f"m{i}" / "nano.py", NANO_SRC)
    _, serial = run_json(capsys, "--vllm-version", "0.33.0", ".")
    _, parallel = run_json(capsys, "--vllm-version", "0.33.0", "--jobs", "2", ".")
    assert len(serial) == 18
    assert parallel == serial


# ---------------------------------------------------------------- robustness


def test_binary_and_non_utf8_files_give_no_traceback(project, capsys):
    write(project / "blob.py", b"use_replayssm=True\x00\x01\x02\xff\xfe" * 50)
    write(project / "image.png", bytes(range(256)) * 20)
    write(project / "data.ipynb", b"\x00replayssm\x89PNG")
    write(project / "cfg.yaml", b"\x00\xff--config")
    write(project / "garbage.py", bytes((i * 37 + 11) % 256 for i in range(4000)).replace(b"\x00", b"x"))
    latin1 = ('# -*- coding: latin-1 -*-\n# caf\xe9 na\xefve\n' + FALCON_SRC).encode("latin-1")
    write(project / "latin1.py", latin1)
    write(project / "broken.py", "from vllm import LLM\nLLM('x', use_replayssm=True\n")
    write(project / "bom.py", "\ufeff" + FALCON_SRC)
    write(project / "crlf.py", FALCON_SRC.replace("\n", "\r\n"))
    code, out, err = run(capsys, "check", "--format", "json", "--select", "RSM001", ".")
    assert "Traceback" not in err and "internal error" not in err
    items = json.loads(out)
    assert code == 1
    # the latin-1 launch is still found, on the right line
    assert sorted((Path(i["path"]).name, i["line"]) for i in items) == [
        ("bom.py", 2), ("crlf.py", 2), ("latin1.py", 4)]


def test_empty_file_and_empty_directory(project, capsys):
    write(project / "empty.py", "")
    (project / "nothing").mkdir()
    assert run(capsys, "check", "empty.py", "nothing")[:2] == (0, "")


def test_missing_path_gives_no_traceback(project, capsys):
    code, out, err = run(capsys, "check", "no/such/file.py")
    assert "Traceback" not in err
    assert out == ""


def test_missing_path_is_an_error(project, capsys):
    code, out, err = run(capsys, "check", "no/such/file.py")
    assert code == 2
    assert "no/such/file.py" in err


# ---------------------------------------------------------------- stdin


def feed_stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))


def test_stdin_filename(project, capsys, monkeypatch):
    feed_stdin(monkeypatch, FALCON_SRC)
    code, items = run_json(capsys, "--vllm-version", "0.28.0", "--stdin-filename", "pkg/launch.py")
    assert code == 1
    assert [(i["path"], i["line"], i["code"]) for i in items] == [("pkg/launch.py", 2, "RSM001")]


def test_stdin_dash(project, capsys, monkeypatch):
    feed_stdin(monkeypatch, FALCON_SRC)
    code, out, _ = run(capsys, "check", "--select", "RSM001", "-")
    assert code == 1
    assert "RSM001" in out


def test_stdin_clean(project, capsys, monkeypatch):
    feed_stdin(monkeypatch, "print('hello')\n")
    assert run(capsys, "check", "--stdin-filename", "x.py")[:2] == (0, "")


def test_stdin_noqa(project, capsys, monkeypatch):
    feed_stdin(monkeypatch, FALCON_SRC.replace("True)", "True)  # noqa"))
    assert run(capsys, "check", "--stdin-filename", "x.py")[:2] == (0, "")


# ---------------------------------------------------------------- verbose


def test_verbose_says_which_release_and_why(project, capsys):
    write(project / "nano.py", NANO_SRC)
    code, out, err = run(capsys, "check", "--verbose", "--vllm-version", "0.33.0", "nano.py")
    assert code == 1
    assert "RSM008" in out
    assert "nano.py:2" in err
    assert "judged for vLLM 0.33.0" in err
    assert "(--vllm-version)" in err
    assert "Triton ReplaySSM requires" not in err  # findings go to stdout only (stderr: what was seen)
    assert "launch LLM(...): RSM008; model nvidia/NVIDIA-Nemotron-Nano-9B-v2" in err


def test_verbose_reason_for_default_release(project, capsys):
    write(project / "nano.py", NANO_SRC)
    code, _, err = run(capsys, "check", "--verbose", "nano.py")
    assert code == 1
    assert "judged for vLLM 0.33.0" in err
    assert "newest" in err


def test_verbose_names_the_file_of_an_accepted_launch(project, capsys):
    write(project / "nano.py", NANO_SRC)
    code, out, err = run(capsys, "check", "--verbose", "--vllm-version", "0.28.0", "nano.py")
    assert (code, out) == (0, "")
    assert "judged for vLLM 0.28.0" in err
    assert "nano.py:2" in err


def test_quiet_without_verbose(project, capsys):
    write(project / "nano.py", NANO_SRC)
    _, _, err = run(capsys, "check", "--vllm-version", "0.28.0", "nano.py")
    assert err == ""


# ---------------------------------------------------------------- explain


def test_explain_code(capsys):
    code, out, _ = run(capsys, "explain", "RSM008")
    assert code == 0
    assert out == BY_CODE["RSM008"].doc()
    assert out.startswith("# replayssm-model-runner (RSM008)")
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix"):
        assert heading in out
    assert "VLLM_USE_V2_MODEL_RUNNER=0" in out


def test_explain_is_case_insensitive(capsys):
    assert run(capsys, "explain", "rsm001")[1] == BY_CODE["RSM001"].doc()


def test_explain_off_by_default_code_says_so(capsys):
    _, out, _ = run(capsys, "explain", "RSM201")
    assert "Off by default" in out and "--enable RSM201" in out


def test_explain_all(capsys):
    code, out, _ = run(capsys, "explain", "--all")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == [r.code for r in RULES]
    assert "replayssm-model-runner" in lines[[r.code for r in RULES].index("RSM008")]
    assert [line.split()[0] for line in lines if "off by default" in line] == ["RSM201"]
    assert sum("off by default" in line for line in lines) == 1


# ---------------------------------------------------------------- target release


def test_explicit_version_beats_project_pins(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "svc"\ndependencies = ["vllm==0.33.0"]\n')
    write(project / "requirements.txt", "vllm==0.33.0\n")
    write(project / "nano.py", NANO_SRC)
    code, _, err = run(capsys, "check", "-v", "--vllm-version", "0.28.0", ".")
    assert code == 0
    assert "judged for vLLM 0.28.0 (--vllm-version" in err


def test_requirements_pin_in_project_root(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "svc"\n')
    write(project / "requirements.txt", "numpy>=1\nvllm==0.28.0\n")
    write(project / "src" / "nano.py", NANO_SRC)
    code, out, err = run(capsys, "check", "-v", ".")
    assert (code, out) == (0, "")
    assert "judged for vLLM 0.28.0" in err and "requirements.txt" in err


@pytest.mark.parametrize("requirement,releases,code", [
    ("vllm>=0.28,<0.29", "0.28.0", 0),          # the one release the range admits
    ("vllm >= 0.28.0, != 0.28.0, < 0.30", "0.29.0", 0),
    ("vllm~=0.28.0", "0.28.0", 0),              # compatible release: 0.28.*
    ("vllm==0.29.*", "0.29.0", 0),
    ("vllm>=0.30", "0.30.0–0.33.0", 1),     # every known release it admits: RSM008 on each
    ("vllm>=0.28,<0.31", "0.28.0–0.30.0", 1),
])
def test_a_range_pin_is_every_release_it_admits(project, capsys, requirement, releases, code):
    write(project / "pyproject.toml", '[project]\nname = "svc"\n')
    write(project / "requirements.txt", f"numpy>=1\n{requirement}\n")
    write(project / "nano.py", NANO_SRC)
    got, _, err = run(capsys, "check", "-v", ".")
    assert got == code
    assert f"judged for vLLM {releases} (" in err and "requirements.txt" in err


def test_a_range_no_known_release_satisfies_is_not_a_pin(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "svc"\n')
    write(project / "requirements.txt", "vllm<0.20\n")
    write(project / "nano.py", NANO_SRC)
    _, _, err = run(capsys, "check", "-v", ".")
    assert "newest release known" in err


def test_pyproject_dependency_pin(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "svc"\ndependencies = ["vllm[audio]==0.28.0"]\n')
    write(project / "nano.py", NANO_SRC)
    code, _, err = run(capsys, "check", "-v", ".")
    assert code == 0
    assert "judged for vLLM 0.28.0" in err and "pyproject.toml" in err


def test_pin_is_found_from_a_subdirectory(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "svc"\n')
    write(project / "requirements.txt", "vllm==0.28.0\n")
    write(project / "svc" / "deep" / "nano.py", NANO_SRC)
    code, _, _ = run(capsys, "check", "svc/deep")
    assert code == 0


def test_requirements_pin_without_pyproject(project, capsys):
    write(project / "requirements.txt", "vllm==0.28.0\n")
    write(project / "nano.py", NANO_SRC)
    code, out, err = run(capsys, "check", "-v", ".")
    assert "requirements.txt" in err
    assert (code, out) == (0, "")


def test_requirements_pin_without_pyproject_whatever_path_is_given(project, capsys):
    (project / ".git").mkdir()
    write(project / "requirements.txt", "vllm==0.28.0\n")
    write(project / "src" / "pkg" / "nano.py", NANO_SRC)
    assert run(capsys, "check", ".")[:2] == (0, "")
    # the same file, named directly, must get the same verdict
    code, out, err = run(capsys, "check", "-v", "src/pkg/nano.py")
    assert "requirements.txt" in err
    assert (code, out) == (0, "")


@pytest.mark.parametrize("order", [("old", "new"), ("new", "old")])
def test_each_path_uses_its_own_project_config(project, capsys, order):
    write(project / "old" / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.28.0"\n')
    write(project / "new" / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.33.0"\n')
    write(project / "old" / "nano.py", NANO_SRC)
    write(project / "new" / "nano.py", NANO_SRC)
    _, items = run_json(capsys, *order)
    assert [(Path(i["path"]).parent.name, i["code"]) for i in items] == [("new", "RSM008")]


@pytest.mark.parametrize("ranges,judged,tag", [
    ("", "vLLM 0.28.0\u20130.33.0 (vllm>=0.28.0 in requirements.txt (every known release it admits))",
     "[vLLM 0.30.0\u20130.33.0]"),  # the Triton default under Model Runner V2 from 0.30
    ('\n[tool.flake8-replayssm]\nranges = "newest"\n',
     "vLLM 0.33.0 (vllm>=0.28.0 in requirements.txt (every known release it admits); the newest of them)",
     "[vLLM 0.33.0]"),
])
def test_range_without_upper_bound(project, capsys, ranges, judged, tag):
    write(project / "pyproject.toml", '[project]\nname = "svc"\n' + ranges)
    write(project / "requirements.txt", "vllm>=0.28.0\n")
    write(project / "nano.py", NANO_SRC)
    code, out, err = run(capsys, "check", "-v", ".")
    assert code == 1
    assert f"judged for {judged}" in err and tag in out


def test_conflicting_pins_are_ignored(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "svc"\ndependencies = ["vllm==0.33.0"]\n')
    write(project / "requirements.txt", "vllm==0.28.0\n")
    write(project / "nano.py", NANO_SRC)
    code, _, err = run(capsys, "check", "-v", ".")
    assert code == 1
    assert "judged for vLLM 0.33.0" in err and "newest" in err


def test_newest_release_without_any_pin(project, capsys):
    write(project / "nano.py", NANO_SRC)
    write(project / "falcon.py", FALCON_SRC)
    _, items = run_json(capsys, ".")
    assert codes_of(items) == [("falcon.py", "RSM001"), ("falcon.py", "RSM008"), ("nano.py", "RSM008")]
    assert all("[vLLM 0.33.0]" in i["message"] for i in items)


DOCKERFILE = f"""FROM vllm/vllm-openai:v{{tag}}
CMD ["--model", "{NANO}", "--use-replayssm"]
"""


def test_image_tag_beats_project_pin(project, capsys):
    pytest.importorskip("flake8_replayssm.frontends.dockerfile")
    write(project / "pyproject.toml", '[project]\nname = "svc"\ndependencies = ["vllm==0.33.0"]\n')
    write(project / "Dockerfile", DOCKERFILE.format(tag="0.28.0"))
    write(project / "nano.py", NANO_SRC)
    code, items = run_json(capsys, ".")
    # the Dockerfile launch is judged for its image (0.28.0: accepted); the Python launch for the pin
    assert codes_of(items) == [("nano.py", "RSM008")]
    _, _, err = run(capsys, "check", "-v", ".")
    assert "image tag v0.28.0" in err


def test_image_tag_beats_newest(project, capsys):
    pytest.importorskip("flake8_replayssm.frontends.dockerfile")
    write(project / "Dockerfile", DOCKERFILE.format(tag="0.28.0"))
    assert run(capsys, "check", ".")[:2] == (0, "")
    write(project / "Dockerfile", DOCKERFILE.format(tag="0.33.0"))
    _, items = run_json(capsys, ".")
    assert codes_of(items) == [("Dockerfile", "RSM008")]


def test_explicit_version_beats_image_tag(project, capsys):
    pytest.importorskip("flake8_replayssm.frontends.dockerfile")
    write(project / "Dockerfile", DOCKERFILE.format(tag="0.28.0"))
    _, items = run_json(capsys, "--vllm-version", "0.33.0", ".")
    assert codes_of(items) == [("Dockerfile", "RSM008")]


def test_compose_image_tag_beats_project_pin(project, capsys):
    pytest.importorskip("flake8_replayssm.frontends.structured")
    write(project / "pyproject.toml", '[project]\nname = "svc"\ndependencies = ["vllm==0.33.0"]\n')
    write(project / "compose.yaml", f"""services:
  old:
    image: vllm/vllm-openai:v0.28.0
    command: ["--model", "{NANO}", "--use-replayssm"]
  new:
    image: vllm/vllm-openai:v0.33.0
    command: ["--model", "{NANO}", "--use-replayssm"]
""")
    write(project / "nano.py", CLEAN_SRC)
    code, items = run_json(capsys, ".")
    assert code == 1
    assert [(Path(i["path"]).name, i["line"], i["code"]) for i in items] == [("compose.yaml", 7, "RSM008")]


# ---------------------------------------------------------------- [tool.flake8-replayssm]


def test_pyproject_vllm_version(project, capsys):
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.28.0"\n')
    write(project / "nano.py", NANO_SRC)
    assert run(capsys, "check", ".")[:2] == (0, "")
    # the command line beats pyproject
    assert run(capsys, "check", "--vllm-version", "0.33.0", ".")[0] == 1


def test_pyproject_vllm_version_beats_pins(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "svc"\ndependencies = ["vllm==0.33.0"]\n\n'
                                      '[tool.flake8-replayssm]\nvllm-version = "0.28.0"\n')
    write(project / "nano.py", NANO_SRC)
    assert run(capsys, "check", ".")[:2] == (0, "")


def test_pyproject_is_found_from_the_checked_path(project, capsys, monkeypatch):
    write(project / "svc" / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.28.0"\n')
    write(project / "svc" / "nano.py", NANO_SRC)
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert run(capsys, "check", str(project / "svc"))[:2] == (0, "")
    assert run(capsys, "check", str(project / "svc" / "nano.py"))[:2] == (0, "")


def test_pyproject_platform(project, capsys):
    kimi = ('from vllm import LLM\nllm = LLM("moonshotai/Kimi-K3", use_replayssm=True,\n'
            '          speculative_config={"method": "ngram", "num_speculative_tokens": 2})\n')
    write(project / "kimi.py", kimi)
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.33.0"\n')
    assert run(capsys, "check", ".")[:2] == (0, "")
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.33.0"\nplatform = "rocm"\n')
    _, items = run_json(capsys, ".")
    assert [(i["line"], i["code"]) for i in items] == [(2, "RSM001")]
    assert "ROCM" in items[0]["message"].upper()
    # the command line beats pyproject
    assert run(capsys, "check", "--platform", "cuda", ".")[:2] == (0, "")


def test_pyproject_enable(project, capsys):
    write(project / "unresolved.py", UNRESOLVED_SRC)
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.28.0"\nenable = ["RSM201"]\n')
    _, items = run_json(capsys, ".")
    assert [i["code"] for i in items] == ["RSM201"]
    # --ignore on the command line still wins
    assert run(capsys, "check", "--ignore", "RSM201", ".")[:2] == (0, "")


def test_pyproject_extra_models(project, capsys):
    write(project / "mine.py", 'from vllm import LLM\nLLM("myorg/my-hybrid", use_replayssm=True)\n')
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.28.0"\n')
    assert run(capsys, "check", ".")[:2] == (0, "")  # unknown model: no architecture-specific code
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.28.0"\n\n'
                                      '[tool.flake8-replayssm.extra-models]\n'
                                      '"myorg/my-hybrid" = "FalconH1ForCausalLM"\n')
    _, items = run_json(capsys, ".")
    assert [i["code"] for i in items] == ["RSM001"]
    assert "FalconH1ForCausalLM" in items[0]["message"]
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.28.0"\n\n'
                                      '[tool.flake8-replayssm.extra-models]\n'
                                      '"myorg/*" = "NemotronHForCausalLM"\n')
    assert run(capsys, "check", "--enable", "RSM201", ".")[:2] == (0, "")


def test_pyproject_bad_extra_models(project, capsys):
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nextra-models = ["a"]\n')
    write(project / "nano.py", NANO_SRC)
    code, _, err = run(capsys, "check", ".")
    assert code == 2 and "extra-models" in err


# ---------------------------------------------------------------- console script


def console_script() -> str:
    beside = Path(sys.executable).with_name("replayssm-lint")
    found = str(beside) if beside.exists() else shutil.which("replayssm-lint")
    if not found:
        pytest.skip("replayssm-lint console script is not installed")
    return found


def test_console_script(tmp_path):
    write(tmp_path / "falcon.py", FALCON_SRC)
    write(tmp_path / "ok.py", CLEAN_SRC)
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    proc = subprocess.run([console_script(), "check", "--vllm-version", "0.28.0", "--format", "json", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    items = json.loads(proc.stdout)
    assert [(i["path"], i["line"], i["column"], i["code"]) for i in items] == [
        ("./falcon.py", 2, replayssm_column(FALCON_SRC, 2), "RSM001")]
    clean = subprocess.run([console_script(), "check", "--vllm-version", "0.28.0", "ok.py"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (clean.returncode, clean.stdout) == (0, "No findings (1 file checked).\n")
    bad = subprocess.run([console_script(), "check", "--vllm-version", "newer", "ok.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr


def test_release_and_its_source_are_in_json_and_verbose(project, capsys):
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.33.0"\n')
    write(project / "nano.py", NANO_SRC)
    code, out, err = run(capsys, "check", "-v", "--format", "json", ".")
    assert code == 1
    [item] = json.loads(out)
    assert item["vllm_version"] == "0.33.0"
    assert "pyproject.toml" in item["vllm_version_reason"] and "pyproject.toml" in err


def test_not_a_version_is_a_usage_error(project, capsys):
    write(project / "nano.py", NANO_SRC)
    code, _, err = run(capsys, "check", "--vllm-version", "banana", ".")
    assert code == 2 and "not a vLLM version" in err


def test_a_run_without_launches_imports_no_engine_judging_module(tmp_path):
    """Startup is part of every run (pre-commit, editors): with no release named and nothing to
    judge, neither engine's judging modules nor their release tables are imported."""
    import subprocess
    import sys

    code = ("import sys\nfrom flake8_replayssm.cli import main\n"
            f"rc = main(['check', {str(tmp_path)!r}])\n"
            "print(sorted(m for m in sys.modules if m.endswith(('.judge', '.knowledge', '.checks'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
