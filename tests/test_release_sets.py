"""Release sets: a launch judged for every release its target admits (DESIGN.md, "Target release").

The forms (``0.30.0,0.33.0``, ``>=0.30``, ``all``, ``latest``), where they come from (the
explicit option, pyproject/setup.cfg settings, flake8 options, a range pin, an install
command in the file, an image tag an ``ARG`` leaves open, ``latest`` tags), how a finding
says where it holds (``[vLLM 0.30.0–0.32.0]``, the ``releases`` field of JSON and SARIF),
and what ``fix`` does with a set.

Facts used (reference/vllm-replayssm-rules.md, the release tables): the plain Nemotron-H
launch with ReplaySSM is accepted on 0.27.0-0.29.0 (Model Runner V1 by default) and RSM008
from 0.30.0 (Triton under the V2 default); FlashInfer is RSM004 before 0.30.0; SGLang
renamed ``--enable-gdn-replayssm-spec`` to ``--enable-linear-replayssm-spec`` in 0.5.17 and
removed the old name after 0.5.19.
"""

from __future__ import annotations

import json

import pytest

from conftest import write_file as write
from flake8_replayssm import cli, target
from flake8_replayssm.install_pins import install_pins
from flake8_replayssm.release_sets import is_spec, label, releases_of

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
KNOWN = ("0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0")
RUN = "\u2013"  # the dash of a run of releases
#: accepted on 0.27.0-0.29.0, RSM008 on 0.30.0-0.33.0
SERVE = f"vllm serve {NANO} --use-replayssm\n"
PY = f'from vllm import LLM\nllm = LLM("{NANO}", use_replayssm=True)\n'


pytestmark = pytest.mark.usefixtures("no_installed_vllm")


@pytest.fixture
def project(git_project):
    return git_project


def check(capsys, *args: str) -> tuple[int, list[dict]]:
    code = cli.main(["check", "--output-format", "json", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def verbose(capsys, *args: str) -> str:
    cli.main(["check", "-v", *args])
    return capsys.readouterr().err


# ---------------------------------------------------------------- the forms


@pytest.mark.parametrize("spec,releases", [
    ("0.31.0", ("0.31.0",)),
    ("v0.31", ("0.31.0",)),
    ("0.34.0", ("0.34.0",)),                      # one release, known or not (judged by 0.33.0's table)
    ("0.30.0,0.33.0", ("0.30.0", "0.33.0")),
    ("0.33.0, 0.30.0", ("0.30.0", "0.33.0")),
    (">=0.30", ("0.30.0", "0.31.0", "0.32.0", "0.33.0")),
    (">=0.28,<0.30", ("0.28.0", "0.29.0")),
    ("~=0.27.0", ("0.27.0", "0.27.1")),
    ("0.27.*", ("0.27.0", "0.27.1")),
    ("==0.27.*", ("0.27.0", "0.27.1")),
    ("!=0.31.0,>=0.30", ("0.30.0", "0.32.0", "0.33.0")),
    ("all", KNOWN),
    ("*", KNOWN),
    ("latest", ("0.33.0",)),
    ("<0.2", ()),
])
def test_a_spec_names_the_releases_it_admits(spec, releases):
    assert is_spec(spec)
    assert releases_of(spec, KNOWN) == releases


@pytest.mark.parametrize("spec", ["banana", "", "0.30.0,>=0.31", ">=", "0.30.0;0.31.0", "all,latest"])
def test_what_is_no_spec(spec):
    assert not is_spec(spec)
    assert releases_of(spec, KNOWN) == ()


@pytest.mark.parametrize("versions,shown", [
    (["0.33.0"], "0.33.0"),
    (["0.30.0", "0.31.0", "0.32.0"], f"0.30.0{RUN}0.32.0"),
    (["0.27.0", "0.27.1"], f"0.27.0{RUN}0.27.1"),
    (["0.30.0", "0.33.0"], "0.30.0, 0.33.0"),       # 0.31 and 0.32 are not among them: a list
    (["0.33.0", "0.27.0", "0.28.0"], "0.27.0, 0.28.0, 0.33.0"),
])
def test_a_run_of_consecutive_releases_is_shown_as_one(versions, shown):
    assert label(versions, KNOWN) == shown


@pytest.mark.parametrize("text,pins", [
    ("RUN pip install 'vllm>=0.28,<0.34'\n", [">=0.28,<0.34"]),
    ("ARG VLLM_VERSION\nRUN pip install vllm==${VLLM_VERSION}\n", ["all"]),
    ("ARG VLLM_VERSION=0.31.0\nRUN pip install vllm==${VLLM_VERSION}\n", ["0.31.0"]),
    ("RUN pip install \"vllm==${VLLM_VERSION:-0.30.0}\"\n", ["0.30.0"]),
    ("VLLM_VERSION=0.29.0\nuv pip install \"vllm[audio]==$VLLM_VERSION\"\n", ["0.29.0"]),
    ("pip install -U vllm --extra-index-url https://example.org\n", ["latest"]),
    ("RUN python -m pip install --no-cache-dir \\\n    vllm~=0.30.0 \\\n    numpy\n", ["~=0.30.0"]),
    ('{"cells": [{"source": ["!pip install vllm==0.31.0\\n"]}]}', ["0.31.0"]),
    ("VERSION ?= 0.31.0\nsetup:\n\tpip install vllm==$(VERSION)\n", ["0.31.0"]),
    ("pip install vllm-flash-attn\npip install git+https://github.com/vllm-project/vllm\n", []),
    ("echo vllm==0.31.0 is what we use\n", []),
    ("# pip install vllm==0.28.0\nRUN pip install vllm==0.33.0  # not 0.32\n", ["0.33.0"]),
])
def test_install_commands_in_a_file(text, pins):
    assert [spec for spec, _ in install_pins(text, "vllm")] == pins


# ---------------------------------------------------------------- the explicit option


@pytest.mark.parametrize("spec,holds,tag", [
    ("0.30.0,0.33.0", ["0.30.0", "0.33.0"], "0.30.0, 0.33.0"),
    (">=0.30", ["0.30.0", "0.31.0", "0.32.0", "0.33.0"], f"0.30.0{RUN}0.33.0"),
    ("all", ["0.30.0", "0.31.0", "0.32.0", "0.33.0"], f"0.30.0{RUN}0.33.0"),
    (">=0.28,<0.31", ["0.30.0"], "0.30.0"),
    ("latest", ["0.33.0"], "0.33.0"),
])
def test_an_explicit_set_says_on_which_releases_a_finding_holds(project, capsys, spec, holds, tag):
    write(project / "serve.sh", SERVE)
    code, [item] = check(capsys, "--vllm-version", spec, "serve.sh")
    assert code == 1 and item["code"] == "RSM008"
    assert item["releases"] == holds
    assert item["vllm_version"] == holds[-1]  # the old field: the newest release it holds on
    assert f"[vLLM {tag}]" in item["message"]


def test_a_set_where_nothing_fails_is_clean(project, capsys):
    write(project / "serve.sh", SERVE)
    assert check(capsys, "--vllm-version", "0.27.0,0.29.0", "serve.sh") == (0, [])


def test_one_finding_per_code_anchored_as_for_one_release(project, capsys):
    """FlashInfer: RSM004 before 0.30 (at the backend flag), RSM002 from 0.30 (at --use-replayssm)."""
    write(project / "serve.sh", f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n")
    _, every = check(capsys, "--vllm-version", "all", "serve.sh")
    by_code = {i["code"]: i for i in every}
    assert sorted(by_code) == ["RSM002", "RSM004"] and len(every) == 2
    for code, release in (("RSM004", "0.29.0"), ("RSM002", "0.33.0")):
        _, [alone] = check(capsys, "--vllm-version", release, "serve.sh")
        assert alone["code"] == code
        assert (by_code[code]["line"], by_code[code]["column"]) == (alone["line"], alone["column"])
    assert by_code["RSM004"]["releases"] == ["0.27.0", "0.27.1", "0.28.0", "0.29.0"]
    assert f"[vLLM 0.27.0{RUN}0.29.0]" in by_code["RSM004"]["message"]


def test_a_message_without_a_tag_gets_one(project, capsys):
    """RSM105 (deprecated --mamba-cache-mode, 0.33.0) names the release in its text, not in a tag."""
    write(project / "serve.sh", f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {NANO} --use-replayssm "
                                "--mamba-backend triton --mamba-cache-mode align\n")
    _, items = check(capsys, "--vllm-version", "0.32.0,0.33.0", "serve.sh")
    [rsm105] = [i for i in items if i["code"] == "RSM105"]
    assert rsm105["releases"] == ["0.33.0"]
    assert rsm105["message"].count("[vLLM 0.33.0]") == 1


def test_sarif_and_verbose_name_the_set(project, capsys):
    write(project / "serve.sh", SERVE)
    cli.main(["check", "--output-format", "sarif", "--vllm-version", "all", "serve.sh"])
    [result] = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert result["properties"]["releases"] == ["0.30.0", "0.31.0", "0.32.0", "0.33.0"]
    assert result["properties"]["vllmVersion"] == "0.33.0"
    err = verbose(capsys, "--vllm-version", "all", "serve.sh")
    assert f"judged for vLLM 0.27.0{RUN}0.33.0 (--vllm-version all: every known release)" in err


def test_an_explicit_set_that_admits_no_release_is_a_usage_error(project, capsys):
    write(project / "serve.sh", SERVE)
    assert cli.main(["check", "--vllm-version", ">=0.40", "serve.sh"]) == 2
    assert "admits no vLLM release this linter knows" in capsys.readouterr().err


def test_sglang_sets(project, capsys):
    write(project / "serve.sh", "python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct "
                                "--enable-gdn-replayssm-spec --speculative-algorithm EAGLE "
                                "--disable-overlap-schedule\n")
    _, items = check(capsys, "--sglang-version", ">=0.5.17", "serve.sh")
    by_code = {i["code"]: i for i in items}
    assert by_code["RSM104"]["releases"] == ["0.5.20", "0.5.21", "0.5.22", "0.5.23"]
    assert f"[SGLang 0.5.20{RUN}0.5.23]" in by_code["RSM104"]["message"]
    assert by_code["RSM105"]["releases"] == ["0.5.17", "0.5.18", "0.5.19"]
    assert by_code["RSM104"]["engine"] == "sglang"


# ---------------------------------------------------------------- where a set comes from


def test_a_range_pin_in_pyproject_is_every_release_it_admits(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "svc"\ndependencies = ["vllm>=0.29,<0.32"]\n')
    write(project / "nano.py", PY)
    _, [item] = check(capsys, ".")
    assert item["releases"] == ["0.30.0", "0.31.0"]
    assert "vllm>=0.29,<0.32 in pyproject.toml (every known release it admits)" == item["vllm_version_reason"]


def test_pins_of_several_files_all_hold(project, capsys):
    """A range in the requirements and a lock file's exact pin inside it: the lock file's release."""
    write(project / "requirements.txt", "vllm>=0.28\n")
    write(project / "uv.lock", 'version = 1\n\n[[package]]\nname = "vllm"\nversion = "0.31.0"\n')
    write(project / "nano.py", PY)
    _, [item] = check(capsys, ".")
    assert item["releases"] == ["0.31.0"]
    write(project / "constraints.txt", "vllm<0.31\n")  # contradicts the lock file: no pin at all
    target.project_pin.cache_clear()  # pins are read once per run
    assert "newest release known" in verbose(capsys, ".")


def test_an_install_command_in_the_script_beats_the_project_pin(project, capsys):
    write(project / "requirements.txt", "vllm==0.33.0\n")
    write(project / "serve.sh", f"pip install 'vllm>=0.28,<0.31'\n{SERVE}")
    _, [item] = check(capsys, "serve.sh")
    assert item["releases"] == ["0.30.0"]
    assert item["vllm_version_reason"] == "pip install vllm>=0.28,<0.31 on line 1 (every known release it admits)"


def test_dockerfile_arg_without_default_is_every_release(project, capsys):
    write(project / "Dockerfile", f'ARG VLLM_VERSION\nFROM vllm/vllm-openai:v${{VLLM_VERSION}}\n'
                                  f'CMD ["--model", "{NANO}", "--use-replayssm"]\n')
    _, [item] = check(capsys, "Dockerfile")
    assert item["releases"] == ["0.30.0", "0.31.0", "0.32.0", "0.33.0"]
    assert "every known release" in item["vllm_version_reason"]
    write(project / "Dockerfile", f'ARG VLLM_VERSION=0.29.0\nFROM vllm/vllm-openai:v${{VLLM_VERSION}}\n'
                                  f'CMD ["--model", "{NANO}", "--use-replayssm"]\n')
    assert check(capsys, "Dockerfile") == (0, [])  # the ARG's default: one release, accepted


def test_dockerfile_pip_install_of_a_build_argument(project, capsys):
    write(project / "requirements.txt", "vllm==0.28.0\n")  # not what the image installs
    write(project / "Dockerfile", "FROM python:3.12\nARG VLLM_VERSION\nRUN pip install vllm==${VLLM_VERSION}\n"
                                  f'CMD ["vllm", "serve", "{NANO}", "--use-replayssm"]\n')
    _, [item] = check(capsys, "Dockerfile")
    assert item["releases"] == ["0.30.0", "0.31.0", "0.32.0", "0.33.0"]


def test_compose_and_kubernetes_tags(project, capsys):
    write(project / "compose.yaml", f"""services:
  open:
    image: vllm/vllm-openai:${{VLLM_TAG}}
    command: ["--model", "{NANO}", "--use-replayssm"]
  newest:
    image: vllm/vllm-openai:latest
    command: ["--model", "{NANO}", "--use-replayssm"]
  old:
    image: vllm/vllm-openai:v0.29.0
    command: ["--model", "{NANO}", "--use-replayssm"]
""")
    write(project / "requirements.txt", "vllm==0.31.0\n")  # an image's tag wins over the project's pin
    _, items = check(capsys, "compose.yaml")
    assert [(i["line"], i["releases"]) for i in items] == [(4, ["0.30.0", "0.31.0", "0.32.0", "0.33.0"]),
                                                           (7, ["0.33.0"])]
    write(project / "deploy.yaml", f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: serve}}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: "vllm/vllm-openai:{{{{ .Values.image.tag }}}}"
        args: ["--model", "{NANO}", "--use-replayssm"]
""")
    _, [item] = check(capsys, "deploy.yaml")
    assert item["releases"] == ["0.30.0", "0.31.0", "0.32.0", "0.33.0"]


def test_ranges_newest_reads_a_range_as_its_newest_release(project, capsys):
    write(project / "Dockerfile", f'ARG VLLM_VERSION\nFROM vllm/vllm-openai:v${{VLLM_VERSION}}\n'
                                  f'CMD ["--model", "{NANO}", "--use-replayssm"]\n')
    _, [item] = check(capsys, "--ranges", "newest", "Dockerfile")
    assert item["releases"] == ["0.33.0"] and "[vLLM 0.33.0]" in item["message"]
    _, [item] = check(capsys, "--ranges", "newest", "--vllm-version", ">=0.30", "Dockerfile")
    assert len(item["releases"]) == 4  # an explicit set is what it says


@pytest.mark.parametrize("written", ['">=0.30"', '["0.30.0", "0.33.0"]', '"all"'])
def test_pyproject_setting(project, capsys, written):
    write(project / "pyproject.toml", f"[tool.flake8-replayssm]\nvllm-version = {written}\n")
    write(project / "nano.py", PY)
    _, [item] = check(capsys, ".")
    assert item["releases"][0] == "0.30.0" and item["releases"][-1] == "0.33.0"
    assert "vllm-version in" in item["vllm_version_reason"]


def test_setup_cfg_setting_and_a_bad_one(project, capsys):
    write(project / "setup.cfg", "[flake8]\nreplayssm-vllm-version = 0.29.0, 0.30.0\n")
    write(project / "nano.py", PY)
    _, [item] = check(capsys, ".")
    assert item["releases"] == ["0.30.0"] and "[vLLM 0.30.0]" in item["message"]
    write(project / "setup.cfg", "[flake8]\nreplayssm-vllm-version = >=0.30,0.31.0\n")
    assert cli.main(["check", "."]) == 2
    assert "not a vLLM version or set of releases" in capsys.readouterr().err


def test_flake8_option(flake8_path):
    (flake8_path / "nano.py").write_text(PY)
    (flake8_path / "setup.cfg").write_text("[flake8]\nselect = RSM\nreplayssm-vllm-version = >=0.28,<0.30\n")
    assert flake8_path.run_flake8().out_lines == []
    lines = flake8_path.run_flake8(["--replayssm-vllm-version", "all"]).out_lines
    assert len(lines) == 1 and "RSM008" in lines[0] and f"[vLLM 0.30.0{RUN}0.33.0]" in lines[0]


def test_groups_of_readings_hold_per_release(project, capsys):
    """A backend chosen in an if/else: a code is reported on the releases where every value has it."""
    write(project / "serve.sh", f'if [ "$FAST" ]; then B=flashinfer; else B=triton; fi\n'
                                f'VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {NANO} --use-replayssm --mamba-backend "$B"\n')
    assert check(capsys, "--vllm-version", "all", "serve.sh") == (0, [])  # triton is fine on V1 everywhere
    write(project / "serve.sh", f'if [ "$FAST" ]; then B=flashinfer; else B=banana; fi\n'
                                f'vllm serve {NANO} --use-replayssm --mamba-backend "$B"\n')
    _, items = check(capsys, "--vllm-version", "all", "serve.sh")
    assert [(i["code"], i["releases"]) for i in items if i["code"] == "RSM004"] == \
        [("RSM004", ["0.27.0", "0.27.1", "0.28.0", "0.29.0"])]


# ---------------------------------------------------------------- fix


def test_fix_writes_a_launch_every_release_of_the_set_accepts(project, capsys):
    write(project / "serve.sh", f"vllm serve {NANO} --use-replayssm --mamba-cache-mode align\n")
    assert cli.main(["fix", "--vllm-version", "all", "serve.sh"]) == 0
    fixed = (project / "serve.sh").read_text()
    assert fixed.startswith("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve") and "--mamba-backend triton" in fixed
    capsys.readouterr()
    for release in KNOWN:
        assert check(capsys, "--vllm-version", release, "serve.sh") == (0, []), release


def test_fix_says_when_no_launch_works_on_every_release(project, capsys):
    text = ("python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct "
            "--enable-linear-replayssm-spec --speculative-algorithm EAGLE --disable-overlap-schedule\n")
    write(project / "serve.sh", text)
    assert cli.main(["fix", "--sglang-version", "0.5.16,0.5.23", "serve.sh"]) == 1
    out = capsys.readouterr().out
    assert (project / "serve.sh").read_text() == text  # 0.5.16 has only the old name, 0.5.23 only the new
    assert "[SGLang 0.5.16]" in out
    assert "no launch was found that every release it is judged for accepts" in out
    assert "RSM104 on SGLang 0.5.23" in out
    assert cli.main(["fix", "--sglang-version", "0.5.16", "serve.sh"]) == 0  # for one release it can


def test_fix_of_a_set_goes_past_a_release_no_edit_can_fix(project, capsys):
    """vLLM 0.26.0 has no --use-replayssm (RSM104: only another target helps); the set's other
    release is still fixed, and 0.26.0's finding stays, said."""
    write(project / "serve.sh", f"vllm serve {NANO} --use-replayssm\n")
    assert cli.main(["fix", "--vllm-version", "0.26.0,0.33.0", "serve.sh"]) == 1
    assert "RSM104" in capsys.readouterr().out
    assert (project / "serve.sh").read_text().startswith("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve")
    assert check(capsys, "--vllm-version", "0.33.0", "serve.sh") == (0, [])
    code, left = check(capsys, "--vllm-version", "0.26.0,0.33.0", "serve.sh")
    assert [(f["code"], f["releases"]) for f in left] == [("RSM104", ["0.26.0"])]


@pytest.mark.parametrize("spec,note", [
    ("0.40.0", "vLLM 0.40.0 is newer"),
    ("0.33.0,0.40.0", "vLLM 0.40.0 is newer"),
    ("0.33.0,0.40.0,0.41.0", "vLLM 0.40.0, 0.41.0 are newer"),
    ("0.33.0", None),
])
def test_a_release_newer_than_known_is_named_also_in_a_list(project, capsys, spec, note):
    write(project / "serve.sh", f"vllm serve {NANO} --use-replayssm\n")
    cli.main(["check", "--vllm-version", spec, "serve.sh"])
    out, err = capsys.readouterr()
    if note is None:
        assert "newer than the newest release" not in out + err
    else:
        assert note + " than the newest release this linter knows (0.33.0)" in out + err


def test_an_sglang_release_newer_than_known_is_named_too(project, capsys):
    write(project / "serve.sh", "python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct "
                                "--enable-linear-replayssm --mamba-radix-cache-strategy extra_buffer\n")
    cli.main(["check", "--sglang-version", "0.5.23,0.6.0", "serve.sh"])
    out, err = capsys.readouterr()
    assert "SGLang 0.6.0 is newer than the newest release this linter knows (0.5.23)" in out + err
    cli.main(["check", "--sglang-version", "0.5.23", "serve.sh"])
    out, err = capsys.readouterr()
    assert "newer than the newest" not in out + err


@pytest.mark.parametrize("name, text", [
    ("page.md", f'# Serve\n\n```python\nfrom vllm import LLM\nllm = LLM(model="{NANO}", use_replayssm=True)\n```\n'),
    ("serve.ipynb", json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": [
        f"!vllm serve {NANO} --use-replayssm"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})),
])
def test_fix_of_a_set_goes_past_the_oldest_release_in_pages_and_notebooks_too(project, capsys, name, text):
    write(project / name, text)
    cli.main(["fix", "--unsafe", "--vllm-version", "0.26.0,0.33.0", name])
    capsys.readouterr()
    assert "VLLM_USE_V2_MODEL_RUNNER" in (project / name).read_text()
    code, left = check(capsys, "--vllm-version", "0.26.0,0.33.0", name)
    assert [(f["code"], f["releases"]) for f in left] == [("RSM104", ["0.26.0"])]
