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
_QWEN3_5_TEXT = dict(_QWEN3_NEXT, architectures=["Qwen3_5ForCausalLM"], model_type="qwen3_5_text")
_QWEN3_5 = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "torch_dtype": "bfloat16",
    "text_config": {k: v for k, v in _QWEN3_NEXT.items() if k != "architectures"} | {"model_type": "qwen3_5_text"},
    "vision_config": {"model_type": "qwen3_5", "depth": 1, "hidden_size": 64, "num_heads": 2,
                      "intermediate_size": 128, "out_hidden_size": 256, "patch_size": 16,
                      "spatial_merge_size": 2, "temporal_patch_size": 2, "num_position_embeddings": 64},
    "image_token_id": 990, "video_token_id": 991, "vision_start_token_id": 992, "vision_end_token_id": 993,
}

#: {model directory: config.json} of every tiny model a launch may name
MODEL_CONFIGS: dict[str, dict[str, Any]] = {
    "models/Qwen3Next": _QWEN3_NEXT,
    "models/KimiLinear": _KIMI_LINEAR,
    "models/NemotronH": _NEMOTRON_H,
    "models/Lfm2": _LFM2,
    "models/Llama": _LLAMA,
    "models/GraniteHybrid": _GRANITE_HYBRID,
    "models/GraniteDense": _GRANITE_DENSE,
    "models/Qwen3_5": _QWEN3_5,
    "models/Qwen3_5Text": _QWEN3_5_TEXT,
}


def arch_of(model_dir: str) -> str:
    return MODEL_CONFIGS[model_dir]["architectures"][0]


def model_config_texts() -> dict[str, str]:
    return {d: json.dumps(c, indent=1) for d, c in MODEL_CONFIGS.items()}


def _launch(lid: str, argv: list[str], *, entry: str = "serve", env: dict[str, str] | None = None,
            files: dict[str, str] | None = None, combos: list[tuple[str, str]] | None = None,
            post: bool = False) -> dict[str, Any]:
    """One launch; ``combos``: its (GPU, CUDA) pairs when not the recorder's default ones;
    ``post``: also judge the refusals after argument resolution (sglang_post_resolution)."""
    launch: dict[str, Any] = {"id": lid, "entry": entry, "argv": argv, "env": env or {}, "files": files or {}}
    if combos is not None:
        launch["combos"] = [list(c) for c in combos]
    if post:
        launch["post"] = True
    return launch


REPLAY = "--enable-linear-replayssm"
SPEC = "--enable-linear-replayssm-spec"
OFF = "--disable-overlap-schedule"
BLACKWELL = [("blackwell", "12.9")]
EVERY_COMBO = [(gpu, cuda) for gpu in ("hopper", "blackwell") for cuda in ("12.9", "13.0")]
#: speculative decoding as the launches of issue 19 write it (linear chains: topk 1)
SPECULATIVE = {
    "none": [],
    "nextn": ["--speculative-algorithm", "NEXTN"],
    "eagle": ["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "models/Qwen3Next",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"],
}


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


def blackwell_overrides() -> Iterator[dict[str, Any]]:
    """Issue 19: on SM100 the Nemotron-H (0.5.19+) and Qwen3-Next / Qwen3.5 overrides choose
    the attention backend and page size when --attention-backend is unset, depending on the
    strategy, the radix cache and speculative decoding; the no_buffer asserts and R2 then
    read those values.  Recorded on Blackwell only (Hopper has no such override)."""
    n = 0
    for model, spec, strategy, overlap_off, page in itertools.product(
            ("models/Qwen3Next", "models/Qwen3_5", "models/Qwen3_5Text", "models/NemotronH"), SPECULATIVE,
            (None, "no_buffer", "extra_buffer"), (False, True), (None, "64")):
        argv = ["--model-path", model, REPLAY, *SPECULATIVE[spec]]
        if strategy:
            argv += ["--mamba-radix-cache-strategy", strategy]
        if overlap_off:
            argv.append(OFF)
        if page:
            argv += ["--page-size", page]
        yield _launch(f"bw-{n:04d}", argv, combos=BLACKWELL, post=True)
        n += 1
    for model, spec in itertools.product(("models/Qwen3Next", "models/Qwen3_5", "models/NemotronH"), SPECULATIVE):
        for extra in (["--disable-radix-cache"], ["--attention-backend", "triton", OFF],
                      ["--attention-backend", "trtllm_mha", "--page-size", "64", OFF]):
            yield _launch(f"bw-{n:04d}", ["--model-path", model, REPLAY, *SPECULATIVE[spec], *extra],
                          combos=BLACKWELL, post=True)
            n += 1


def page_sizes() -> Iterator[dict[str, Any]]:
    """A written --page-size is what the strategy resolution reads (auto -> extra_buffer when
    pages are larger than 1, also with the overlap scheduler off; explicit no_buffer refused)."""
    n = 0
    for model, page, strategy, overlap_off in itertools.product(
            ("models/Qwen3Next", "models/KimiLinear", "models/NemotronH", "models/GraniteHybrid"),
            ("1", "16", "64"), (None, "auto", "no_buffer"), (False, True)):
        argv = ["--model-path", model, REPLAY, "--page-size", page]
        if strategy:
            argv += ["--mamba-radix-cache-strategy", strategy]
        if overlap_off:
            argv.append(OFF)
        yield _launch(f"page-{n:04d}", argv, post=True)
        n += 1


def unified_memory() -> Iterator[dict[str, Any]]:
    """--enable-unified-memory: the page-major KV layout checks (attention backend, linear-attn
    backends, speculative decoding) at argument resolution, and the unified pool's refusal of
    a model with neither Mamba state nor sliding-window layers when the pools are built."""
    n = 0
    for model, flag, backend in itertools.product(
            ("models/Qwen3Next", "models/KimiLinear", "models/NemotronH", "models/Lfm2", "models/Llama",
             "models/GraniteDense"),
            (REPLAY, SPEC, None), (None, "triton", "fa3", "flashinfer")):
        argv = ["--model-path", model, "--enable-unified-memory", OFF] + ([flag] if flag else [])
        if backend:
            argv += ["--attention-backend", backend]
        yield _launch(f"uma-{n:04d}", argv, post=True)
        n += 1
    for model, spec, extra in itertools.product(
            ("models/Qwen3Next", "models/KimiLinear"), ("nextn", "eagle"),
            ([], ["--linear-attn-backend", "flashinfer"], ["--disable-radix-cache"])):
        argv = ["--model-path", model, "--enable-unified-memory", OFF, SPEC, "--attention-backend", "triton",
                *SPECULATIVE[spec], *extra]
        yield _launch(f"uma-{n:04d}", argv, post=True)
        n += 1


def pd_decode() -> Iterator[dict[str, Any]]:
    """A PD decode server: --disaggregation-decode-enable-radix-cache turns the radix cache back
    on even with --disable-radix-cache; the no_buffer asserts then run before R3."""
    n = 0
    for model, flag, enable, disable, overlap_off, strategy in itertools.product(
            ("models/Qwen3Next", "models/KimiLinear"), (REPLAY, SPEC), (False, True), (False, True),
            (False, True), (None, "no_buffer")):
        argv = ["--model-path", model, flag, "--disaggregation-mode", "decode"]
        if enable:
            argv.append("--disaggregation-decode-enable-radix-cache")
        if disable:
            argv.append("--disable-radix-cache")
        if overlap_off:
            argv.append(OFF)
        if strategy:
            argv += ["--mamba-radix-cache-strategy", strategy]
        yield _launch(f"pd-{n:04d}", argv)
        n += 1


def list_options() -> Iterator[dict[str, Any]]:
    """Options SGLang declares as lists (nargs '+' / '*') take several words."""
    m = ["--model-path", "models/Qwen3Next"]
    cases: list[tuple[str, list[str]]] = [
        ("serve", m + ["--cuda-graph-bs", "1", "2", "4", REPLAY, OFF]),
        ("serve", m + [REPLAY, "--cuda-graph-bs", "1", "2", "4", OFF]),
        ("serve", m + [REPLAY, OFF, "--cuda-graph-bs", "1", "2", "4"]),
        ("serve", m + ["--cuda-graph-bs", "1", "2", "4", REPLAY]),
        ("serve", m + ["--cuda-graph-bs", "1", "2", "--linear-replayssm-cache-len", "0", REPLAY, OFF]),
        ("serve", m + ["--cuda-graph-bs", "8", REPLAY, OFF]),
        ("serve", m + ["--cuda-graph-bs", REPLAY, OFF]),
        ("serve", m + ["--cuda-graph-bs", "1", "two", REPLAY, OFF]),
        ("serve", ["--cuda-graph-bs", "1", "2", "models/Qwen3Next", REPLAY, OFF]),
        ("serve", ["models/Qwen3Next", "--cuda-graph-bs", "1", "2", REPLAY, OFF]),
        ("serve", m + ["--encoder-urls", "http://127.0.0.1:1", "http://127.0.0.1:2", REPLAY, OFF]),
        ("serve", m + ["--encoder-urls", "http://127.0.0.1:1", "http://127.0.0.1:2", REPLAY]),
        ("serve", m + ["--lora-paths", "a=models/Llama", "b=models/Llama", REPLAY, OFF]),
        ("serve", m + ["--cuda-graph-bs", "1", "2", "4", "--page-size", "16", "--mamba-radix-cache-strategy",
                       "no_buffer", REPLAY, OFF]),
        ("launch_server", m + ["--cuda-graph-bs", "1", "2", "4", REPLAY, OFF]),
        ("launch_server", m + ["--cuda-graph-bs", "1", "2", "4", REPLAY]),
        ("router", m + ["--cuda-graph-bs", "1", "2", "4", REPLAY, OFF]),
    ]
    for n, (entry, argv) in enumerate(cases):
        yield _launch(f"list-{n:04d}", argv, entry=entry)


def router() -> Iterator[dict[str, Any]]:
    """``python -m sglang_router.launch_server``: every server argument through the router's own
    parser (with its --router-* options, no --config merge), the same resolution; then the
    router's own options: list options, choices, a prefix, a switch, a missing value, --dp-size."""
    picked = list(grid())[::8] + list(no_buffer_asserts())[::12] + list(spellings()) + list(configs())
    for n, launch in enumerate(picked):
        yield _launch(f"router-{n:04d}", launch["argv"], entry="router", files=launch["files"])
    m = ["--model-path", "models/Qwen3Next"]
    own = [
        m + [REPLAY, OFF, "--dp-size", "2", "--router-policy", "cache_aware"],
        m + [REPLAY, OFF, "--router-policy", "fastest"],
        m + [REPLAY, OFF, "--router-pol", "round_robin"],
        m + ["--worker-urls", "http://127.0.0.1:1", "http://127.0.0.1:2", REPLAY, OFF],
        m + ["--router-selector", "app=a", "tier=b", REPLAY, OFF],
        m + [REPLAY, OFF, "--router-request-id-headers", "x-a", "x-b"],
        m + ["--router-enable-igw", REPLAY, OFF],
        m + ["--router-balance-abs-threshold", REPLAY, OFF],
        m + [REPLAY, "--router-dp-worker-base-port", "32000", "--mamba-radix-cache-strategy", "no_buffer"],
        m + ["--router-prometheus-duration-buckets", "0.1", "1", REPLAY],
        m + ["--dp-size", "2", "--router-dp-aware", REPLAY],
    ]
    for n, argv in enumerate(own, start=len(picked)):
        yield _launch(f"router-{n:04d}", argv, entry="router")


def registration() -> Iterator[dict[str, Any]]:
    """Architectures a release does not register (Qwen3_5ForCausalLM before 0.5.17): the
    arguments resolve, the model class lookup then fails."""
    n = 0
    for model, flag in itertools.product(("models/Qwen3_5Text", "models/Qwen3_5"), (REPLAY, SPEC, None)):
        for extra in ([OFF], [OFF, "--mamba-radix-cache-strategy", "no_buffer"], ["--disable-radix-cache"]):
            argv = ["--model-path", model, *extra] + ([flag] if flag else [])
            yield _launch(f"arch-{n:04d}", argv, post=True)
            n += 1


def flashinfer_prefill() -> Iterator[dict[str, Any]]:
    """Flashinfer as the linear-attn (prefill) backend: SM100 needs CUDA 13 (every GPU x CUDA)."""
    n = 0
    for model, flag, backend in itertools.product(
            ("models/Qwen3Next", "models/KimiLinear"), (REPLAY, SPEC, None),
            (["--linear-attn-backend", "flashinfer"],
             ["--linear-attn-backend", "flashinfer", "--linear-attn-decode-backend", "triton"],
             ["--linear-attn-prefill-backend", "flashinfer", "--linear-attn-decode-backend", "triton"])):
        argv = ["--model-path", model, OFF, "--disable-radix-cache", *backend] + ([flag] if flag else [])
        yield _launch(f"fiprefill-{n:04d}", argv, combos=EVERY_COMBO)
        n += 1


def environment() -> Iterator[dict[str, Any]]:
    """SGLANG_RAGGED_VERIFY_MODE (static, cap-accept, compact, or a value SGLang does not know)
    with the spec-verify flag, per algorithm and verify backend; and with the decode flag."""
    n = 0
    algorithms = [
        [], ["--speculative-algorithm", "NEXTN"],
        ["--speculative-algorithm", "DFLASH", "--linear-attn-verify-backend", "triton"],
        ["--speculative-algorithm", "DFLASH", "--linear-attn-verify-backend", "nv_cutedsl"],
        ["--speculative-algorithm", "DFLASH", "--linear-attn-verify-backend", "flashinfer"],
        ["--speculative-algorithm", "DSPARK", "--linear-attn-verify-backend", "triton"],
    ]
    for model, mode, algorithm in itertools.product(
            ("models/Qwen3Next", "models/KimiLinear"), ("static", "cap-accept", "compact", "bogus"), algorithms):
        argv = ["--model-path", model, OFF, SPEC, *algorithm]
        yield _launch(f"env-{n:04d}", argv, env={"SGLANG_RAGGED_VERIFY_MODE": mode}, post=True)
        n += 1
    for model, mode in itertools.product(("models/Qwen3Next", "models/KimiLinear"),
                                         ("static", "cap-accept", "compact", "bogus")):
        yield _launch(f"env-{n:04d}", ["--model-path", model, OFF, REPLAY],
                      env={"SGLANG_RAGGED_VERIFY_MODE": mode})
        n += 1
    for model, length, spec in itertools.product(("models/KimiLinear", "models/Qwen3Next"), ("4", "6", "16"),
                                                 ("none", "eagle")):
        argv = ["--model-path", model, OFF, SPEC, "--linear-replayssm-cache-len", length, *SPECULATIVE[spec]]
        yield _launch(f"env-{n:04d}", argv, post=True)
        n += 1


#: the launch categories, in record order (the original ones first: their ids are stable)
PARTS = (grid, decode_backends, no_buffer_asserts, other_checks, context, spellings, configs, seeded,
         blackwell_overrides, page_sizes, unified_memory, pd_decode, list_options, router, registration,
         flashinfer_prefill, environment)


#: the categories of issue 19 whose launches without a ReplaySSM flag are contrast cases only
#: (they showed that the refusals are general, e.g. unified memory on a dense model): not
#: recorded, since the linter judges ReplaySSM launches; their ids stay unused
CONTRAST_ONLY = ("uma", "arch", "fiprefill")


def _writes_replayssm(launch: dict[str, Any]) -> bool:
    return any(word in (REPLAY, SPEC) for word in launch["argv"])


def launches() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in PARTS:
        out.extend(launch for launch in part()
                   if _writes_replayssm(launch) or not launch["id"].startswith(CONTRAST_ONLY))
    return out


if __name__ == "__main__":
    for launch in launches():
        print(json.dumps(launch, sort_keys=True))
