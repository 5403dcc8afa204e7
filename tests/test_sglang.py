"""SGLang launches: every code, failing and passing, per release family, in four file forms.

One launch is written as ``sglang serve`` in a shell script, as ``sgl.Engine(...)``
keywords in Python, as an SGLang ``--config`` YAML file and as a Dockerfile ``CMD`` on
the ``lmsysorg/sglang`` image of the release (whose tag then picks the release), and
must give the same verdict in all four.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from flake8_replayssm import check_source
from flake8_replayssm.config import LintConfig

QWEN_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
KIMI = "moonshotai/Kimi-Linear-48B-A3B-Instruct"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
NEMOTRON_H = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FORMS = ("shell", "python", "yaml", "dockerfile")


@dataclass
class Case:
    name: str
    release: str
    options: dict[str, Any]
    expect: str | None  # the code that must be reported; None: no error or warning
    model: str = QWEN_NEXT
    gpu: str | None = None
    forms: tuple[str, ...] = FORMS
    absent: tuple[str, ...] = field(default_factory=tuple)  # codes that must not be reported


def render(case: Case, form: str) -> tuple[str, str]:
    """(text, kind) of the case's launch written as ``form``."""
    opts = case.options
    if form == "python":
        items = [f"model_path={case.model!r}"] + [f"{k}={v!r}" for k, v in opts.items()]
        return f"import sglang as sgl\n\nengine = sgl.Engine({', '.join(items)})\n", "python"
    argv = ["--model-path", case.model]
    for key, value in opts.items():
        flag = "--" + key.replace("_", "-")
        argv += [flag] if value is True else [flag, str(value)]
    if form == "shell":
        return "#!/bin/bash\nsglang serve " + " ".join(argv) + "\n", "shell"
    if form == "yaml":
        lines = [f"model-path: {case.model}"] + [
            f"{k.replace('_', '-')}: {json.dumps(v)}" for k, v in opts.items()]
        return "\n".join(lines) + "\n", "yaml"
    words = ["python3", "-m", "sglang.launch_server", *argv]
    return f"FROM lmsysorg/sglang:v{case.release}-cu129\nCMD {json.dumps(words)}\n", "dockerfile"


OFF = {"disable_overlap_schedule": True}
REPLAY = {"enable_linear_replayssm": True}

CASES = [
    # RSM302: `auto` under the overlap scheduler is extra_buffer (Kimi Linear only from 0.5.16)
    Case("default-strategy", "0.5.15", dict(REPLAY), "RSM302"),
    Case("default-strategy", "0.5.23", dict(REPLAY), "RSM302"),
    Case("kimi-default", "0.5.15", dict(REPLAY), None, model=KIMI),
    Case("kimi-default", "0.5.16", dict(REPLAY), "RSM302", model=KIMI),
    Case("overlap-off", "0.5.19", {**REPLAY, **OFF}, None),
    Case("radix-off", "0.5.21", {**REPLAY, "disable_radix_cache": True}, None),
    Case("explicit-extra", "0.5.18", {**REPLAY, **OFF, "mamba_radix_cache_strategy": "extra_buffer"}, "RSM302"),
    # RSM305: following R2's advice literally
    Case("explicit-no-buffer", "0.5.17", {**REPLAY, "mamba_radix_cache_strategy": "no_buffer"}, "RSM305"),
    Case("explicit-no-buffer-off", "0.5.17", {**REPLAY, **OFF, "mamba_radix_cache_strategy": "no_buffer"}, None),
    Case("no-buffer-pages", "0.5.22", {**REPLAY, **OFF, "mamba_radix_cache_strategy": "no_buffer", "page_size": 64},
         "RSM305", gpu="hopper"),
    Case("auto-pages", "0.5.22", {**REPLAY, **OFF, "page_size": 64}, "RSM302", gpu="hopper"),
    # RSM301: the decode backend, and SGLang's Blackwell switch (S1) and Kimi's exemption (S2)
    Case("flashinfer-decode", "0.5.16", {**REPLAY, **OFF, "linear_attn_decode_backend": "flashinfer"}, "RSM301"),
    Case("triton-decode", "0.5.16", {**REPLAY, **OFF, "linear_attn_decode_backend": "triton"}, None),
    Case("blackwell-bf16", "0.5.20", {**REPLAY, **OFF, "mamba_ssm_dtype": "bfloat16"}, "RSM301", gpu="blackwell"),
    Case("hopper-bf16", "0.5.20", {**REPLAY, **OFF, "mamba_ssm_dtype": "bfloat16"}, None, gpu="hopper"),
    # unset GPU: judged on both, reported where it fails (test_an_unset_gpu_names_where_it_fails)
    Case("either-gpu-bf16", "0.5.20", {**REPLAY, **OFF, "mamba_ssm_dtype": "bfloat16"}, "RSM301"),
    Case("blackwell-bf16-pinned", "0.5.20",
         {**REPLAY, **OFF, "mamba_ssm_dtype": "bfloat16", "linear_attn_decode_backend": "triton"}, None,
         gpu="blackwell"),
    Case("kimi-blackwell", "0.5.16", {**REPLAY, **OFF, "mamba_ssm_dtype": "bfloat16"}, "RSM301", model=KIMI,
         gpu="blackwell"),
    Case("kimi-blackwell", "0.5.17", {**REPLAY, **OFF, "mamba_ssm_dtype": "bfloat16"}, None, model=KIMI,
         gpu="blackwell"),
    Case("helion-kda", "0.5.18", {**REPLAY, **OFF, "linear_attn_decode_backend": "helion"}, None, model=KIMI),
    Case("helion-before", "0.5.17", {**REPLAY, **OFF, "linear_attn_decode_backend": "helion"}, "RSM104",
         model=KIMI, forms=("shell", "yaml", "dockerfile")),
    # a keyword is not checked against argparse's choices: SGLang's R1 refuses it
    Case("helion-before", "0.5.17", {**REPLAY, **OFF, "linear_attn_decode_backend": "helion"}, "RSM301",
         model=KIMI, forms=("python",)),
    # RSM303, RSM304
    Case("pd-decode", "0.5.19", {**REPLAY, **OFF, "disaggregation_mode": "decode"}, "RSM303"),
    Case("pd-none", "0.5.19", {**REPLAY, **OFF, "disaggregation_mode": "null"}, None),
    Case("cache-len-0", "0.5.15", {**REPLAY, **OFF, "linear_replayssm_cache_len": 0}, "RSM304"),
    Case("cache-len-1", "0.5.15", {**REPLAY, **OFF, "linear_replayssm_cache_len": 1}, None),
    # RSM306: the spec-verify variant
    Case("spec-and-decode", "0.5.17", {**REPLAY, **OFF, "enable_linear_replayssm_spec": True}, "RSM306"),
    Case("spec-alone", "0.5.17", {**OFF, "enable_linear_replayssm_spec": True}, None),
    Case("gdn-spec-and-decode", "0.5.16", {**REPLAY, **OFF, "enable_gdn_replayssm_spec": True}, "RSM306"),
    Case("gdn-spec-dtype", "0.5.16", {**OFF, "enable_gdn_replayssm_spec": True, "mamba_ssm_dtype": "bfloat16"},
         "RSM306"),
    # RSM307 (0.5.21+) against RSM302 before
    Case("dense-extra", "0.5.21", {**REPLAY, "mamba_radix_cache_strategy": "extra_buffer"}, "RSM307", model=LLAMA,
         absent=("RSM302",)),
    Case("dense-extra", "0.5.20", {**REPLAY, "mamba_radix_cache_strategy": "extra_buffer"}, "RSM302", model=LLAMA,
         absent=("RSM307",)),
    # RSM308: accepted without effect
    Case("dense", "0.5.23", dict(REPLAY), "RSM308", model=LLAMA),
    Case("mamba2", "0.5.23", {**REPLAY, **OFF}, "RSM308", model=NEMOTRON_H, gpu="hopper"),
    Case("unified-memory", "0.5.18", {**REPLAY, **OFF, "enable_unified_memory": True, "attention_backend": "triton"},
         "RSM308"),
    # RSM309: unified memory's page-major layout needs triton attention up to 0.5.18 (never "no effect" then)
    Case("unified-memory-default-attention", "0.5.18", {**REPLAY, **OFF, "enable_unified_memory": True}, "RSM309",
         gpu="hopper", absent=("RSM308",)),
    Case("cpu", "0.5.18", {**REPLAY, **OFF, "device": "cpu"}, "RSM308"),
    # RSM104: a release before the flag, a flag before its release
    Case("before-replayssm", "0.5.14", {**REPLAY, **OFF}, "RSM104", forms=("shell", "python", "dockerfile")),
    Case("spec-too-early", "0.5.16", {**OFF, "enable_linear_replayssm_spec": True}, "RSM104"),
]


PARAMS = [(case, form) for case in CASES for form in case.forms]


@pytest.mark.parametrize("case,form", PARAMS, ids=[f"{c.name}-{c.release}-{f}" for c, f in PARAMS])
def test_verdict_per_form(case, form):
    text, kind = render(case, form)
    version = {} if form == "dockerfile" else {"sglang_version": case.release}
    codes = {f.code for f in check_source(text, kind, config=LintConfig(gpu=case.gpu, **version))}
    if case.expect is None:
        assert not codes - {"RSM201"}, (text, codes)
    else:
        assert case.expect in codes, (text, codes)
    assert not codes & set(case.absent), (text, codes)


def test_yaml_null_is_the_text_none():
    """SGLang turns a YAML value into ``--key str(value)``: ``null`` is the choice 'None'."""
    text = f"model-path: {QWEN_NEXT}\nenable-linear-replayssm: true\ndisable-overlap-schedule: true\n" \
           "disaggregation-mode: null\n"
    findings = check_source(text, "yaml", config=LintConfig(sglang_version="0.5.19"))
    assert [f.code for f in findings] == ["RSM106"]
    assert "invalid choice: 'None'" in findings[0].message


def _codes(text: str, kind: str, release: str | None = "0.5.23", **settings) -> list[str]:
    config = LintConfig(sglang_version=release, **settings)
    return sorted(f.code for f in check_source(text, kind, config=config))


PYTHON_LAUNCHES = [
    # the Engine under every import spelling
    f"from sglang import Engine\nEngine(model_path={QWEN_NEXT!r}, enable_linear_replayssm=True)\n",
    f"import sglang\nsglang.Engine(model_path={QWEN_NEXT!r}, enable_linear_replayssm=True)\n",
    f"from sglang import Engine as E\nE(model_path={QWEN_NEXT!r}, enable_linear_replayssm=True)\n",
    # ServerArgs, its model positional; Engine(server_args=...) is judged at the ServerArgs
    f"import sglang as sgl\nfrom sglang.srt.server_args import ServerArgs\n"
    f"args = ServerArgs({QWEN_NEXT!r}, enable_linear_replayssm=True)\nengine = sgl.Engine(server_args=args)\n",
    # keywords from a same-module dict
    f"import sglang as sgl\nCFG = dict(model_path={QWEN_NEXT!r}, enable_linear_replayssm=True)\n"
    "engine = sgl.Engine(**CFG)\n",
    # argv lists and command strings handed to a process
    f"import subprocess\nsubprocess.Popen(['python3', '-m', 'sglang.launch_server', '--model-path', "
    f"{QWEN_NEXT!r}, '--enable-linear-replayssm'])\n",
    f"import os\nos.system('sglang serve {QWEN_NEXT} --enable-linear-replayssm')\n",
]


@pytest.mark.parametrize("text", PYTHON_LAUNCHES)
def test_python_launch_forms(text):
    assert _codes(text, "python") == ["RSM302"]


def test_python_keywords_per_release():
    spec = f"import sglang as sgl\nsgl.Engine(model_path={QWEN_NEXT!r}, enable_gdn_replayssm_spec=True)\n"
    assert _codes(spec, "python", "0.5.16") == []
    assert _codes(spec, "python", "0.5.17") == ["RSM104"]  # TypeError: not a ServerArgs field any more
    old = f"import sglang as sgl\nsgl.Engine(model_path={QWEN_NEXT!r}, enable_linear_replayssm=True,\n" \
          "                    disable_overlap_schedule=True)\n"
    assert _codes(old, "python", "0.5.14") == ["RSM104"]
    rfc = f"import sglang as sgl\nsgl.Engine(model_path={QWEN_NEXT!r}, enable_gdn_replayssm=True)\n"
    findings = check_source(rfc, "python", config=LintConfig(sglang_version="0.5.23"))
    assert [f.code for f in findings] == ["RSM104"] and "did you mean enable_linear_replayssm=" in findings[0].message


def test_python_not_a_launch():
    # another library's Engine, and ServerArgs fields as plain data, are not launches
    assert _codes("from sqlalchemy import Engine\nEngine(enable_linear_replayssm=True)\n", "python") == []
    assert _codes("args = dict(enable_linear_replayssm=True)  # replayssm\n", "python") == []


def test_compose_and_kubernetes():
    compose = """services:
  sglang:
    image: lmsysorg/sglang:v0.5.16-cu129
    entrypoint: python3 -m sglang.launch_server
    command: --model-path moonshotai/Kimi-Linear-48B-A3B-Instruct --enable-linear-replayssm
"""
    assert _codes(compose, "yaml", release=None) == ["RSM302"]
    assert _codes(compose.replace("v0.5.16", "v0.5.15"), "yaml", release=None) == []
    k8s = f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: sglang}}
spec:
  template:
    spec:
      containers:
      - name: sglang
        image: lmsysorg/sglang:v0.5.23-cu129
        command: ["python3", "-m", "sglang.launch_server"]
        args: ["--model-path", "{QWEN_NEXT}", "--enable-linear-replayssm",
               "--mamba-radix-cache-strategy", "no_buffer"]
"""
    assert _codes(k8s, "yaml", release=None) == ["RSM305"]


def test_markdown_and_notebook():
    md = f"# Serving\n\n```bash\nsglang serve {QWEN_NEXT} --enable-linear-replayssm\n```\n"
    assert _codes(md, "markdown") == ["RSM302"]
    cell = f"!python -m sglang.launch_server --model-path {QWEN_NEXT} --enable-linear-replayssm\n"
    notebook = json.dumps({"cells": [{"cell_type": "code", "source": [cell], "metadata": {}, "outputs": [],
                                      "execution_count": None}],
                           "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    assert _codes(notebook, "notebook") == ["RSM302"]


def test_config_file_of_a_launch(tmp_path):
    (tmp_path / "replay.yaml").write_text("enable-linear-replayssm: true\nmamba-radix-cache-strategy: no_buffer\n")
    script = tmp_path / "serve.sh"
    script.write_text(f"sglang serve --model-path {QWEN_NEXT} --config replay.yaml\n")
    findings = check_source(script.read_text(), "shell", path=str(script),
                            config=LintConfig(sglang_version="0.5.23"))
    assert [f.code for f in findings] == ["RSM305"]
    assert findings[0].span.source == str(tmp_path / "replay.yaml")  # reported at the key in the file
    script.write_text(f"sglang serve --model-path {QWEN_NEXT} --config replay.yaml --disable-overlap-schedule\n")
    assert check_source(script.read_text(), "shell", path=str(script),
                        config=LintConfig(sglang_version="0.5.23")) == []
    script.write_text(f"sglang serve --model-path {QWEN_NEXT} --config=replay.yaml\n")
    assert [f.code for f in check_source(script.read_text(), "shell", path=str(script),
                                         config=LintConfig(sglang_version="0.5.23"))] == ["RSM101"]


def test_yaml_underscore_keys_are_flags_sglang_rejects():
    text = f"model-path: {QWEN_NEXT}\nenable_linear_replayssm: true\n"
    findings = check_source(text, "yaml", config=LintConfig(sglang_version="0.5.23"))
    assert [f.code for f in findings] == ["RSM106"]
    # a false store_true key is left out, whatever its spelling
    text = f"model-path: {QWEN_NEXT}\nenable-linear-replayssm: true\ndisable_overlap_schedule: false\n"
    assert _codes(text, "yaml") == ["RSM302"]


def test_vllm_serve_configs_stay_vllm():
    text = "model: nvidia/NVIDIA-Nemotron-Nano-9B-v2\nuse-replayssm: true\nmamba-backend: flashinfer\n" \
           "enable-prefix-caching: false\n"
    assert "RSM102" in _codes(text, "yaml", release=None, vllm_version="0.33.0")
