"""Launches in structured documents recognised by what they say, in any key (issue 18).

Every string and list of strings of a YAML, TOML or JSON document is handed to the recogniser
with its context (image, environment); known places only add context.  Precision stays:
prose keys, sentences, ``echo``, ``grep`` and ``--help`` are not launches.
"""

from __future__ import annotations

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


def launches(text: str, kind: str = "yaml", path: str | None = None, version: str = "0.33.0"):
    result = lint_text(text, kind, LintConfig(vllm_version=version, inventory=True), path=path)
    return result


def lines_with(result, code: str) -> list[int]:
    return sorted(f.span.line for f in result.findings if f.code == code)


# -- a launch in any key -----------------------------------------------------------------------

def test_a_platform_key_no_list_names_holds_a_launch():
    text = ("base_image:\n  image: vllm/vllm-openai:v0.31.0\n"
            "docker_server:\n"
            '  start_command: sh -c "HF_TOKEN=$(cat /secrets/hf) vllm serve org/m --replayssm-buffer-len 0'
            ' --use-replayssm"\n'
            "  server_port: 8000\n")
    result = lint_text(text, "yaml", LintConfig(inventory=True))
    [launch] = result.launches
    assert launch.line == 4 and launch.release == "0.31.0"  # the nearest engine image pins the release
    assert "RSM007" in {f.code for f in result.findings}


def test_a_folded_block_scalar_under_an_unknown_key_is_one_command():
    text = ("server:\n  launch_cmd: >-\n    python3 -m sglang.launch_server --model-path org/m\n"
            "    --enable-linear-replayssm --linear-replayssm-cache-len 0\n")
    result = launches(text)
    assert [(n.line, n.engine) for n in result.launches] == [(3, "sglang")]
    assert lines_with(result, "RSM304") == [4]


def test_a_shell_script_given_as_the_arguments_of_a_shell_command():
    text = ('tasks:\n  - command: ["/bin/sh", "-c"]\n    arguments:\n      [\n'
            '        "pip install vllm && vllm serve org/m --use-replayssm --replayssm-buffer-len 0"\n      ]\n')
    result = launches(text)
    assert [n.line for n in result.launches] == [5]
    assert lines_with(result, "RSM007") == [5]


def test_an_argv_list_under_an_unknown_key_and_nested_lists():
    text = ("jobs:\n- steps:\n  - name: serve\n"
            "    cmd: [vllm, serve, org/m, --use-replayssm, --replayssm-buffer-len, '0']\n"
            "  - - - vllm serve org/m --use-replayssm --replayssm-buffer-len 0\n")
    result = launches(text)
    assert sorted(n.line for n in result.launches) == [4, 5]


def test_the_environment_around_a_value_is_its_context():
    text = ("environment_variables:\n  VLLM_USE_V2_MODEL_RUNNER: '0'\n"
            f"runner:\n  entry: vllm serve {NANO} --use-replayssm\n")
    assert "RSM008" not in {f.code for f in launches(text).findings}
    unset = text.replace("  VLLM_USE_V2_MODEL_RUNNER: '0'\n", "  OTHER: '0'\n")
    assert "RSM008" in {f.code for f in launches(unset).findings}


@pytest.mark.parametrize("text", [
    # prose keys: never commands
    "description: vllm serve org/m --use-replayssm --replayssm-buffer-len 0\n",
    "help: 'run: vllm serve org/m --use-replayssm --replayssm-buffer-len 0'\n",
    # sentences in a value
    "step: Run vllm serve org/m --use-replayssm --replayssm-buffer-len 0 to start it\n",
    "step: to start, use vllm serve org/m --use-replayssm --replayssm-buffer-len 0\n",
    # commands that only print, search or ask for help
    "step: echo vllm serve org/m --use-replayssm --replayssm-buffer-len 0\n",
    "step: grep -r 'vllm serve org/m --use-replayssm --replayssm-buffer-len 0' logs/\n",
    "step: vllm serve org/m --use-replayssm --replayssm-buffer-len 0 --help\n",
    # an image name is context, not a command; a value is a whole command line, never the
    # arguments of the image's entrypoint
    "image: {repository: vllm/vllm-openai, tag: v0.33.0}\nnote_use_replayssm: 1\n",
    "image: vllm/vllm-openai:v0.33.0\nops_hint: '--model m --use-replayssm --replayssm-buffer-len 0'\n",
])
def test_precision_stays(text):
    result = launches(text)
    assert result.launches == [] and result.findings == []


def test_strings_a_known_reader_took_are_not_read_twice():
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n    image: vllm/vllm-openai:v0.33.0\n"
            "    command: [sh, -c, 'vllm serve org/m --use-replayssm --replayssm-buffer-len 0']\n")
    assert len(launches(text).launches) == 1


# -- templates and documents in block scalars ---------------------------------------------------

JINJA_CONFIGMAP = """\
kind: Pod
spec:
  containers:
  - image: vllm/vllm-openai:v0.33.0
    name: server
    resources: {}
    env: []
    ports: []
    args: [--model=org/m, --use-replayssm, --replayssm-buffer-len=0]
---
apiVersion: v1
kind: ConfigMap
data:
  chat.jinja: |
    {{- bos_token }}
    {%- if tools is defined %}{%- endif %}
"""


def test_a_jinja_template_in_a_block_scalar_does_not_make_the_file_unreadable():
    result = launches(JINJA_CONFIGMAP)
    assert "RSM900" not in {f.code for f in result.findings}
    assert lines_with(result, "RSM007") == [9]


def test_a_block_scalar_that_starts_with_a_template_line_still_breaks_real_yaml():
    broken = JINJA_CONFIGMAP.replace("data:\n", "data:\n  - x: [\n")
    assert "RSM900" in {f.code for f in launches(broken).findings}


def test_a_manifest_in_a_block_scalar_is_read_as_yaml():
    text = ("kind: ConfigMap\ndata:\n  model.yaml: |\n    engine_config:\n      model_id: org/m\n"
            "      type: VLLMEngine\n      engine_kwargs:\n        use_replayssm: true\n"
            "        replayssm_buffer_len: 0\n")
    result = launches(text)
    assert lines_with(result, "RSM007") == [9]
    assert result.launches[0].model.startswith("org/m")


def test_template_control_lines_inside_a_continued_command():
    text = ("script: |\n  vllm serve org/m \\\n  {{- if .Values.spec }}\n    --speculative-config '{}' \\\n"
            "  {{- end }}\n    --use-replayssm --replayssm-buffer-len 0\n")
    result = launches(text)
    assert [n.line for n in result.launches] == [2]
    assert lines_with(result, "RSM007") == [6]  # the options after the template lines belong to it


# -- TOML and JSON -----------------------------------------------------------------------------

def test_toml_strings_and_arrays_are_read_by_content():
    text = ('[tool.serve]\ncommand = "vllm serve org/m --use-replayssm --replayssm-buffer-len 0"\n'
            'argv = [\n  "vllm", "serve", "org/m",\n  "--use-replayssm", "--replayssm-buffer-len", "0",\n]\n'
            'script = """\nvllm serve org/m \\\n  --use-replayssm --replayssm-buffer-len 0"""\n')
    result = launches(text, "toml")
    assert sorted(n.line for n in result.launches) == [2, 4, 8]
    at = {(f.span.line, f.span.col) for f in result.findings if f.code == "RSM007"}
    assert at == {(2, 44), (5, 21), (9, 18)}  # the word as written: quotes, escapes, continued lines


def test_json_strings_and_arrays_are_read_by_content():
    text = ('{\n  "serve": {"cmd": ["vllm", "serve", "org/m", "--use-replayssm",\n'
            '                      "--replayssm-buffer-len", "0"]},\n'
            '  "note": "vllm serve org/m --use-replayssm --replayssm-buffer-len 0"\n}\n')
    result = launches(text, "json")
    assert [n.line for n in result.launches] == [2]
    assert lines_with(result, "RSM007") == [3]


@pytest.mark.parametrize("kind,text", [
    ("toml", 'a = "vllm serve m --use-replayssm\n'),
    ("json", '{"a": "vllm serve m --use-replayssm",}\n'),
])
def test_toml_and_json_that_do_not_parse_are_reported(kind, text):
    [finding] = launches(text, kind).findings
    assert finding.code == "RSM900" and "could not be parsed" in finding.message
