"""Launches written the way real repositories write them (issue 8, DESIGN.md "Conventions").

Each case is a minimal launch of a form seen in public repositories; the assertion is the
exact (line, code) set the linter must report for it, so a form that stops being found,
or a value that stops being read, fails here.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from flake8_replayssm import check_source
from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FALCON = "tiiuae/Falcon-H1-1.5B-Instruct"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def found(text: str, kind: str = "shell", release: str = "0.33.0", **config) -> list[tuple[int, str]]:
    cfg = LintConfig(vllm_version=release, **config)
    findings = check_source(textwrap.dedent(text).lstrip("\n"), kind, config=cfg)
    return sorted((f.span.line, f.code) for f in findings)


def messages(text: str, kind: str = "shell", release: str = "0.33.0", **config) -> dict[str, str]:
    cfg = LintConfig(vllm_version=release, **config)
    return {f.code: f.message for f in check_source(textwrap.dedent(text).lstrip("\n"), kind, config=cfg)}


# -- judge what is written: unseen extra arguments -------------------------------------------
@pytest.mark.parametrize("launch,label", [
    (f'vllm serve {NANO} --use-replayssm "$@"', '"$@"'),
    (f"vllm serve {NANO} --use-replayssm $*", "$*"),
    (f"vllm serve {NANO} --use-replayssm $EXTRA_ARGS", "$EXTRA_ARGS"),
    (f"vllm serve {NANO} --use-replayssm ${{VLLM_ARGS:-}}", "${VLLM_ARGS:-}"),
    (f'vllm serve {NANO} --use-replayssm ${{SPEC:+--speculative-config "$SPEC"}}',
     '${SPEC:+--speculative-config "$SPEC"}'),
    # an array's unseen element is named as its assignment wrote it
    (f'ARGS=("$@")\nvllm serve {NANO} --use-replayssm "${{ARGS[@]}}"', '"$@"'),
    (f'ARGS=(--use-replayssm)\nARGS+=("$@")\nvllm serve {NANO} "${{ARGS[@]}}"', '"$@"'),
    (f'ARGS=(--use-replayssm $EXTRA_ARGS)\nvllm serve {NANO} "${{ARGS[@]}}"', '$EXTRA_ARGS'),
    (f'ARGS=(--use-replayssm "${{EXTRA[@]}}")\nvllm serve {NANO} "${{ARGS[@]}}"', '"${EXTRA[@]}"'),
])
def test_unseen_shell_arguments_add_nothing_and_the_message_says_so(launch, label):
    flag_line = launch[:launch.index("--use-replayssm")].count("\n") + 1
    assert found(launch) == [(flag_line, "RSM008")]
    assert f"assuming {label} adds no ReplaySSM option" in messages(launch)["RSM008"]
    assert found(launch, extra_args="open") == []  # the strict reading


def test_an_empty_default_is_empty_for_extra_arguments_and_unknown_for_a_value():
    extras = f"EXTRA=${{VLLM_EXTRA_ARGS:-}}\nvllm serve {NANO} --use-replayssm $EXTRA\n"
    assert found(extras) == [(2, "RSM008")]
    # as the model: unknown, so only what holds for every architecture (not RSM001)
    assert found("vllm serve ${MODEL:-} --use-replayssm\n") == [(1, "RSM008")]
    assert found("vllm serve ${MODEL:-} --use-replayssm\n", "shell", "0.28.0") == []
    dockerfile = """
    FROM vllm/vllm-openai:v0.33.0
    ARG MODEL_NAME=
    ENTRYPOINT python3 -m vllm.entrypoints.openai.api_server --model $MODEL_NAME --use-replayssm
    """
    assert found(dockerfile, "dockerfile") == [(3, "RSM008")]


@pytest.mark.parametrize("source,label", [
    (f'from vllm import LLM\ndef run(extra):\n    return LLM("{NANO}", use_replayssm=True, **extra)\n',
     "**extra"),
    (f'from vllm import LLM\ndef run(*a):\n    return LLM("{NANO}", *a, use_replayssm=True)\n', "*a"),
    (f'import subprocess\ndef run(extra):\n'
     f'    subprocess.run(["vllm", "serve", "{NANO}", "--use-replayssm"] + extra)\n',
     "extra"),
])
def test_unseen_python_arguments_add_nothing(source, label):
    assert found(source, "python") == [(3, "RSM008")]
    assert f"assuming {label} adds no ReplaySSM option" in messages(source, "python")["RSM008"]
    assert found(source, "python", extra_args="open") == []


def test_even_the_architecture_verdict_rests_on_the_assumption():
    """"$@" may hold `--no-use-replayssm` or `--hf-overrides`: an unsupported model is a sure
    failure only if the unseen part adds nothing, and the message says so."""
    text = f'vllm serve {FALCON} --use-replayssm "$@"\n'
    notes = messages(text)
    assert "assuming" in notes["RSM001"] and "assuming" in notes["RSM008"]
    assert found(text, extra_args="open") == []


# -- a variable's own default is the script's choice -----------------------------------------
@pytest.mark.parametrize("script", [
    f"MODEL=${{MODEL:-{FALCON}}}\nvllm serve $MODEL --use-replayssm\n",
    f"vllm serve ${{M:-{FALCON}}} --use-replayssm\n",
    f'vllm serve "${{MODEL_ID:-${{MODEL_NAME:-{FALCON}}}}}" --use-replayssm\n',
    # tree-sitter-bash reads `meta-llama` in a default as a variable name and a word
    "vllm serve ${M:-ibm-granite/granite-4.0-h-small} --use-replayssm\n",
])
def test_shell_defaults_are_the_model(script):
    assert [code for _, code in found(script)] == ["RSM001", "RSM008"]


@pytest.mark.parametrize("source", [
    f'import os\nfrom vllm import LLM\nLLM(model=os.environ.get("MODEL", "{FALCON}"), use_replayssm=True)\n',
    f'import os, subprocess\nsubprocess.run(["vllm", "serve", os.getenv("MODEL", "{FALCON}"), "--use-replayssm"])\n',
    f'import os\nos.system(f"vllm serve {{os.environ.get(\'MODEL\', \'{FALCON}\')}} --use-replayssm")\n',
    f'import os, subprocess\ncmd = ["vllm", "serve", os.environ.get("M", "{FALCON}"), "--use-replayssm"]\n'
    'subprocess.run(" ".join(cmd), shell=True)\n',
])
def test_python_environment_defaults_are_the_model(source):
    assert {code for _, code in found(source, "python")} == {"RSM001", "RSM008"}


# -- placeholders ----------------------------------------------------------------------------
def test_angle_placeholder_in_docs_is_an_unknown_model_not_a_redirection():
    doc = "Replace `<model>`:\n\n```bash\nvllm serve <model> --use-replayssm\n```\n"
    assert found(doc, "markdown") == [(4, "RSM008")]
    assert found(doc, "markdown", "0.29.0") == []


@pytest.mark.parametrize("launch", [
    f"python -m vllm.entrypoints.openai.api_server --model {NANO} ...",
    f"python -m vllm.entrypoints.openai.api_server --model {NANO} …",
])
def test_an_ellipsis_is_elided_arguments_not_a_positional_model(launch):
    doc = f"```bash\n{launch}\n```\n"
    assert found(doc, "markdown") == []


@pytest.mark.parametrize("model", ["{model}", "{{ .Values.model }}", "$YOUR_MODEL", "<path/to/model>"])
def test_other_placeholders_are_unknown_models(model):
    doc = f"```bash\nvllm serve '{model}' --use-replayssm\n```\n" if "{{" in model else \
        f"```bash\nvllm serve {model} --use-replayssm\n```\n"
    assert found(doc, "markdown") == [(2, "RSM008")]
    assert found(doc, "markdown", "0.28.0") == []


# -- releases before ReplaySSM ---------------------------------------------------------------
def test_an_image_before_027_makes_the_flag_rsm104(tmp_path):
    text = f"docker run --gpus all vllm/vllm-openai:v0.26.0 --model {NANO} --use-replayssm\n"
    [finding] = check_source(text, "shell")
    assert finding.code == "RSM104" and finding.release == "0.26.0"
    assert "unrecognized arguments: --use-replayssm" in finding.message


def test_a_pin_before_027_makes_the_flag_rsm104(tmp_path):
    from flake8_replayssm.cli import main

    (tmp_path / "requirements.txt").write_text("vllm==0.25.1\n")
    (tmp_path / "serve.sh").write_text(f"vllm serve {NANO} --use-replayssm --replayssm-buffer-len 8\n")
    (tmp_path / ".git").mkdir()
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["check", "--format", "json", str(tmp_path / "serve.sh")]) == 1
    [finding] = json.loads(out.getvalue())  # one finding per code: the flag comes first
    assert (finding["code"], finding["vllm_version"]) == ("RSM104", "0.25.1")


# -- one finding per code per launch ---------------------------------------------------------
def test_one_finding_per_code_per_launch():
    text = f"python -m vllm.entrypoints.openai.api_server {NANO} other/positional --port 8000\n"
    assert found(text) == [(1, "RSM103")]
    text = f"vllm serve {NANO} --use-replayssm=true --enable-prefix-caching=1\n"
    assert found(text) == [(1, "RSM008"), (1, "RSM106")]
    [rsm106] = [f for f in check_source(text, "shell", vllm_version="0.33.0") if f.code == "RSM106"]
    assert rsm106.span.col == text.index("--use-replayssm=true")  # the first place, in file order


# -- shell: command strings, wrappers, containers, other hosts -------------------------------
@pytest.mark.parametrize("script,line", [
    (f'M={NANO}\nCMD="vllm serve $M"\nCMD+=" --use-replayssm"\neval "$CMD"\n', 3),
    (f'eval "exec vllm serve {NANO} --use-replayssm"\n', 1),
    (f"vllm serve {NANO} \\\n  --use-replayssm \\", 2),  # a continuation on the last line
    (f"nsys profile -o out --trace cuda,nvtx vllm serve {NANO} --use-replayssm\n", 1),
    (f"numactl --cpunodebind=0 --membind 0 vllm serve {NANO} --use-replayssm\n", 1),
    (f"taskset -c 0-7 vllm serve {NANO} --use-replayssm\n", 1),
    (f"timeout 600 stdbuf -oL time vllm serve {NANO} --use-replayssm\n", 1),
    (f"conda run --no-capture-output -n vllm vllm serve {NANO} --use-replayssm\n", 1),
    (f"uv run --with vllm vllm serve {NANO} --use-replayssm\n", 1),
    (f"sudo -u vllm -E vllm serve {NANO} --use-replayssm\n", 1),
    (f"srun -N1 --gres gpu:1 bash -c 'vllm serve {NANO} --use-replayssm'\n", 1),
    (f"apptainer exec --nv vllm.sif vllm serve {NANO} --use-replayssm\n", 1),
    (f"python -u -m vllm.entrypoints.openai.api_server --model {NANO} --use-replayssm\n", 1),
    (f"python3 -m vllm.entrypoints.cli.main serve {NANO} --use-replayssm\n", 1),
    (f"python -m vllm.entrypoints.launchers.api_server.entry --model {NANO} --use-replayssm\n", 1),
    (f"vllm run-batch -i in.jsonl -o out.jsonl --model {NANO} --use-replayssm\n", 1),
    (f"vllm bench throughput --model {NANO} --input-len 256 --use-replayssm\n", 1),
    (f"python -m vllm.entrypoints.openai.run_batch -i in.jsonl -o out.jsonl --model {NANO} --use-replayssm\n", 1),
])
def test_launch_forms_of_shell_scripts(script, line):
    assert found(script) == [(line, "RSM008")]


@pytest.mark.parametrize("script", [
    f"docker run --gpus all nvcr.io/nvidia/pytorch:25.01-py3 bash -lc 'vllm serve {NANO} --use-replayssm'\n",
    f'podman run --rm quay.io/org/serve:1 sh -c "vllm serve {NANO} --use-replayssm"\n',
    f"docker run --gpus all nvcr.io/nvidia/pytorch:25.01-py3 vllm serve {NANO} --use-replayssm\n",
])
def test_a_new_container_runs_with_only_its_own_environment(script):
    assert found(script) == [(1, "RSM008")]
    # the caller's environment does not reach the container
    assert found("export VLLM_USE_V2_MODEL_RUNNER=0\n" + script) == [(2, "RSM008")]
    # its -e options do
    with_e = script.replace(" run ", " run -e VLLM_USE_V2_MODEL_RUNNER=0 ", 1)
    assert found(with_e) == []


def test_docker_e_name_passes_the_callers_value():
    script = (f"export VLLM_USE_V2_MODEL_RUNNER=0\n"
              f"docker run -e VLLM_USE_V2_MODEL_RUNNER img:1 vllm serve {NANO} --use-replayssm\n")
    assert found(script) == []


def test_entrypoint_bash_of_a_vllm_image_runs_the_script_with_the_image_release():
    script = (f'docker run --entrypoint bash vllm/vllm-openai:v0.30.0 -c "vllm serve {NANO} --use-replayssm '
              '--mamba-backend flashinfer --enable-prefix-caching"\n')
    [finding] = check_source(script, "shell")
    assert (finding.code, finding.release) == ("RSM002", "0.30.0")


@pytest.mark.parametrize("script", [
    f"ssh gpu1 'vllm serve {FALCON} --use-replayssm'\n",
    f"ssh -p 2222 user@gpu1 vllm serve {FALCON} --use-replayssm\n",
    f"kubectl exec -it pod-0 -c vllm -- vllm serve {FALCON} --use-replayssm\n",
    f"docker exec -it vllm-ctr vllm serve {FALCON} --use-replayssm\n",
])
def test_another_host_or_a_running_container_has_an_environment_the_file_does_not_show(script):
    # the architecture alone decides RSM001; the runner (RSM008) depends on an environment not shown,
    # which is assumed to set nothing (DESIGN.md), as the finding says
    assert found(script) == [(1, "RSM001"), (1, "RSM008")]
    assert "sets no VLLM_USE_V2_MODEL_RUNNER)" in messages(script)["RSM008"]
    assert found(script, extra_args="open") == [(1, "RSM001")]


# -- Python ----------------------------------------------------------------------------------
@pytest.mark.parametrize("source", [
    f'import subprocess\nPORT = 8000\n'
    f'subprocess.run(["vllm", "serve", "{NANO}", "--port", str(PORT), "--use-replayssm"])\n',
    f'import subprocess, sys\nsubprocess.Popen([sys.executable, "-m", "vllm.entrypoints.openai.api_server",'
    f' "--model", "{NANO}", "--use-replayssm"])\n',
    f'import shlex, subprocess\ncmd = ["vllm", "serve", "{NANO}", "--use-replayssm"]\n'
    'subprocess.run(shlex.join(cmd), shell=True)\n',
    f'import subprocess\nM = "{NANO}"\ncmd = f"vllm serve {{M}} --use-replayssm"\nsubprocess.run(cmd.split())\n',
])
def test_python_argv_forms(source):
    assert [code for _, code in found(source, "python")] == ["RSM008"]


@pytest.mark.parametrize("value", [
    'KVTransferConfig(kv_connector="NixlConnector", kv_role="kv_both")',
    'TRANSFER',
])
def test_a_kv_transfer_config_object_is_a_kv_connector(value):
    source = f'''
    from vllm import EngineArgs
    from vllm.config import KVTransferConfig
    TRANSFER = KVTransferConfig(kv_connector="NixlConnector", kv_role="kv_both")
    args = EngineArgs(model="{NANO}", use_replayssm=True, kv_transfer_config={value})
    '''
    assert ("RSM005" in {code for _, code in found(source, "python", "0.29.0")})


def test_a_config_object_from_elsewhere_is_not_read():
    source = f'''
    from vllm import EngineArgs
    from mylib import KVTransferConfig
    args = EngineArgs(model="{NANO}", use_replayssm=True,
                      kv_transfer_config=KVTransferConfig(kv_connector="X", kv_role="kv_both"))
    '''
    assert found(source, "python", "0.29.0") == []


@pytest.mark.parametrize("source,line", [
    (f'''
    from ray.serve.llm import LLMConfig
    cfg = LLMConfig(
        model_loading_config=dict(model_id="nano", model_source="{NANO}"),
        engine_kwargs=dict(use_replayssm=True, mamba_backend="flashinfer", enable_prefix_caching=True),
    )
    ''', 4),
    (f'''
    from ray.serve.llm import build_openai_app
    app = build_openai_app({{"llm_configs": [{{
        "model_loading_config": {{"model_id": "{NANO}"}},
        "engine_kwargs": {{"use_replayssm": True, "mamba_backend": "flashinfer", "enable_prefix_caching": True}},
    }}]}})
    ''', 4),
    (f'''
    from ray.serve.llm import LLMConfig, ModelLoadingConfig
    cfg = LLMConfig(
        model_loading_config=ModelLoadingConfig(model_id="nano", model_source="{NANO}"),
        engine_kwargs={{"use_replayssm": True, "mamba_backend": "flashinfer", "enable_prefix_caching": True}},
    )
    ''', 4),
])
def test_ray_serve_llm_configs(source, line):
    assert found(source, "python") == [(line, "RSM002")]


def test_ray_serve_llm_model_is_the_model_source():
    source = f'''
    from ray.serve import llm
    cfg = llm.LLMConfig(model_loading_config=dict(model_id="{NANO}", model_source="{FALCON}"),
                        engine_kwargs=dict(use_replayssm=True))
    '''
    assert "RSM001" in {code for _, code in found(source, "python")}


# -- Markdown and notebooks ------------------------------------------------------------------
def test_a_serve_config_fence_is_judged_as_a_serve_config():
    doc = textwrap.dedent(f"""
    Save as `serve.yaml`:

    ```yaml
    model: {NANO}
    use-replayssm: true
    mamba-backend: flashinfer
    ```
    """)
    assert found(doc, "markdown") == [(5, "RSM002")]


def test_notebook_markdown_cells_are_judged_like_markdown():
    nb = {"cells": [
        {"cell_type": "markdown",
         "source": ["# Serve\n", "\n", "```bash\n", f"vllm serve {NANO} --use-replayssm\n", "```\n"]},
        {"cell_type": "code", "source": ["print(1)\n"], "outputs": [], "execution_count": None, "metadata": {}},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    [finding] = check_source(json.dumps(nb), "notebook", vllm_version="0.33.0")
    assert (finding.span.cell, finding.span.line, finding.code) == (0, 4, "RSM008")


# -- YAML --------------------------------------------------------------------------------------
def test_helm_template_actions_are_unknown_values_not_a_parse_failure():
    manifest = """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: {{ include "chart.fullname" . }}
    spec:
      template:
        spec:
          containers:
            - name: vllm
              image: {{ .Values.image.repository }}:{{ .Values.image.tag }}
              command: ["vllm", "serve"]
              args:
                - {{ .Values.model }}
                - --use-replayssm
                {{- range .Values.extraArgs }}
                - {{ . | quote }}
                {{- end }}
              env:
                {{- toYaml .Values.env | nindent 16 }}
    """
    # the chart writes env: VLLM_USE_V2_MODEL_RUNNER may be there, which the finding says it assumed not
    assert found(manifest, "yaml") == [(14, "RSM008")]
    assert "sets no VLLM_USE_V2_MODEL_RUNNER)" in messages(manifest, "yaml")["RSM008"]
    assert found(manifest, "yaml", extra_args="open") == []
    with_model = manifest.replace("- {{ .Values.model }}", f"- {FALCON}")
    assert [code for _, code in found(with_model, "yaml")] == ["RSM001", "RSM008"]
    assert found(with_model, "yaml", extra_args="open") == []  # {{ range .Values.extraArgs }}: anything
    literal_env = with_model.replace("{{- toYaml .Values.env | nindent 16 }}", "- {name: A, value: b}")
    assert [code for _, code in found(literal_env, "yaml")] == ["RSM001", "RSM008"]
    assert "assuming {{ . | quote }} adds no ReplaySSM option" in messages(literal_env, "yaml")["RSM008"]
    assert "RSM008" not in [code for _, code in found(literal_env, "yaml", extra_args="open")]


@pytest.mark.parametrize("manifest,line", [
    # a container without image: (a kustomize patch), an initContainer, a LeaderWorkerSet leader
    (f"""
    apiVersion: apps/v1
    kind: Deployment
    spec:
      template:
        spec:
          containers:
            - name: vllm
              command: ["/bin/sh", "-c"]
              args: ["vllm serve {NANO} --use-replayssm --port 8000"]
    """, 9),
    (f"""
    apiVersion: leaderworkerset.x-k8s.io/v1
    kind: LeaderWorkerSet
    spec:
      leaderWorkerTemplate:
        leaderTemplate:
          spec:
            containers:
              - name: leader
                image: registry.local/serving:2
                command:
                  - sh
                  - -c
                  - |
                    ray start --head
                    vllm serve {NANO} --use-replayssm --tensor-parallel-size 8
    """, 15),
    (f"""
    apiVersion: batch/v1
    kind: CronJob
    spec:
      jobTemplate:
        spec:
          template:
            spec:
              initContainers:
                - name: warm
                  image: busybox
                  command: ["sh", "-c", "echo warm"]
              containers:
                - name: bench
                  image: nvcr.io/nvidia/pytorch:25.01-py3
                  command: ["bash", "-lc", "vllm bench throughput --model {NANO} --use-replayssm"]
    """, 15),
])
def test_containers_anywhere_with_or_without_an_image(manifest, line):
    assert found(manifest, "yaml") == [(line, "RSM008")]


@pytest.mark.parametrize("document,line", [
    (f"""
    type: service
    commands:
      - pip install vllm
      - vllm serve {NANO} --use-replayssm
    port: 8000
    """, 4),  # dstack
    (f"""
    apiVersion: ray.io/v1
    kind: RayJob
    spec:
      entrypoint: vllm serve {NANO} --use-replayssm
    """, 4),
    (f"""
    serving:
      customCommand: |
        vllm serve {NANO} \\
          --use-replayssm
    """, 4),  # Helm values
    (f"""
    resources:
      accelerators: H100:1
    envs:
      MODEL: {NANO}
    run: |
      vllm serve $MODEL --use-replayssm
    """, 6),  # SkyPilot
])
def test_shell_scripts_under_other_keys(document, line):
    assert found(document, "yaml") == [(line, "RSM008")]


def test_ray_serve_config_llm_configs():
    config = f"""
    applications:
      - name: llm
        import_path: ray.serve.llm:build_openai_app
        args:
          llm_configs:
            - model_loading_config:
                model_id: nano
                model_source: {NANO}
              engine_kwargs:
                use_replayssm: true
                mamba_backend: flashinfer
                enable_prefix_caching: true
    """
    assert found(config, "yaml") == [(10, "RSM002")]


def test_rayservice_serve_config_v2_string():
    manifest = f"""
    apiVersion: ray.io/v1
    kind: RayService
    spec:
      serveConfigV2: |
        applications:
          - name: llm
            import_path: ray.serve.llm:build_openai_app
            args:
              llm_configs:
                - model_loading_config:
                    model_id: {FALCON}
                  engine_kwargs:
                    tensor_parallel_size: 2
                    use_replayssm: true
    """
    assert [(line, code) for line, code in found(manifest, "yaml", "0.28.0")] == [(14, "RSM001")]


# -- finite sets of values -------------------------------------------------------------------
@pytest.mark.parametrize("script,expected", [
    # every value fails the same way: reported once, at the launch
    (f"""
    if [ "$BIG" = 1 ]; then MODEL={FALCON}; else MODEL=tiiuae/Falcon-H1-34B-Instruct; fi
    vllm serve "$MODEL" --use-replayssm
    """, [(2, "RSM001"), (2, "RSM008")]),
    # a code that holds for one value only is not reported
    (f"""
    if [ "$BIG" = 1 ]; then MODEL={FALCON}; else MODEL={NANO}; fi
    VLLM_USE_V2_MODEL_RUNNER=0 vllm serve "$MODEL" --use-replayssm
    """, []),
    (f"""
    case "$SIZE" in
      s) MODEL={NANO} ;;
      l) MODEL=nvidia/Nemotron-H-47B-Reasoning-128K ;;
      *) echo "usage: $0 s|l"; exit 1 ;;
    esac
    vllm serve $MODEL --use-replayssm --mamba-backend flashinfer --enable-prefix-caching
    """, [(6, "RSM002")]),
    # a command string grown in a branch, then evaluated
    (f"""
    CMD="vllm serve {NANO} --use-replayssm --port 8000"
    if [ -n "$MAX_LEN" ]; then
      CMD+=" --max-model-len $MAX_LEN"
    fi
    eval "$CMD"
    """, [(1, "RSM008")]),
    (f"""
    BASE="vllm serve {NANO} --use-replayssm"
    if [ -n "$SPEC" ]; then FULL="$BASE --mamba-backend flashinfer"; else FULL="$BASE --mamba-backend triton"; fi
    eval "$FULL --enable-prefix-caching"
    """, []),
    # `[ -z "$M" ] && M=x` / `if [ -z "$M" ]; then M=x; fi` is the script's own default
    (f"""
    if [ -z "$MODEL" ]; then MODEL={FALCON}; fi
    vllm serve $MODEL --use-replayssm
    """, [(2, "RSM001"), (2, "RSM008")]),
])
def test_shell_values_from_branches_are_that_set(script, expected):
    assert found(script) == expected


@pytest.mark.parametrize("script,expected", [
    # a sweep over models: the body is read once per listed word, each reading its own launch
    # (findings of several readings at one place are one finding)
    (f"""
    for m in {FALCON} tiiuae/Falcon-H1-34B-Instruct; do
      vllm serve "$m" --use-replayssm --port 8000
    done
    """, [(2, "RSM001"), (2, "RSM008")]),
    # the same through a literal array
    (f"""
    MODELS=({FALCON} tiiuae/Falcon-H1-34B-Instruct)
    for m in "${{MODELS[@]}}"; do
      VLLM_USE_V2_MODEL_RUNNER=0 vllm serve $m --use-replayssm
    done
    """, [(3, "RSM001")]),
    # a loop launches every value: the Falcon launch fails although the Nemotron-H one passes
    (f"""
    for m in {FALCON} {NANO}; do
      VLLM_USE_V2_MODEL_RUNNER=0 vllm serve $m --use-replayssm
    done
    """, [(2, "RSM001")]),
    # each value is read in the body, also through a function the body calls
    (f"""
    serve() {{ VLLM_USE_V2_MODEL_RUNNER=0 vllm serve "$1" --use-replayssm; }}
    for m in {NANO} {FALCON}; do serve "$m"; done
    """, [(1, "RSM001")]),
    # values the file does not show: the model stays unknown (no RSM001)
    ("""
    for m in "$@"; do
      VLLM_USE_V2_MODEL_RUNNER=0 vllm serve "$m" --use-replayssm
    done
    """, []),
])
def test_a_for_loop_variable_is_one_of_its_words(script, expected):
    assert found(script) == expected


@pytest.mark.parametrize("source,expected", [
    (f'''
    import sys
    from vllm import LLM
    MODEL = "{FALCON}" if len(sys.argv) > 1 else "tiiuae/Falcon-H1-34B-Instruct"
    LLM(MODEL, use_replayssm=True)
    ''', [(4, "RSM001"), (4, "RSM008")]),
    (f'''
    import sys
    from vllm import LLM
    if len(sys.argv) > 1:
        MODEL = "{FALCON}"
    else:
        MODEL = "{NANO}"
    LLM(MODEL, use_replayssm=True)
    ''', [(7, "RSM008")]),
    (f'''
    import subprocess, sys
    cmd = ["vllm", "serve", "{NANO}", "--use-replayssm"]
    if sys.argv[1:]:
        cmd += ["--mamba-backend", "flashinfer"]
    else:
        cmd.extend(["--mamba-backend", "flashinfer", "--enable-prefix-caching"])
    subprocess.run(cmd)
    ''', [(2, "RSM002")]),
    (f'''
    import subprocess, sys
    cmd = ["vllm", "serve", "{NANO}", "--use-replayssm"]
    if sys.argv[1:]:
        cmd.append("--no-enable-prefix-caching")
    cmd += ["--mamba-backend", "flashinfer"]
    subprocess.run(cmd)
    ''', []),  # fails only when the branch is not taken
    (f'''
    from vllm import LLM
    if __name__ == "__main__":
        MODEL = "{FALCON}"
        LLM(MODEL, use_replayssm=True)
    ''', [(4, "RSM001"), (4, "RSM008")]),  # the launch's own branch is taken
    (f'''
    from vllm import LLM
    MODEL = "{NANO}"
    MODEL = "{FALCON}"
    LLM(MODEL, use_replayssm=True)
    ''', [(4, "RSM001"), (4, "RSM008")]),  # straight-line reassignment: the last one
])
def test_python_values_from_branches_are_that_set(source, expected):
    assert found(source, "python") == expected


def test_values_assigned_in_a_loop_stay_unknown():
    source = f'''
    from vllm import LLM
    for MODEL in ["{FALCON}", "{NANO}"]:
        pass
    MODEL = "{FALCON}"
    for _ in range(2):
        MODEL = MODEL + "x"
    LLM(MODEL, use_replayssm=True)
    '''
    assert found(source, "python") == [(7, "RSM008")]  # only what holds for every model


# -- functions, here-documents, documents in strings -----------------------------------------
def test_a_function_is_read_at_each_call_with_its_arguments():
    script = f"""
    serve() {{
      vllm serve "$1" --use-replayssm --port "$2"
    }}
    serve {FALCON} 8000
    """
    assert found(script) == [(2, "RSM001"), (2, "RSM008")]
    passthrough = f"""
    launch() {{ docker run -d --name "$1" img:1 bash -c "$2"; }}
    launch vllm-0 'vllm serve {FALCON} --use-replayssm --port 8000'
    """
    assert found(passthrough) == [(2, "RSM001"), (2, "RSM008")]
    # never called in this file: read once, its arguments unknown
    assert found('serve() {\n  vllm serve "$1" --use-replayssm\n}\n') == [(2, "RSM008")]


@pytest.mark.parametrize("script", [
    f'VLLM=$(command -v vllm)\nnsys profile -o out "$VLLM" serve {NANO} --use-replayssm\n',
    f'$PROFILER vllm serve {NANO} --use-replayssm\n',
])
def test_the_program_through_a_variable(script):
    assert found(script) == [(2 if script.startswith("VLLM") else 1, "RSM008")]


def test_a_serve_config_written_by_a_here_document_is_the_launchs_config():
    script = textwrap.dedent(f"""\
    MODEL={NANO}
    cat > serve.yaml <<EOF
    model: $MODEL
    use-replayssm: true
    mamba-backend: flashinfer
    enable-prefix-caching: false
    EOF
    vllm serve --config serve.yaml --port 8000
    """)
    assert found(script) == [(4, "RSM002"), (6, "RSM102")]


def test_a_manifest_piped_to_kubectl_apply_is_read_as_yaml():
    script = textwrap.dedent(f"""\
    cat <<EOF | kubectl apply -f -
    apiVersion: v1
    kind: Pod
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.33.0
          args: ["--model", "{NANO}", "--use-replayssm"]
    EOF
    """)
    assert found(script) == [(8, "RSM008")]


def test_markdown_inside_a_yaml_string_is_judged_as_markdown():
    recipe = f"""
    model:
      id: {NANO}
    guide: |
      ## Serve

      ```bash
      vllm serve {NANO} --use-replayssm \\
        --tensor-parallel-size 4
      ```
    """
    [finding] = check_source(textwrap.dedent(recipe).lstrip("\n"), "yaml", vllm_version="0.33.0")
    assert (finding.code, finding.span.line, finding.span.col) == ("RSM008", 7, 13 + len(NANO) + 1)


def test_a_pages_python_blocks_share_their_imports():
    page = f"""
    ```python
    from vllm import LLM
    llm = LLM(model="{NANO}")
    ```

    With ReplaySSM:

    ```py
    llm = LLM(model="{NANO}", use_replayssm=True)
    ```
    """
    assert found(page, "markdown") == [(9, "RSM008")]


def test_empty_env_and_arg_defaults_are_unknown_values_in_dockerfiles():
    dockerfile = """
    FROM vllm/vllm-openai:latest
    ARG MODEL_NAME=
    ENV MODEL_NAME=$MODEL_NAME
    ENTRYPOINT python3 -m vllm.entrypoints.openai.api_server --model $MODEL_NAME --gpu-memory-utilization 0.9
    """
    assert found(dockerfile, "dockerfile") == []  # no RSM103 for '0.9'


def test_a_placeholder_inside_a_json_value_keeps_the_known_keys():
    page = f"""
    ```bash
    vllm serve {NANO} --use-replayssm \\
      --speculative-config '{{"model": <eagle3_model>, "method": "eagle3", "num_speculative_tokens": 3}}'
    ```
    """
    assert found(page, "markdown", "0.30.0") == [(2, "RSM003")]  # no RSM106 (invalid JSON)


def test_another_tools_yaml_fence_is_not_a_serve_config():
    page = f"""
    ```yaml
    kv_cache_config:
      dtype: fp8
    enable_attention_dp: false
    enable_chunked_prefill: true
    ```

    ```bash
    vllm serve {NANO} --use-replayssm
    ```
    """
    assert found(page, "markdown") == [(9, "RSM008")]  # no RSM102 on the TensorRT-LLM file


@pytest.mark.parametrize("image", ["vllm/vllm-openai-rocm:v0.30.0", "vllm/vllm-openai-cpu:v0.30.0"])
def test_vllm_image_variants_are_vllm_images_with_their_release(image):
    findings = check_source(f"docker run {image} --model {FALCON} --use-replayssm\n", "shell")
    assert {f.code for f in findings} == {"RSM001", "RSM008"}
    assert {f.release for f in findings} == {"0.30.0"}


# -- the speculative method of a draft given only as a model ---------------------------------
KIMI = "moonshotai/Kimi-Linear-48B-A3B-Instruct"


@pytest.mark.parametrize("release,expected", [("0.29.0", ["RSM008"]), ("0.30.0", ["RSM008"]), ("0.31.0", [])])
def test_a_plain_causal_lm_draft_is_draft_model_with_its_runner_consequences(release, expected):
    """vLLM reads the draft's config: a plain causal LM is method draft_model, which makes an
    unset runner fall back to V1 on 0.29/0.30, where Kimi's RecoverSSM with prefix caching fails."""
    launch = (f"vllm serve {KIMI} --use-replayssm "
              '--speculative-config \'{"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 3}\'\n')
    assert [code for _, code in found(launch, "shell", release)] == expected


def test_an_unknown_draft_stays_unknown():
    launch = (f"vllm serve {KIMI} --use-replayssm "
              '--speculative-config \'{"model": "my-org/private-draft", "num_speculative_tokens": 3}\'\n')
    assert found(launch, "shell", "0.29.0") == []
    # the same draft named by the project's model map is read like any other
    assert found(launch, "shell", "0.29.0", extra_models={"my-org/private-draft": "LlamaForCausalLM"}) \
        == [(1, "RSM008")]


# -- blind spots made visible ----------------------------------------------------------------
def test_show_launches_lists_clean_launches_and_unrecognised_launch_lines(tmp_path, capsys):
    from flake8_replayssm.cli import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.sh").write_text(textwrap.dedent(f"""\
        vllm serve {NANO} --port 8000
        # vllm serve commented --use-replayssm
        echo "vllm serve is starting"
        myrunner --engine vllm serve {NANO} --use-replayssm
        vllm serve {NANO} --use-replayssm "$@"
        """))
    (tmp_path / "doc.md").write_text("Run `vllm serve <model>` in prose.\n\n```bash\nvllm serve x/y\n```\n")
    assert main(["check", "--show-launches", "--format", "json", "--vllm-version", "0.33.0", str(tmp_path)]) == 1
    shown = json.loads(capsys.readouterr().out)
    assert [(f["line"], f["code"]) for f in shown["findings"]] == [(5, "RSM008")]
    launches = {(item["path"].rsplit("/", 1)[-1], item["line"]): item for item in shown["launches"]}
    assert set(launches) == {("serve.sh", 1), ("serve.sh", 5), ("doc.md", 4)}
    assert launches[("serve.sh", 1)]["codes"] == [] and "NemotronHForCausalLM" in launches[("serve.sh", 1)]["model"]
    assert launches[("serve.sh", 5)]["assumed"] == ['"$@" adds no ReplaySSM option']
    assert [(u["path"].rsplit("/", 1)[-1], u["line"]) for u in shown["unrecognised"]] == [("serve.sh", 4)]


def test_verbose_lists_what_was_seen_on_stderr(tmp_path, capsys):
    from flake8_replayssm.cli import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.sh").write_text(f"vllm serve {NANO} --port 8000\n")
    assert main(["check", "--verbose", "--vllm-version", "0.33.0", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "launch vllm serve: clean; model nvidia/NVIDIA-Nemotron-Nano-9B-v2 (NemotronHForCausalLM)" in err


def test_a_shell_string_inside_a_shell_string_inside_a_shell_string():
    script = (f'NSYS_CMD=""\nif [ -n "$PROFILE" ]; then NSYS_CMD="nsys profile"; fi\n'
              f'srun bash -c "docker run --gpus all img:1 bash -c \'${{NSYS_CMD}} vllm serve {FALCON} '
              f'${{SERVE_ARGS}} --use-replayssm\'"\n')
    assert found(script) == [(3, "RSM001"), (3, "RSM008")]
    assert "assuming … adds no ReplaySSM option" in messages(script)["RSM008"]  # ${SERVE_ARGS}, read again


def test_dynamo_vllm_worker_takes_vllms_engine_options():
    assert found(f"python -m dynamo.vllm --model {FALCON} --use-replayssm\n", "shell", "0.28.0") == [(1, "RSM001")]


def test_a_ray_serve_config_in_a_markdown_yaml_block():
    page = f"""
    ```yaml
    applications:
      - args:
          llm_configs:
            - model_loading_config: {{model_id: {NANO}}}
              engine_kwargs:
                use_replayssm: true
                mamba_backend: flashinfer
    ```
    """
    assert found(page, "markdown") == [(7, "RSM002")]


def test_template_placeholders_in_a_script_are_unknown_values_not_a_lost_command():
    """llm-d-style `${accelerator.dtypeArgs}` (a bad substitution to bash) in a script a
    template renders: the launch is still read, the placeholders unknown."""
    document = f"""
    prefill:
      vllm:
        customCommand: |
          ${{accelerator.runtimePreamble}}
          vllm serve {FALCON} --use-replayssm \\
            --kv-transfer-config '{{"kv_connector":"NixlConnector","kv_role":"kv_both"${{accelerator.kvJson}}}}' \\
            ${{accelerator.dtypeArgs}}
    """
    notes = messages(document, "yaml", "0.28.0")
    assert sorted(notes) == ["RSM001"]  # the JSON is completed by the template: unknown, not RSM106


# -- the image says which release and which platform ------------------------------------------
KIMI_CMD = ('["--model", "moonshotai/Kimi-Linear-48B-A3B-Instruct", "--use-replayssm", '
            '"--speculative-config", "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":2}"]')


@pytest.mark.parametrize("image,platform,expected", [
    ("vllm/vllm-openai-rocm:v0.33.0", "cuda", [(2, "RSM001")]),  # Kimi Linear has no ReplaySSM on ROCm
    ("vllm/vllm-openai:v0.33.0", "cuda", []),
    ("vllm/vllm-openai:v0.33.0", "rocm", [(2, "RSM001")]),       # no image platform: the setting
])
def test_a_rocm_image_is_judged_for_rocm(image, platform, expected):
    dockerfile = f"FROM {image}\nCMD {KIMI_CMD}\n"
    assert found(dockerfile, "dockerfile", release=None, platform=platform) == expected


@pytest.mark.parametrize("tag,expected", [
    ("v0.28.0-cu130", []),                 # a build variant of 0.28.0: the plain launch passes
    ("v0.28.0", []),
    ("v0.33.0-cu130", [(2, "RSM008")]),
    ("latest", [(2, "RSM008")]),           # no release in the tag: the newest known
])
def test_an_image_tag_with_a_build_suffix_pins_its_release(tag, expected):
    dockerfile = f"FROM vllm/vllm-openai:{tag}\nCMD [\"--model\", \"{NANO}\", \"--use-replayssm\"]\n"
    assert found(dockerfile, "dockerfile", release=None) == expected


# -- documentation placeholders, unparsable parts, templates that write unseen YAML (review) -----
@pytest.mark.parametrize("written", [
    "--mamba-backend <triton|flashinfer>", "--mamba-backend=<triton|flashinfer>",
    "--mamba-backend [triton|flashinfer]", "--mamba-backend {triton,flashinfer}",
    "--mamba-backend {triton|flashinfer}", "--mamba-backend BACKEND", "--mamba-backend=BACKEND",
    "[--mamba-backend flashinfer --disable-prefix-caching]",
])
def test_markdown_placeholders_of_a_value_are_unknown(written):
    page = f"```bash\nvllm serve {NANO} --use-replayssm --disable-prefix-caching {written}\n```\n"
    assert found(page, "markdown") == []
    assert found(page.replace("```bash\n", "").replace("```\n", ""), "shell") != []  # a script is shell


def test_markdown_placeholder_model_with_a_pipe_is_one_unknown_word():
    page = "```bash\nvllm serve <org/model|local-path> --use-replayssm\n```\n"
    assert found(page, "markdown") == [(2, "RSM008")]  # holds for every model
    assert "{" not in messages(page, "markdown")["RSM008"]
    assert found(page.replace("--use-replayssm", "--use-replayssm --mamba-backend <backend name>"), "markdown") == []
    [launch] = lint_text(page, "markdown", LintConfig(vllm_version="0.33.0", inventory=True)).launches
    assert launch.model.startswith("unknown")


def test_markdown_placeholder_count_and_optional_group():
    number = f"```bash\nvllm serve {NANO} --use-replayssm --replayssm-buffer-len N --mamba-backend flashinfer\n```\n"
    assert "RSM106" not in [code for _, code in found(number, "markdown")]
    group = (f"```bash\nvllm serve {NANO} \\\n    --use-replayssm \\\n"
             "    [--mamba-backend flashinfer --disable-prefix-caching]\n```\n")
    assert found(group, "markdown") == []  # without the group RSM008, with it clean: a code needs both
    both = group.replace("flashinfer --disable-prefix-caching", "triton")
    assert found(both, "markdown") == [(3, "RSM008")]  # triton either way
    upper = f"```bash\nvllm serve {NANO} --use-replayssm --mamba-backend TRITON\n```\n"  # a value, not a name
    assert found(upper, "markdown") == [(2, "RSM008")]


@pytest.mark.parametrize("kind, text, line", [
    ("makefile", f'serve:\n\t@echo start\n\tvllm serve "{FALCON} --use-replayssm\n', 3),
    ("dockerfile", f'FROM vllm/vllm-openai:v0.33.0\nRUN vllm serve "{FALCON} --use-replayssm\n', 2),
    ("markdown", f'# x\n\n```bash\nvllm serve "{FALCON} --use-replayssm\n```\n', 4),
    ("markdown", f'```python\nfrom vllm import LLM\nllm = LLM(model="{FALCON}", use_replayssm=True\n```\n', 3),
    ("markdown", f'```yaml\nservices:\n  llm:\n    command: ["--model", "{FALCON}", "--use-replayssm"\n```\n', 5),
])
def test_an_unparsable_part_holding_a_launch_is_reported(kind, text, line):
    assert found(text, kind) == [(line, "RSM900")]
    assert "line 1:" not in messages(text, kind)["RSM900"]  # no snippet-relative line in the message


def test_an_unparsable_part_without_a_trigger_is_not_reported():
    assert found('serve:\n\techo "unterminated\n\tvllm serve m --use-replayssm --mamba-backend flashinfer '
                 '--disable-prefix-caching\n', "makefile") == []


def test_helm_template_lines_in_a_container_make_its_environment_or_arguments_unseen():
    def chart(*container: str) -> str:
        return ("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
                "      - name: vllm\n        image: \"vllm/vllm-openai:{{ .Values.tag }}\"\n"
                + "".join(f"        {line}\n" for line in container))

    args = f'args: ["--model", "{NANO}", "--use-replayssm"]'
    for unseen_env in (chart('{{- include "chart.env" . | nindent 8 }}', args),  # may write env:
                       chart("env:", "  {{- toYaml .Values.env | nindent 10 }}", args)):
        assert "sets no VLLM_USE_V2_MODEL_RUNNER)" in messages(unseen_env, "yaml")["RSM008"]
        assert found(unseen_env, "yaml", extra_args="open") == []
    resources = ("resources:", "  {{- toYaml .Values.r | nindent 10 }}")
    assert found(chart(*resources, args), "yaml") == [(11, "RSM008")]  # resources: writes no environment
    flow = args.replace('"--use-replayssm"]', '"--use-replayssm", {{ .Values.args }}]')
    assert "assuming {{ .Values.args }} adds no ReplaySSM option" in messages(chart(flow), "yaml")["RSM008"]
    assert found(chart(flow), "yaml", extra_args="open") == []
    listed = chart("args:", "- --model", f"- {NANO}", "- --use-replayssm",
                   "{{- toYaml .Values.extraArgs | nindent 8 }}")
    assert "assuming {{- toYaml .Values.extraArgs | nindent 8 }} adds no" in messages(listed, "yaml")["RSM008"]
    assert found(listed, "yaml", extra_args="open") == []
    model = chart("args:", "- {{ .Values.model }}", "- --use-replayssm")  # one value: the model, unknown
    assert found(model, "yaml") == [(11, "RSM008")] and "assuming" not in messages(model, "yaml")["RSM008"]
    result = lint_text(chart(args), "yaml", LintConfig(vllm_version="0.33.0", inventory=True))
    assert [n.label for n in result.launches] == ["vllm/vllm-openai:{{ .Values.tag }} entrypoint"]


@pytest.mark.parametrize("write", [
    'echo "VLLM_USE_V2_MODEL_RUNNER=0" >> "$GITHUB_ENV"', "echo VLLM_USE_V2_MODEL_RUNNER=0 >> $GITHUB_ENV",
    "echo 'VLLM_USE_V2_MODEL_RUNNER=0' | tee -a ${GITHUB_ENV}", 'echo "VLLM_USE_${V}=0" >> "$GITHUB_ENV"',
    'cat env.txt >> "$GITHUB_ENV"',
])
def test_github_env_written_by_an_earlier_step_is_the_later_steps_environment(write):
    def workflow(*steps: str) -> str:
        return "on: push\njobs:\n  serve:\n    runs-on: gpu\n    steps:\n" + \
            "".join(f"      - run: {step}\n" for step in steps)

    launch = f"vllm serve {NANO} --use-replayssm"
    literal = "${V}" not in write and "cat" not in write
    # a file or a name the linter cannot read: assumed to set nothing, as the finding says
    assert found(workflow(write, launch), "yaml") == ([] if literal else [(7, "RSM008")])
    assert found(workflow(write, launch), "yaml", extra_args="open") == []
    assert found(workflow(write.replace("=0", "=1"), launch), "yaml") == [(7, "RSM008")]
    assert found(workflow(launch, write), "yaml") == [(6, "RSM008")]  # only later steps get it


def test_github_expression_is_one_unknown_value_shown_as_written():
    workflow = """
    on: push
    jobs:
      serve:
        runs-on: gpu
        steps:
          - run: vllm serve ${{ matrix.model }} --use-replayssm --mamba-backend flashinfer --disable-prefix-caching
          - run: vllm serve ${{ matrix.model }} --use-replayssm
    """
    result = messages(workflow, "yaml")
    assert list(result) == ["RSM008"] and "assuming" not in result["RSM008"] and "___" not in result["RSM008"]


def test_bash_kernel_notebook_cells_are_shell():
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": [f"vllm serve {FALCON} --use-replayssm\n"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["export VLLM_USE_V2_MODEL_RUNNER=0\n"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": [f"vllm serve {NANO} --use-replayssm\n"]}],
          "metadata": {"kernelspec": {"language": "bash", "name": "bash", "display_name": "Bash"}},
          "nbformat": 4, "nbformat_minor": 5}
    findings = check_source(json.dumps(nb), "notebook", vllm_version="0.33.0")
    assert sorted((f.span.cell, f.code) for f in findings) == [(0, "RSM001"), (0, "RSM008")]


def test_blockquoted_fence_is_read_and_indented_code_is_listed():
    page = (f"> Start it:\n>\n> ```bash\n> vllm serve {FALCON} --use-replayssm\n> ```\n\n"
            f"    vllm serve {FALCON} --use-replayssm\n")
    assert found(page, "markdown") == [(4, "RSM001"), (4, "RSM008")]
    result = lint_text(page, "markdown", LintConfig(vllm_version="0.33.0", inventory=True))
    assert [u.line for u in result.unrecognised] == [7]


@pytest.mark.parametrize("kind, text", [
    ("dockerfile", f"FROM vllm/vllm-openai:v0.33.0\nCMD [\"--model\", \"{NANO}\", \"--use-replayssm\"]\n"),
    ("yaml", "services:\n  llm:\n    image: vllm/vllm-openai:v0.33.0\n"
             f"    command: [\"--model\", \"{NANO}\", \"--use-replayssm\"]\n"),
])
def test_an_image_line_names_no_entry_point_and_is_never_listed_as_unrecognised(kind, text):
    """An image runs what its command says (an engine's serving entrypoint, or what the words after
    it start): the image's name is no launch-looking line, with or without the launch."""
    result = lint_text(text, kind, LintConfig(vllm_version="0.33.0", inventory=True))
    assert len(result.launches) == 1 and result.unrecognised == []
    alone = text.split("\n")[0] + "\n" if kind == "dockerfile" else text.rsplit("    command", 1)[0]
    assert lint_text(alone, kind, LintConfig(vllm_version="0.33.0", inventory=True)).unrecognised == []


# -- asking for help or the version starts no engine ----------------------------------------
@pytest.mark.parametrize("launch", [
    f"vllm serve {FALCON} --use-replayssm --help",
    f"vllm serve {FALCON} --use-replayssm -h",
    f"vllm serve {FALCON} --use-replayssm --help=replayssm",
    f"vllm serve {FALCON} --use-replayssm --version",
    f"vllm --version serve {FALCON} --use-replayssm",
    f"python -m vllm.entrypoints.openai.api_server --model {FALCON} --use-replayssm --help",
    f"docker run vllm/vllm-openai:v0.33.0 --model {FALCON} --use-replayssm -h",
])
def test_help_or_version_is_not_a_launch(launch):
    assert found(launch) == []


# -- wrappers that set the launched command's environment (data/launchers.toml env_options) -----
V1 = "VLLM_USE_V2_MODEL_RUNNER=0"


@pytest.mark.parametrize("launch,expected", [
    # the wrapper sets the variable: Model Runner V1, no RSM008
    (f"srun --export=ALL,{V1} vllm serve {NANO} --use-replayssm", []),
    (f"srun --export {V1} vllm serve {NANO} --use-replayssm", []),
    (f"mpirun -x {V1} -np 1 vllm serve {NANO} --use-replayssm", []),
    (f"export {V1}\nmpirun -x VLLM_USE_V2_MODEL_RUNNER vllm serve {NANO} --use-replayssm", []),
    (f"apptainer exec --env {V1},B=2 img.sif vllm serve {NANO} --use-replayssm", []),
    (f"nsys profile -e {V1} vllm serve {NANO} --use-replayssm", []),
    (f"nsys profile --env-var={V1} vllm serve {NANO} --use-replayssm", []),
    (f"enroot start -e {V1} img vllm serve {NANO} --use-replayssm", []),
    (f'srun --export=ALL,{V1} bash -c "vllm serve {NANO} --use-replayssm"', []),
    # the wrapper drops the caller's environment: the variable the script set does not reach vLLM
    (f"export {V1}\nsrun --export=NONE vllm serve {NANO} --use-replayssm", [(2, "RSM008")]),
    (f"export {V1}\nsrun --export=B=1 vllm serve {NANO} --use-replayssm", [(2, "RSM008")]),
    (f"export {V1}\napptainer exec --cleanenv img.sif vllm serve {NANO} --use-replayssm", [(2, "RSM008")]),
    (f"{V1} env -i vllm serve {NANO} --use-replayssm", [(1, "RSM008")]),
    (f"export {V1}\nenv -u VLLM_USE_V2_MODEL_RUNNER vllm serve {NANO} --use-replayssm", [(2, "RSM008")]),
    (f"{V1} sudo vllm serve {NANO} --use-replayssm", [(1, "RSM008")]),
    (f"export {V1}\nsudo bash -c 'vllm serve {NANO} --use-replayssm'", [(2, "RSM008")]),
    # ... unless it keeps it, or sets it itself
    (f"{V1} sudo -E vllm serve {NANO} --use-replayssm", []),
    (f"{V1} sudo --preserve-env=VLLM_USE_V2_MODEL_RUNNER vllm serve {NANO} --use-replayssm", []),
    (f"sudo {V1} vllm serve {NANO} --use-replayssm", []),
    (f"env -i {V1} vllm serve {NANO} --use-replayssm", []),
    (f'sudo bash -c "export {V1}; vllm serve {NANO} --use-replayssm"', []),
    # the same wrapper without environment options changes nothing
    (f"srun -N 1 vllm serve {NANO} --use-replayssm", [(1, "RSM008")]),
    (f"export {V1}\nsrun -N 1 vllm serve {NANO} --use-replayssm", []),
])
def test_wrapper_options_set_the_launch_environment(launch, expected):
    assert found(launch) == expected


@pytest.mark.parametrize("launch, source", [
    (f"uv run --env-file .env vllm serve {NANO} --use-replayssm", "--env-file .env"),
    (f"apptainer exec --env-file runner.env img.sif vllm serve {NANO} --use-replayssm", "--env-file runner.env"),
    (f"env $RUNNER_ENV vllm serve {NANO} --use-replayssm", "$RUNNER_ENV"),
    (f"srun --export=$SLURM_EXPORTS vllm serve {NANO} --use-replayssm", "--export="),
    (f"ray job submit -- vllm serve {NANO} --use-replayssm", "the environment ray gives"),
])
def test_an_environment_the_file_does_not_show_is_assumed_to_set_nothing(launch, source):
    """DESIGN.md: unseen environments are read like unseen extra arguments: assumed not to set
    a variable that changes the verdict, and the finding names what it assumed."""
    assert found(launch) == [(1, "RSM008")]
    note = messages(launch)["RSM008"]
    assert source in note and "sets no VLLM_USE_V2_MODEL_RUNNER)" in note
    assert found(launch, extra_args="open") == []


def test_an_sbatch_export_directive_sets_the_whole_script_environment():
    script = f"""\
    #!/bin/bash
    #SBATCH --nodes=1
    #SBATCH --export=ALL,{V1}
    srun vllm serve {NANO} --use-replayssm
    """
    assert found(script) == []
    assert found(script.replace("=0", "=1")) == [(4, "RSM008")]
    # a directive after the first command is a comment
    assert found(script.replace("#SBATCH --nodes=1", "echo start")) == [(4, "RSM008")]
