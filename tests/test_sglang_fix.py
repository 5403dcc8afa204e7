"""``replayssm-lint fix`` on SGLang launches: golden before/after pairs per form, safety, idempotence."""

from __future__ import annotations

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.fix.codemod import fix_text
from flake8_replayssm.lint import lint_text

Q = "Qwen/Qwen3-Next-80B-A3B-Instruct"
SERVE = f"sglang serve --model-path {Q}"
OFF = "--disable-overlap-schedule"


def _config(release: str, gpu: str | None = None) -> LintConfig:
    return LintConfig(sglang_version=release, gpu=gpu)


def codes(text: str, kind: str, release: str, gpu: str | None = None) -> set[str]:
    return {f.code for f in lint_text(text, kind, _config(release, gpu)).findings}


# (id, kind, release, gpu, unsafe, before, after)
GOLDEN = [
    ("auto-overlap-shell", "shell", "0.5.23", None, False,
     f"{SERVE} --enable-linear-replayssm --port 30000\n",
     f"{SERVE} --enable-linear-replayssm {OFF} --port 30000\n"),
    ("explicit-no-buffer-continuation", "shell", "0.5.19", None, False,
     f"python3 -m sglang.launch_server --model-path {Q} \\\n    --enable-linear-replayssm \\\n"
     "    --mamba-radix-cache-strategy no_buffer\n",
     f"python3 -m sglang.launch_server --model-path {Q} \\\n    --enable-linear-replayssm {OFF} \\\n"
     "    --mamba-radix-cache-strategy no_buffer\n"),
    ("explicit-extra-unsafe", "shell", "0.5.23", None, True,
     f"{SERVE} --enable-linear-replayssm --mamba-radix-cache-strategy extra_buffer\n",
     f"{SERVE} --enable-linear-replayssm {OFF} --mamba-radix-cache-strategy no_buffer\n"),
    ("blackwell-pin", "shell", "0.5.21", "blackwell", False,
     f"{SERVE} --enable-linear-replayssm {OFF} --mamba-ssm-dtype bfloat16\n",
     f"{SERVE} --enable-linear-replayssm --linear-attn-decode-backend triton {OFF} --mamba-ssm-dtype bfloat16\n"),
    ("removed-alias", "shell", "0.5.20", None, False,
     f"{SERVE} --enable-linear-replayssm --mamba-scheduler-strategy no_buffer {OFF}\n",
     f"{SERVE} --enable-linear-replayssm --mamba-radix-cache-strategy no_buffer {OFF}\n"),
    ("deprecated-alias", "shell", "0.5.18", None, False,
     f"{SERVE} {OFF} --enable-gdn-replayssm-spec\n",
     f"{SERVE} {OFF} --enable-linear-replayssm-spec\n"),
    ("spec-name-before-0.5.17", "shell", "0.5.16", None, False,
     f"{SERVE} {OFF} --enable-linear-replayssm-spec\n",
     f"{SERVE} {OFF} --enable-gdn-replayssm-spec\n"),
    ("rfc-name-rejected", "shell", "0.5.23", None, False,
     f"{SERVE} --enable-gdn-replayssm {OFF}\n",
     f"{SERVE} --enable-linear-replayssm {OFF}\n"),
    ("underscores-and-value", "shell", "0.5.23", None, False,
     f"{SERVE} --enable_linear_replayssm {OFF}\n{SERVE} --enable-linear-replayssm=true {OFF}\n",
     f"{SERVE} --enable-linear-replayssm {OFF}\n{SERVE} --enable-linear-replayssm {OFF}\n"),
    ("config-equals", "shell", "0.5.23", None, False,
     f"{SERVE} --config=serve.yaml\n",
     f"{SERVE} --config serve.yaml\n"),
    ("engine-keywords", "python", "0.5.23", None, False,
     f'import sglang as sgl\n\nengine = sgl.Engine(\n    model_path="{Q}",\n    enable_linear_replayssm=True,\n)\n',
     f'import sglang as sgl\n\nengine = sgl.Engine(\n    model_path="{Q}",\n    enable_linear_replayssm=True,\n'
     '    disable_overlap_schedule=True,\n)\n'),
    ("engine-keyword-renamed", "python", "0.5.17", None, False,
     f'import sglang as sgl\nsgl.Engine(model_path="{Q}", enable_gdn_replayssm_spec=True)\n',
     f'import sglang as sgl\nsgl.Engine(model_path="{Q}", enable_linear_replayssm_spec=True)\n'),
    ("argv-list", "python", "0.5.23", None, False,
     f'import subprocess\nsubprocess.run(["sglang", "serve", "{Q}", "--enable-linear-replayssm"])\n',
     f'import subprocess\nsubprocess.run(["sglang", "serve", "{Q}", "--enable-linear-replayssm", "{OFF}"])\n'),
    ("serve-config", "yaml", "0.5.23", None, False,
     f"model-path: {Q}\nenable-linear-replayssm: true\nmamba_radix_cache_strategy: no_buffer\n",
     f"model-path: {Q}\nenable-linear-replayssm: true\ndisable-overlap-schedule: true\n"
     "mamba-radix-cache-strategy: no_buffer\n"),
    ("dockerfile", "dockerfile", "0.5.20", None, False,
     f'FROM lmsysorg/sglang:v0.5.20-cu129\nCMD ["python3", "-m", "sglang.launch_server", "--model-path", "{Q}", '
     '"--enable-linear-replayssm"]\n',
     f'FROM lmsysorg/sglang:v0.5.20-cu129\nCMD ["python3", "-m", "sglang.launch_server", "--model-path", "{Q}", '
     f'"--enable-linear-replayssm", "{OFF}"]\n'),
    ("kubernetes-args", "yaml", "0.5.23", None, False,
     "kind: Pod\napiVersion: v1\nmetadata: {name: s}\nspec:\n  containers:\n  - name: s\n"
     "    image: lmsysorg/sglang:v0.5.23\n    command: [python3, -m, sglang.launch_server]\n    args:\n"
     f"    - --model-path\n    - {Q}\n    - --enable-linear-replayssm\n",
     "kind: Pod\napiVersion: v1\nmetadata: {name: s}\nspec:\n  containers:\n  - name: s\n"
     "    image: lmsysorg/sglang:v0.5.23\n    command: [python3, -m, sglang.launch_server]\n    args:\n"
     f"    - --model-path\n    - {Q}\n    - --enable-linear-replayssm\n    - {OFF}\n"),
]


@pytest.mark.parametrize("name,kind,release,gpu,unsafe,before,after", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden(name, kind, release, gpu, unsafe, before, after):
    outcome = fix_text(before, kind, _config(release, gpu), unsafe=unsafe)
    assert outcome.error is None
    assert outcome.text == after
    left = codes(after, kind, release, gpu) - {"RSM101", "RSM105"}
    assert not left & {"RSM301", "RSM302", "RSM104", "RSM106"}, left
    again = fix_text(after, kind, _config(release, gpu), unsafe=unsafe)
    assert again.text == after  # a second run changes nothing


@pytest.mark.parametrize("text", [
    # an explicit extra_buffer, a backend the user chose, the RFC name SGLang reads as the spec flag:
    # changing them changes what runs
    f"{SERVE} --enable-linear-replayssm --mamba-radix-cache-strategy extra_buffer\n",
    f"{SERVE} --enable-linear-replayssm {OFF} --linear-attn-decode-backend cutedsl\n",
])
def test_unsafe_fixes_wait_for_unsafe(text):
    assert fix_text(text, "shell", _config("0.5.23")).text == text
    assert fix_text(text, "shell", _config("0.5.23"), unsafe=True).text != text


def test_rfc_name_read_as_spec_flag_is_unsafe():
    text = f"{SERVE} --enable-gdn-replayssm {OFF}\n"
    assert fix_text(text, "shell", _config("0.5.18")).text == text
    assert fix_text(text, "shell", _config("0.5.18"), unsafe=True).text == \
        f"{SERVE} --enable-linear-replayssm {OFF}\n"


def test_no_fix_for_what_only_the_user_can_decide():
    for text in (f"{SERVE} --enable-linear-replayssm {OFF} --disaggregation-mode prefill\n",
                 "sglang serve --model-path meta-llama/Llama-3.1-8B-Instruct --enable-linear-replayssm\n",
                 f"{SERVE} --enable-linear-replayssm {OFF} --page-size 64 --mamba-radix-cache-strategy no_buffer\n"):
        assert fix_text(text, "shell", _config("0.5.23"), unsafe=True).text == text


def test_release_without_replayssm_is_left_alone():
    text = f"{SERVE} --enable-linear-replayssm\n"
    assert fix_text(text, "shell", _config("0.5.14"), unsafe=True).text == text
