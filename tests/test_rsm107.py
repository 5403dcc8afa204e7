"""RSM107: an explicit Mamba cache mode that vLLM sets to "none" because prefix caching is off.

vLLM's hybrid config update (MambaModelConfig, model_executor/models/config.py) rewrites the
mode of hybrid and pure Mamba models and logs one warning; the launch starts, not as written.
Families: 0.27.x (prefix caching off by default for hybrid models), 0.28-0.31 (on by default,
modes align/all/none), 0.32 (modes align/none: `all` is RSM104), 0.33 (the option is deprecated
and ignored: RSM105 instead).  tests/test_conformance.py holds the same verdicts against the
warning vLLM itself logged.
"""

from __future__ import annotations

import pytest

from conftest import codes
from flake8_replayssm.config import LintConfig
from flake8_replayssm.fix.codemod import fix_text, plan_edits
from flake8_replayssm.fix.edits import apply_edits
from flake8_replayssm.lint import lint_text
from flake8_replayssm.rules import severity

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"  # NemotronHForCausalLM (hybrid)
MAMBA = "state-spaces/mamba-130m-hf"  # MambaForCausalLM (attention-free)
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"  # a transformer: MambaModelConfig never runs
V1 = {"VLLM_USE_V2_MODEL_RUNNER": "0"}
BEFORE_033 = ("0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0")
MODE_ALL = ("0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0")


def findings(text: str, kind: str, release: str, **options: str) -> list[tuple[int, str]]:
    result = lint_text(text, kind, LintConfig(vllm_version=release, **options))
    assert result.error is None
    return sorted((f.span.line, f.code) for f in result.findings)


def messages(text: str, kind: str, release: str) -> list[str]:
    return [f.message for f in lint_text(text, kind, LintConfig(vllm_version=release)).findings
            if f.code == "RSM107"]


def fixed(text: str, kind: str, release: str) -> str:
    outcome = fix_text(text, kind, LintConfig(vllm_version=release))
    assert outcome.error is None
    return outcome.text


def test_is_a_warning():
    assert severity("RSM107") == "warning"


# -- per release family, command lines --------------------------------------------------

@pytest.mark.parametrize("release", BEFORE_033)
def test_align_with_prefix_caching_off_is_overridden(release):
    assert codes(f"vllm serve {NANO} --no-enable-prefix-caching --mamba-cache-mode align", release) \
        == ["RSM107"]


@pytest.mark.parametrize("release", MODE_ALL)
def test_all_with_prefix_caching_off_is_overridden(release):
    assert codes(f"vllm serve {NANO} --mamba-cache-mode=all --no-enable-prefix-caching", release) == ["RSM107"]


@pytest.mark.parametrize("release", ["0.32.0", "0.33.0"])
def test_all_from_032_is_rsm104_only(release):
    assert codes(f"vllm serve {NANO} --no-enable-prefix-caching --mamba-cache-mode all", release) == ["RSM104"]


def test_033_the_option_itself_has_no_effect_rsm105_only():
    for pc in ("--disable-prefix-caching", "--no-enable-prefix-caching", ""):
        assert codes(f"vllm serve {NANO} {pc} --mamba-cache-mode align", "0.33.0") == ["RSM105"]


@pytest.mark.parametrize("release", ["0.27.0", "0.27.1"])
def test_027_prefix_caching_is_off_by_default_for_hybrid_models(release):
    assert codes(f"vllm serve {NANO} --mamba-cache-mode align", release) == ["RSM107"]
    assert codes(f"vllm serve {NANO} --mamba-cache-mode align --enable-prefix-caching", release) == []


@pytest.mark.parametrize("release", ["0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0"])
def test_from_028_prefix_caching_is_on_by_default(release):
    assert codes(f"vllm serve {NANO} --mamba-cache-mode align", release) == []


@pytest.mark.parametrize("release", BEFORE_033)
def test_pure_mamba_models_have_prefix_caching_off_by_default(release):
    assert codes(f"vllm serve {MAMBA} --mamba-cache-mode align", release) == ["RSM107"]


@pytest.mark.parametrize("release", BEFORE_033)
def test_transformers_keep_the_mode(release):
    assert codes(f"vllm serve {LLAMA} --no-enable-prefix-caching --mamba-cache-mode align", release) == []


@pytest.mark.parametrize("release", BEFORE_033)
def test_the_reverse_is_not_a_finding(release):
    """Prefix caching on with mode none: vLLM raises the mode to align (an info line), as meant."""
    assert codes(f"vllm serve {NANO} --enable-prefix-caching --mamba-cache-mode none", release) == []
    assert codes(f"vllm serve {NANO} --no-enable-prefix-caching --mamba-cache-mode none", release) == []


def test_last_prefix_caching_flag_wins():
    assert codes(f"vllm serve {NANO} --enable-prefix-caching --no-enable-prefix-caching "
                 "--mamba_cache_mode align", "0.31.0") == ["RSM107"]
    assert codes(f"vllm serve {NANO} --no-enable-prefix-caching --enable-prefix-caching "
                 "--mamba_cache_mode align", "0.31.0") == []


def test_with_replayssm_it_is_reported_alongside_or_instead_of_the_refusals():
    # 0.27: with prefix caching off by default, `all` becomes none, so it is not RSM002
    assert codes(f"vllm serve {NANO} --use-replayssm --mamba-cache-mode all", "0.27.0") == ["RSM107"]
    assert codes(f"vllm serve {NANO} --use-replayssm --no-enable-prefix-caching --mamba-cache-mode align",
                 "0.30.0", V1) == ["RSM107"]
    assert codes(f"vllm serve {NANO} --use-replayssm --no-enable-prefix-caching --mamba-cache-mode align "
                 "--mamba-backend bogus", "0.29.0", V1) == ["RSM004", "RSM106", "RSM107"]


def test_an_unresolved_model_could_be_a_transformer():
    assert codes('vllm serve "$MODEL" --no-enable-prefix-caching --mamba-cache-mode align', "0.31.0") == []


def test_unseen_extra_arguments():
    launch = f"vllm serve {NANO} --mamba-cache-mode align $@"
    assert codes(launch, "0.27.0") == ["RSM107"]  # judge what is written: the 0.27 default
    assert codes(launch, "0.27.0", extra_args="open") == []  # "$@" may turn prefix caching on
    # a later `--enable-prefix-caching` in "$@" wins over the written one: open means no finding
    explicit = f"vllm serve {NANO} --no-enable-prefix-caching --mamba-cache-mode align $@"
    assert codes(explicit, "0.27.0") == ["RSM107"]
    assert codes(explicit, "0.27.0", extra_args="open") == []


def test_message_names_the_release_the_mode_and_why():
    default, = messages(f"vllm serve {NANO} --mamba-cache-mode align\n", "shell", "0.27.0")
    assert "Mamba cache mode is set to 'none' when prefix caching is disabled" in default  # vLLM's words
    assert "'align'" in default and "mamba_cache_mode 'none'" in default and "[vLLM 0.27.0]" in default
    assert "prefix caching is not set, and vLLM 0.27.0 turns it off for this model" in default
    explicit, = messages(f"vllm serve {NANO} --no-enable-prefix-caching --mamba-cache-mode all\n",
                         "shell", "0.30.0")
    assert "'all'" in explicit and "[vLLM 0.30.0]" in explicit and "is not set" not in explicit


# -- every form ------------------------------------------------------------------------

def test_shell_reported_at_the_mode_flag():
    text = f"#!/bin/sh\nvllm serve {NANO} \\\n  --no-enable-prefix-caching \\\n  --mamba-cache-mode align\n"
    assert findings(text, "shell", "0.29.0") == [(4, "RSM107")]
    assert findings(text, "shell", "0.33.0") == [(4, "RSM105")]


def test_python_keywords():
    text = (f"from vllm import LLM\n\nllm = LLM(\n    model=\"{NANO}\",\n    enable_prefix_caching=False,\n"
            "    mamba_cache_mode=\"align\",\n)\n")
    assert findings(text, "python", "0.30.0") == [(6, "RSM107")]
    assert findings(text.replace("False", "True"), "python", "0.30.0") == []
    assert findings(text, "python", "0.33.0") == [(6, "RSM105")]


def test_python_keywords_unknown_prefix_caching():
    text = f"from vllm import LLM\nLLM(\"{NANO}\", enable_prefix_caching=use_pc, mamba_cache_mode=\"align\")\n"
    assert findings(text, "python", "0.30.0") == []


def test_python_all_on_032_is_rsm104_only():
    text = f"from vllm import LLM\nLLM(\"{NANO}\", enable_prefix_caching=False, mamba_cache_mode=\"all\")\n"
    assert findings(text, "python", "0.31.0") == [(2, "RSM107")]
    assert findings(text, "python", "0.32.0") == [(2, "RSM104")]


def test_serve_config():
    text = f"model: {NANO}\nno-enable-prefix-caching: true\nmamba-cache-mode: align\n"
    assert findings(text, "yaml", "0.32.0") == [(3, "RSM107")]
    assert findings(text, "yaml", "0.33.0") == [(3, "RSM105")]


def test_serve_config_false_key_keeps_the_default():
    """`enable-prefix-caching: false` is dropped (RSM102): 0.27 is off anyway, 0.28+ stays on."""
    text = f"model: {NANO}\nenable-prefix-caching: false\nmamba-cache-mode: align\n"
    assert findings(text, "yaml", "0.27.0") == [(2, "RSM102"), (3, "RSM107")]
    assert findings(text, "yaml", "0.28.0") == [(2, "RSM102")]


def test_dockerfile_and_kubernetes_args():
    docker = (f"FROM vllm/vllm-openai:v0.27.1\nCMD [\"--model\", \"{NANO}\", \"--mamba-cache-mode\", "
              "\"align\"]\n")
    assert findings(docker, "dockerfile", "0.27.1") == [(2, "RSM107")]
    k8s = ("apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n  - name: vllm\n"
           "    image: vllm/vllm-openai:v0.31.0\n    args:\n"
           f"    - --model\n    - {NANO}\n    - --no-enable-prefix-caching\n    - --mamba-cache-mode\n"
           "    - all\n")
    assert findings(k8s, "yaml", "0.31.0") == [(12, "RSM107")]


# -- the fix ---------------------------------------------------------------------------

def test_fix_drops_the_mode_in_shell():
    before = f"vllm serve {NANO} --no-enable-prefix-caching --mamba-cache-mode align --port 8000\n"
    after = fixed(before, "shell", "0.31.0")
    assert after == f"vllm serve {NANO} --no-enable-prefix-caching --port 8000\n"
    assert findings(after, "shell", "0.31.0") == []
    assert fixed(after, "shell", "0.31.0") == after


def test_fix_drops_the_keyword():
    before = (f"from vllm import LLM\nllm = LLM(\n    \"{NANO}\",\n    enable_prefix_caching=False,\n"
              "    mamba_cache_mode=\"align\",  # meant to keep Mamba states\n    max_num_seqs=8,\n)\n")
    after = fixed(before, "python", "0.29.0")
    assert "mamba_cache_mode" not in after and "max_num_seqs=8," in after and "enable_prefix_caching=False" in after
    assert findings(after, "python", "0.29.0") == []


def test_fix_drops_the_serve_config_key():
    before = f"model: {NANO}\nno-enable-prefix-caching: true\nmamba-cache-mode: align\nport: 8000\n"
    assert fixed(before, "yaml", "0.30.0") == f"model: {NANO}\nno-enable-prefix-caching: true\nport: 8000\n"


def test_fix_keeps_the_mode_when_it_turns_prefix_caching_on():
    """RSM006's fix (--enable-prefix-caching for a block size) makes the mode take effect."""
    before = f"vllm serve {NANO} --mamba-cache-mode align --mamba-block-size 256\n"
    assert sorted(c for _, c in findings(before, "shell", "0.27.0")) == ["RSM006", "RSM107"]
    after = fixed(before, "shell", "0.27.0")
    assert after == f"vllm serve {NANO} --mamba-cache-mode align --mamba-block-size 256 --enable-prefix-caching\n"
    assert findings(after, "shell", "0.27.0") == []


def test_runner_fix_does_not_pin_a_mode_that_prefix_caching_off_overrides():
    """RSM008's fix pins --mamba-cache-mode align before 0.33, except where it would be RSM107."""
    config = LintConfig(vllm_version="0.30.0")
    for pc, pinned in (("--no-enable-prefix-caching", False), ("--enable-prefix-caching", True)):
        before = f"vllm serve {NANO} --use-replayssm {pc}\n"
        one_round = apply_edits(before, plan_edits(before, "shell", config))
        assert one_round.startswith("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve")
        assert ("--mamba-cache-mode align" in one_round) is pinned
        assert findings(one_round, "shell", "0.30.0") == []


def test_unsafe_runner_fix_for_keywords_does_not_pin_an_overridden_mode():
    before = (f"import os\nfrom vllm import LLM\nllm = LLM(\"{NANO}\", use_replayssm=True, "
              "enable_prefix_caching=False)\n")
    one_round = apply_edits(before, plan_edits(before, "python", LintConfig(vllm_version="0.31.0"), unsafe=True))
    assert 'os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"' in one_round
    assert "mamba_cache_mode" not in one_round and 'mamba_backend="triton"' in one_round
