"""An option no release of the engine has (a fork's or a plugin's, such as SpecForge's
``--spec-capture-aux-layer-ids 7 23 51``): the linter does not know how many words it takes,
so the words after it, up to the next option, are its own. None of them is reported as a
positional argument, turned into the model or offered as the fix ``--model-path 23``; the
option itself is not reported (a fork's parser has it), as no option outside the linter's
tables is. A known option's stray word is still rejected as argparse rejects it."""

from __future__ import annotations

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.judging import judge
from flake8_replayssm.model import UNKNOWN
from flake8_replayssm.recognise import launch_from_command

from conftest import command

QWEN_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FORK = "--spec-capture-aux-layer-ids 7 23 51"


def judged(cmdline: str):
    launch = launch_from_command(command(cmdline))
    assert launch is not None, cmdline
    return launch, judge(launch, LintConfig(vllm_version="0.33.0", sglang_version="0.5.23")).findings


@pytest.mark.parametrize("cmdline", [
    f"python -m sglang.launch_server --model-path {QWEN_NEXT} {FORK} --tp 2",
    f"python -m sglang.launch_server --model-path {QWEN_NEXT} {FORK}",
    f"sglang serve {QWEN_NEXT} {FORK} --tp 2",
    f"python -m sglang.launch_server {FORK} $MORE --model-path {QWEN_NEXT}",
])
def test_the_words_of_an_unknown_sglang_option_are_its_own(cmdline):
    launch, findings = judged(cmdline)
    assert [f for f in findings if f.code == "RSM106"] == []
    assert launch.model.value == QWEN_NEXT


def test_an_unknown_option_does_not_hide_the_options_after_it():
    _, findings = judged(f"python -m sglang.launch_server --model-path {QWEN_NEXT} {FORK} "
                         "--enable_linear_replayssm")
    assert "SGLang does not read '_' as '-'" in " ".join(f.message for f in findings if f.code == "RSM106")


@pytest.mark.parametrize("model, fix", [
    (f"--model-path {QWEN_NEXT}", "fix: drop it, or give it to the option it belongs to"),
    ("", "fix: write --model-path 3"),
])
def test_a_known_options_stray_word_is_still_rejected_with_an_honest_fix(model, fix):
    _, findings = judged(f"python -m sglang.launch_server {model} --tp 2 3".replace("  ", " "))
    [rejected] = [f.message for f in findings if f.code == "RSM106"]
    assert "'3' is rejected by SGLang's argument parser" in rejected and rejected.endswith(fix)


def test_the_words_of_an_unknown_vllm_option_are_no_model():
    launch, _ = judged(f"vllm serve {FORK} --use-replayssm")
    assert launch.model.value is UNKNOWN  # not '23': the option may take every word
    launch, _ = judged(f"vllm serve {NANO} {FORK} --use-replayssm")
    assert launch.model.value == NANO


def test_the_api_server_does_not_blame_an_unknown_options_words():
    _, findings = judged(f"python -m vllm.entrypoints.openai.api_server --model {NANO} {FORK} --port 8000")
    assert [f.code for f in findings if f.code == "RSM103"] == []
    # a known one-valued option's second word is still a positional the module ignores
    _, findings = judged(f"python -m vllm.entrypoints.openai.api_server --model {NANO} --max-model-len 4096 extra")
    assert "'extra' is ignored" in " ".join(f.message for f in findings if f.code == "RSM103")


def test_an_option_of_another_sglang_parser_is_not_a_forks():
    """The router launcher's ``--worker-urls`` on ``sglang serve``: an option SGLang has (in the
    router), so not of unknown arity; its second word stays a stray one."""
    _, findings = judged(f"sglang serve --model-path {QWEN_NEXT} --worker-urls http://a:1 http://b:2")
    assert "'http://b:2' is rejected" in " ".join(f.message for f in findings if f.code == "RSM106")
