"""Each rule on each behaviour profile, from vLLM's validators (reference §2-§4, §10).

Profiles: P1a 0.27.x, P1b 0.28.0, P2 0.29.0, P3 0.30/0.31, P4 0.32.0, P5 0.33.0.
"""

from __future__ import annotations

import pytest

from conftest import codes, command

from flake8_replayssm.recognise import launch_from_command
from flake8_replayssm.config import LintConfig
from flake8_replayssm.judging import judge

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"  # NemotronHForCausalLM
H8B = "nvidia/Nemotron-H-8B-Base-8K"
KIMI = "moonshotai/Kimi-K3"
V1 = {"VLLM_USE_V2_MODEL_RUNNER": "0"}
V2 = {"VLLM_USE_V2_MODEL_RUNNER": "1"}
NGRAM = "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'"
EAGLE = "--speculative-config '{\"method\": \"eagle\", \"model\": \"x/eagle\", \"num_speculative_tokens\": 3}'"
ALL = ("0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0")


@pytest.mark.parametrize("release", ["0.27.0", "0.27.1", "0.28.0", "0.29.0"])
def test_plain_nemotron_launch_passes_before_030(release):
    assert codes(f"vllm serve {NANO} --use-replayssm", release) == []


@pytest.mark.parametrize("release", ["0.30.0", "0.31.0", "0.32.0", "0.33.0"])
def test_plain_nemotron_launch_fails_from_030_on_cuda(release):
    """Triton ReplaySSM needs Model Runner V1; V2 is the CUDA default."""
    assert codes(f"vllm serve {NANO} --use-replayssm", release) == ["RSM008"]
    assert codes(f"vllm serve {NANO} --use-replayssm", release, V1) == []
    assert codes(f"vllm serve {NANO} --use-replayssm", release, V2) == ["RSM008"]


@pytest.mark.parametrize("release", ALL)
def test_no_replayssm_no_finding(release):
    assert codes(f"vllm serve {NANO} --mamba-backend flashinfer", release) == []
    assert codes(f"vllm serve {NANO} --use-replayssm --no-use-replayssm", release) == []


@pytest.mark.parametrize("release", ALL)
def test_unsupported_architecture(release):
    found = codes("vllm serve tiiuae/Falcon-H1-1.5B-Instruct --use-replayssm", release, V1)
    assert found == ["RSM001"]


@pytest.mark.parametrize("model", ["nvidia/Llama-3.1-Nemotron-Nano-8B-v1",
                                   "nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16"])
def test_names_that_lie(model):
    assert codes(f"vllm serve {model} --use-replayssm", "0.28.0") == ["RSM001"]


def test_unsupported_arch_on_default_v2_path_gets_both_codes():
    assert codes("vllm serve state-spaces/mamba-130m-hf --use-replayssm", "0.33.0") == ["RSM001", "RSM008"]


def test_hf_overrides_retype_the_architecture():
    retyped = "--hf-overrides '{\"architectures\": [\"NemotronHForCausalLM\"]}'"
    assert codes(f"vllm serve meta-llama/Llama-3.1-8B-Instruct --use-replayssm {retyped}", "0.28.0") == []
    dotted = "--hf-overrides.architectures '[\"FalconH1ForCausalLM\"]'"
    assert codes(f"vllm serve {NANO} --use-replayssm {dotted}", "0.28.0") == ["RSM001"]


def test_model_impl_transformers_is_unsupported():
    assert codes(f"vllm serve {NANO} --use-replayssm --model-impl transformers", "0.28.0") == ["RSM001"]


# -- RSM002: prefix caching / cache mode -------------------------------------------------
def test_027_prefix_caching_derives_mode_all():
    """0.27 turns a default "none" into "all" for Nemotron-H when prefix caching is on."""
    assert codes(f"vllm serve {NANO} --use-replayssm --enable-prefix-caching", "0.27.0") == ["RSM002"]
    assert codes(f"vllm serve {NANO} --use-replayssm --enable-prefix-caching --mamba-cache-mode align",
                 "0.27.0") == []


def test_028_default_mode_is_align_but_explicit_all_fails():
    assert codes(f"vllm serve {NANO} --use-replayssm --enable-prefix-caching", "0.28.0") == []
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-cache-mode all", "0.28.0") == ["RSM002"]
    # prefix caching off: the mode is forced to none; vLLM starts, not as written (RSM107, a warning)
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-cache-mode all --no-enable-prefix-caching",
                 "0.28.0") == ["RSM107"]


def test_030_mode_all_keeps_the_v1_runner():
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-cache-mode all", "0.30.0") == ["RSM002"]


@pytest.mark.parametrize("release", ["0.30.0", "0.31.0", "0.32.0", "0.33.0"])
def test_flashinfer_needs_prefix_caching_off(release):
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer", release) == ["RSM002"]
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --no-enable-prefix-caching",
                 release) == []
    # cache mode none does not turn prefix caching off
    if release != "0.33.0":
        assert codes(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --mamba-cache-mode none",
                     release) == ["RSM002"]


def test_disable_prefix_caching_only_exists_in_033():
    cmd = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --disable-prefix-caching"
    assert codes(cmd, "0.33.0") == []
    assert codes(cmd, "0.32.0") == ["RSM002", "RSM104"]


# -- RSM003 speculative decoding ---------------------------------------------------------
@pytest.mark.parametrize("release,expected", [
    ("0.27.0", ["RSM003"]), ("0.28.0", ["RSM003"]), ("0.29.0", ["RSM003"]),
    ("0.30.0", ["RSM003"]), ("0.31.0", ["RSM003"]),
])
def test_nemotron_speculative_decoding_rejected_up_to_031(release, expected):
    assert codes(f"vllm serve {NANO} --use-replayssm --no-enable-prefix-caching {NGRAM}", release, V1) == expected


@pytest.mark.parametrize("release", ["0.32.0", "0.33.0"])
def test_nemotron_speculative_decoding_on_flashinfer_from_032(release):
    ok = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --no-enable-prefix-caching {NGRAM}"
    assert codes(ok, release) == []
    assert codes(f"vllm serve {NANO} --use-replayssm --no-enable-prefix-caching {NGRAM}", release) == ["RSM003"]
    with_pc = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer {NGRAM}"
    assert codes(with_pc, release) == ["RSM002"]
    short = ok + " --replayssm-buffer-len 3"
    assert codes(short, release) == ["RSM007"]


def test_spec_tokens_flag_and_dotted_keys_count():
    assert codes(f"vllm serve {NANO} --use-replayssm --speculative-config.method ngram "
                 "--speculative-config.num_speculative_tokens 2", "0.28.0") == ["RSM003"]
    assert codes(f"vllm serve {NANO} --use-replayssm --spec-method ngram --spec-tokens 2", "0.28.0") == ["RSM003"]


# -- Kimi -------------------------------------------------------------------------------
@pytest.mark.parametrize("release", ["0.27.0", "0.28.0"])
def test_kimi_unsupported_before_029(release):
    assert codes(f"vllm serve {KIMI} --use-replayssm {NGRAM}", release) == ["RSM001", "RSM003"]


@pytest.mark.parametrize("release", ["0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0"])
def test_kimi_needs_speculative_decoding(release):
    assert codes(f"vllm serve {KIMI} --use-replayssm", release, V1) == ["RSM009"]
    assert codes(f"vllm serve {KIMI} --use-replayssm {EAGLE}", release) == []


def test_kimi_ngram_falls_back_to_v1_and_then_needs_v2_for_prefix_caching():
    # 0.30: ngram forces V1 when the variable is unset; RecoverSSM with align needs V2
    assert codes(f"vllm serve {KIMI} --use-replayssm {NGRAM}", "0.30.0") == ["RSM008"]
    assert codes(f"vllm serve {KIMI} --use-replayssm {NGRAM}", "0.32.0") == []


def test_kimi_on_rocm_is_unsupported():
    assert codes(f"vllm serve {KIMI} --use-replayssm {EAGLE}", "0.33.0", platform="rocm") == ["RSM001"]


def test_kimi_recoverssm_needs_triton():
    assert codes(f"vllm serve {KIMI} --use-replayssm {EAGLE} --mamba-backend flashinfer",
                 "0.33.0") == ["RSM004"]


# -- RSM004/RSM005/RSM006/RSM007 -----------------------------------------------------------
@pytest.mark.parametrize("release", ["0.27.0", "0.28.0", "0.29.0"])
def test_only_triton_before_030(release):
    cmd = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --no-enable-prefix-caching"
    assert codes(cmd, release) == ["RSM004"]


@pytest.mark.parametrize("release", ["0.30.0", "0.33.0"])
def test_cpu_backend_rejected(release):
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-backend cpu", release) == ["RSM004"]


def test_unknown_backend_is_invalid_and_not_allowed():
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-backend mamba2", "0.31.0", V1) == ["RSM004", "RSM106"]


@pytest.mark.parametrize("flag", ["--kv-offloading-size 8",
                                  "--kv-transfer-config "
                                  "'{\"kv_connector\": \"NixlConnector\", \"kv_role\": \"kv_both\"}'"])
def test_kv_connectors(flag):
    assert codes(f"vllm serve {NANO} --use-replayssm {flag}", "0.28.0") == ["RSM005"]


def test_kv_connector_exempt_for_kimi_recoverssm_only_in_033():
    kv = "--kv-transfer-config '{\"kv_connector\": \"NixlConnector\", \"kv_role\": \"kv_consumer\"}'"
    assert codes(f"vllm serve {KIMI} --use-replayssm {EAGLE} {kv}", "0.32.0") == ["RSM005"]
    assert codes(f"vllm serve {KIMI} --use-replayssm {EAGLE} {kv}", "0.33.0") == []


def test_kv_connector_without_role_is_invalid():
    assert "RSM106" in codes(f"vllm serve {NANO} --kv-transfer-config '{{\"kv_connector\": \"X\"}}'", "0.33.0")


def test_block_size_needs_prefix_caching_which_027_keeps_off():
    assert codes(f"vllm serve {NANO} --mamba-block-size 256", "0.27.0") == ["RSM006"]
    assert codes(f"vllm serve {NANO} --mamba-block-size 256", "0.28.0") == []
    assert codes(f"vllm serve {NANO} --mamba-block-size 256 --no-enable-prefix-caching", "0.33.0") == ["RSM006"]


@pytest.mark.parametrize("release", ["0.32.0", "0.33.0"])
def test_flashinfer_buffer_at_most_16(release):
    base = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --no-enable-prefix-caching"
    assert codes(base + " --replayssm-buffer-len 17", release) == ["RSM007"]
    assert codes(base + " --replayssm-buffer-len 16", release) == []
    assert codes(base + " --replayssm-buffer-len 0", release) == ["RSM007"]


# -- form: RSM101-RSM106 ------------------------------------------------------------------
def test_config_equals_is_ignored():
    assert codes("vllm serve --config=serve.yaml", "0.33.0") == ["RSM101"]


def test_api_server_positional_model_is_ignored_and_default_model_judged():
    found = codes(f"python -m vllm.entrypoints.openai.api_server {NANO} --use-replayssm", "0.29.0")
    assert found == ["RSM001", "RSM103"]
    assert codes(f"python3 -m vllm.entrypoints.openai.api_server --model {NANO} --use-replayssm", "0.29.0") == []


def test_mamba_cache_mode_all_gone_in_032_and_deprecated_in_033():
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-cache-mode all", "0.32.0", V1) == ["RSM104"]
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-cache-mode all", "0.33.0", V1) == ["RSM104"]
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-cache-mode align", "0.33.0", V1) == ["RSM105"]


@pytest.mark.parametrize("form", ["--use-replayssm=true", "--use-replayssm true"])
def test_bool_flag_with_value(form):
    assert codes(f"vllm serve {NANO} {form}", "0.28.0") == ["RSM106"]


def test_runner_variable_must_be_0_or_1():
    assert codes(f"vllm serve {NANO} --use-replayssm", "0.28.0", {"VLLM_USE_V2_MODEL_RUNNER": "true"}) == ["RSM106"]


# -- spellings and wrappers ------------------------------------------------------------------
@pytest.mark.parametrize("cmd", [
    f"vllm serve {NANO} --use_replayssm --mamba_backend=flashinfer",
    f"nohup vllm serve {NANO} --use-replayssm --mamba-backend flashinfer",
    f"env VLLM_LOGGING_LEVEL=INFO uv run vllm serve --model={NANO} --use-replayssm --mamba-backend flashinfer",
    f"srun -n 1 --gpus 1 vllm serve {NANO} --use-replayssm --mamba-backend flashinfer",
    f"docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.30.0 --model {NANO} --use-replayssm "
    "--mamba-backend flashinfer",
])
def test_wrappers_and_spellings(cmd):
    assert codes(cmd, "0.30.0") == ["RSM002"]


def test_docker_image_tag_is_the_target_when_not_explicit():

    launch = launch_from_command(command(f"docker run -e VLLM_USE_V2_MODEL_RUNNER=1 vllm/vllm-openai:v0.28.0 "
                                         f"--model {NANO} --use-replayssm"))
    verdict = judge(launch, LintConfig())
    assert verdict.target.release.version == "0.28.0"
    assert verdict.findings == ()
    assert [f.code for f in judge(launch, LintConfig(vllm_version="0.33.0")).findings] == ["RSM008"]


# -- unknowns never cause a finding by themselves -------------------------------------------
def test_unknown_model_gets_only_codes_that_hold_for_every_architecture():
    assert codes("vllm serve $MODEL --use-replayssm", "0.28.0") == []
    assert codes("vllm serve $MODEL --use-replayssm", "0.33.0") == ["RSM008"]
    assert codes("vllm serve $MODEL --use-replayssm", "0.33.0", enable=("RSM201",)) == ["RSM008", "RSM201"]
    assert codes("vllm serve $MODEL --use-replayssm --mamba-block-size 64", "0.27.0") == []


def test_splat_arguments_are_assumed_to_add_no_replayssm_option():
    """DESIGN "judge what is written": "$@" adds nothing that changes the verdict."""
    assert codes(f'vllm serve {NANO} --use-replayssm "$@"', "0.33.0") == ["RSM008"]
    assert codes(f'vllm serve {NANO} --use-replayssm "$@"', "0.29.0") == []
    assert codes('vllm serve tiiuae/Falcon-H1-0.5B-Instruct --use-replayssm "$@"', "0.33.0") == ["RSM001", "RSM008"]


def test_splat_arguments_under_the_strict_reading_give_no_validator_finding():
    """DESIGN: `extra-args = "open"` gives such launches no finding. Even an unsupported model
    is no sure failure: the unseen part may hold `--no-use-replayssm` (every bool of vLLM's
    EngineArgs is a BooleanOptionalAction) or `--hf-overrides` that change the architecture."""
    assert codes(f'vllm serve {NANO} --use-replayssm "$@"', "0.33.0", extra_args="open") == []
    assert codes('vllm serve tiiuae/Falcon-H1-0.5B-Instruct --use-replayssm "$@"', "0.33.0",
                 extra_args="open") == []
    # what argparse rejects or warns about whatever follows is still reported
    assert codes(f'vllm serve {NANO} --use-replayssm=true "$@"', "0.33.0", extra_args="open") == ["RSM106"]
    assert codes(f'vllm serve {NANO} --use-replayssm "$@"', "0.26.0", extra_args="open") == ["RSM104"]


def test_every_validator_finding_of_a_launch_with_unseen_arguments_says_what_it_assumed():
    msgs = {f.code: f.message for f in judge(launch_from_command(command(
        'vllm serve tiiuae/Falcon-H1-0.5B-Instruct --use-replayssm "$@"')), LintConfig(vllm_version="0.33.0")).findings}
    assert set(msgs) == {"RSM001", "RSM008"}
    assert all("assuming $@ adds no ReplaySSM option" in m for m in msgs.values())


def test_a_finding_that_relies_on_the_assumption_says_so():
    launch = launch_from_command(command(f'vllm serve {NANO} --use-replayssm "$@"'))
    falcon = launch_from_command(command('vllm serve tiiuae/Falcon-H1-0.5B-Instruct --use-replayssm "$@"'))
    config = LintConfig(vllm_version="0.33.0")
    [rsm008] = judge(launch, config).findings
    assert 'assuming $@ adds no ReplaySSM option' in rsm008.message
    assert rsm008.message.index("assuming") < rsm008.message.index("; fix:")
    by_code = {f.code: f.message for f in judge(falcon, config).findings}
    # `--no-use-replayssm` or `--hf-overrides` in "$@" would undo even the architecture's verdict
    assert "assuming" in by_code["RSM001"] and "assuming" in by_code["RSM008"]


def test_unknown_flag_value_may_be_the_model():
    # `--served-model-name x` takes a value; `--trust-remote-code` does not
    assert codes(f"vllm serve --trust-remote-code {NANO} --use-replayssm", "0.28.0") == []
    assert codes("vllm serve --some-new-flag nvidia/whatever --use-replayssm", "0.28.0") == []


def test_docker_env_from_variables_is_unknown_not_unset():
    nano = f"vllm/vllm-openai:v0.33.0 --model {NANO} --use-replayssm"
    assert codes(f"docker run -e VLLM_USE_V2_MODEL_RUNNER=0 {nano}", "0.33.0") == []
    assert codes(f"docker run {nano}", "0.33.0") == ["RSM008"]
    # the whole environment may come from elsewhere: assumed to set nothing (DESIGN.md), which the
    # finding says; the strict reading reports nothing that rests on it
    assert codes(f"docker run --env-file prod.env {nano}", "0.33.0") == ["RSM008"]
    assert codes(f"docker run -e $RUNNER_ENV {nano}", "0.33.0") == ["RSM008"]
    assert codes(f"docker run --env-file prod.env {nano}", "0.33.0", extra_args="open") == []
    assert codes(f"docker run -e $RUNNER_ENV {nano}", "0.33.0", extra_args="open") == []


def test_flag_names_are_case_sensitive_but_prefixes_work():
    assert codes(f"vllm serve {NANO} --USE-REPLAYSSM", "0.28.0") == ["RSM106"]
    assert codes(f"vllm serve {NANO} --use-replay --mamba-backend flashinfer", "0.28.0") == ["RSM004"]
    # a prefix shared by several options is not an abbreviation
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba flashinfer", "0.28.0") == []


def test_v2_runner_forced_with_an_unsupported_feature():
    v2 = {"VLLM_USE_V2_MODEL_RUNNER": "1"}
    spec = "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 2}'"
    assert codes(f"vllm serve {KIMI} --use-replayssm {spec}", "0.30.0", v2) == ["RSM008"]
    assert codes(f"vllm serve {KIMI} --use-replayssm {spec}", "0.32.0", v2) == []
    draft = "--speculative-config '{\"model\": \"[ngram]\", \"num_speculative_tokens\": 2}'"
    assert codes(f"vllm serve {KIMI} --use-replayssm {draft}", "0.30.0", v2) == ["RSM008"]


def test_no_disable_alias_never_exists():
    assert codes(f"vllm serve {NANO} --use-replayssm --no-disable-prefix-caching", "0.33.0", V1) == ["RSM104"]
