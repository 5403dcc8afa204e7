"""SGLang's command line as the linter reads it: entry points, spellings, releases, settings."""

from __future__ import annotations

import json

import pytest

from flake8_replayssm import check_source
from flake8_replayssm.recognise import launch_from_command
from flake8_replayssm.cli import main
from flake8_replayssm.config import ConfigError, LintConfig
from flake8_replayssm.settings import config_from_table
from flake8_replayssm.judging import judge
from flake8_replayssm.engines.sglang.target import sglang_image_release
from flake8_replayssm.engines.sglang.knowledge import knowledge

from conftest import command

QWEN_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
SERVE = f"sglang serve --model-path {QWEN_NEXT} --enable-linear-replayssm"


def codes(cmdline: str, release: str | None = "0.5.23", **settings) -> list[str]:
    launch = launch_from_command(command(cmdline))
    assert launch is not None and launch.engine == "sglang", cmdline
    config = LintConfig(sglang_version=release, **settings)
    return sorted(f.code for f in judge(launch, config).findings)


def messages(cmdline: str, release: str = "0.5.23", **settings) -> dict[str, str]:
    launch = launch_from_command(command(cmdline))
    return {f.code: f.message for f in judge(launch, LintConfig(sglang_version=release, **settings)).findings}


@pytest.mark.parametrize("cmdline", [
    f"sglang serve --model-path {QWEN_NEXT} --enable-linear-replayssm",
    f"sglang serve {QWEN_NEXT} --enable-linear-replayssm",
    f"sglang serve --model-type llm {QWEN_NEXT} --enable-linear-replayssm",
    f"python3 -m sglang.launch_server --model {QWEN_NEXT} --enable-linear-replayssm",
    f"env CUDA_VISIBLE_DEVICES=0 nohup python -m sglang.launch_server --model-path {QWEN_NEXT} "
    "--enable-linear-replayssm",
    f"docker run --gpus all --shm-size 32g lmsysorg/sglang:v0.5.23-cu129 python3 -m sglang.launch_server "
    f"--model-path {QWEN_NEXT} --enable-linear-replayssm",
])
def test_entry_points(cmdline):
    assert codes(cmdline) == ["RSM302"]


def test_not_sglang():
    assert launch_from_command(command("sglang version")) is None
    assert launch_from_command(command("python -m sglang.bench_serving --enable-linear-replayssm")) is None
    # the image has no server entrypoint: bare arguments after it start nothing
    assert launch_from_command(command(
        f"docker run lmsysorg/sglang:v0.5.23 --model-path {QWEN_NEXT} --enable-linear-replayssm")) is None


def test_positional_model_needs_0_5_16():
    found = messages(f"sglang serve {QWEN_NEXT} --enable-linear-replayssm --disable-overlap-schedule", "0.5.15")
    assert list(found) == ["RSM104"] and f"--model-path {QWEN_NEXT}" in found["RSM104"]
    assert codes(f"sglang serve {QWEN_NEXT} --enable-linear-replayssm --disable-overlap-schedule", "0.5.16") == []


def test_only_the_first_word_is_the_model():
    found = messages(f"sglang serve --enable-linear-replayssm --disable-overlap-schedule {QWEN_NEXT}")
    assert "RSM106" in found and "unrecognized arguments" in found["RSM106"]
    found = messages(f"python -m sglang.launch_server {QWEN_NEXT} --enable-linear-replayssm")
    assert "RSM106" in found


@pytest.mark.parametrize("flag,code,fragment", [
    ("--enable_linear_replayssm", "RSM106", "does not read '_' as '-'"),
    ("--enable-linear-replayssm=true", "RSM106", "ignored explicit argument 'true'"),
    ("--enable-linear-replayssm true", "RSM106", "stray argument"),
    ("--no-enable-linear-replayssm", "RSM106", "no --no- form"),
    ("--enable-linear-replay", "RSM106", "ambiguous option"),
    ("--enable-gdn-replayssm", "RSM104", "did you mean --enable-linear-replayssm"),
    ("--enable-linear-replayssm --gdn-replayssm-cache-len 8", "RSM104", "did you mean --linear-replayssm-cache-len"),
    ("--enable-linear-replayssm --mamba-scheduler-strategy no_buffer", "RSM104", "removed after SGLang 0.5.19"),
    ("--enable-linear-replayssm --mamba-radix-cache-strategy bogus", "RSM106", "invalid choice: 'bogus'"),
    ("--enable-linear-replayssm --linear-replayssm-cache-len abc", "RSM106", "invalid int value"),
])
def test_spellings_sglang_rejects(flag, code, fragment):
    found = messages(f"sglang serve --model-path {QWEN_NEXT} {flag} --disable-overlap-schedule")
    assert fragment in found.get(code, ""), found


def test_spellings_by_release():
    flags = f"sglang serve --model-path {QWEN_NEXT} --disable-overlap-schedule"
    # the abbreviation is unique while the spec flag does not exist
    assert codes(f"{flags} --enable-linear-replay", "0.5.16") == []
    assert codes(f"{flags} --enable-linear-replay", "0.5.17") == ["RSM106"]
    # the RFC's name is a unique prefix of the spec-verify flag in 0.5.16-0.5.19
    found = messages(f"{flags} --enable-gdn-replayssm", "0.5.18")
    assert "RSM105" in found and "spec-verify variant" in found["RSM105"]
    # deprecated aliases work (RSM105) until 0.5.19, and are gone from 0.5.20 (RSM104)
    alias = f"{flags} --enable-linear-replayssm --mamba-scheduler-strategy no_buffer"
    assert codes(alias, "0.5.19") == ["RSM105"]
    assert codes(alias, "0.5.20") == ["RSM104"]
    spec = f"sglang serve --model-path {QWEN_NEXT} --disable-overlap-schedule --enable-gdn-replayssm-spec"
    assert codes(spec, "0.5.16") == []
    assert codes(spec, "0.5.17") == ["RSM105"]
    assert codes(spec, "0.5.20") == ["RSM104"]
    new_spec = spec.replace("gdn", "linear")
    assert "write --enable-gdn-replayssm-spec" in messages(new_spec, "0.5.16")["RSM104"]


@pytest.mark.parametrize("words", [
    "--cuda-graph-bs 1 2 4",
    "--encoder-urls http://a:1 http://b:2",
    "--lora-paths a=models/A b=models/B",
    "--lora-paths",  # nargs "*": zero words is fine
    "--model-checksum",  # nargs "?"
    "--model-checksum sums.json",
])
def test_list_options_take_several_words(words):
    """argparse's nargs (data/sglang_argv.toml [argv.nargs]): the words after a list option are
    its values, not positional arguments (issue 19, list options)."""
    cmdline = f"sglang serve --model-path {QWEN_NEXT} {words} --enable-linear-replayssm --disable-overlap-schedule"
    assert codes(cmdline, "0.5.19") == []


@pytest.mark.parametrize("words,fragment", [
    ("--cuda-graph-bs 1 two", "invalid int value: 'two'"),
    ("--cuda-graph-bs", "expected at least one argument"),
    ("--bucket-time-to-first-token 0.1 fast", "invalid float value: 'fast'"),
])
def test_list_option_values_argparse_rejects(words, fragment):
    cmdline = f"sglang serve --model-path {QWEN_NEXT} {words} --enable-linear-replayssm --disable-overlap-schedule"
    assert fragment in messages(cmdline, "0.5.19").get("RSM106", "")


def test_a_list_option_eats_a_positional_model_after_it():
    words = f"--cuda-graph-bs 1 2 {QWEN_NEXT} --enable-linear-replayssm --disable-overlap-schedule"
    assert f"invalid int value: '{QWEN_NEXT}'" in messages(f"sglang serve {words}", "0.5.19")["RSM106"]
    assert codes(f"sglang serve {QWEN_NEXT} {words.split(QWEN_NEXT)[0]}--enable-linear-replayssm "
                 "--disable-overlap-schedule", "0.5.19") == []


def test_options_are_judged_by_the_releases_that_have_them():
    """--cuda-graph-bs exists up to 0.5.19; from 0.5.20 it is an ambiguous prefix ([argv.until])."""
    flags = f"sglang serve --model-path {QWEN_NEXT} --enable-linear-replayssm --disable-overlap-schedule"
    assert codes(f"{flags} --cuda-graph-bs 8", "0.5.19") == []
    found = messages(f"{flags} --cuda-graph-bs 8", "0.5.20")["RSM106"]
    assert "ambiguous option: could match --cuda-graph-bs-decode, --cuda-graph-bs-prefill" in found
    know = knowledge()
    assert know.option_until["--cuda-graph-bs"] == "0.5.19" and know.nargs["--cuda-graph-bs"] == "+"
    newer = next(o for o, since in know.option_since.items() if since == "0.5.22" and o not in know.nargs)
    found = messages(f"{flags} {newer} 1", "0.5.21")
    assert "does not exist in SGLang 0.5.21" in found["RSM104"] and "first in SGLang 0.5.22" in found["RSM104"]


def test_no_release_takes_a_different_number_of_words():
    """The argv walk runs before the release is known, so it reads [argv.nargs] alone; when a
    release starts to differ ([argv.nargs_by_release]), the walk must learn the release."""
    from flake8_replayssm.data_files import read_data

    assert read_data("engines/sglang/data/sglang_argv.toml")["argv"].get("nargs_by_release", {}) == {}


def test_a_rejected_spelling_never_reaches_the_checks():
    # `--mamba-scheduler-strategy extra_buffer` is an argparse error on 0.5.20: not also RSM302
    assert codes(f"{SERVE} --disable-overlap-schedule --mamba-scheduler-strategy extra_buffer", "0.5.20") \
        == ["RSM104"]
    assert codes(f"{SERVE} --disable-overlap-schedule --mamba-scheduler-strategy extra_buffer", "0.5.19") \
        == ["RSM105", "RSM302"]


def test_release_before_the_flag():
    found = messages(f"{SERVE} --disable-overlap-schedule", "0.5.14")
    assert list(found) == ["RSM104"] and "first in SGLang 0.5.15" in found["RSM104"]


def test_messages_carry_sglang_wording_release_and_why():
    found = messages(SERVE, "0.5.16")["RSM302"]
    assert found.startswith("--enable-linear-replayssm requires --mamba-radix-cache-strategy no_buffer (the "
                            "default)")
    assert "Got --mamba-radix-cache-strategy='auto'" in found and "[SGLang 0.5.16]" in found
    assert "its default auto resolves to extra_buffer" in found and "fix: add --disable-overlap-schedule" in found
    assert "Got --mamba-radix-cache-strategy='extra_buffer'" in messages(SERVE, "0.5.19")["RSM302"]
    assert "AttributeError" in messages(SERVE, "0.5.15")["RSM302"]
    blackwell = messages(f"{SERVE} --disable-overlap-schedule --mamba-ssm-dtype bfloat16", gpu="blackwell")
    assert "[SGLang 0.5.23 on Blackwell]" in blackwell["RSM301"] and "switches an unset" in blackwell["RSM301"]


def test_unseen_extra_arguments():
    text = f'#!/bin/bash\nsglang serve --model-path {QWEN_NEXT} --enable-linear-replayssm "$@"\n'
    closed = check_source(text, "shell", config=LintConfig(sglang_version="0.5.23"))
    assert [f.code for f in closed] == ["RSM302"] and 'assuming "$@" adds no ReplaySSM option' in closed[0].message
    assert check_source(text, "shell", config=LintConfig(sglang_version="0.5.23", extra_args="open")) == []


def test_unresolved_model_is_judged_for_every_stand_in():
    assert codes("sglang serve --model-path $MODEL --enable-linear-replayssm") == []
    assert codes("sglang serve --model-path $MODEL --enable-linear-replayssm", enable=("RSM201",)) == ["RSM201"]
    # a code that holds for every model still holds
    assert codes("sglang serve --model-path $MODEL --enable-linear-replayssm --disaggregation-mode prefill") \
        == ["RSM303"]


@pytest.mark.parametrize("image,release", [
    ("lmsysorg/sglang:v0.5.20-cu129", "0.5.20"),
    ("docker.io/lmsysorg/sglang:v0.5.15.post1-cu126", "0.5.15"),
    ("lmsysorg/sglang:0.5.18", "0.5.18"),
    ("lmsysorg/sglang:latest", "latest"),       # the newest release known
    ("lmsysorg/sglang:${TAG}", "all"),          # a tag the file leaves open: every release known
    ("lmsysorg/sglang:dev", None),
    ("someone/sglang:v0.5.20", None),
    (None, None),
])
def test_image_release(image, release):
    assert sglang_image_release(image, knowledge()) == release


def test_target_resolution_order(tmp_path, monkeypatch):
    from flake8_replayssm import target
    from flake8_replayssm.engines.sglang.target import resolve_target

    monkeypatch.setattr(target, "installed_version", lambda package: None)
    monkeypatch.setattr("flake8_replayssm.target.installed_version", lambda package: None)
    (tmp_path / "requirements.txt").write_text("vllm==0.33.0\nsglang[all]==0.5.17\n")
    config = LintConfig(project_root=tmp_path)
    know = knowledge()
    assert resolve_target(config, None, know).release.version == "0.5.17"
    assert resolve_target(config, "0.5.21", know).reason.startswith("image tag v0.5.21")
    explicit = LintConfig(project_root=tmp_path, sglang_version="0.5.19", sglang_version_source="--sglang-version")
    assert resolve_target(explicit, "0.5.21", know).release.version == "0.5.19"
    assert resolve_target(LintConfig(), None, know).release.version == "0.5.23"
    assert resolve_target(LintConfig(sglang_version="0.5.30"), None, know).release.version == "0.5.23"


def test_settings_from_pyproject_cli_and_flake8(tmp_path, capsys):
    config = config_from_table({"sglang-version": "0.5.18", "gpu": "blackwell"}, tmp_path)
    assert (config.sglang_version, config.gpu) == ("0.5.18", "blackwell")
    with pytest.raises(ConfigError):
        config_from_table({"gpu": "ampere"}, tmp_path)
    script = tmp_path / "serve.sh"
    script.write_text(f"{SERVE} --disable-overlap-schedule --mamba-ssm-dtype bfloat16\n")
    assert main(["check", "--sglang-version", "0.5.18", "--gpu", "hopper", str(script)]) == 0
    assert main(["check", "--sglang-version", "0.5.18", "--gpu", "blackwell", str(script)]) == 1
    assert "RSM301" in capsys.readouterr().out
    assert main(["check", "--sglang-version", "newer", str(script)]) == 2
    assert main(["check", "--sglang-version", "<0.5", str(script)]) == 2  # admits no release known
    config = config_from_table({"cuda": "12.9"}, tmp_path)
    assert config.cuda == "12.9"
    with pytest.raises(ConfigError):
        config_from_table({"cuda": "twelve"}, tmp_path)


def test_flake8_options(flake8_path):
    """--replayssm-sglang-version and --replayssm-gpu, in flake8's config and on its command line."""
    (flake8_path / "engine.py").write_text(
        f"import sglang as sgl\nsgl.Engine(model_path={QWEN_NEXT!r}, enable_linear_replayssm=True,\n"
        "           disable_overlap_schedule=True, mamba_ssm_dtype='bfloat16')\n")
    (flake8_path / "setup.cfg").write_text("[flake8]\nselect = RSM\nreplayssm-sglang-version = 0.5.18\n")
    assert flake8_path.run_flake8(["--replayssm-gpu", "hopper"]).out_lines == []
    result = flake8_path.run_flake8(["--replayssm-gpu", "blackwell"])
    assert len(result.out_lines) == 1 and "RSM301" in result.out_lines[0]
    assert "[SGLang 0.5.18 on Blackwell]" in result.out_lines[0]


def test_an_unset_gpu_names_where_it_fails():
    """With the GPU unset a launch is judged on Hopper and Blackwell: a refusal on one of them is
    reported for it, named; "accepted without effect" only where nothing refuses (issue 19)."""
    bf16 = f"{SERVE} --disable-overlap-schedule --mamba-ssm-dtype bfloat16"
    assert "[SGLang 0.5.18 on Blackwell]" in messages(bf16, "0.5.18")["RSM301"]
    both = messages(f"{SERVE} --disable-overlap-schedule --linear-attn-decode-backend flashinfer", "0.5.18")
    assert "[SGLang 0.5.18]" in both["RSM301"]
    nemotron = messages("sglang serve --model-path nvidia/NVIDIA-Nemotron-Nano-9B-v2 --enable-linear-replayssm "
                        "--disable-overlap-schedule", "0.5.23")
    assert "[SGLang 0.5.23 on Blackwell]" in nemotron["RSM305"] and "trtllm_mha" in nemotron["RSM305"]
    assert "[SGLang 0.5.23 on Hopper]" in nemotron["RSM308"]


def test_cuda_is_part_of_the_target(tmp_path):
    """flashinfer prefill on SM100 needs CUDA 13 (issue 19): the setting, the image's -cu129 tag,
    or, unset, both CUDA versions judged and the one that fails named."""
    flags = f"{SERVE} --disable-overlap-schedule --linear-attn-backend flashinfer --linear-attn-decode-backend triton"
    unset = messages(flags, "0.5.23")["RSM309"]
    assert "requires CUDA 13+, got CUDA 12" in unset and "[SGLang 0.5.23 on Blackwell with CUDA 12]" in unset
    assert "got CUDA 12.9" in messages(flags, "0.5.23", gpu="blackwell", cuda="12.9")["RSM309"]
    assert "RSM309" not in messages(flags, "0.5.23", gpu="blackwell", cuda="13.0")
    assert "RSM309" not in messages(flags, "0.5.23", gpu="hopper")
    image = (f"docker run lmsysorg/sglang:v0.5.23-cu130 python3 -m sglang.launch_server "
             f"--model-path {QWEN_NEXT} --enable-linear-replayssm --disable-overlap-schedule "
             "--linear-attn-backend flashinfer --linear-attn-decode-backend triton")
    assert "RSM309" not in codes(image, None, gpu="blackwell")
    assert "RSM309" in codes(image.replace("cu130", "cu129"), None, gpu="blackwell")


def test_outputs_name_the_engine(tmp_path, capsys):
    script = tmp_path / "serve.sh"
    script.write_text(f"{SERVE}\nvllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm\n")
    assert main(["check", "--format", "json", "--sglang-version", "0.5.20", "--vllm-version", "0.33.0",
                 str(script)]) == 1
    items = json.loads(capsys.readouterr().out)
    findings = items["findings"] if isinstance(items, dict) else items
    assert [(f["code"], f["engine"], f["vllm_version"]) for f in findings] == [
        ("RSM302", "sglang", "0.5.20"), ("RSM008", "vllm", "0.33.0")]
    assert main(["check", "--show-launches", "--sglang-version", "0.5.20", str(script)]) == 1
    out = capsys.readouterr().out
    assert "SGLang 0.5.20 (--sglang-version)" in out or "SGLang 0.5.20" in out
