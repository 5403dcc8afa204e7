"""Engine options under a framework's own names (class A of survey 3): a string of the engine's
words in a framework option or config key (NeMo-Skills' ``--server_type=vllm
--server_args="..."``, ``server_type: sglang`` / ``server_args:``), and lm-evaluation-harness's
``--model vllm --model_args k=v,...`` under another program (evalchemy's ``python -m
eval.eval``), read by content."""

from __future__ import annotations

import textwrap

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
QWEN_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"


def result(text: str, kind: str):
    return lint_text(textwrap.dedent(text).lstrip("\n"), kind,
                     LintConfig(vllm_version="0.33.0", sglang_version="0.5.23", inventory=True))


def launches(text: str, kind: str = "shell") -> list[tuple[int, str, str]]:
    return [(n.line, n.engine, n.model.split(" ")[0]) for n in result(text, kind).launches]


def places(text: str, kind: str = "shell") -> set[tuple[int, int, str]]:
    return {(f.span.line, f.span.col, f.code) for f in result(text, kind).findings}


SERVER_ARGS = f"""
    ns eval \\
        --model={NANO} \\
        --server_type=vllm \\
        --server_gpus=2 \\
        --server_args="--use-replayssm --replayssm-buffer-len 0"
    """


def test_server_args_on_a_command_line_are_the_engines_words_where_they_are_written():
    assert launches(SERVER_ARGS) == [(5, "vllm", NANO)]
    column = "    --server_args=\"".__len__()
    assert (5, column + len("--use-replayssm "), "RSM007") in places(SERVER_ARGS)


@pytest.mark.parametrize("server_type", ["openai", "trtllm", "$SERVER"])
def test_server_args_for_another_server_or_an_unknown_one_are_no_launch(server_type):
    assert launches(SERVER_ARGS.replace("--server_type=vllm", f"--server_type={server_type}")) == []


def test_server_args_without_a_server_type_are_no_launch():
    assert launches(SERVER_ARGS.replace("--server_type=vllm \\\n", "")) == []


def test_server_args_in_a_pipeline_config_pick_the_engine_by_server_type():
    config = f"""
        stages:
          generate:
            stage_kwargs:
              model: {QWEN_NEXT}
              server_type: sglang
              server_gpus: 8
              server_args: "--enable-linear-replayssm --linear-replayssm-cache-len 0 --tp 8"
        """
    assert launches(config, "yaml") == [(7, "sglang", QWEN_NEXT)]
    line = textwrap.dedent(config).lstrip("\n").split("\n")[6]
    assert (7, line.index("--linear-replayssm-cache-len"), "RSM304") in places(config, "yaml")
    assert launches(config.replace("server_type: sglang", "server_type: megatron"), "yaml") == []


def test_the_model_is_unknown_when_the_framework_is_not_told():
    assert launches(SERVER_ARGS.replace(f"--model={NANO} \\\n", ""))[0][2] == "unknown"


@pytest.mark.parametrize("program", ["python -m eval.eval", "python3 run_eval.py", "accelerate launch -m eval.eval"])
def test_the_model_args_form_under_another_program(program):
    text = (f"{program} --model vllm --tasks gsm8k \\\n"
            f"    --model_args \"pretrained={NANO},use_replayssm=True,replayssm_buffer_len=0\"\n")
    assert launches(text) == [(1, "vllm", NANO)]
    assert {code for _, _, code in places(text)} >= {"RSM007"}


def test_the_model_args_form_needs_an_engine_name_and_its_args():
    assert launches("python -m eval.eval --model hf --model_args pretrained=org/m,use_replayssm=True\n") == []
    assert launches("python -m eval.eval --model vllm --tasks gsm8k --use_replayssm\n") == []


KAITO = """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: inference-params
    data:
      inference_config.yaml: |
        max_probe_steps: 6
        vllm:
          use-replayssm: true
          replayssm-buffer-len: 0
    """


def test_kaitos_vllm_block_in_its_configmap_file_is_vllms_options():
    assert launches(KAITO, "yaml") == [(9, "vllm", "unknown")]
    assert (10, 6, "RSM007") in places(KAITO, "yaml")


def test_kaitos_config_file_of_its_own():
    text = "vllm:\n  use-replayssm: true\n  replayssm-buffer-len: 0\n"
    found = lint_text(text, "yaml", LintConfig(vllm_version="0.33.0", inventory=True), path="cfg/inference_config.yaml")
    assert [n.line for n in found.launches] == [2]
    other = lint_text(text, "yaml", LintConfig(vllm_version="0.33.0", inventory=True), path="cfg/axolotl.yaml")
    assert other.launches == []  # a `vllm:` key of another program's config


def test_a_vllm_block_under_another_configmap_key_is_not_kaitos():
    assert launches(KAITO.replace("inference_config.yaml", "settings.yaml"), "yaml") == []


def test_a_dotted_vllm_word_on_a_command_line_is_not_kaitos_block():
    assert launches("python train.py vllm.use_replayssm=true vllm.replayssm_buffer_len=0\n") == []


@pytest.mark.parametrize("line, engine, column, code", [
    ("harbor vllm args '--use-replayssm --replayssm-buffer-len 0 --max-model-len 4096'", "vllm",
     len("harbor vllm args '--use-replayssm "), "RSM007"),
    ("harbor sglang args --enable-linear-replayssm --linear-replayssm-cache-len 0", "sglang",
     len("harbor sglang args --enable-linear-replayssm "), "RSM304"),
])
def test_a_tool_that_keeps_engine_words_for_the_next_launch(line, engine, column, code):
    """Harbor's ``harbor ENGINE args WORDS``: the words its compose service appends to the
    engine's command; the model is kept apart (``harbor vllm model``): unknown."""
    assert launches(line + "\n") == [(1, engine, "unknown")]
    assert (1, column, code) in places(line + "\n")


@pytest.mark.parametrize("line", ["harbor vllm args", "harbor vllm model org/model", 'harbor vllm args "$ARGS"',
                                  "harbor ollama args --use-replayssm"])
def test_harbor_commands_that_keep_no_engine_words(line):
    assert launches(line + "\n") == []
