"""Hostile inputs the frontends follow only so far: bounded time and memory, and a verdict.

Each probe is text that expands exponentially if followed naively (a variable doubled in
every line, a dict splatting itself, YAML aliases of aliases).  The linter must finish
quickly, stay small, and still judge the launch with the exploding part unknown.
"""

from __future__ import annotations

import time
import tracemalloc

import pytest

from flake8_replayssm import check_source

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


def _shell_doubling() -> str:
    return "A=x\n" + 'A="$A $A"\n' * 24 + f"vllm serve {NANO} --use-replayssm $A\n"


def _array_doubling() -> str:
    return "A=(x)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 40 + f'vllm serve {NANO} --use-replayssm "${{A[@]}}"\n'


def _dict_doubling() -> str:
    lines = ["from vllm import LLM", "d0 = {'use_replayssm': True}"]
    lines += [f"d{i} = {{**d{i - 1}, **d{i - 1}}}" for i in range(1, 41)]
    return "\n".join(lines + [f"LLM('{NANO}', **d40)"]) + "\n"


def _string_doubling() -> str:
    lines = ["import subprocess", f"a0 = 'vllm serve {NANO} --use-replayssm '"]
    lines += [f"a{i} = a{i - 1} + a{i - 1}" for i in range(1, 41)]
    return "\n".join(lines + ["subprocess.run(a40, shell=True)"]) + "\n"


def _yaml_aliases() -> str:
    parts = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    parts += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return "\n".join([f"model: {NANO}", "use-replayssm: true", "hf-overrides:"] + ["  " + p for p in parts]) + "\n"


def _yaml_alias_walk() -> str:
    parts = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    parts += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return "\n".join(parts + ["args: [--use-replayssm]"]) + "\n"


@pytest.mark.parametrize("make,kind,codes", [
    (_shell_doubling, "shell", {"RSM008"}),
    (_array_doubling, "shell", {"RSM008"}),
    (_dict_doubling, "python", {"RSM008"}),
    (_string_doubling, "python", set()),
    (_yaml_aliases, "yaml", {"RSM008"}),
    (_yaml_alias_walk, "yaml", {"RSM001", "RSM008"}),  # Helm-style args, the default model
])
def test_exponential_expansions_are_bounded(make, kind, codes):
    text = make()
    tracemalloc.start()
    began = time.perf_counter()
    try:
        findings = check_source(text, kind, vllm_version="0.33.0")
        elapsed = time.perf_counter() - began
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < 20, f"took {elapsed:.1f} s"
    assert peak < 200_000_000, f"peak {peak / 1e6:.0f} MB"
    assert {f.code for f in findings} - {"RSM900"} == codes


FALCON = "tiiuae/Falcon-H1-7B-Instruct"


def test_shell_nesting_past_the_bound_is_reported_where_it_stops():
    depth = 61
    text = "if true; then\n" * depth + f"vllm serve {FALCON} --use-replayssm\n" + "fi\n" * depth
    findings = check_source(text, "shell", vllm_version="0.33.0")
    assert [(f.span.line, f.code) for f in findings] == [(depth, "RSM900")]
    assert "nesting" in findings[0].message


def test_a_command_of_too_many_words_is_cut_and_reported():
    text = f"vllm serve {FALCON} --use-replayssm " + "--x " * 100_000 + "\n"
    began = time.perf_counter()
    findings = check_source(text, "shell", vllm_version="0.33.0")
    assert time.perf_counter() - began < 20
    assert sorted(f.code for f in findings) == ["RSM001", "RSM008", "RSM900"]
    cut = next(f for f in findings if f.code == "RSM900")
    assert "4096 words" in cut.message and cut.span.col > 4096 * 4


def test_an_unknown_flag_is_looked_up_as_an_abbreviation_once():
    from flake8_replayssm.engines.vllm.argv import _abbreviated
    from flake8_replayssm.engines.vllm.knowledge import knowledge
    know = knowledge()
    assert _abbreviated(know, "use-replay") == "use-replayssm"
    assert _abbreviated(know, "mamba") is None        # a prefix of several options
    assert _abbreviated(know, "no-such-option") is None
