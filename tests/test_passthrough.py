"""Engine options under a framework's own names (data/frameworks.toml), read as the engine's.

Each form the data names is read where the framework's code shows it forwards the options,
and only there: a block the framework does not use (another engine chosen), a framework's own
prefixed option, a harness's own ``--model_args`` key are not the engine's.
"""

from __future__ import annotations

import re

import pytest

from flake8_replayssm import passthrough
from flake8_replayssm.config import LintConfig
from flake8_replayssm.data_files import read_data
from flake8_replayssm.lint import lint_text


def result(text: str, kind: str = "shell", path: str | None = None):
    return lint_text(text, kind, LintConfig(vllm_version="0.33.0", sglang_version="0.5.23", inventory=True),
                     path=path)


def found(text: str, kind: str = "shell", path: str | None = None) -> list[tuple[int, str, str]]:
    """(line, engine, model) of each launch."""
    return [(n.line, n.engine, n.model.split(" ")[0]) for n in result(text, kind, path).launches]


def codes_at(text: str, kind: str = "shell", path: str | None = None) -> set[tuple[int, str]]:
    return {(f.span.line, f.code) for f in result(text, kind, path).findings}


def test_every_entry_cites_the_framework_source_that_forwards_it():
    raw = read_data("data/frameworks.toml")
    entries = [e for table in ("forward", "prefix", "model_args", "env", "args_string", "stored_args")
               for e in raw[table]]
    assert len(entries) >= 10
    for entry in entries:
        pinned = r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/"
        assert re.match(pinned + r"|https://github\.com/vllm-project/vllm/", entry["source"]), entry["framework"]
        assert entry.get("engine", "vllm") in ("vllm", "sglang")


# -- command lines -------------------------------------------------------------------------------

HYDRA = """\
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.model.path=org/m \\
    actor_rollout_ref.rollout.name={name} \\
    +actor_rollout_ref.rollout.engine_kwargs.vllm.use_replayssm=True \\
    +actor_rollout_ref.rollout.engine_kwargs.vllm.replayssm_buffer_len=0
"""


def test_hydra_overrides_of_a_forwarded_block():
    text = HYDRA.format(name="vllm")
    assert found(text) == [(4, "vllm", "org/m")]
    assert (5, "RSM007") in codes_at(text)


def test_a_block_of_the_engine_the_framework_does_not_run_is_no_launch():
    assert found(HYDRA.format(name="sglang")) == []


def test_a_block_without_its_model_is_judged_for_an_unknown_model_not_the_engine_default():
    text = ("uv run -m skyrl.train.entrypoints.main_base generator.inference_engine.backend=vllm \\\n"
            "  generator.inference_engine.engine_init_kwargs.use_replayssm=true\n")
    [(line, engine, model)] = found(text)
    assert (engine, model) == ("vllm", "unknown")
    assert "RSM001" not in {code for _, code in codes_at(text)}  # vLLM's default model is not this one


def test_a_json_object_and_key_value_words_on_a_command_line():
    text = ("llamafactory-cli api cfg.yaml infer_backend=vllm model_name_or_path=org/m "
            "vllm_config='{\"use_replayssm\": true, \"replayssm_buffer_len\": 0}'\n")
    assert found(text) == [(1, "vllm", "org/m")]
    default_backend = text.replace("infer_backend=vllm ", "")
    assert found(default_backend) == []  # LLaMA-Factory runs Hugging Face unless told otherwise


def test_prefixed_options_are_the_engines_and_the_frameworks_own_stay_its_own():
    text = ("python3 train.py --hf-checkpoint /models/m --sglang-enable-linear-replayssm \\\n"
            "  --sglang-linear-replayssm-cache-len 0 --sglang-router-ip 10.0.0.1 --rollout-batch-size 8\n")
    assert found(text) == [(1, "sglang", "/models/m")]
    assert (2, "RSM304") in codes_at(text)
    assert not any(code == "RSM104" for _, code in codes_at(text))  # --sglang-router-ip is slime's


def test_eval_harness_model_args():
    text = ("lm_eval --model vllm --model_args pretrained=org/m,use_replayssm=True,replayssm_buffer_len=0,"
            "batch_size=8 --tasks gsm8k\n"
            "lm_eval --model sglang --model_args pretrained=org/m,enable_linear_replayssm=True,"
            "linear_replayssm_cache_len=0\n"
            "lm_eval --model hf --model_args pretrained=org/m,use_replayssm=True\n")
    assert found(text) == [(1, "vllm", "org/m"), (2, "sglang", "org/m")]


def test_a_forwarded_launch_is_not_fixed_and_says_why():
    from flake8_replayssm.fix.codemod import fix_text

    outcome = fix_text(HYDRA.format(name="vllm"), "shell", LintConfig(vllm_version="0.33.0"))
    assert outcome.text == HYDRA.format(name="vllm")
    assert any("verl" in why for why in outcome.why_not.values())


# -- config files --------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,text,expect", [
    ("yaml", "policy:\n  model_name: org/m\n  generation:\n    backend: vllm\n    vllm_kwargs:\n"
             "      use_replayssm: true\n      replayssm_buffer_len: 0\n", [(6, "vllm", "org/m")]),
    ("yaml", "actor_rollout_ref:\n  model: {path: org/m}\n  rollout:\n    name: sglang\n    engine_kwargs:\n"
             "      vllm: {use_replayssm: true}\n      sglang:\n        enable_linear_replayssm: true\n",
     [(8, "sglang", "org/m")]),
    ("toml", '[model]\nname = "org/m"\n\n[inference.vllm]\nuse-replayssm = true\nreplayssm-buffer-len = 0\n',
     [(4, "vllm", "org/m")]),
    ("yaml", "vllm_config:\n  vllm_kwargs:\n    use-replayssm: ''\n    enable-prefix-caching: false\n"
             "model_path: org/m\n", [(3, "vllm", "org/m")]),
    ("yaml", "args:\n  model_id: org/m\n  cli_args:\n    - --use-replayssm\n", [(4, "vllm", "org/m")]),
])
def test_blocks_of_a_framework_config(kind, text, expect):
    assert found(text, kind) == expect


def test_an_empty_or_unused_block_is_no_launch():
    text = "name: ???\nengine_kwargs:\n  vllm: {}\n  sglang: {}\ncheckpoint:\n  engine_kwargs: {}\n"
    assert found(text, "yaml") == []


def test_a_whole_file_named_by_the_framework():
    text = '{\n  "model": "org/m",\n  "use_replayssm": true,\n  "replayssm_buffer_len": 0\n}\n'
    assert found(text, "json", path="repo/vllm_model/1/model.json") == [(1, "vllm", "org/m")]
    assert found(text, "json", path="repo/settings.json") == []


def test_an_environment_a_container_entrypoint_turns_into_options():
    text = ("env:\n  SM_VLLM_MODEL: org/m\n  SM_VLLM_USE_REPLAYSSM: 'true'\n  SM_VLLM_REPLAYSSM_BUFFER_LEN: '0'\n"
            "  SM_VLLM_ENFORCE_EAGER: 'false'\n")
    assert found(text, "yaml") == [(2, "vllm", "org/m")]
    assert (4, "RSM007") in codes_at(text, "yaml")


def test_the_most_specific_block_wins():
    """PipelineRL's vllm_config.vllm_kwargs (``--key value``), not NeMo-RL's vllm_kwargs (keywords)."""
    keys = [f.framework for f in passthrough.best_forwards(("vllm_config", "vllm_kwargs"))]
    assert keys == ["PipelineRL"]
    assert [f.framework for f in passthrough.best_forwards(("policy", "generation", "vllm_kwargs"))] == ["NeMo-RL"]
