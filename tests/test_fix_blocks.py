"""Fixes reach keyword launches written as a YAML mapping of options (a Ray Serve config's
``engine_kwargs``, a framework's ``vllm_kwargs:``): the key edits of a ``--config`` file, with
the engine's field names (prefix caching off is ``enable_prefix_caching: false`` there); where
no such edit can be made, the finding says why."""

from __future__ import annotations

from flake8_replayssm.config import LintConfig
from flake8_replayssm.fix.codemod import fix_text
from flake8_replayssm.lint import lint_text

RAY = """\
applications:
- name: llm
  args:
    llm_configs:
    - model_loading_config:
        model_id: nano
        model_source: nvidia/NVIDIA-Nemotron-Nano-9B-v2
      engine_kwargs:
        use_replayssm: true
        tensor_parallel_size: 1
"""


def fixed(text: str, version: str, kind: str = "yaml", unsafe: bool = False):
    outcome = fix_text(text, kind, LintConfig(vllm_version=version), unsafe=unsafe)
    assert outcome.error is None
    return outcome


def codes(text: str, version: str, kind: str = "yaml") -> set[str]:
    return {f.code for f in lint_text(text, kind, LintConfig(vllm_version=version)).findings}


def test_ray_serve_engine_kwargs_are_fixed_with_field_names():
    assert "RSM008" in codes(RAY, "0.33.0")
    safe = fixed(RAY, "0.33.0")
    assert safe.text == RAY  # the runner cannot be set from the file: only --unsafe switches kernels
    outcome = fixed(RAY, "0.33.0", unsafe=True)
    assert "        mamba_backend: flashinfer\n        enable_prefix_caching: false\n" in outcome.text
    assert codes(outcome.text, "0.33.0") == set()
    assert fixed(outcome.text, "0.33.0", unsafe=True).text == outcome.text  # a second run changes nothing


def test_a_safe_pin_in_a_framework_block():
    text = ("policy:\n  model_name: nvidia/Nemotron-H-8B-Base-8K\n  generation:\n    backend: vllm\n"
            "    vllm_kwargs:\n      use_replayssm: true\n      enable_prefix_caching: true\n")
    before = codes(text, "0.27.0")
    outcome = fixed(text, "0.27.0")
    assert "mamba_cache_mode: align" in outcome.text and "mamba_backend: triton" in outcome.text
    assert codes(outcome.text, "0.27.0") < before


def test_a_block_that_cannot_be_edited_says_why():
    text = '[model]\nname = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"\n[inference.vllm]\nuse-replayssm = true\n'
    outcome = fixed(text, "0.33.0", kind="toml", unsafe=True)
    assert outcome.text == text
    assert any("prime-rl" in why and "not fixable" in why for why in outcome.why_not.values())
