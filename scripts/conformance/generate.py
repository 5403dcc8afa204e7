"""Deterministic launch generator for the vLLM ReplaySSM conformance corpus.

This module has no dependency on vLLM: it only builds launches (argv tokens after
``vllm``, the environment and any ``--config`` YAML files) and the tiny model
directories they point at.  ``record.py`` feeds every launch to the real vLLM
parser and config code of one release and records what vLLM did.

The launch set is the same for every release (same seed, same order, same ids),
so the recorded files of two releases can be compared line by line by ``id``.

Run ``python scripts/conformance/generate.py`` to print the launches as JSON
lines (handy for eyeballing; the recorder calls :func:`generate` itself).
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

SEED = 20270501

# ---------------------------------------------------------------------------
# Tiny model directories (only config.json).  Written by the recorder into a
# temporary working directory at run time; paths are relative to that cwd.
# Dimensions are small; Mamba head / group counts are divisible by TP 1, 2, 4.
# ---------------------------------------------------------------------------

_NEMOTRON_H = {
    "architectures": ["NemotronHForCausalLM"],
    "model_type": "nemotron_h",
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 4,
    "hybrid_override_pattern": "M-M*",
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "mamba_num_heads": 8,
    "mamba_head_dim": 16,
    "ssm_state_size": 16,
    "n_groups": 4,
    "conv_kernel": 4,
    "expand": 2,
    "chunk_size": 128,
    "max_position_embeddings": 4096,
    "mlp_hidden_act": "relu2",
    "mamba_hidden_act": "silu",
    "layer_norm_epsilon": 1e-05,
    "residual_in_fp32": False,
    "rescale_prenorm_residual": True,
    "use_conv_bias": True,
    "use_bias": False,
    "mamba_proj_bias": False,
    "attention_bias": False,
    "mlp_bias": False,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "bos_token_id": 1,
    "eos_token_id": 2,
    "pad_token_id": 0,
}

_LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "max_position_embeddings": 4096,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "bos_token_id": 1,
    "eos_token_id": 2,
}

MODEL_CONFIGS: dict[str, dict[str, Any]] = {
    "models/NemotronH": _NEMOTRON_H,
    # the same with one MTP layer, for --speculative-config '{"method": "mtp"}'
    "models/NemotronH-MTP": {**_NEMOTRON_H, "num_nextn_predict_layers": 1,
                             "mtp_hybrid_override_pattern": "*-"},
    # NemotronH_Nano_VL_V2 on the nemotron_h_omni config schema that
    # transformers ships (the hub checkpoint needs remote code, unavailable
    # offline); vLLM picks the class from `architectures`.
    "models/NemotronH-VL": {
        "architectures": ["NemotronH_Nano_VL_V2"],
        "model_type": "nemotron_h_omni",
        "text_config": {k: v for k, v in _NEMOTRON_H.items() if k != "architectures"},
        "torch_dtype": "bfloat16",
    },
    "models/KimiLinear": {
        "architectures": ["KimiLinearForCausalLM"],
        "model_type": "kimi_linear",
        "vocab_size": 256,
        "hidden_size": 64,
        "intermediate_size": 128,
        "moe_intermediate_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "head_dim": 16,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-05,
        "max_position_embeddings": 4096,
        "q_lora_rank": None,
        "kv_lora_rank": 32,
        "qk_nope_head_dim": 16,
        "qk_rope_head_dim": 16,
        "v_head_dim": 16,
        "mla_use_nope": True,
        "num_experts": 4,
        "num_experts_per_token": 2,
        "num_shared_experts": 1,
        "first_k_dense_replace": 1,
        "moe_layer_freq": 1,
        "linear_attn_config": {
            "full_attn_layers": [2],
            "kda_layers": [1],
            "num_heads": 4,
            "head_dim": 16,
            "short_conv_kernel_size": 4,
        },
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "bos_token_id": 1,
        "eos_token_id": 2,
        "pad_token_id": 0,
    },
    "models/Mamba": {
        "architectures": ["MambaForCausalLM"],
        "model_type": "mamba",
        "vocab_size": 256,
        "hidden_size": 64,
        "intermediate_size": 128,
        "state_size": 16,
        "num_hidden_layers": 2,
        "expand": 2,
        "conv_kernel": 4,
        "time_step_rank": 4,
        "torch_dtype": "bfloat16",
        "bos_token_id": 0,
        "eos_token_id": 0,
        "pad_token_id": 0,
    },
    "models/Mamba2": {
        "architectures": ["Mamba2ForCausalLM"],
        "model_type": "mamba2",
        "vocab_size": 256,
        "hidden_size": 64,
        "num_heads": 8,
        "head_dim": 16,
        "state_size": 16,
        "n_groups": 4,
        "expand": 2,
        "conv_kernel": 4,
        "chunk_size": 128,
        "num_hidden_layers": 2,
        "torch_dtype": "bfloat16",
        "bos_token_id": 0,
        "eos_token_id": 0,
        "pad_token_id": 0,
    },
    "models/FalconH1": {
        "architectures": ["FalconH1ForCausalLM"],
        "model_type": "falcon_h1",
        "vocab_size": 256,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "mamba_d_ssm": 128,
        "mamba_n_heads": 8,
        "mamba_d_head": 16,
        "mamba_n_groups": 4,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "mamba_chunk_size": 128,
        "max_position_embeddings": 4096,
        "torch_dtype": "bfloat16",
    },
    "models/Jamba": {
        "architectures": ["JambaForCausalLM"],
        "model_type": "jamba",
        "vocab_size": 256,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "attn_layer_period": 2,
        "attn_layer_offset": 1,
        "expert_layer_period": 2,
        "expert_layer_offset": 1,
        "num_experts": 2,
        "num_experts_per_tok": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "mamba_dt_rank": 4,
        "max_position_embeddings": 4096,
        "torch_dtype": "bfloat16",
    },
    "models/GraniteMoeHybrid": {
        "architectures": ["GraniteMoeHybridForCausalLM"],
        "model_type": "granitemoehybrid",
        "vocab_size": 256,
        "hidden_size": 64,
        "intermediate_size": 128,
        "shared_intermediate_size": 128,
        "num_hidden_layers": 2,
        "layer_types": ["mamba", "attention"],
        "layers_block_type": ["mamba", "attention"],
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "num_local_experts": 0,
        "num_experts_per_tok": 0,
        "mamba_n_heads": 8,
        "mamba_d_head": 16,
        "mamba_n_groups": 4,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "mamba_chunk_size": 128,
        "max_position_embeddings": 4096,
        "position_embedding_type": "nope",
        "torch_dtype": "bfloat16",
    },
    "models/Llama": _LLAMA,
}

# short name -> model dir
M = {
    "nemotronh": "models/NemotronH",
    "nemotronh_mtp": "models/NemotronH-MTP",
    "nemotronh_vl": "models/NemotronH-VL",
    "kimi": "models/KimiLinear",
    "mamba": "models/Mamba",
    "mamba2": "models/Mamba2",
    "falconh1": "models/FalconH1",
    "jamba": "models/Jamba",
    "granite": "models/GraniteMoeHybrid",
    "llama": "models/Llama",
}

# "llama_as_nemotronh": models/Llama retyped with --hf-overrides.
ALL_MODELS = [m for m in M if m != "nemotronh_mtp"] + ["llama_as_nemotronh"]

OVERRIDE_NEMOTRONH = {"architectures": ["NemotronHForCausalLM"]}


def model_config_texts() -> dict[str, str]:
    """{model dir: config.json text} for every tiny model."""
    return {
        d: json.dumps(cfg, indent=2, sort_keys=True) + "\n"
        for d, cfg in MODEL_CONFIGS.items()
    }


def arch_of(model_dir: str) -> str:
    return MODEL_CONFIGS[model_dir]["architectures"][0]


# ---------------------------------------------------------------------------
# Rendering helpers
# ---------------------------------------------------------------------------


def js(obj: Any) -> str:
    """Compact JSON as people write it on a command line."""
    return json.dumps(obj, separators=(",", ":"))


def opt(name: str, value: Any = None, style: str = "space") -> list[str]:
    """Render ``--name value`` in one of the spellings vLLM accepts.

    style: space | eq | under | under_eq
    """
    flag = "--" + name
    if style.startswith("under"):
        flag = "--" + name.replace("-", "_")
    if value is None:
        return [flag]
    value = str(value)
    if style.endswith("eq"):
        return [f"{flag}={value}"]
    return [flag, value]


def ngram(k: int) -> dict[str, Any]:
    return {"method": "ngram", "num_speculative_tokens": k, "prompt_lookup_max": 3}


SPEC_VARIANTS: dict[str, tuple[list[str], int | None]] = {}


def spec_tokens(kind: str, k: int, rnd: random.Random | None = None) -> list[str]:
    """Speculative-decoding flags of one form."""
    if kind == "json":
        return ["--speculative-config", js(ngram(k))]
    if kind == "json_eq":
        return [f"--speculative-config={js(ngram(k))}"]
    if kind == "json_under":
        return ["--speculative_config", js(ngram(k))]
    if kind == "sc":
        return ["-sc", js(ngram(k))]
    if kind == "dotted":
        return [
            "--speculative-config.method", "ngram",
            "--speculative-config.num_speculative_tokens", str(k),
            "--speculative-config.prompt_lookup_max", "3",
        ]
    if kind == "dotted_eq":
        return [
            "--speculative-config.method=ngram",
            f"--speculative-config.num_speculative_tokens={k}",
            "--speculative-config.prompt_lookup_max=3",
        ]
    if kind == "spec_flags":
        return ["--spec-method", "ngram", "--spec-tokens", str(k),
                "--speculative-config.prompt_lookup_max", "3"]
    if kind == "spec_flags_only":
        return ["--spec-method", "ngram", "--spec-tokens", str(k)]
    if kind == "spec_conflict":
        # --spec-tokens together with the same key inside --speculative-config
        return ["--speculative-config", js(ngram(k)), "--spec-tokens", str(k)]
    if kind == "ngram_gpu":
        return ["--speculative-config",
                js({"method": "ngram_gpu", "num_speculative_tokens": k,
                    "prompt_lookup_max": 3})]
    if kind == "draft_model":
        return ["--speculative-config",
                js({"method": "draft_model", "model": "models/Llama",
                    "num_speculative_tokens": k})]
    if kind == "draft_model_implicit":
        return ["--speculative-config",
                js({"model": "models/Llama", "num_speculative_tokens": k})]
    if kind == "suffix":
        return ["--speculative-config",
                js({"method": "suffix", "num_speculative_tokens": k})]
    if kind == "mtp":
        return ["--speculative-config",
                js({"method": "mtp", "num_speculative_tokens": k})]
    if kind == "no_tokens":
        return ["--speculative-config", js({"method": "ngram", "prompt_lookup_max": 3})]
    if kind == "zero_tokens":
        return ["--speculative-config", js(ngram(0))]
    if kind == "bad_json":
        return ["--speculative-config", "{method: ngram}"]
    raise ValueError(kind)


KV_VARIANTS: dict[str, list[str]] = {
    "nixl_both": ["--kv-transfer-config",
                  js({"kv_connector": "NixlConnector", "kv_role": "kv_both"})],
    "nixl_producer": ["--kv-transfer-config",
                      js({"kv_connector": "NixlConnector", "kv_role": "kv_producer"})],
    "lmcache_consumer": ["--kv-transfer-config",
                         js({"kv_connector": "LMCacheConnectorV1",
                             "kv_role": "kv_consumer"})],
    "nixl_no_role": ["--kv-transfer-config", js({"kv_connector": "NixlConnector"})],
    "role_only": ["--kv-transfer-config", js({"kv_role": "kv_both"})],
    "dotted": ["--kv-transfer-config.kv_connector", "NixlConnector",
               "--kv-transfer-config.kv_role", "kv_both"],
    "eq": ["--kv-transfer-config="
           + js({"kv_connector": "NixlConnector", "kv_role": "kv_both"})],
    "under": ["--kv_transfer_config",
              js({"kv_connector": "NixlConnector", "kv_role": "kv_both"})],
    "offload": ["--kv-offloading-size", "4"],
    "offload_eq": ["--kv-offloading-size=8.5"],
    "offload_native": ["--kv-offloading-size", "4", "--kv-offloading-backend", "native"],
    "bad_json": ["--kv-transfer-config", "{kv_connector: NixlConnector}"],
}


def model_tokens(model: str) -> list[str]:
    """Positional model (plus the overrides that retype Llama)."""
    if model == "llama_as_nemotronh":
        return [M["llama"], "--hf-overrides", js(OVERRIDE_NEMOTRONH)]
    return [M[model]]


PC = {
    None: [],
    "on": ["--enable-prefix-caching"],
    "off": ["--no-enable-prefix-caching"],
    "disable": ["--disable-prefix-caching"],
}


class Gen:
    def __init__(self, seed: int = SEED) -> None:
        self.rnd = random.Random(seed)
        self.launches: list[dict[str, Any]] = []
        self.counters: dict[str, int] = {}

    def add(self, cat: str, argv: list[str], env: dict[str, str] | None = None,
            files: dict[str, str] | None = None) -> None:
        n = self.counters.get(cat, 0)
        self.counters[cat] = n + 1
        self.launches.append({
            "id": f"{cat}-{n:04d}",
            "argv": ["serve", *argv],
            "env": dict(env or {}),
            "files": dict(files or {}),
        })


ENVS: list[dict[str, str]] = [{}, {"VLLM_USE_V2_MODEL_RUNNER": "0"},
                              {"VLLM_USE_V2_MODEL_RUNNER": "1"}]


def generate(seed: int = SEED) -> list[dict[str, Any]]:
    g = Gen(seed)
    rnd = g.rnd

    # A. semantic grid for the two ReplaySSM families (canonical spellings)
    for model in ("nemotronh", "kimi"):
        for backend in (None, "triton", "flashinfer", "cpu"):
            for pc in (None, "on", "off"):
                for mode in (None, "align", "all", "none"):
                    for spec in (None, 3):
                        for env in ENVS:
                            argv = model_tokens(model) + ["--use-replayssm"]
                            if backend:
                                argv += ["--mamba-backend", backend]
                            argv += PC[pc]
                            if mode:
                                argv += ["--mamba-cache-mode", mode]
                            if spec:
                                argv += spec_tokens("json", spec)
                            g.add("grid", argv, env)

    # B. the other architectures (and Llama retyped) with ReplaySSM
    for model in ("nemotronh_vl", "llama", "mamba", "mamba2", "falconh1", "jamba",
                  "granite", "llama_as_nemotronh"):
        for backend in (None, "flashinfer"):
            for pc in (None, "off"):
                for spec in (None, 3):
                    for env in ENVS[:2]:
                        argv = model_tokens(model) + ["--use-replayssm"]
                        if backend:
                            argv += ["--mamba-backend", backend]
                        argv += PC[pc]
                        if spec:
                            argv += spec_tokens("json", spec)
                        g.add("arch", argv, env)

    # C. no ReplaySSM: prefix-caching defaults, cache-mode derivation, rule #1
    for model in ALL_MODELS:
        full = model in ("nemotronh", "kimi", "mamba", "mamba2", "llama")
        for pc in (None, "on", "off"):
            for mode in ((None, "all", "align", "none") if full else (None, "all")):
                for block in ((None, 16) if full else (None,)):
                    argv = list(model_tokens(model))
                    argv += PC[pc]
                    if mode:
                        argv += ["--mamba-cache-mode", mode]
                    if block:
                        argv += ["--mamba-block-size", str(block)]
                    g.add("noreplay", argv)
        # runner choice without ReplaySSM, per speculative method
        for kind in ("json", "draft_model", "ngram_gpu", "suffix", "mtp"):
            target = model_tokens("nemotronh_mtp" if kind == "mtp" and model == "nemotronh"
                                  else model)
            g.add("noreplay", target + spec_tokens(kind, 2))

    # C2. what else forces Model Runner V1 (V2-unsupported features); with the
    # default Triton ReplaySSM path these decide between pass and rule
    # "Triton ReplaySSM requires Model Runner V1" (0.30+).
    v1_features = [
        ["--compilation-config", js({"mode": 1})],
        # (sequence parallelism with -tp 2 is not recorded: on the CPU oracle its
        # compilation pass looks up torch.ops._C.rotary_embedding, absent here)
        ["--enable-dbo", "--all2all-backend", "deepep_low_latency"],
        ["--logits-processors", "vllm.v1.sample.logits_processor:MinPLogitsProcessor"],
        ["--enable-prefix-caching", "--mamba-cache-mode", "all"],
        ["--mamba-cache-mode", "all"],
        ["--no-enable-prefix-caching", "--mamba-cache-mode", "all"],
        ["--speculative-config", js({"method": "draft_model", "model": "models/Llama",
                                     "num_speculative_tokens": 2,
                                     "parallel_drafting": True})],
        ["--distributed-executor-backend", "external_launcher", "-pp", "2"],
        ["--enforce-eager"],
    ]
    for feat in v1_features:
        for replay in (True, False):
            for model in ("nemotronh", "kimi"):
                argv = model_tokens(model) + (["--use-replayssm"] if replay else []) + feat
                g.add("v1", argv)

    # D. speculative decoding in every form, NemotronH / Kimi / retyped Llama
    spec_kinds = ["json", "json_eq", "json_under", "sc", "dotted", "dotted_eq",
                  "spec_flags", "spec_flags_only", "spec_conflict", "ngram_gpu",
                  "draft_model", "draft_model_implicit", "suffix", "mtp",
                  "no_tokens", "zero_tokens", "bad_json"]
    for model in ("nemotronh", "kimi", "llama_as_nemotronh"):
        for kind in (spec_kinds if model != "llama_as_nemotronh"
                     else ("json", "dotted", "spec_flags")):
            for backend, pc in (("flashinfer", "off"), (None, None), ("triton", "off")):
                k = rnd.choice([1, 2, 3, 4])
                target = "nemotronh_mtp" if kind == "mtp" and model == "nemotronh" else model
                argv = model_tokens(target) + ["--use-replayssm"]
                if backend:
                    argv += ["--mamba-backend", backend]
                argv += PC[pc]
                argv += spec_tokens(kind, k)
                g.add("spec", argv, rnd.choice(ENVS))
    # speculative window vs buffer length (P4/P5 rule 9 and the <= 16 rule)
    for model in ("nemotronh", "kimi"):
        for k in ((1, 3, 8, 15, 16) if model == "nemotronh" else (1, 3, 16)):
            for buf in (None, k, k + 1, 16, 17):
                for backend in ("flashinfer", "triton"):
                    argv = model_tokens(model) + ["--use-replayssm",
                                                  "--mamba-backend", backend,
                                                  "--no-enable-prefix-caching"]
                    if buf is not None:
                        argv += ["--replayssm-buffer-len", str(buf)]
                    argv += spec_tokens("json", k)
                    g.add("specbuf", argv)

    # E. KV connectors and KV offloading
    for model in ("nemotronh", "kimi", "llama_as_nemotronh"):
        for kv in (KV_VARIANTS if model != "llama_as_nemotronh"
                   else ("nixl_both", "offload", "dotted")):
            for backend, pc, spec, env in (
                ("flashinfer", "off", None, {}),
                ("triton", None, None, {"VLLM_USE_V2_MODEL_RUNNER": "0"}),
                ("flashinfer", "off", 2, {}),
                ("triton", None, 2, {}),
            ):
                argv = model_tokens(model) + ["--use-replayssm",
                                              "--mamba-backend", backend]
                argv += PC[pc]
                if spec:
                    argv += spec_tokens("json", spec)
                argv += KV_VARIANTS[kv]
                g.add("kv", argv, env)
    for model in ("nemotronh", "llama"):
        for kv in ("nixl_both", "offload", "nixl_no_role"):
            g.add("kv", model_tokens(model) + KV_VARIANTS[kv])

    # F. buffer length and mamba block size values
    for buf in ("0", "-1", "1", "2", "8", "16", "17", "32", "1.5", "x"):
        for backend, pc in (("flashinfer", "off"), ("triton", None), ("triton", "off")):
            argv = model_tokens("nemotronh") + ["--use-replayssm",
                                                "--mamba-backend", backend]
            argv += PC[pc] + ["--replayssm-buffer-len", buf]
            g.add("buf", argv, {"VLLM_USE_V2_MODEL_RUNNER": "0"})
    for block in ("0", "-16", "16", "32", "256", "4096", "2048"):
        for pc in (None, "on", "off"):
            for backend in ("triton", "flashinfer"):
                argv = model_tokens(rnd.choice(["nemotronh", "nemotronh", "kimi"]))
                argv += ["--use-replayssm", "--mamba-backend", backend]
                argv += PC[pc] + ["--mamba-block-size", block]
                g.add("block", argv, {"VLLM_USE_V2_MODEL_RUNNER": "0"})

    # G. spellings of every flag
    spellings: list[list[str]] = [
        ["--use-replayssm"], ["--use_replayssm"], ["--use-replay"], ["--use-rep"],
        ["--no-use-replayssm"], ["--no_use_replayssm"], ["--use-replayssm=true"],
        ["--use-replayssm", "true"], ["--use-replayssm=false"], ["--USE-REPLAYSSM"],
        ["--use-replayssm", "--no-use-replayssm"], ["--no-use-replayssm", "--use-replayssm"],
    ]
    backends = [["--mamba-backend", "flashinfer"], ["--mamba-backend=flashinfer"],
                ["--mamba_backend", "flashinfer"], ["--mamba_backend=flashinfer"],
                ["--mamba-backend", "FlashInfer"], ["--mamba-backend", "FLASHINFER"],
                ["--mamba-backend", "Triton"], ["--mamba-backend=triton"],
                ["--mamba-backend", "cpu"], ["--mamba-backend", "CPU"],
                ["--mamba-backend", "bogus"], ["--mamba-backend", "flash-infer"],
                ["--mamba-backend", "flash_infer"], ["--mamba-backend", ""],
                ["--Mamba-Backend", "flashinfer"]]
    pcs = [["--enable-prefix-caching"], ["--enable_prefix_caching"],
           ["--no-enable-prefix-caching"], ["--no_enable_prefix_caching"],
           ["--disable-prefix-caching"], ["--disable_prefix_caching"],
           ["--no-disable-prefix-caching"], ["--enable-prefix-caching=false"],
           ["--enable-prefix-caching", "--no-enable-prefix-caching"],
           ["--no-enable-prefix-caching", "--enable-prefix-caching"],
           ["--disable-prefix-caching", "--enable-prefix-caching"],
           ["--enable-prefix-caching", "--disable-prefix-caching"],
           ["--enable-prefix"], []]
    modes = [["--mamba-cache-mode", "align"], ["--mamba-cache-mode=align"],
             ["--mamba_cache_mode", "align"], ["--mamba-cache-mode", "all"],
             ["--mamba-cache-mode=all"], ["--mamba-cache-mode", "none"],
             ["--mamba-cache-mode", "ALIGN"], ["--mamba-cache-mode", "bogus"], []]
    for i, sp in enumerate(spellings):
        for env in ENVS[:2]:
            fi_off_sp = ["--mamba-backend", "flashinfer", "--no-enable-prefix-caching"]
            g.add("spell", model_tokens("nemotronh") + sp + fi_off_sp, env)
            g.add("spell", model_tokens("nemotronh") + sp, env)
    for model in ("nemotronh",):
        for b in backends:
            for pc in (["--no-enable-prefix-caching"], []):
                g.add("spell", model_tokens(model) + ["--use-replayssm"] + b + pc,
                      {"VLLM_USE_V2_MODEL_RUNNER": "0"} if rnd.random() < 0.5 else {})
    for model in ("nemotronh",):
        for p in pcs:
            for b in (["--mamba-backend", "flashinfer"], []):
                g.add("spell", model_tokens(model) + ["--use-replayssm"] + b + p,
                      rnd.choice(ENVS))
    for model in ("nemotronh",):
        for mo in modes:
            for p in ([], ["--enable-prefix-caching"], ["--no-enable-prefix-caching"]):
                g.add("spell", model_tokens(model) + ["--use-replayssm"] + mo + p,
                      {"VLLM_USE_V2_MODEL_RUNNER": "0"})
    # --hf-overrides spellings
    hf_forms = [
        ["--hf-overrides", js(OVERRIDE_NEMOTRONH)],
        [f"--hf-overrides={js(OVERRIDE_NEMOTRONH)}"],
        ["--hf_overrides", js(OVERRIDE_NEMOTRONH)],
        ["--hf-overrides.architectures", js(["NemotronHForCausalLM"])],
        ["--hf-overrides", js({"architectures": ["KimiLinearForCausalLM"]})],
        ["--hf-overrides", js({"architectures": ["NemotronH_Nano_VL_V2"]})],
        ["--hf-overrides", js({"architectures": ["NemotronHPuzzleForCausalLM"]})],
        ["--hf-overrides", js({"max_position_embeddings": 8192})],
    ]
    for base in ("llama",):
        for hf in hf_forms:
            for b in (["--mamba-backend", "flashinfer", "--no-enable-prefix-caching"], []):
                g.add("hf", [M[base], "--use-replayssm"] + hf + b,
                      {"VLLM_USE_V2_MODEL_RUNNER": "0"} if not b else {})

    # H. model forms: --model, positional after options, conflicts
    fi_off = ["--mamba-backend", "flashinfer", "--no-enable-prefix-caching"]
    forms = [
        ["--model", M["nemotronh"], "--use-replayssm"] + fi_off,
        [f"--model={M['nemotronh']}", "--use-replayssm"] + fi_off,
        ["--use-replayssm", "--model", M["nemotronh"]] + fi_off,
        ["--use-replayssm"] + fi_off + [M["nemotronh"]],
        ["-tp", "1", M["nemotronh"], "--use-replayssm"] + fi_off,
        [M["llama"], "--model", M["nemotronh"], "--use-replayssm"] + fi_off,
        [M["nemotronh"], "--use-replayssm", "-tp", "2"] + fi_off,
        [M["nemotronh"], "--use-replayssm", "--tensor-parallel-size", "4"] + fi_off,
        [M["nemotronh"], "--use-replayssm", "-pp", "2"] + fi_off,
        [M["kimi"], "--use-replayssm", "-pp", "2"] + spec_tokens("json", 2),
        [M["kimi"], "--use-replayssm", "--enable-mamba-cache-stochastic-rounding"]
        + spec_tokens("json", 2),
        [M["nemotronh"], "--use-replayssm", "--enable-mamba-cache-stochastic-rounding"]
        + fi_off,
        [M["kimi"], "--use-replayssm", "--mamba-ssm-cache-dtype", "float16",
         "--enable-mamba-cache-stochastic-rounding"] + spec_tokens("json", 2),
        [M["nemotronh"], "--use-replayssm", "--enforce-eager"] + fi_off,
        [M["nemotronh"], "--use-replayssm", "--enable-dbo"] + fi_off,
        [M["nemotronh"], "--use-replayssm", "--enable-dbo"],
        [M["nemotronh"], "--use-replayssm", "--logits-processors",
         "vllm.v1.sample.logits_processor:MinPLogitsProcessor"],
        [M["nemotronh"], "--use-replayssm", "--max-model-len", "2048",
         "--mamba-block-size", "2048", "--no-enable-prefix-caching"],
        [M["nemotronh"], "--use-replayssm", "--max-model-len", "2048",
         "--mamba-block-size", "2048", "--no-enable-prefix-caching", "--mamba-backend",
         "flashinfer"],
        [M["nemotronh"], "--use-replayssm", "--block-size", "32"],
        [M["nemotronh"], "--use-replayssm", "--served-model-name", "nemo"] + fi_off,
    ]
    for f in forms:
        for env in ENVS[:2]:
            g.add("form", f, env)

    # I. --config YAML files
    yamls: list[tuple[str, str, list[str]]] = [
        # (name, yaml text, extra argv)
        ("fi_off_dash", "use-replayssm: true\nmamba-backend: flashinfer\n"
                        "enable-prefix-caching: false\n", []),
        ("fi_off_under", "use_replayssm: true\nmamba_backend: flashinfer\n"
                         "enable_prefix_caching: false\n", []),
        ("fi_disable", "use-replayssm: true\nmamba-backend: flashinfer\n"
                       "disable-prefix-caching: true\n", []),
        ("fi_noepc", "use-replayssm: true\nmamba-backend: flashinfer\n"
                     "no-enable-prefix-caching: true\n", []),
        ("replay_str", 'use-replayssm: "true"\nmamba-backend: flashinfer\n', []),
        ("replay_false", "use-replayssm: false\n", []),
        ("triton_align", "use-replayssm: true\nmamba-backend: triton\n"
                         "mamba-cache-mode: align\nenable-prefix-caching: true\n", []),
        ("triton_all", "use-replayssm: true\nenable-prefix-caching: true\n"
                       "mamba-cache-mode: all\n", []),
        ("spec_nested", "use-replayssm: true\nmamba-backend: flashinfer\n"
                        "enable-prefix-caching: false\nspeculative-config:\n"
                        "  method: ngram\n  num_speculative_tokens: 3\n"
                        "  prompt_lookup_max: 3\n", []),
        ("spec_nested_disable", "use-replayssm: true\nmamba-backend: flashinfer\n"
                                "disable-prefix-caching: true\nreplayssm-buffer-len: 8\n"
                                "speculative-config:\n  method: ngram\n"
                                "  num_speculative_tokens: 3\n  prompt_lookup_max: 3\n", []),
        ("kv", "use-replayssm: true\nkv-transfer-config:\n  kv_connector: NixlConnector\n"
               "  kv_role: kv_both\n", []),
        ("offload", "use-replayssm: true\nmamba-backend: flashinfer\n"
                    "kv-offloading-size: 4\n", ["--no-enable-prefix-caching"]),
        ("buf", "use-replayssm: true\nmamba-backend: flashinfer\n"
                "replayssm-buffer-len: 32\n", ["--no-enable-prefix-caching"]),
        ("cli_override", "use-replayssm: true\nmamba-backend: triton\n",
         ["--mamba-backend", "flashinfer", "--no-enable-prefix-caching"]),
        ("model_in_yaml", "model: models/NemotronH\nuse-replayssm: true\n"
                          "mamba-backend: flashinfer\ndisable-prefix-caching: true\n", []),
        ("hf_overrides", "use-replayssm: true\nmamba-backend: flashinfer\n"
                         "hf-overrides:\n  architectures: [NemotronHForCausalLM]\n",
         ["--no-enable-prefix-caching"]),
        ("only_backend", "mamba-backend: flashinfer\nenable-prefix-caching: false\n",
         ["--use-replayssm"]),
    ]
    for name, text, extra in yamls:
        path = f"configs/{name}.yaml"
        files = {path: text}
        if name == "model_in_yaml":
            models = [None]
        elif name == "hf_overrides":
            models = ["llama"]
        elif name in ("fi_off_dash", "fi_disable", "spec_nested", "kv", "triton_all"):
            models = ["nemotronh", "kimi"]
        else:
            models = ["nemotronh"]
        for model in models:
            for form in ("space", "eq"):
                cfg = ["--config", path] if form == "space" else [f"--config={path}"]
                for env in ({}, {"VLLM_USE_V2_MODEL_RUNNER": "0"}):
                    if form == "eq" and env:
                        continue
                    head = [M[model]] if model else []
                    g.add("yaml", head + cfg + extra, env, files)
            if model == "nemotronh":
                # config before the model, and an explicit CLI flag after it
                g.add("yaml", ["--config", path, M[model]] + extra, {}, files)

    cache_mode_launches(g)
    return g.launches


def cache_mode_launches(g: Gen) -> None:
    """J. An explicit --mamba-cache-mode with prefix caching off (RSM107), and the
    chunked-prefill assertion of the same hybrid config update.

    vLLM's MambaModelConfig (model_executor/models/config.py) sets the mode to
    'none' when prefix caching is off, for hybrid and Mamba models only; the
    recorder keeps the warning it logs.  Appended last and without the random
    generator, so every earlier launch keeps its id and contents.
    """
    # every architecture, without ReplaySSM (C covers align only for some)
    for model in ("nemotronh_vl", "falconh1", "jamba", "granite", "llama_as_nemotronh"):
        for pc in (None, "on", "off"):
            for mode in ("align", "none"):
                g.add("cachemode", model_tokens(model) + PC[pc] + ["--mamba-cache-mode", mode])
    # how prefix caching is turned off x how the mode is written
    pc_off = [["--no-enable-prefix-caching"], ["--no_enable_prefix_caching"],
              ["--disable-prefix-caching"], ["--disable_prefix_caching"],
              ["--enable-prefix-caching", "--no-enable-prefix-caching"],
              ["--no-enable-prefix-caching", "--enable-prefix-caching"]]
    mode_forms = [["--mamba-cache-mode", "align"], ["--mamba-cache-mode=all"],
                  ["--mamba_cache_mode", "align"], ["--mamba_cache_mode=all"]]
    for off in pc_off:
        for mode in mode_forms:
            g.add("cachemode", model_tokens("nemotronh") + mode + off)
    # with ReplaySSM on the runner that Triton needs, and with a block size (RSM006)
    for model in ("nemotronh", "kimi"):
        for pc in (None, "off"):
            for mode in ("align", "all"):
                argv = model_tokens(model) + ["--use-replayssm", "--mamba-backend", "triton"]
                g.add("cachemode", argv + PC[pc] + ["--mamba-cache-mode", mode],
                      {"VLLM_USE_V2_MODEL_RUNNER": "0"})
        g.add("cachemode", model_tokens(model) + ["--mamba-cache-mode", "align",
                                                  "--mamba-block-size", "16"])
        g.add("cachemode", model_tokens(model) + ["--mamba-cache-mode", "align",
                                                  "--no-enable-prefix-caching",
                                                  "--mamba-block-size", "16"])
    # the mode in a --config file
    yamls = [
        ("mode_noepc", "mamba-cache-mode: align\nno-enable-prefix-caching: true\n", []),
        ("mode_false", "mamba-cache-mode: all\nenable-prefix-caching: false\n", []),
        ("mode_disable", "mamba_cache_mode: align\ndisable-prefix-caching: true\n", []),
        ("mode_only", "mamba-cache-mode: align\n", ["--no-enable-prefix-caching"]),
        ("mode_replay", "use-replayssm: true\nmamba-backend: triton\nmamba-cache-mode: align\n"
                        "no-enable-prefix-caching: true\n", []),
    ]
    for name, text, extra in yamls:
        path = f"configs/{name}.yaml"
        for model in ("nemotronh", "kimi"):
            env = {"VLLM_USE_V2_MODEL_RUNNER": "0"} if "replay" in name else {}
            g.add("cachemode", [M[model], "--config", path] + extra, env, {path: text})
    # chunked prefill off: "Chunked prefill is required for mamba cache mode 'align'"
    # (0.27-0.31: mode align; 0.32: any prefix caching) / "... for Mamba prefix caching" (0.33)
    for model in ("nemotronh", "kimi", "mamba", "llama"):
        for pc in (None, "on", "off"):
            for mode in (None, "align", "all"):
                argv = model_tokens(model) + PC[pc] + ["--no-enable-chunked-prefill"]
                if mode:
                    argv += ["--mamba-cache-mode", mode]
                g.add("cachemode", argv)
        g.add("cachemode", model_tokens(model) + ["--enable-chunked-prefill", "--enable-prefix-caching"])
    g.add("cachemode", model_tokens("nemotronh") + ["--use-replayssm", "--no-enable-chunked-prefill"],
          {"VLLM_USE_V2_MODEL_RUNNER": "0"})


def main() -> None:
    launches = generate()
    for launch in launches:
        sys.stdout.write(json.dumps(launch, sort_keys=True) + "\n")
    cats: dict[str, int] = {}
    for launch in launches:
        c = launch["id"].rsplit("-", 1)[0]
        cats[c] = cats.get(c, 0) + 1
    print(f"# {len(launches)} launches: {cats}", file=sys.stderr)


if __name__ == "__main__":
    main()
