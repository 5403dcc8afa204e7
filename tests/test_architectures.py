"""Tests for model -> architecture resolution (flake8_replayssm.architectures).

The traps come from reference/model-architectures.md section 4: names that
look like Nemotron-H or Kimi Linear but are not. A wrong answer there is a
false RSM001, so most tests here assert "unknown" or a *different* class.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from flake8_replayssm.architectures import (
    Resolution,
    _data,
    _from_patterns,
    architecture_family,
    architecture_kind,
    resolve_model,
)

NEMOTRON_H = "NemotronHForCausalLM"
PUZZLE = "NemotronHPuzzleForCausalLM"
NANO_VL = "NemotronH_Nano_VL_V2"
KIMI_LINEAR = "KimiLinearForCausalLM"
KIMI_K3 = "KimiK3ForConditionalGeneration"

REPO_ROOT = Path(__file__).resolve().parent.parent


def _write_config(directory: Path, payload: object | bytes) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "config.json"
    if isinstance(payload, bytes):
        config.write_bytes(payload)
    else:
        config.write_text(json.dumps(payload), encoding="utf-8")
    return directory


# --------------------------------------------------------------------------
# Table
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "arch"),
    [
        ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", NEMOTRON_H),
        ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", NEMOTRON_H),
        ("nvidia/Nemotron-H-8B-Base-8K", NEMOTRON_H),
        ("nvidia/NVIDIA-Nemotron-Labs-3-Puzzle-75B-A9B-FP8", PUZZLE),
        ("moonshotai/Kimi-Linear-48B-A3B-Instruct", KIMI_LINEAR),
        ("moonshotai/Kimi-K3", KIMI_K3),
        # Names lie: these contain "Nemotron" but are not Nemotron-H.
        ("nvidia/Llama-3.1-Nemotron-Nano-8B-v1", "LlamaForCausalLM"),
        ("nvidia/Llama-3_3-Nemotron-Super-49B-v1", "DeciLMForCausalLM"),
        ("nvidia/Llama-3_3-Nemotron-Super-49B-v1_5-FP8", "DeciLMForCausalLM"),
        ("nvidia/Llama-3_1-Nemotron-51B-Instruct", "DeciLMForCausalLM"),
        ("nvidia/OpenReasoning-Nemotron-7B", "Qwen2ForCausalLM"),
        ("nvidia/Minitron-8B-Base", "NemotronForCausalLM"),
        ("mgoin/Nemotron-4-340B-Base-hf-FP8", "NemotronForCausalLM"),
        ("nvidia/Llama-3.1-Nemotron-Nano-VL-8B-V1", "Llama_Nemotron_Nano_VL"),
        ("nvidia/llama-nemotron-embed-1b-v2", "LlamaBidirectionalModel"),
        # The VL / Omni variants are the non-ReplaySSM VL class.
        ("nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16", NANO_VL),
        ("nvidia/Nemotron-Nano-VL-12B-V2-FP8", NANO_VL),
        ("nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-NVFP4", "NemotronH_Nano_Omni_Reasoning_V3"),
        # Kimi names that are not Kimi Linear.
        ("moonshotai/Kimi-K2.5", "KimiK25ForConditionalGeneration"),
        ("moonshotai/Kimi-VL-A3B-Instruct", "KimiVLForConditionalGeneration"),
        ("moonshotai/Kimi-Audio-7B-Instruct", "MoonshotKimiaForCausalLM"),
        # Other SSM families.
        ("state-spaces/mamba-130m-hf", "MambaForCausalLM"),
        ("mistralai/Mamba-Codestral-7B-v0.1", "Mamba2ForCausalLM"),
        ("tiiuae/falcon-mamba-7b", "FalconMambaForCausalLM"),
        ("ibm-granite/granite-4.0-micro", "GraniteMoeHybridForCausalLM"),
        # Merge conflicts resolved in the reference (section 2).
        ("tiiuae/falcon-40b", "FalconForCausalLM"),
    ],
)
def test_exact_table_rows(model: str, arch: str) -> None:
    res = resolve_model(model)
    assert res == Resolution(arch, "table", res.detail)
    assert res.detail.startswith("model table")


def test_inferred_rows_say_so() -> None:
    res = resolve_model("nvidia/OpenReasoning-Nemotron-7B")
    assert "inferred" in res.detail
    assert "inferred" not in resolve_model("nvidia/Llama-3.1-Nemotron-Nano-8B-v1").detail


def test_every_table_row_resolves_to_itself() -> None:
    """No earlier step (sanity checks, GGUF/MLX filters) may shadow a row."""
    models = _data().models
    assert len(models) >= 600
    wrong = {
        model_id: resolve_model(model_id)
        for model_id, entry in models.items()
        if resolve_model(model_id) != Resolution(entry.architecture, "table", entry.describe())
    }
    assert wrong == {}


def test_meta_counts_match_models() -> None:
    from flake8_replayssm.architectures import _load_toml

    raw = _load_toml()
    meta = raw["meta"]
    assert meta["rows"] == len(raw["models"]) == meta["exact"] + meta["inferred"]
    inferred = sum(1 for row in raw["models"].values() if row.get("conf") == "inferred")
    assert inferred == meta["inferred"]


@pytest.mark.parametrize(
    ("model", "arch", "listed"),
    [
        ("NVIDIA/nvidia-nemotron-nano-9b-v2", NEMOTRON_H, "nvidia/NVIDIA-Nemotron-Nano-9B-v2"),
        (
            "nvidia/nvidia-nemotron-3-super-120b-a12b-bf16",
            NEMOTRON_H,
            "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16",
        ),
        (
            "nvidia/llama-3.1-nemotron-nano-8b-v1",
            "LlamaForCausalLM",
            "nvidia/Llama-3.1-Nemotron-Nano-8B-v1",
        ),
    ],
)
def test_case_insensitive_table(model: str, arch: str, listed: str) -> None:
    res = resolve_model(model)
    assert (res.architecture, res.how) == (arch, "table-casefold")
    assert listed in res.detail


# --------------------------------------------------------------------------
# Quantized / mirrored variants
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "arch", "base"),
    [
        (
            "nvidia/NVIDIA-Nemotron-Nano-12B-v2-FP8",
            NEMOTRON_H,
            "nvidia/NVIDIA-Nemotron-Nano-12B-v2",
        ),
        ("nvidia/Nemotron-H-8B-Base-8K-FP8", NEMOTRON_H, "nvidia/Nemotron-H-8B-Base-8K"),
        (
            "moonshotai/Kimi-Linear-48B-A3B-Instruct-AWQ",
            KIMI_LINEAR,
            "moonshotai/Kimi-Linear-48B-A3B-Instruct",
        ),
        (
            "meta-llama/Llama-3.1-8B-Instruct-FP8-dynamic",
            "LlamaForCausalLM",
            "meta-llama/Llama-3.1-8B-Instruct",
        ),
        # The trap stays a trap through quantization.
        (
            "nvidia/Llama-3_3-Nemotron-Super-49B-v1-NVFP4",
            "DeciLMForCausalLM",
            "nvidia/Llama-3_3-Nemotron-Super-49B-v1",
        ),
        (
            "nvidia/Llama-3.1-Nemotron-Nano-8B-v1-gptq-int4",
            "LlamaForCausalLM",
            "nvidia/Llama-3.1-Nemotron-Nano-8B-v1",
        ),
        # Known re-quantizers re-publish another org's model under its name.
        (
            "RedHatAI/NVIDIA-Nemotron-Nano-9B-v2-FP8-dynamic",
            NEMOTRON_H,
            "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
        ),
        (
            "unsloth/Llama-3.1-8B-Instruct-bnb-4bit",
            "LlamaForCausalLM",
            "meta-llama/Llama-3.1-8B-Instruct",
        ),
        (
            "unsloth/Kimi-Linear-48B-A3B-Instruct",
            KIMI_LINEAR,
            "moonshotai/Kimi-Linear-48B-A3B-Instruct",
        ),
    ],
)
def test_quantized_base(model: str, arch: str, base: str) -> None:
    res = resolve_model(model)
    assert (res.architecture, res.how) == (arch, "quantized-base")
    assert base in res.detail


@pytest.mark.parametrize(
    "model",
    [
        # Unknown community org: its re-uploads are not trusted by name.
        "someone/NVIDIA-Nemotron-Nano-9B-v2-AWQ",
        # GGUF and MLX are never suffix-stripped.
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2-GGUF",
        "unsloth/NVIDIA-Nemotron-Nano-9B-v2-GGUF",
        "unsloth/NVIDIA-Nemotron-3-Nano-30B-A3B-GGUF",
        "mlx-community/NVIDIA-Nemotron-Nano-9B-v2-4bit",
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2-MLX-4bit",
        # Base of a VL quant is not in the table and VL never matches a pattern.
        "nvidia/Nemotron-Nano-12B-v2-VL-NVFP4",
        # "-hf" is a conversion, not a quantization: not stripped.
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2-hf",
    ],
)
def test_quantized_fallback_negative(model: str) -> None:
    assert resolve_model(model).how == "unknown"


def test_quantized_sibling_in_table_wins_over_base() -> None:
    # The registry lists the AWQ repo under a different class than its base.
    assert (
        resolve_model("Qwen/Qwen2.5-Omni-7B-AWQ").architecture
        == "Qwen2_5OmniForConditionalGeneration"
    )
    assert resolve_model("Qwen/Qwen2.5-Omni-7B-AWQ").how == "table"


# --------------------------------------------------------------------------
# Safe name patterns
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "arch", "rule"),
    [
        ("nvidia/Nemotron-H-56B-Reasoning-128K", NEMOTRON_H, "Nemotron-H"),
        ("nvidia/Nemotron-H-56B-Instruct-128K-FP8", NEMOTRON_H, "Nemotron-H"),
        ("nvidia/Nemotron-Nano-9B-v2", NEMOTRON_H, "Nemotron-Nano-2"),
        ("nvidia/Nemotron-Nano-12B-v2-Base-NVFP4", NEMOTRON_H, "Nemotron-Nano-2"),
        ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4", NEMOTRON_H, "Nemotron-3"),
        ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-Base-BF16", NEMOTRON_H, "Nemotron-3"),
        ("nvidia/nvidia-nemotron-3-super-120b-a12b", NEMOTRON_H, "Nemotron-3"),
        ("nvidia/NVIDIA-Nemotron-Nano-3-30B-A3B-NVFP4", NEMOTRON_H, "blog spelling"),
        ("nvidia/NVIDIA-Nemotron-Labs-3-Puzzle-88B-A10B-BF16", PUZZLE, "Puzzle"),
        # A known re-quantizer may re-publish under the NVIDIA name.
        ("unsloth/NVIDIA-Nemotron-3-Nano-30B-A3B", NEMOTRON_H, "Nemotron-3"),
        ("RedHatAI/NVIDIA-Nemotron-3-Super-120B-A12B-W4A16", NEMOTRON_H, "Nemotron-3"),
    ],
)
def test_safe_patterns_positive(model: str, arch: str, rule: str) -> None:
    res = resolve_model(model)
    assert (res.architecture, res.how) == (arch, "pattern")
    assert rule in res.detail


@pytest.mark.parametrize(
    ("org", "name", "arch"),
    [
        # Kimi rows are all in the table; exercise the rules directly.
        ("moonshotai", "Kimi-Linear-48B-A3B-Base", KIMI_LINEAR),
        ("moonshotai", "kimi-linear-48b-a3b-instruct", KIMI_LINEAR),
        ("moonshotai", "Kimi-K3", KIMI_K3),
        ("RedHatAI", "Kimi-K3", KIMI_K3),
    ],
)
def test_kimi_patterns_positive(org: str, name: str, arch: str) -> None:
    res = _from_patterns(_data(), org, name, None)
    assert res is not None
    assert res.architecture == arch


@pytest.mark.parametrize(
    ("org", "name"),
    [
        ("someone", "Kimi-Linear-48B-A3B-Instruct"),  # org not allowed
        ("moonshotai", "Kimi-Linear-48B-A3B-Instruct-VL"),
        ("moonshotai", "Kimi-K3-Thinking"),  # anchored: unseen names do not match
        ("moonshotai", "Kimi-K2-Instruct"),
        ("moonshotai", "Kimi-K2.5"),
        ("moonshotai", "Kimi-VL-A3B-Thinking-2506"),
    ],
)
def test_kimi_patterns_negative(org: str, name: str) -> None:
    assert _from_patterns(_data(), org, name, None) is None


@pytest.mark.parametrize(
    "model",
    [
        # "nemotron" anywhere is not Nemotron-H.
        "nvidia/Llama-3.3-Nemotron-Foo",
        "nvidia/Llama-3.1-Nemotron-Nano-4B-v1.1",
        "nvidia/Llama-3_3-Nemotron-Super-49B-v2",
        "nvidia/Llama-3_1-Nemotron-Ultra-253B-v1",
        "nvidia/OpenReasoning-Nemotron-72B",
        "nvidia/Nemotron-4-15B-Base",
        "nvidia/Nemotron-4-340B-Instruct",
        "nvidia/Nemotron-Mini-4B-Instruct",
        "nvidia/nemotron-colembed-vl-8b-v2",
        # VL / Omni variants of Nano-2 and Nemotron-3.
        "nvidia/Nemotron-Nano-12B-v2-VL",
        "nvidia/NVIDIA-Nemotron-Nano-VL-12B-V2",
        "nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL",
        "nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16",
        "nvidia/NVIDIA-Nemotron-3-Nano-Omni-30B-A3B-Reasoning-FP8",
        # Exclusions apply even where the regex is open-ended.
        "nvidia/NVIDIA-Nemotron-Labs-3-Puzzle-75B-A9B-Eagle3",
        "nvidia/NVIDIA-Nemotron-Labs-3-Puzzle-75B-A9B-VL",
        "nvidia/NVIDIA-Nemotron-Labs-3-Elastic-30B-A3B-BF16",
        # Not resolved by the reference (section 5).
        "nvidia/NVIDIA-Nemotron-3-Nano-4B-BF16",
        # Right name, wrong org.
        "someone/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16-finetune",
        "someone/Nemotron-H-8B-Base-8K",
        "someone/NVIDIA-Nemotron-Nano-9B-v2",
        # GGUF conversions have no config.json.
        "bartowski/nvidia_Nemotron-H-8B-Reasoning-128K-GGUF",
        "nvidia/Nemotron-H-8B-Base-8K-GGUF",
        "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-GGUF",
        # Kimi names.
        "moonshotai/Kimi-K2-Instruct",
        "moonshotai/Kimi-K3-Thinking",
        "moonshotai/Kimi-Linear-48B-A3B-Instruct-GGUF",
        # Unseen HF ids and bare names.
        "meta-llama/Llama-9-70B-Instruct",
        "mamba-7b",
    ],
)
def test_traps_are_unknown(model: str) -> None:
    res = resolve_model(model)
    assert res.architecture is None
    assert res.how == "unknown"
    assert res.detail


def test_patterns_never_contradict_table() -> None:
    """Every table row a pattern would match must agree with the pattern."""
    data = _data()
    for model_id, entry in data.models.items():
        org, _, name = model_id.partition("/")
        res = _from_patterns(data, org, name, None)
        assert res is None or res.architecture == entry.architecture, model_id


# --------------------------------------------------------------------------
# Not model ids
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [
        "",
        " ",
        "nvidia/foo bar",
        "$MODEL",
        "${MODEL_ID}",
        "{model}",
        "{{ model }}",
        "<model>",
        "%(model)s",
        "`cat model.txt`",
        "nvidia/Nemotron-H-8B-Base-8K\n",
        "a/b/c",
    ],
)
def test_not_model_ids(model: str) -> None:
    assert resolve_model(model).how == "unknown"


# --------------------------------------------------------------------------
# Local directories
# --------------------------------------------------------------------------


def test_absolute_local_dir(tmp_path: Path) -> None:
    ckpt = _write_config(
        tmp_path / "ckpt", {"architectures": [NEMOTRON_H], "model_type": "nemotron_h"}
    )
    res = resolve_model(str(ckpt))
    assert (res.architecture, res.how) == (NEMOTRON_H, "config.json")
    assert "config.json" in res.detail


def test_relative_local_dir_uses_base_dir(tmp_path: Path) -> None:
    _write_config(tmp_path / "models" / "mine", {"architectures": ["MambaForCausalLM"]})
    assert resolve_model("./models/mine", base_dir=tmp_path).architecture == "MambaForCausalLM"
    (tmp_path / "launch").mkdir()
    assert (
        resolve_model("../models/mine", base_dir=tmp_path / "launch").architecture
        == "MambaForCausalLM"
    )
    assert resolve_model("./models/mine", base_dir=tmp_path / "launch").how == "unknown"
    # Without a "./" prefix, an existing directory next to the launch file counts too.
    assert resolve_model("models/mine", base_dir=tmp_path).how == "config.json"


def test_home_relative_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    _write_config(tmp_path / "models" / "k", {"architectures": [KIMI_LINEAR]})
    assert resolve_model("~/models/k").architecture == KIMI_LINEAR


def test_model_dirs_override_table(tmp_path: Path) -> None:
    # A local copy under a model dir is what vLLM loads; its config wins.
    _write_config(
        tmp_path / "nvidia" / "NVIDIA-Nemotron-Nano-9B-v2", {"architectures": ["LlamaForCausalLM"]}
    )
    res = resolve_model(
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2", model_dirs=[tmp_path / "empty", tmp_path]
    )
    assert (res.architecture, res.how) == ("LlamaForCausalLM", "config.json")
    # Without the model dir the table answers.
    assert resolve_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2").architecture == NEMOTRON_H


def test_model_dirs_resolve_unlisted_id(tmp_path: Path) -> None:
    _write_config(tmp_path / "acme" / "secret-7b", {"architectures": [NEMOTRON_H]})
    assert resolve_model("acme/secret-7b").how == "unknown"
    assert resolve_model("acme/secret-7b", model_dirs=[tmp_path]).architecture == NEMOTRON_H


@pytest.mark.parametrize(
    "payload",
    [
        b"{not json",
        b"\xff\xfe\x00garbage",
        b"",
        [NEMOTRON_H],
        {"model_type": "mamba"},  # original mamba_ssm-style config: no architectures
        {"architectures": []},
        {"architectures": [None]},
        {"architectures": ""},
        {"architectures": [""]},
        b"[" * 100000,
    ],
)
def test_broken_config_json_is_unknown(tmp_path: Path, payload: object) -> None:
    ckpt = _write_config(tmp_path / "ckpt", payload)
    res = resolve_model(str(ckpt))
    assert (res.architecture, res.how) == (None, "unknown")


def test_missing_or_odd_local_paths(tmp_path: Path) -> None:
    assert resolve_model(str(tmp_path / "nope")).how == "unknown"
    assert "does not exist" in resolve_model(str(tmp_path / "nope")).detail
    (tmp_path / "empty").mkdir()
    assert "no config.json" in resolve_model(str(tmp_path / "empty")).detail
    (tmp_path / "file").write_text("x")
    assert resolve_model(str(tmp_path / "file")).how == "unknown"
    (tmp_path / "d" / "config.json").mkdir(parents=True)  # config.json is a directory
    assert resolve_model(str(tmp_path / "d")).how == "unknown"


def test_gguf_file_is_unknown(tmp_path: Path) -> None:
    gguf = tmp_path / "nemotron-h-8b.Q4_K_M.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model(str(gguf)).how == "unknown"
    assert resolve_model("models/nemotron-h-8b.gguf").how == "unknown"


def test_relative_path_without_base_dir_does_not_raise() -> None:
    assert resolve_model("./definitely/not/here").how == "unknown"


# --------------------------------------------------------------------------
# User configuration
# --------------------------------------------------------------------------


def test_extra_models_exact_overrides_table() -> None:
    res = resolve_model(
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
        extra_models={"nvidia/NVIDIA-Nemotron-Nano-9B-v2": "LlamaForCausalLM"},
    )
    assert (res.architecture, res.how) == ("LlamaForCausalLM", "user")


def test_extra_models_case_insensitive_and_glob() -> None:
    extra = {"acme/*-hybrid-*": NEMOTRON_H, "Acme/Plain-7B": "LlamaForCausalLM"}
    assert resolve_model("acme/plain-7b", extra_models=extra).architecture == "LlamaForCausalLM"
    res = resolve_model("acme/foo-hybrid-8b", extra_models=extra)
    assert (res.architecture, res.how) == (NEMOTRON_H, "user")
    assert "acme/*-hybrid-*" in res.detail
    assert resolve_model("acme/foo-8b", extra_models=extra).how == "unknown"


def test_extra_models_exact_beats_glob_and_local_dir(tmp_path: Path) -> None:
    ckpt = _write_config(tmp_path / "ckpt", {"architectures": ["LlamaForCausalLM"]})
    extra = {"*": "MambaForCausalLM", str(ckpt): KIMI_LINEAR}
    assert resolve_model(str(ckpt), extra_models=extra).architecture == KIMI_LINEAR
    assert resolve_model("anything/else", extra_models=extra).architecture == "MambaForCausalLM"


def test_extra_models_ignores_empty_values() -> None:
    extra = {"nvidia/NVIDIA-Nemotron-Nano-9B-v2": "  "}
    assert resolve_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2", extra_models=extra).how == "table"


# --------------------------------------------------------------------------
# Architecture kinds
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arch", "kind"),
    [
        (NEMOTRON_H, "hybrid"),
        (PUZZLE, "hybrid"),
        (NANO_VL, "hybrid"),
        ("NemotronH_Nano_Omni_Reasoning_V3", "hybrid"),
        ("NemotronH_Super_Omni_Reasoning_V3", "hybrid"),
        ("NemotronH_Omni_Reasoning_V3", "hybrid"),
        (KIMI_LINEAR, "hybrid"),
        (KIMI_K3, "hybrid"),
        ("FalconH1ForCausalLM", "hybrid"),
        ("JambaForCausalLM", "hybrid"),
        ("Zamba2ForCausalLM", "hybrid"),
        ("BambaForCausalLM", "hybrid"),
        ("GraniteMoeHybridForCausalLM", "hybrid"),
        ("Lfm2ForCausalLM", "hybrid"),
        ("Lfm2MoeForCausalLM", "hybrid"),
        ("Qwen3NextForCausalLM", "hybrid"),
        ("Plamo2ForCausalLM", "hybrid"),
        ("MambaForCausalLM", "attention_free"),
        ("Mamba2ForCausalLM", "attention_free"),
        ("FalconMambaForCausalLM", "attention_free"),
        ("LlamaForCausalLM", "transformer"),
        ("DeciLMForCausalLM", "transformer"),
        ("NemotronForCausalLM", "transformer"),
        ("KimiK25ForConditionalGeneration", "transformer"),
        ("DeepseekV3ForCausalLM", "transformer"),
        ("Plamo3ForCausalLM", "transformer"),
        ("nemotronhforcausallm", "transformer"),  # registry keys are case-sensitive
        ("SomethingNewForCausalLM", "transformer"),
    ],
)
def test_architecture_kind(arch: str, kind: str) -> None:
    assert architecture_kind(arch) == kind


def test_architecture_family() -> None:
    assert architecture_family(PUZZLE) == architecture_family(NEMOTRON_H) == "Nemotron-H"
    assert architecture_family(NANO_VL) != architecture_family(NEMOTRON_H)
    assert architecture_family("LlamaForCausalLM") is None


def test_every_pattern_and_ssm_row_has_a_kind() -> None:
    raw_rules = {rule.architecture for rule in _data().rules}
    assert all(architecture_kind(arch) != "transformer" for arch in raw_rules)
    hybrid_rows = [
        e for e in _data().models.values() if architecture_kind(e.architecture) != "transformer"
    ]
    assert len(hybrid_rows) >= 130  # reference section 3 counts 141 hybrid/SSM rows


# --------------------------------------------------------------------------
# Build script
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def build_script() -> ModuleType:
    path = REPO_ROOT / "scripts" / "build_architectures.py"
    spec = importlib.util.spec_from_file_location("build_architectures", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    return module


def test_build_rejects_pattern_contradicting_table(build_script: ModuleType) -> None:
    good = build_script.Row("nvidia/Nemotron-H-8B-Base-8K", NEMOTRON_H, "x", "exact")
    bad = build_script.Row("nvidia/Nemotron-H-9B-Base-8K", "LlamaForCausalLM", "x", "exact")
    assert build_script.check_curated([good]) == []
    errors = build_script.check_curated([good, bad])
    assert len(errors) == 1
    assert "Nemotron-H-9B-Base-8K" in errors[0]


def test_build_short_source(build_script: ModuleType) -> None:
    src = (
        "vllm-project/vllm:tests/models/registry.py@0008d3565e9e key FuyuForCausalLM | "
        "vllm-project/vllm:docs/models/supported_models.md row FuyuForCausalLM"
    )
    assert build_script.short_source(src) == "vLLM test registry"
    assert len(build_script.short_source("family naming pattern (" + "x" * 200 + ")")) <= 80


def test_build_suffixes_match_runtime(build_script: ModuleType) -> None:
    shipped = {s.casefold() for s in _data().suffixes}
    assert shipped == {s.casefold() for s in build_script.QUANT_SUFFIXES}
    assert build_script.strip_quant_suffix("Foo-7B-FP8-dynamic") == "Foo-7B"
    assert build_script.strip_quant_suffix("Foo-7B-hf") is None


def test_generated_file_is_current(build_script: ModuleType) -> None:
    """The shipped TOML equals a fresh build (set REPLAYSSM_REFERENCE_TSV to locate the TSV)."""
    candidates = [Path(os.environ["REPLAYSSM_REFERENCE_TSV"])] if "REPLAYSSM_REFERENCE_TSV" in os.environ else []
    candidates += [REPO_ROOT / "reference" / "model-architectures.tsv",
                   REPO_ROOT.parent / "shared" / "reference" / "model-architectures.tsv"]
    tsv = next((c for c in candidates if c.is_file()), None)
    if tsv is None:
        pytest.skip("reference TSV not available")
    assert build_script.main(["--tsv", str(tsv), "--check"]) == 0
