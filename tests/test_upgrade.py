"""``replayssm-lint upgrade --from OLD --to NEW``: the launches whose verdict an upgrade changes.

Facts used (the release tables): the plain Nemotron-H launch with ReplaySSM is accepted on
0.29.0 and RSM008 on 0.31.0 (Triton under the Model Runner V2 default from 0.30.0), which
the safe fix turns into ``VLLM_USE_V2_MODEL_RUNNER=0 ... --mamba-backend triton``;
FlashInfer with prefix caching off is RSM004 on 0.29.0 and accepted on 0.31.0; an explicit
``--mamba-cache-mode align`` is deprecated in 0.33.0 (RSM105, a warning).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from flake8_replayssm import cli

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
BREAKS = f"vllm serve {NANO} --use-replayssm --port 8000\n"
FIXED = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --no-enable-prefix-caching\n"
SAME = f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {NANO} --use-replayssm --mamba-backend triton\n"
WARNS = f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {NANO} --use-replayssm --mamba-backend triton " \
        "--mamba-cache-mode align\n"


pytestmark = pytest.mark.usefixtures("no_installed_vllm")


@pytest.fixture
def project(git_project):
    (git_project / "serve.sh").write_text("#!/bin/bash\n" + BREAKS + FIXED + SAME)
    return git_project


def upgrade(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["upgrade", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_table(project, capsys):
    code, out, err = upgrade(capsys, "--from", "0.29.0", "--to", "0.31.0", ".")
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["location", "launch", "change", "vLLM", "0.29.0", "vLLM", "0.31.0",
                                "safe", "fix", "for", "0.31.0"]
    assert lines[1].split() == ["./serve.sh:2:1", "vllm", "serve", "breaks", "clean", "RSM008", "fixes", "RSM008"]
    assert lines[2].split() == ["./serve.sh:3:1", "vllm", "serve", "fixed", "RSM004", "clean", "-"]
    assert len([line for line in lines if line.startswith("./serve.sh:")]) == 3  # two rows, one new finding
    assert "./serve.sh:2:46: RSM008 error: Triton ReplaySSM requires Model Runner V1" in out
    assert "+VLLM_USE_V2_MODEL_RUNNER=0 vllm serve" in out and "-vllm serve" in out
    assert lines[-1] == ("vLLM 0.29.0 -> 0.31.0: 2 launches change verdict (1 breaks, 1 fixed by the upgrade; "
                         "1 file checked).")


def test_json(project, capsys):
    code, out, _ = upgrade(capsys, "--from", "0.29.0", "--to", "0.31.0", "--output-format", "json", "serve.sh")
    assert code == 1
    data = json.loads(out)
    assert (data["engine"], data["from"], data["to"], data["checked"], data["breaks"]) == \
        ("vllm", "0.29.0", "0.31.0", 1, True)
    breaks, fixed = data["launches"]
    assert (breaks["line"], breaks["status"], breaks["gained"], breaks["lost"]) == (2, "breaks", ["RSM008"], [])
    assert [f["code"] for f in breaks["after"]] == ["RSM008"] and breaks["before"] == []
    assert "[vLLM 0.31.0]" in breaks["after"][0]["message"]
    assert breaks["safe_fix"] == {"removes": ["RSM008"], "leaves": []}
    assert (fixed["line"], fixed["status"], fixed["lost"]) == (3, "fixed", ["RSM004"])
    [fix] = data["fixes"]
    assert fix["path"] == "serve.sh" and "+VLLM_USE_V2_MODEL_RUNNER=0 vllm serve" in fix["diff"]


def test_markdown(project, capsys):
    code, out, _ = upgrade(capsys, "--from", "0.29.0", "--to", "0.31.0", "--output-format", "markdown", ".")
    assert code == 1
    assert out.startswith("### replayssm-lint: vLLM 0.29.0 \u2192 0.31.0\n")
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert rows[0] == "| | where | launch | vLLM 0.29.0 | vLLM 0.31.0 | safe fix for 0.31.0 |"
    assert rows[1].startswith("| \u274c breaks | <code>&#46;&#47;serve&#46;sh&#58;2&#58;1</code> |")
    assert rows[1].endswith("| clean | RSM008 | fixes RSM008 |")
    assert rows[2].startswith("| \u2705 fixed |")
    assert "<details><summary>Safe fix for vLLM 0.31.0: <code>&#46;&#47;serve&#46;sh</code></summary>" in out
    assert "\n```diff\n" in out and "+VLLM_USE_V2_MODEL_RUNNER=0 vllm serve" in out


def test_nothing_breaks_exits_0(project, capsys):
    """0.31.0 -> 0.33.0: the pinned Triton launch with a mode only gets a warning (RSM105)."""
    (project / "serve.sh").write_text(WARNS + SAME)
    code, out, _ = upgrade(capsys, "--from", "0.31.0", "--to", "0.33.0", ".")
    assert code == 0
    [row] = [line for line in out.splitlines() if line.startswith("./serve.sh:1:")][:1]
    assert row.split()[3:6] == ["changed", "clean", "RSM105"]
    code, out, _ = upgrade(capsys, "--from", "0.31.0", "--to", "0.33.0", "--output-format", "json", ".")
    assert json.loads(out)["breaks"] is False


def test_no_change(project, capsys):
    (project / "serve.sh").write_text(SAME)
    code, out, _ = upgrade(capsys, "--from", "0.30.0", "--to", "0.31.0", ".")
    assert (code, out) == (0, "vLLM 0.30.0 -> 0.31.0: no launch changes verdict (1 file checked).\n")


def test_exit_zero_and_a_downgrade(project, capsys):
    assert upgrade(capsys, "--from", "0.29.0", "--to", "0.31.0", "--exit-zero", ".")[0] == 0
    code, out, _ = upgrade(capsys, "--from", "0.31.0", "--to", "0.29.0", "--output-format", "json", ".")
    assert code == 1  # FlashInfer breaks going back
    assert [(item["line"], item["status"]) for item in json.loads(out)["launches"]] == [(2, "fixed"), (3, "breaks")]


@pytest.mark.parametrize("args,said", [
    (["--from", "0.31.0", "--to", "0.31"], "nothing changes"),
    (["--from", "0.26.0", "--to", "0.33.0"], "--from 0.26.0: not a vLLM release this linter knows"),
    (["--from", "0.31.0", "--to", "latest"], "--to latest: not a vLLM release"),
    (["--from", "0.5.20", "--to", "0.5.23"], "not a vLLM release"),
])
def test_usage_errors(project, capsys, args, said):
    code, out, err = upgrade(capsys, *args, ".")
    assert code == 2 and out == "" and said in err


def test_sglang(project, capsys):
    (project / "serve.sh").write_text(
        "python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct "
        "--enable-gdn-replayssm-spec --speculative-algorithm EAGLE --disable-overlap-schedule\n" + BREAKS)
    code, out, _ = upgrade(capsys, "--engine", "sglang", "--from", "0.5.19", "--to", "0.5.20",
                           "--output-format", "json", ".")
    assert code == 1
    data = json.loads(out)
    [change] = data["launches"]  # the vLLM launch is not SGLang's upgrade
    assert (change["status"], change["gained"], change["lost"]) == ("breaks", ["RSM104"], ["RSM105"])
    assert change["safe_fix"] == {"removes": ["RSM104"], "leaves": []}
    assert "--enable-linear-replayssm-spec" in data["fixes"][0]["diff"]


HOSTILE = "evil|@octocat <img src=x> **b** `x`\n::error ::forged ##[group].sh"


def test_what_comes_from_files_cannot_forge_output(git_project, capsys):
    tmp_path = git_project
    name = HOSTILE.replace("/", "_")
    (tmp_path / name).write_text("#!/bin/bash\n" + BREAKS.replace("--port 8000", "--port 8000 # ``` ```` |x|"))
    code, out, _ = upgrade(capsys, "--from", "0.29.0", "--to", "0.31.0", "--output-format", "markdown", ".")
    assert code == 1
    fence = re.search(r"^(`{3,})diff$", out, re.M).group(1)
    assert len(fence) == 5  # longer than the file's own ````
    assert out.count("\n" + fence + "\n") == 1  # closed once, by itself
    outside = re.sub(rf"^{fence}diff\n.*?^{fence}$", "", out, flags=re.M | re.S)  # GitHub renders a fence as is
    assert "@octocat" not in outside and "<img" not in outside and "**b**" not in outside
    assert "##[" not in out and "\n::" not in out
    assert not any(line.startswith("::") for line in out.splitlines())
    row = next(line for line in out.splitlines() if line.startswith("| \u274c"))
    assert row.count(" | ") == 5  # no extra cell from the name's "|"
    code, text, _ = upgrade(capsys, "--from", "0.29.0", "--to", "0.31.0", ".")
    assert not any(line.startswith("::") for line in text.splitlines()) and "##[" not in text
    assert "\\n\\x3a" not in text.splitlines()[1] and "\\n" in text.splitlines()[1]  # one line per row
    code, raw, _ = upgrade(capsys, "--from", "0.29.0", "--to", "0.31.0", "--output-format", "json", ".")
    assert json.loads(raw)["launches"][0]["path"] == "./" + name


def test_written_launch_is_not_changed(project, capsys):
    before = (project / "serve.sh").read_text()
    upgrade(capsys, "--from", "0.29.0", "--to", "0.31.0", ".")
    assert (project / "serve.sh").read_text() == before


def test_a_missing_path_is_an_error_and_the_rest_is_reported(project, capsys):
    code, out, err = upgrade(capsys, "--from", "0.29.0", "--to", "0.31.0", "nope.sh", "serve.sh")
    assert code == 2 and "nope.sh: no such file or directory" in err and "breaks" in out


def test_help_names_the_subcommand(capsys):
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["upgrade", "--help"])
    out = capsys.readouterr().out
    assert "--from RELEASE" in out and "--engine {vllm,sglang}" in out and "markdown" in out
    assert "--vllm-version" not in out


def test_readme_example_is_what_it_prints(project, capsys):
    """The README's example output is this command's on this file."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = re.search(r"<!-- upgrade-example -->\n```\n\$ (.*?)\n(.*?)```", readme, re.S)
    assert example is not None
    command, shown = example.group(1), example.group(2)
    script = re.search(r"<!-- upgrade-example-input -->\n```bash\n(.*?)```", readme, re.S).group(1)
    (project / "serve.sh").write_text(script)
    code, out, _ = upgrade(capsys, *command.split()[2:])
    assert out == shown
