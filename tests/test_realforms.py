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

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FALCON = "tiiuae/Falcon-H1-1.5B-Instruct"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def found(text: str, kind: str = "shell", release: str = "0.33.0", **config) -> list[tuple[int, str]]:
    cfg = LintConfig(vllm_version=release, **config)
    return sorted((f.span.line, f.code) for f in check_source(textwrap.dedent(text).lstrip("\n"), kind,
                                                               config=cfg))


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
    (f'ARGS=("$@")\nvllm serve {NANO} --use-replayssm "${{ARGS[@]}}"', '"${ARGS[@]}"'),
])
def test_unseen_shell_arguments_add_nothing_and_the_message_says_so(launch, label):
    assert found(launch) == [(launch.count("\n") + 1, "RSM008")]
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
    (f'import subprocess\ndef run(extra):\n    subprocess.run(["vllm", "serve", "{NANO}", "--use-replayssm"] + extra)\n',
     "extra"),
])
def test_unseen_python_arguments_add_nothing(source, label):
    assert found(source, "python") == [(3, "RSM008")]
    assert f"assuming {label} adds no ReplaySSM option" in messages(source, "python")["RSM008"]
    assert found(source, "python", extra_args="open") == []


def test_a_finding_that_holds_whatever_the_extras_say_has_no_assumption_note():
    text = f'vllm serve {FALCON} --use-replayssm "$@"\n'
    notes = messages(text)
    assert "assuming" not in notes["RSM001"] and "assuming" in notes["RSM008"]
    assert found(text, extra_args="open") == [(1, "RSM001")]


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
    script = f"export VLLM_USE_V2_MODEL_RUNNER=0\ndocker run -e VLLM_USE_V2_MODEL_RUNNER img:1 vllm serve {NANO} --use-replayssm\n"
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
    # the architecture alone decides RSM001; the runner (RSM008) depends on an environment not shown
    assert found(script) == [(1, "RSM001")]


# -- Python ----------------------------------------------------------------------------------
@pytest.mark.parametrize("source", [
    f'import subprocess\nPORT = 8000\nsubprocess.run(["vllm", "serve", "{NANO}", "--port", str(PORT), "--use-replayssm"])\n',
    f'import subprocess, sys\nsubprocess.Popen([sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", "{NANO}", "--use-replayssm"])\n',
    f'import shlex, subprocess\ncmd = ["vllm", "serve", "{NANO}", "--use-replayssm"]\nsubprocess.run(shlex.join(cmd), shell=True)\n',
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
    args = EngineArgs(model="{NANO}", use_replayssm=True, kv_transfer_config=KVTransferConfig(kv_connector="X", kv_role="kv_both"))
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
        {"cell_type": "markdown", "source": ["# Serve\n", "\n", "```bash\n", f"vllm serve {NANO} --use-replayssm\n", "```\n"]},
        {"cell_type": "code", "source": ["print(1)\n"], "outputs": [], "execution_count": None, "metadata": {}},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    [finding] = check_source(json.dumps(nb), "notebook", vllm_version="0.33.0")
    assert (finding.span.cell, finding.span.line, finding.code) == (0, 4, "RSM008")
