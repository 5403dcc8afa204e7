"""SGLang's refusals that depend on the GPU, the CUDA version, the environment and what happens
after argument resolution (issue 19), one small case per class; the conformance records
(tests/conformance/sglang/) hold them to SGLang itself."""

from __future__ import annotations

import pytest

from flake8_replayssm import check_source
from flake8_replayssm.config import LintConfig
from flake8_replayssm.engines.sglang.knowledge import knowledge

QWEN_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
NEMOTRON_H = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
KIMI = "moonshotai/Kimi-Linear-48B-A3B-Instruct"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE = "--speculative-algorithm EAGLE --speculative-eagle-topk 1"


def found(cmdline: str, release: str = "0.5.23", kind: str = "shell", **settings) -> dict[str, str]:
    text = cmdline if cmdline.endswith("\n") else cmdline + "\n"
    return {f.code: f.message for f in check_source(text, kind, config=LintConfig(sglang_version=release, **settings))}


def serve(model: str, flags: str) -> str:
    return f"sglang serve --model-path {model} --enable-linear-replayssm {flags}"


# --- Blackwell model overrides and a written --page-size (blackwell_override, page_size) -------

@pytest.mark.parametrize("flags,expect", [
    # no speculative decoding: triton with pages of 1, as on Hopper
    ("--disable-overlap-schedule", set()),
    # EAGLE with topk 1: trtllm_mha with 64-token pages, so auto -> extra_buffer with overlap off
    (f"{EAGLE} --disable-overlap-schedule", {"RSM302"}),
    # ... and an explicit no_buffer fails on the page size
    (f"{EAGLE} --mamba-radix-cache-strategy no_buffer --disable-overlap-schedule", {"RSM305"}),
    # a written --page-size 64 makes the override pick triton with pages of 1: accepted
    (f"{EAGLE} --page-size 64 --disable-overlap-schedule", set()),
    # the attention backend written: no override
    (f"{EAGLE} --attention-backend triton --disable-overlap-schedule", set()),
])
def test_qwen_family_override_on_blackwell(flags, expect):
    codes = set(found(serve(QWEN_NEXT, flags), gpu="blackwell")) - {"RSM201"}
    assert codes == expect


def test_a_written_page_size_resolves_auto_on_hopper():
    """S3 reads the written page size: pages above 1 make auto extra_buffer, overlap off or not."""
    message = found(serve(QWEN_NEXT, "--page-size 64 --disable-overlap-schedule"), gpu="hopper")["RSM302"]
    assert "because --page-size is above 1" in message and "fix: drop --page-size" in message


@pytest.mark.parametrize("release,flags,expect", [
    ("0.5.18", "--disable-overlap-schedule", set()),  # flashinfer attention up to 0.5.18
    ("0.5.19", "--disable-overlap-schedule", {"RSM305"}),  # trtllm_mha: R7
    ("0.5.19", "--speculative-algorithm NEXTN --disable-overlap-schedule", {"RSM302"}),  # auto -> extra_buffer
])
def test_nemotron_h_override_by_release(release, flags, expect):
    codes = set(found(serve(NEMOTRON_H, flags), release, gpu="blackwell")) - {"RSM201", "RSM308"}
    assert codes == expect


def test_overrides_are_data_with_their_source():
    know = knowledge()
    ids = {o.id for o in know.releases["0.5.23"].overrides}
    assert {"qwen3_5_hybrid", "nemotron_h", "lfm2", "falcon_h1_jet"} <= ids
    assert know.releases["0.5.23"].sm100_trtllm is not None and know.releases["0.5.15"].sm100_trtllm is not None


# --- PD decode with its radix cache (pd_decode_radix) ------------------------------------------

def test_pd_decode_radix_cache_turns_the_radix_cache_back_on():
    flags = "--disaggregation-mode decode --disaggregation-decode-enable-radix-cache --disable-radix-cache"
    result = found(serve(QWEN_NEXT, flags), gpu="hopper")
    # the radix cache is on again, so auto under the overlap scheduler is extra_buffer (R2), and R3
    assert {"RSM302", "RSM303"} <= set(result)
    assert set(found(serve(QWEN_NEXT, "--disaggregation-mode decode --disable-radix-cache"), gpu="hopper")) \
        == {"RSM303"}


# --- unified memory: never "no effect" where SGLang refuses (unified_memory, post_resolution) ---

def test_unified_memory_page_major_layout_up_to_0_5_18():
    flags = "--disable-overlap-schedule --enable-unified-memory"
    hopper = found(serve(QWEN_NEXT, flags), "0.5.18", gpu="hopper")
    assert "RSM309" in hopper and "RSM308" not in hopper and "got ['fa3']" in hopper["RSM309"]
    assert set(found(serve(QWEN_NEXT, flags + " --attention-backend triton"), "0.5.18", gpu="hopper")) == {"RSM308"}
    assert set(found(serve(QWEN_NEXT, flags), "0.5.19", gpu="hopper")) == {"RSM308"}


def test_unified_memory_on_a_model_without_mamba_state():
    result = found(serve(LLAMA, "--enable-unified-memory"), "0.5.23")
    assert "only supports hybrid Mamba and hybrid sliding-window-attention models" in result["RSM309"]
    assert "RSM308" not in result


# --- registration and the Mamba radix cache after resolution (registration, post_resolution) ---

def test_an_unregistered_architecture(tmp_path):
    model = tmp_path / "qwen35-text"
    model.mkdir()
    (model / "config.json").write_text('{"architectures": ["Qwen3_5ForCausalLM"]}')
    line = f"sglang serve --model-path {model} --enable-linear-replayssm --disable-overlap-schedule"
    assert "has no SGlang implementation" in found(line, "0.5.16", gpu="hopper", model_dirs=(tmp_path,))["RSM309"]
    assert "RSM309" not in found(line, "0.5.17", gpu="hopper", model_dirs=(tmp_path,))
    # 0.5.19+ on Blackwell: trtllm_mha's 64-token pages arrive after the no_buffer checks
    late = found(line, "0.5.19", gpu="blackwell", model_dirs=(tmp_path,))
    assert "MambaComponent requires page_size=1 when mamba_extra_buffer is disabled, got 64" in late["RSM305"]
    assert "RSM305" not in found(line, "0.5.19", gpu="hopper", model_dirs=(tmp_path,))


def test_kda_spec_rings_and_dspark_need_kda():
    spec = "sglang serve --model-path {} --enable-linear-replayssm-spec --disable-overlap-schedule {}"
    ring = found(spec.format(KIMI, "--linear-replayssm-cache-len 12"), gpu="hopper")
    assert "spec-verify ring length must be a power of two, got 12" in ring["RSM306"]
    small = found(spec.format(KIMI, "--linear-replayssm-cache-len 4 --speculative-num-draft-tokens 4"), gpu="hopper")
    assert "spec-verify ring too small: 4 < 2 * 4" in small["RSM306"]
    dspark = found(spec.format(QWEN_NEXT, "--speculative-algorithm DSPARK"), gpu="hopper")
    assert "DSPARK/DFLASH requires a KDA model" in dspark["RSM306"]


# --- SGLANG_RAGGED_VERIFY_MODE from a shell launch's environment (ragged_verify_env) -----------

SPEC = f"sglang serve --model-path {QWEN_NEXT} --enable-linear-replayssm-spec --disable-overlap-schedule"


@pytest.mark.parametrize("script", [
    f"SGLANG_RAGGED_VERIFY_MODE=compact {SPEC}",
    f"export SGLANG_RAGGED_VERIFY_MODE=compact\n{SPEC}",
    f"env SGLANG_RAGGED_VERIFY_MODE=compact {SPEC}",
])
def test_ragged_verify_mode_from_the_shell(script):
    assert "SGLANG_RAGGED_VERIFY_MODE=compact requires" in found(script, gpu="hopper").get("RSM306", "")


def test_ragged_verify_mode_values():
    assert "invalid SGLANG_RAGGED_VERIFY_MODE='bogus'" in \
        found(f"SGLANG_RAGGED_VERIFY_MODE=bogus {SPEC}", gpu="hopper")["RSM306"]
    assert found(f"SGLANG_RAGGED_VERIFY_MODE=static {SPEC}", gpu="hopper") == {}
    # DFLASH with a ring-writing verify kernel (nv_cutedsl is a choice of the verify backend only)
    dflash = f"{SPEC.replace(QWEN_NEXT, KIMI)} --speculative-algorithm DFLASH --linear-attn-verify-backend nv_cutedsl"
    assert "RSM306" not in found(f"SGLANG_RAGGED_VERIFY_MODE=compact {dflash}", gpu="hopper")
    assert "RSM106" not in found(dflash, gpu="hopper")
