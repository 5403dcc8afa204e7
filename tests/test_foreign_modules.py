"""Another package's module whose parser is vLLM's engine options plus its own (FastChat's
``fastchat.serve.vllm_worker``, ``vllm_tgis_adapter``; ``[entry_points.foreign_modules]`` in
``engines/vllm/data/options.toml``): a vLLM launch, its model read where the package reads it
(``--model-path``, ``--model-name``) or unknown (the package's default), its own options no
finding."""

from __future__ import annotations

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.judging import judge
from flake8_replayssm.lint import lint_text
from flake8_replayssm.model import UNKNOWN
from flake8_replayssm.recognise import launch_from_command

from conftest import command

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
BAD = "--use-replayssm --replayssm-buffer-len 0"


def judged(cmdline: str):
    launch = launch_from_command(command(cmdline))
    assert launch is not None and launch.engine == "vllm", cmdline
    return launch, sorted(f.code for f in judge(launch, LintConfig(vllm_version="0.33.0")).findings)


@pytest.mark.parametrize("cmdline, model", [
    (f"python3 -m fastchat.serve.vllm_worker --model-path {NANO} {BAD}", NANO),
    (f"python3 -m fastchat.serve.vllm_worker --controller-address http://c:21001 --num-gpus 2 "
     f"--model-path={NANO} --no-register {BAD}", NANO),
    (f"python -m vllm_tgis_adapter --model {NANO} --grpc-port 8033 {BAD}", NANO),
    (f"python -m vllm_tgis_adapter --model other/model --model-name {NANO} {BAD}", NANO),  # model_name wins
])
def test_the_package_module_is_a_vllm_launch_with_its_model(cmdline, model):
    launch, codes = judged(cmdline)
    assert launch.model.value == model
    assert "RSM007" in codes  # the length 0 is judged as vLLM judges it
    assert not {"RSM103", "RSM106"} & set(codes)  # the package's own options are no finding


def test_without_its_model_option_the_model_is_the_packages_unknown_default():
    launch, _ = judged(f"python3 -m fastchat.serve.vllm_worker {BAD}")
    assert launch.model.value is UNKNOWN


def test_another_module_of_the_package_is_no_launch():
    assert launch_from_command(command(f"python3 -m fastchat.serve.controller {BAD}")) is None


def test_in_a_markdown_fence_and_a_python_argv():
    page = f"# Worker\n\n```bash\npython3 -m fastchat.serve.vllm_worker --model-path {NANO} {BAD}\n```\n"
    found = lint_text(page, "markdown", LintConfig(vllm_version="0.33.0", inventory=True))
    assert [n.line for n in found.launches] == [4] and found.unrecognised == []
    source = (f'import subprocess\nsubprocess.run(["python3", "-m", "vllm_tgis_adapter", "--model", "{NANO}",\n'
              '                "--use-replayssm", "--replayssm-buffer-len", "0"])\n')
    codes = {f.code for f in lint_text(source, "python", LintConfig(vllm_version="0.33.0")).findings}
    assert "RSM007" in codes
