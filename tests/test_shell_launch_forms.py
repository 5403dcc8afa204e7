"""Shell launches recognised by what they say (issue 18): the program behind a variable or a
path, a command kept in an alias, an array or a function, a word bash reads as a literal
``$``, and the engines' own environment variables on the launch.  Minimal forms written for
this test, each with a counterpart that must stay no launch."""

from __future__ import annotations

import textwrap

import pytest

from flake8_replayssm import check_source
from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import launches_in

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
QWEN_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
VLLM_BAD = f"{NANO} --use-replayssm --replayssm-buffer-len 0"  # RSM007 whatever the environment
SGLANG_BAD = f"--model-path {QWEN_NEXT} --enable-linear-replayssm --linear-replayssm-cache-len 0"  # RSM304


def codes(script: str) -> list[tuple[int, str]]:
    config = LintConfig(vllm_version="0.33.0", sglang_version="0.5.23")
    findings = check_source(textwrap.dedent(script).lstrip("\n"), "shell", config=config)
    return sorted({(f.span.line, f.code) for f in findings if f.code in ("RSM007", "RSM304", "RSM900")})


@pytest.mark.parametrize("script, expected", [
    (f"$VLLM_BIN serve {VLLM_BAD}", [(1, "RSM007")]),
    (f"/opt/venv/bin/vllm serve {VLLM_BAD}", [(1, "RSM007")]),
    (f"$VENV/bin/vllm serve {VLLM_BAD}", [(1, "RSM007")]),
    (f'"${{ROOT}}/bin/python3" -m vllm.entrypoints.openai.api_server --model {VLLM_BAD}', [(1, "RSM007")]),
    (f"${{PYTHON:-python3}} -m vllm.entrypoints.openai.api_server --model {VLLM_BAD}", [(1, "RSM007")]),
    (f"$PYTHON -m vllm.entrypoints.openai.api_server --model {VLLM_BAD}", [(1, "RSM007")]),
    (f'"$PY" -m sglang.launch_server {SGLANG_BAD}', [(1, "RSM304")]),
    (f"python3 -m vllm.entrypoints.cli.main serve {VLLM_BAD}", [(1, "RSM007")]),
    (f"ray job submit --working-dir . -- $PYTHON -m vllm.entrypoints.openai.api_server --model {VLLM_BAD}",
     [(1, "RSM007")]),
    # an unseen program that is not named for an engine, and runs no module: nothing to judge
    (f"$RUNNER serve {VLLM_BAD}", []),
    (f"$PYTHON train.py --engine vllm {VLLM_BAD}", []),
    (f"echo $PYTHON -m vllm.entrypoints.openai.api_server --model {VLLM_BAD}", []),
])
def test_the_program_behind_a_variable_or_a_path(script, expected):
    assert codes(script) == expected


@pytest.mark.parametrize("script, expected", [
    (f"alias serve_llm='vllm serve {VLLM_BAD}'\nserve_llm --port 8000\n", [(1, "RSM007")]),
    (f'alias sgl="python3 -m sglang.launch_server"\nsgl {SGLANG_BAD}\n', [(2, "RSM304")]),
    (f"alias serve_llm='vllm serve {VLLM_BAD}'\n", []),  # kept, never run
    (f"CMD=(vllm serve {VLLM_BAD})\n\"${{CMD[@]}}\" --port 1\n", [(1, "RSM007")]),
    (f'start() {{\n  vllm serve {VLLM_BAD} "$@"\n}}\nstart --port 1\n', [(2, "RSM007")]),
    (f'LAUNCH="vllm serve {VLLM_BAD}"\n$LAUNCH --port 2\n', [(1, "RSM007")]),
])
def test_a_command_kept_in_an_alias_an_array_or_a_function_and_run_elsewhere(script, expected):
    assert codes(script) == expected


@pytest.mark.parametrize("script", [
    f"vllm serve {VLLM_BAD} --host $NODE$:5757\n",
    f"vllm serve {VLLM_BAD} --host=$NODE$:5757 --port 8000\n",
    f'vllm serve {VLLM_BAD} --a $A$/x --b "$B$,y"\n',
    f"ray start --address=$HEAD$:6379\nvllm serve {VLLM_BAD}\n",
])
def test_a_dollar_bash_reads_as_itself_does_not_stop_the_reader(script):
    """``$NODE$:5757`` is valid bash (the second ``$`` is a literal); tree-sitter-bash gives up on
    the command, so the reader escapes that ``$`` before parsing."""
    line = script.count("\n")
    assert codes(script) == [(line, "RSM007")]


def test_a_literal_dollar_keeps_its_place_in_the_word():
    [launch] = launches_in(f"vllm serve {NANO} --use-replayssm --served-model-name a$:b\n", "shell")
    assert launch.model is not None and launch.model.value == NANO


@pytest.mark.parametrize("script, name", [
    (f"SGLANG_RAGGED_VERIFY_MODE=static python -m sglang.launch_server {SGLANG_BAD}", "SGLANG_RAGGED_VERIFY_MODE"),
    (f"export SGLANG_RAGGED_VERIFY_MODE=static\npython -m sglang.launch_server {SGLANG_BAD}",
     "SGLANG_RAGGED_VERIFY_MODE"),
    (f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {VLLM_BAD}", "VLLM_USE_V2_MODEL_RUNNER"),
])
def test_an_engines_own_variables_reach_its_launch(script, name):
    """Each engine's variables (data: engine.toml ``env_prefixes``) are part of the launch's
    environment when the script sets them, as a prefix or exported before it."""
    [launch] = launches_in(script + "\n", "shell")
    assert launch.env[name].value == "static" if "SGLANG" in name else launch.env[name].value == "0"
    unrelated = launches_in(f"OTHER_SETTING=1 python -m sglang.launch_server {SGLANG_BAD}\n", "shell")
    assert "OTHER_SETTING" not in unrelated[0].env
