"""YAML frontend: Kubernetes, compose, GitHub Actions, Helm values, serve configs."""

from __future__ import annotations


import pytest

from flake8_replayssm.engines.vllm.config_file import is_serve_config
from flake8_replayssm.frontends.structured import commands_in_yaml
from conftest import raw, texts
from flake8_replayssm.model import Command


def placed(text: str, command: Command) -> dict[str | None, tuple[int, str]]:
    return {w.text: (w.span.line, raw(text, w.span)) for w in command.words}


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nano
spec:
  template:
    spec:
      initContainers:
        - name: fetch
          image: busybox
          command: ["sh", "-c", "echo hi"]
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.33.0
          args:
            - --model
            - "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
            - --use-replayssm
            - '--max-model-len'
            - 32768
          env:
            - name: VLLM_USE_V2_MODEL_RUNNER
              value: "1"
            - name: HF_TOKEN
              valueFrom:
                secretKeyRef: {name: hf, key: token}
---
apiVersion: v1
kind: Service
metadata: {name: nano}
spec:
  ports: [{port: 80}]
"""


def test_kubernetes_args_block_list_spans_env_and_image(recording_shell):
    commands = commands_in_yaml(DEPLOYMENT)
    cmd = next(c for c in commands if c.image)
    assert cmd.image == "vllm/vllm-openai:v0.33.0"
    assert texts(cmd) == ["--model", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "--use-replayssm",
                          "--max-model-len", "32768"]
    where = placed(DEPLOYMENT, cmd)
    assert where["--use-replayssm"] == (18, "--use-replayssm")
    assert where["nvidia/NVIDIA-Nemotron-Nano-9B-v2"] == (17, '"nvidia/NVIDIA-Nemotron-Nano-9B-v2"')
    assert where["--max-model-len"] == (19, "'--max-model-len'")
    assert cmd.env["VLLM_USE_V2_MODEL_RUNNER"].text == "1"
    assert cmd.env["VLLM_USE_V2_MODEL_RUNNER"].span.line == 23
    assert cmd.env["HF_TOKEN"].text is None  # valueFrom: set, value unknown
    # the init container's sh -c script went to the shell frontend
    assert recording_shell[0][0] == "echo hi"


def test_kubernetes_sh_c_with_folded_args_maps_every_word_to_its_line(recording_shell):
    text = """\
spec:
  containers:
    - name: vllm
      image: vllm/vllm-openai:v0.30.0
      command: ["/bin/sh", "-c"]
      args:
        - >
          vllm serve nvidia/Nemotron-H-8B-Base-8K
          --use-replayssm
          --mamba-backend flashinfer
      env:
        - {name: MODEL_DIR, value: /models}
"""
    [cmd] = commands_in_yaml(text)
    [(script, variables)] = recording_shell
    assert script == ("vllm serve nvidia/Nemotron-H-8B-Base-8K --use-replayssm "
                      "--mamba-backend flashinfer\n")
    assert variables == {"MODEL_DIR": "/models"}
    where = placed(text, cmd)
    assert where["vllm"] == (8, "vllm")
    assert where["--use-replayssm"] == (9, "--use-replayssm")
    assert where["flashinfer"] == (10, "flashinfer")
    assert cmd.image == "vllm/vllm-openai:v0.30.0"
    assert cmd.env["MODEL_DIR"].text == "/models"


def test_kubernetes_literal_block_and_double_quoted_script(recording_shell):
    text = """\
containers:
  - name: a
    image: vllm/vllm-openai:v0.30.0
    command:
      - bash
      - -lc
      - |
        export X=1
        vllm serve m --use-replayssm
  - name: b
    image: vllm/vllm-openai:v0.30.0
    command: ["sh", "-c", "vllm serve m \\
      --use-replayssm --kv \\"j\\""]
"""
    first, second = commands_in_yaml(text)
    assert placed(text, first)["--use-replayssm"] == (9, "--use-replayssm")
    assert recording_shell[1][0] == 'vllm serve m --use-replayssm --kv "j"'
    assert placed(text, second)["--use-replayssm"] == (13, "--use-replayssm")
    assert placed(text, second)["vllm"] == (12, "vllm")


def test_kubernetes_command_plus_args_is_full_argv_and_var_refs_expand():
    text = """\
containers:
  - name: kserve
    image: kserve/vllmserver:latest
    command: [python, -m, vllm.entrypoints.openai.api_server]
    args: ["--model=$(MODEL)", "--use-replayssm", "--port", "$(PORT)", "--x", "$$(LIT)"]
    env:
      - name: MODEL
        value: nvidia/Nemotron-H-8B-Base-8K
"""
    [cmd] = commands_in_yaml(text)
    assert texts(cmd) == ["python", "-m", "vllm.entrypoints.openai.api_server",
                          "--model=nvidia/Nemotron-H-8B-Base-8K", "--use-replayssm", "--port",
                          "$(PORT)", "--x", "$(LIT)"]
    assert cmd.image is None  # not vLLM's image: its entrypoint is replaced anyway
    assert cmd.words[3].span.line == 5


def test_compose_list_environment_and_string_command_spans():
    text = """\
services:
  nano:
    image: vllm/vllm-openai:v0.32.0
    env_file: .env
    environment:
      - VLLM_USE_V2_MODEL_RUNNER=0
      - HF_TOKEN
    command: --model nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm --mamba-backend "flashinfer"
"""
    [cmd] = commands_in_yaml(text)
    assert texts(cmd) == ["--model", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "--use-replayssm",
                          "--mamba-backend", "flashinfer"]
    where = placed(text, cmd)
    assert where["--use-replayssm"] == (8, "--use-replayssm")
    assert where["flashinfer"] == (8, '"flashinfer"')
    assert cmd.env["VLLM_USE_V2_MODEL_RUNNER"].text == "0"
    assert raw(text, cmd.env["VLLM_USE_V2_MODEL_RUNNER"].span) == "0"
    assert cmd.env["HF_TOKEN"].text is None
    assert cmd.env_open_ended is True
    assert cmd.image == "vllm/vllm-openai:v0.32.0"


def test_compose_map_environment_folded_command_and_interpolation():
    text = """\
x-vllm: &vllm
  image: vllm/vllm-openai:v0.31.0
services:
  a:
    <<: *vllm
    environment:
      VLLM_USE_V2_MODEL_RUNNER: "0"
      TOKEN: ${HF_TOKEN}
      EMPTY:
    command: >
      --model ${MODEL:-nvidia/Nemotron-H-8B-Base-8K}
      --use-replayssm
      --port ${PORT}
"""
    [cmd] = commands_in_yaml(text)
    assert texts(cmd) == ["--model", "nvidia/Nemotron-H-8B-Base-8K", "--use-replayssm",
                          "--port", None]
    assert cmd.image == "vllm/vllm-openai:v0.31.0"  # through the merge key
    assert [w.span.line for w in cmd.words] == [11, 11, 12, 13, 13]
    assert {k: v.text for k, v in cmd.env.items()} == {
        "VLLM_USE_V2_MODEL_RUNNER": "0", "TOKEN": None, "EMPTY": None}
    assert cmd.env_open_ended is False


def test_compose_entrypoint_sh_c_goes_to_the_shell(recording_shell):
    text = """\
services:
  a:
    image: vllm/vllm-openai:v0.32.0
    entrypoint: ["/bin/sh", "-c"]
    command: ["vllm serve $${MODEL} --use-replayssm --port ${PORT:-8000}"]
    environment:
      MODEL: nvidia/Nemotron-H-8B-Base-8K
"""
    [cmd] = commands_in_yaml(text)
    [(script, variables)] = recording_shell
    assert script == "vllm serve ${MODEL} --use-replayssm --port 8000"
    assert variables == {"MODEL": "nvidia/Nemotron-H-8B-Base-8K"}
    where = placed(text, cmd)
    assert where["${MODEL}"] == (5, "${MODEL}")
    assert where["8000"] == (5, "8000")
    assert cmd.image == "vllm/vllm-openai:v0.32.0"


def test_github_actions_run_block_env_levels_and_expressions(recording_shell):
    text = """\
name: smoke
on: [push]
env:
  VLLM_USE_V2_MODEL_RUNNER: "0"
jobs:
  serve:
    runs-on: ubuntu-latest
    env:
      MODEL: nvidia/NVIDIA-Nemotron-Nano-9B-v2
    steps:
      - uses: actions/checkout@v4
      - env:
          TOKEN: ${{ secrets.HF }}
        run: |
          vllm serve "$MODEL" --use-replayssm \\
            --port ${{ matrix.port }}
      - shell: python
        run: print("vllm serve x --use-replayssm")
"""
    [cmd] = commands_in_yaml(text)
    [(script, variables)] = recording_shell  # the python step is not shell
    assert "${{" not in script and len(script.split("\n")[1]) == len("  --port ${{ matrix.port }}")
    assert variables == {"VLLM_USE_V2_MODEL_RUNNER": "0", "MODEL": "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
                         "TOKEN": None}
    where = placed(text, cmd)
    assert where["--use-replayssm"] == (15, "--use-replayssm")
    assert where["--port"] == (16, "--port")
    assert cmd.env["TOKEN"].text is None
    assert cmd.env["MODEL"].span.line == 9


def test_helm_values_extra_args_with_image_repository_and_tag():
    text = """\
image:
  repository: vllm/vllm-openai
  tag: v0.33.0
replicaCount: 1
extraArgs:
  - --model
  - nvidia/NVIDIA-Nemotron-Nano-9B-v2
  - --use-replayssm
unrelated: [a, b]
"""
    [cmd] = commands_in_yaml(text)
    assert texts(cmd) == ["--model", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "--use-replayssm"]
    assert cmd.image == "vllm/vllm-openai:v0.33.0"
    assert cmd.words[2].span.line == 8


def test_helm_values_without_image_and_production_stack_model_spec():
    text = """\
vllm:
  args: ["--model", "m", "--use-replayssm"]
servingEngineSpec:
  modelSpec:
    - name: nano
      repository: lmcache/vllm-openai
      tag: v0.3.1
      modelURL: nvidia/Nemotron-H-8B-Base-8K
      vllmConfig:
        enablePrefixCaching: true
        extraArgs: ["--use-replayssm", "--mamba-backend", "flashinfer"]
"""
    first, second = commands_in_yaml(text)
    assert first.image == "vllm/vllm-openai"
    assert texts(first) == ["--model", "m", "--use-replayssm"]
    assert second.image == "vllm/vllm-openai"  # lmcache's tag is not a vLLM release
    assert texts(second) == ["nvidia/Nemotron-H-8B-Base-8K", "--enable-prefix-caching",
                             "--use-replayssm", "--mamba-backend", "flashinfer"]
    assert [w.span.line for w in second.words] == [8, 10, 11, 11, 11]


def test_serve_config_is_recognised_and_not_a_command():
    config = ("model: nvidia/Nemotron-H-8B-Base-8K\nuse-replayssm: true\n"
              "enable-prefix-caching: false\nport: 8000\n")
    assert is_serve_config(config)
    assert commands_in_yaml(config) == []
    assert is_serve_config("tensor_parallel_size: 2\nmax_model_len: 4096\n")


@pytest.mark.parametrize("text", [
    DEPLOYMENT,
    "services:\n  a:\n    image: vllm/vllm-openai\n    command: [--model, m]\n",
    "jobs:\n  a:\n    steps: [{run: vllm serve m}]\n",
    "model: gpt2\nport: 8000\nbatch_size: 4\n",  # generic keys only
    "replicaCount: 1\nmodel: x\nimage: {repository: vllm/vllm-openai}\nuse-replayssm: true\n",
    "- model: x\n",
    "[unclosed",
    "",
])
def test_other_yaml_is_not_a_serve_config(text):
    assert not is_serve_config(text)


def test_multi_document_file_and_unparsable_yaml():
    text = ("kind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.30.0\n"
            "    args: [--model, a, --use-replayssm]\n---\n"
            "kind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.31.0\n"
            "    args: [--model, b]\n")
    assert [c.image for c in commands_in_yaml(text)] == ["vllm/vllm-openai:v0.30.0",
                                                         "vllm/vllm-openai:v0.31.0"]
    for bad in ["key: [unclosed", "a: b: c", "\x00\x01", "!!python/object:os.system x",
                "? [a]\n: b\n", "a: &x [*x]\n"]:
        assert isinstance(commands_in_yaml(bad), list)
    assert commands_in_yaml("key: [unclosed") == []


def test_real_shell_and_end_to_end_launch():
    pytest.importorskip("tree_sitter_bash")
    from flake8_replayssm.recognise import launch_from_command

    text = """\
containers:
  - name: vllm
    image: vllm/vllm-openai:v0.30.0
    command: ["/bin/sh", "-c"]
    args:
      - >-
        VLLM_USE_V2_MODEL_RUNNER=0 vllm serve nvidia/Nemotron-H-8B-Base-8K
        --use-replayssm
        --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
"""
    [cmd] = commands_in_yaml(text)
    launch = launch_from_command(cmd)
    assert launch is not None
    assert launch.model is not None and launch.model.value == "nvidia/Nemotron-H-8B-Base-8K"
    assert launch.options["use_replayssm"].span.line == 8
    assert launch.options["kv_transfer_config"].value["kv_connector"] == "NixlConnector"
    assert launch.release_hint == "0.30.0"
    assert launch.env["VLLM_USE_V2_MODEL_RUNNER"].value == "0"


def test_ci_scripts_gitlab_skypilot_and_job_images(recording_shell):
    gitlab = """\
variables:
  VLLM_USE_V2_MODEL_RUNNER: "0"
smoke:
  stage: test
  image: vllm/vllm-openai:v0.31.0
  variables:
    MODEL: nvidia/NVIDIA-Nemotron-Nano-9B-v2
  script:
    - pip list
    - vllm serve $MODEL --use-replayssm
"""
    [cmd] = commands_in_yaml(gitlab)
    assert recording_shell[-1] == ("pip list\nvllm serve $MODEL --use-replayssm\n",
                                   {"VLLM_USE_V2_MODEL_RUNNER": "0",
                                    "MODEL": "nvidia/NVIDIA-Nemotron-Nano-9B-v2"})
    assert placed(gitlab, cmd)["--use-replayssm"] == (10, "--use-replayssm")
    assert cmd.image == "vllm/vllm-openai:v0.31.0"

    sky = """\
envs:
  MODEL_NAME: nvidia/Nemotron-H-8B-Base-8K
resources: {accelerators: "A100:1"}
run: |
  vllm serve $MODEL_NAME \\
    --use-replayssm
"""
    commands = commands_in_yaml(sky)
    assert recording_shell[-1][1] == {"MODEL_NAME": "nvidia/Nemotron-H-8B-Base-8K"}
    assert placed(sky, commands[-1])["--use-replayssm"] == (6, "--use-replayssm")
    assert commands[-1].env["MODEL_NAME"].span.line == 2
