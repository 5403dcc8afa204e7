"""The SGLang launches the oracle is asked about: a seeded, deterministic set.

Each launch is what follows ``sglang serve`` (``entry: "serve"``) or ``python -m
sglang.launch_server`` (``entry: "launch_server"``), with its environment and the
``--config`` files it names.  Models are tiny local directories holding only a
``config.json`` (``MODEL_CONFIGS``), so SGLang reads their architecture offline.

    python3 scripts/conformance/sglang_generate.py | head     # needs no SGLang
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any, Iterator

SEED = 20261201

_QWEN3_NEXT = {
    "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 64, "linear_num_key_heads": 4, "linear_num_value_heads": 8, "linear_key_head_dim": 32,
    "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4, "full_attention_interval": 4, "num_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 128, "shared_expert_intermediate_size": 128,
    "decoder_sparse_step": 1, "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
    "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"],
}
_KIMI_LINEAR = {
    "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 4,
    "head_dim": 64, "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
    "linear_attn_config": {"kda_layers": [1, 2, 3], "full_attn_layers": [4], "num_heads": 4, "head_dim": 64,
                           "short_conv_kernel_size": 4},
    "kv_lora_rank": 64, "q_lora_rank": None, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32,
    "mla_use_nope": True, "num_experts": 4, "num_experts_per_token": 2, "moe_intermediate_size": 128,
    "num_shared_experts": 1, "first_k_dense_replace": 1, "moe_layer_freq": 1,
}
_NEMOTRON_H = {
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 4, "hybrid_override_pattern": "M-M*",
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "mamba_num_heads": 8,
    "mamba_head_dim": 32, "n_groups": 4, "ssm_state_size": 16, "conv_kernel": 4, "vocab_size": 1000,
    "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "mamba_hidden_act": "silu",
}
_LFM2 = {
    "architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
    "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "conv_L_cache": 3,
    "layer_types": ["conv", "conv", "full_attention", "conv"], "full_attn_idxs": [2],
}
_LLAMA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
    "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
}
_GRANITE_HYBRID = {
    "architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid", "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
    "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
    "layer_types": ["mamba", "mamba", "attention", "mamba"], "mamba_n_heads": 8, "mamba_d_head": 32,
    "mamba_n_groups": 4, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 1, "num_local_experts": 0,
    "num_experts_per_tok": 0, "shared_intermediate_size": 512,
}
_GRANITE_DENSE = dict(_GRANITE_HYBRID, layer_types=["attention"] * 4)

#: {model directory: config.json} of every tiny model a launch may name
MODEL_CONFIGS: dict[str, dict[str, Any]] = {
    "models/Qwen3Next": _QWEN3_NEXT,
    "models/KimiLinear": _KIMI_LINEAR,
    "models/NemotronH": _NEMOTRON_H,
    "models/Lfm2": _LFM2,
    "models/Llama": _LLAMA,
    "models/GraniteHybrid": _GRANITE_HYBRID,
    "models/GraniteDense": _GRANITE_DENSE,
}


def arch_of(model_dir: str) -> str:
    return MODEL_CONFIGS[model_dir]["architectures"][0]


def model_config_texts() -> dict[str, str]:
    return {d: json.dumps(c, indent=1) for d, c in MODEL_CONFIGS.items()}


def _launch(lid: str, argv: list[str], *, entry: str = "serve", env: dict[str, str] | None = None,
            files: dict[str, str] | None = None) -> dict[str, Any]:
    return {"id": lid, "entry": entry, "argv": argv, "env": env or {}, "files": files or {}}


REPLAY = "--enable-linear-replayssm"


def grid() -> Iterator[dict[str, Any]]:
    """Every model x radix-cache strategy x overlap scheduler x radix cache, with ReplaySSM."""
    strategies = [None, "auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"]
    n = 0
    for model, strategy, overlap_off, radix_off in itertools.product(
            MODEL_CONFIGS, strategies, (False, True), (False, True)):
        argv = ["--model-path", model, REPLAY]
        if strategy:
            argv += ["--mamba-radix-cache-strategy", strategy]
        if overlap_off:
            argv.append("--disable-overlap-schedule")
        if radix_off:
            argv.append("--disable-radix-cache")
        yield _launch(f"grid-{n:04d}", argv)
        n += 1


def decode_backends() -> Iterator[dict[str, Any]]:
    """The decode backend: S1 (Blackwell + bf16 state), S2 (Kimi), S4 (flashkda), helion (0.5.18+)."""
    n = 0
    for model, dtype, decode, base in itertools.product(
            ("models/Qwen3Next", "models/KimiLinear"), (None, "bfloat16", "float32"),
            (None, "triton", "flashinfer", "cutedsl", "helion", "flashkda"), (None, "flashkda", "helion")):
        argv = ["--model-path", model, REPLAY, "--disable-overlap-schedule"]
        if dtype:
            argv += ["--mamba-ssm-dtype", dtype]
        if decode:
            argv += ["--linear-attn-decode-backend", decode]
        if base:
            argv += ["--linear-attn-backend", base]
        yield _launch(f"decode-{n:04d}", argv)
        n += 1


def no_buffer_asserts() -> Iterator[dict[str, Any]]:
    """R5-R7: page size, overlap scheduler, trtllm_mha, with each strategy that reaches them."""
    n = 0
    for model, strategy, page, backend, overlap_off in itertools.product(
            ("models/Qwen3Next", "models/NemotronH", "models/Lfm2"), (None, "no_buffer"), (None, "1", "16"),
            (None, "trtllm_mha", "fa3"), (False, True)):
        argv = ["--model-path", model, REPLAY]
        if strategy:
            argv += ["--mamba-radix-cache-strategy", strategy]
        if page:
            argv += ["--page-size", page]
        if backend:
            argv += ["--attention-backend", backend]
        if overlap_off:
            argv.append("--disable-overlap-schedule")
        yield _launch(f"nobuf-{n:04d}", argv)
        n += 1


def other_checks() -> Iterator[dict[str, Any]]:
    """R3 (PD disaggregation), R4 (cache length), N2-N3, the spec-verify variant (R8, section 7)."""
    base = ["--model-path", "models/Qwen3Next", "--disable-overlap-schedule"]
    cases: list[tuple[list[str], dict[str, str]]] = []
    for mode in ("prefill", "decode", "null"):
        cases.append(([REPLAY, "--disaggregation-mode", mode], {}))
    for length in ("0", "-1", "1", "3", "16", "64"):
        cases.append(([REPLAY, "--linear-replayssm-cache-len", length], {}))
    cases.append(([REPLAY, "--enable-unified-memory"], {}))
    for spec in ("--enable-linear-replayssm-spec", "--enable-gdn-replayssm-spec"):
        cases += [
            ([spec], {}),
            ([spec, REPLAY], {}),
            ([spec, "--speculative-eagle-topk", "4"], {}),
            ([spec, "--speculative-eagle-topk", "1"], {}),
            ([spec, "--linear-attn-decode-backend", "cutedsl"], {}),
            ([spec, "--linear-attn-decode-backend", "flashinfer"], {}),
            ([spec, "--mamba-ssm-dtype", "bfloat16"], {}),
            ([spec, "--linear-replayssm-cache-len", "12"], {}),
            ([spec, "--linear-replayssm-cache-len", "0"], {}),
            ([spec, "--disaggregation-mode", "prefill"], {}),
            ([spec, "--disaggregation-mode", "decode"], {}),
            ([spec, "--mamba-radix-cache-strategy", "extra_buffer"], {}),
            ([spec], {"SGLANG_RAGGED_VERIFY_MODE": "compact"}),
            ([spec, "--speculative-algorithm", "DFLASH", "--linear-attn-verify-backend", "triton"],
             {"SGLANG_RAGGED_VERIFY_MODE": "compact"}),
        ]
    for n, (extra, env) in enumerate(cases):
        yield _launch(f"other-{n:04d}", base + extra, env=env)


def context() -> Iterator[dict[str, Any]]:
    """Flags that could plausibly touch the overlap scheduler or the radix cache before SGLang
    resolves ``auto`` (pipeline / data parallelism, speculative decoding, the CPU device, a PD
    decode server keeping its radix cache): with and without --disable-overlap-schedule."""
    extras = [
        ["--pp-size", "2"], ["--tp-size", "2"], ["--enable-dp-attention", "--dp-size", "2", "--tp-size", "2"],
        ["--speculative-algorithm", "NEXTN"],
        ["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "models/Qwen3Next"],
        ["--device", "cpu"], ["--enable-mixed-chunk"], ["--chunked-prefill-size", "-1"],
        ["--disaggregation-mode", "decode", "--disaggregation-decode-enable-radix-cache"],
    ]
    n = 0
    for model, extra, overlap_off in itertools.product(("models/Qwen3Next", "models/KimiLinear"), extras,
                                                       (False, True)):
        argv = ["--model-path", model, REPLAY, *extra] + (["--disable-overlap-schedule"] if overlap_off else [])
        yield _launch(f"ctx-{n:04d}", argv)
        n += 1


def spellings() -> Iterator[dict[str, Any]]:
    """How SGLang's parser reads words: forms, aliases, abbreviations, positional models."""
    m = ["--model-path", "models/Qwen3Next"]
    off = "--disable-overlap-schedule"
    cases: list[tuple[str, list[str]]] = [
        ("serve", ["models/Qwen3Next", REPLAY, off]),
        ("serve", ["models/Qwen3Next", REPLAY]),
        ("serve", ["--model-type", "llm", "models/Qwen3Next", REPLAY, off]),
        ("serve", ["--model", "models/Qwen3Next", REPLAY, off]),
        ("serve", [REPLAY, off, "models/Qwen3Next"]),
        ("launch_server", m + [REPLAY]),
        ("launch_server", m + [REPLAY, off]),
        ("launch_server", ["models/Qwen3Next", REPLAY, off]),
        ("serve", m + ["--enable_linear_replayssm", off]),
        ("serve", m + ["--enable-linear-replayssm=true", off]),
        ("serve", m + [REPLAY, "true", off]),
        ("serve", m + ["--no-enable-linear-replayssm", off]),
        ("serve", m + ["--enable-linear-replay", off]),
        ("serve", m + ["--enable-linear", off]),
        ("serve", m + ["--enable-gdn-replayssm", off]),
        ("serve", m + ["--gdn-replayssm-cache-len", "8", REPLAY, off]),
        ("serve", m + [REPLAY, "--mamba-scheduler-strategy", "no_buffer", off]),
        ("serve", m + [REPLAY, "--mamba-scheduler-strategy", "extra_buffer", off]),
        ("serve", m + [REPLAY, "--mamba-radix-cache-strategy", "bogus", off]),
        ("serve", m + [REPLAY, "--mamba-radix-cache-strategy=no_buffer", off]),
        ("serve", m + [REPLAY, "--linear-replayssm-cache-len", "abc", off]),
        ("serve", m + [REPLAY, "--linear-replayssm-cache-len=8", off]),
        ("serve", m + [REPLAY, "--disable-overlap"]),
        ("serve", m + [REPLAY, "--disable_overlap_schedule"]),
        ("serve", m + [REPLAY, "--page-size", "16", "--mamba-radix-cache-strategy", "no_buffer", off]),
    ]
    for n, (entry, argv) in enumerate(cases):
        yield _launch(f"spell-{n:04d}", argv, entry=entry)


def configs() -> Iterator[dict[str, Any]]:
    """``--config FILE``: dash and underscore keys, ``true``/``false``, CLI after the file."""
    files = {
        "configs/dash.yaml": "model-path: models/Qwen3Next\nenable-linear-replayssm: true\n"
                             "disable-overlap-schedule: true\n",
        "configs/dash_default.yaml": "model-path: models/Qwen3Next\nenable-linear-replayssm: true\n",
        "configs/underscore.yaml": "model_path: models/Qwen3Next\nenable_linear_replayssm: true\n",
        "configs/false.yaml": "model-path: models/Qwen3Next\nenable-linear-replayssm: true\n"
                              "disable-overlap-schedule: false\n",
        "configs/no_buffer.yaml": "model-path: models/Qwen3Next\nenable-linear-replayssm: true\n"
                                  "mamba-radix-cache-strategy: no_buffer\n",
        "configs/flags.yaml": "enable-linear-replayssm: true\nmamba-radix-cache-strategy: no_buffer\n",
    }
    cases = [
        ["--config", "configs/dash.yaml"],
        ["--config", "configs/dash_default.yaml"],
        ["--config", "configs/underscore.yaml"],
        ["--config", "configs/false.yaml"],
        ["--config", "configs/no_buffer.yaml"],
        ["--config", "configs/no_buffer.yaml", "--disable-overlap-schedule"],
        ["--config=configs/dash.yaml", "--model-path", "models/Qwen3Next"],
        ["--model-path", "models/Qwen3Next", "--config", "configs/flags.yaml"],
        ["--model-path", "models/Qwen3Next", "--config", "configs/flags.yaml", "--disable-overlap-schedule"],
        ["--config", "configs/dash_default.yaml", "--mamba-radix-cache-strategy", "auto",
         "--disable-radix-cache"],
    ]
    for n, argv in enumerate(cases):
        used = {path: text for path, text in files.items() if any(path in a for a in argv)}
        yield _launch(f"yaml-{n:04d}", argv, files=used)


def seeded() -> Iterator[dict[str, Any]]:
    """Random combinations of everything above (the same ones every run: a fixed seed)."""
    rng = random.Random(SEED)
    pools: list[list[list[str]]] = [
        [[], ["--mamba-radix-cache-strategy", "no_buffer"], ["--mamba-radix-cache-strategy", "extra_buffer"],
         ["--mamba-radix-cache-strategy", "auto"]],
        [[], ["--disable-overlap-schedule"]],
        [[], [], ["--disable-radix-cache"]],
        [[], [], ["--page-size", "1"], ["--page-size", "64"]],
        [[], [], ["--mamba-ssm-dtype", "bfloat16"], ["--mamba-ssm-dtype", "float32"]],
        [[], [], ["--linear-attn-decode-backend", "triton"], ["--linear-attn-decode-backend", "flashinfer"]],
        [[], [], [], ["--disaggregation-mode", "decode"]],
        [[], [], [], ["--linear-replayssm-cache-len", "0"], ["--linear-replayssm-cache-len", "8"]],
        [[], [], [], [], ["--enable-linear-replayssm-spec"]],
        [[REPLAY], [REPLAY], [REPLAY], []],
    ]
    for n in range(160):
        argv = ["--model-path", rng.choice(sorted(MODEL_CONFIGS))]
        for pool in pools:
            argv += rng.choice(pool)
        yield _launch(f"seed-{n:04d}", argv)


def launches() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in (grid, decode_backends, no_buffer_asserts, other_checks, context, spellings, configs, seeded):
        out.extend(part())
    return out


if __name__ == "__main__":
    for launch in launches():
        print(json.dumps(launch, sort_keys=True))
