"""A launch is recognised by what its words say: an engine's entry point behind any program.

Known wrappers (data/launchers.toml) are skipped with their own arguments; a program the
linter does not know, followed by ``--`` and an entry point or by an entry point that is not
one of its options' values, is a wrapper whose environment is unseen; programs that only
print, search or install never launch.  Packages that re-export an engine's CLI or modules
are that engine (data/engine.toml).
"""

from __future__ import annotations

import pytest
from conftest import command

from flake8_replayssm.recognise import launch_from_command

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


@pytest.mark.parametrize("cmdline, label", [
    (f"ray job submit --address=http://head:8265 --job-id llm -- vllm serve {NANO} --use-replayssm", "vllm serve"),
    (f"launcher -n 4 vllm serve {NANO} --use-replayssm", "vllm serve"),
    (f"my-scheduler run /opt/venv/bin/python3 -m vllm.entrypoints.openai.api_server --model {NANO}",
     "python -m vllm.entrypoints.openai.api_server"),
    (f"lmcache_vllm serve {NANO} --use-replayssm", "vllm serve"),
    (f"python3 -m lmcache_vllm.vllm.entrypoints.openai.api_server --model {NANO} --use-replayssm",
     "python -m vllm.entrypoints.openai.api_server"),
    (f"python3 -m vllm.entrypoints.cli.main serve {NANO} --use-replayssm",
     "python -m vllm.entrypoints.cli.main serve"),
    ("python -m sglang_router.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct --dp-size 4 "
     "--enable-linear-replayssm", "python -m sglang_router.launch_server"),
])
def test_an_entry_point_behind_any_program_is_a_launch(cmdline, label):
    launch = launch_from_command(command(cmdline))
    assert launch is not None and launch.label == label


def test_an_unknown_program_hides_the_environment_it_gives():
    launch = launch_from_command(command(f"ray job submit -- vllm serve {NANO} --use-replayssm"))
    assert launch is not None and launch.env_open_ended
    known = launch_from_command(command(f"nohup vllm serve {NANO} --use-replayssm"))
    assert known is not None and not known.env_open_ended


@pytest.mark.parametrize("cmdline", [
    f"echo vllm serve {NANO} --use-replayssm",
    f"grep -r vllm serve {NANO}",
    "pip install vllm",
    f"my-tool --backend vllm serve {NANO} --use-replayssm",  # `vllm` is the value of --backend
    f"ray job submit --address x -- python train.py --engine vllm serve {NANO}",  # `--` runs a script
    "ray start --head --port 6379",
    "which vllm",
])
def test_words_that_only_mention_an_engine_are_no_launch(cmdline):
    assert launch_from_command(command(cmdline)) is None
