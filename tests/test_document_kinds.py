"""Kinds of files read since issue 18: MDX, Quarto, reST literal blocks, templates, TOML and JSON
files and fences, systemd units (on their own and written by a here-document), and the wrong
readings fixed on the way (an ENTRYPOINT over a vLLM image, a framework's config that looked
like an SGLang ``--config`` file, verl's ``engine_kwargs`` taken for Ray Serve's, KubeAI's model)."""

from __future__ import annotations

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.frontends.structured.toml_nodes import toml_root
from flake8_replayssm.lint import detect_kind, lint_text
from flake8_replayssm.templates import mask_template_syntax, template_base

LAUNCH = "vllm serve org/m --use-replayssm --replayssm-buffer-len 0"


def result(text: str, kind: str, path: str | None = None, version: str = "0.33.0"):
    return lint_text(text, kind, LintConfig(vllm_version=version, inventory=True), path=path)


def rsm007_lines(text: str, kind: str, path: str | None = None) -> list[int]:
    return sorted(f.span.line for f in result(text, kind, path).findings if f.code == "RSM007")


@pytest.mark.parametrize("name,kind", [
    ("page.mdx", "markdown"), ("page.qmd", "markdown"), ("page.rst", "markdown"), ("page.Rmd", "markdown"),
    ("pyproject.toml", "toml"), ("model.json", "json"), ("vllm.service", "systemd"),
    ("deploy.yaml.j2", "yaml"), ("values.yml.jinja2", "yaml"), ("user_data.sh.tftpl", "shell"),
    ("k8s.yaml.template", "yaml"), ("Dockerfile.j2", "dockerfile"), ("notes.j2", None), ("x.tpl", None),
])
def test_kinds_by_name(name, kind):
    assert detect_kind(name) == kind


def test_template_base_keeps_the_folder():
    assert template_base("deploy/k8s/app.yaml.j2") == "deploy/k8s/app.yaml"
    assert template_base("app.yaml") is None


def test_mdx_and_quarto_fences():
    mdx = f'import {{ Tip }} from "@/components/tip";\n\n<Tip>Start it.</Tip>\n\n```bash\n{LAUNCH}\n```\n'
    assert rsm007_lines(mdx, "markdown") == [6]
    qmd = f'---\ntitle: "x"\n---\n\n```{{bash}}\n{LAUNCH}\n```\n'
    assert rsm007_lines(qmd, "markdown") == [6]


def test_rest_literal_blocks_and_directives():
    text = (f"Start the server::\n\n   $ {LAUNCH}\n\n.. code-block:: yaml\n\n   commands:\n"
            "     - python3 -m sglang.launch_server --model-path m --enable-linear-replayssm"
            " --linear-replayssm-cache-len 0\n\n.. note::\n\n"
            "   vllm serve m --use-replayssm --replayssm-buffer-len 0\n")
    found = result(text, "markdown")
    assert sorted((f.span.line, f.code) for f in found.findings if f.code in ("RSM007", "RSM304")) == \
        [(3, "RSM007"), (8, "RSM304")]  # a note is prose, not a literal block


def test_toml_and_json_fences_are_read_as_those_kinds():
    text = ('```toml\n[inference.vllm]\nuse-replayssm = true\nreplayssm-buffer-len = 0\n```\n\n'
            '```json\n{"model": "m", ... }\n```\n')
    found = result(text, "markdown")
    assert [(f.span.line, f.code) for f in found.findings if f.code == "RSM007"] == [(4, "RSM007")]
    assert not any(f.code == "RSM900" for f in found.findings)  # a sketch of JSON in prose is not an error


@pytest.mark.parametrize("path,text,line", [
    ("deploy.yaml.j2", "{% if gpu %}\nargs:\n{% for a in extra %}\n  - {{ a }}\n{% endfor %}\n"
                       "command: [vllm, serve, '{{ model }}', --use-replayssm, --replayssm-buffer-len, '0']\n"
                       "{% endif %}\n", 6),
    ("run.sh.j2", "vllm serve {{ model }} \\\n{% if spec %}\n  --speculative-config '{{ spec }}' \\\n{% endif %}\n"
                  "  --use-replayssm --replayssm-buffer-len 0\n", 5),
    ("user_data.sh.tftpl", "%{ if enable }\ndocker run --gpus all vllm/vllm-openai:v0.33.0 --model ${model} \\\n"
                           "  --use-replayssm --replayssm-buffer-len 0\n%{ endif }\n", 3),
])
def test_templates_are_read_as_the_kind_they_render_to(path, text, line):
    kind = detect_kind(path)
    assert rsm007_lines(text, kind, path) == [line]


def test_template_masking_keeps_every_position():
    text = "a {{ model }} b\n{% if y %}\nvllm serve m \\\n{% if z %}\n  --flag\n{# c #}\n"
    masked = mask_template_syntax(text)
    assert len(masked) == len(text) and masked.count("\n") == text.count("\n")
    assert masked.split("\n")[3].rstrip().endswith("\\")  # a control line inside a continued command
    assert "{%" not in masked and "{#" not in masked and "__RSMTPL" in masked


def test_toml_nodes_place_every_value():
    text = ('[a]\nb = "x\\ty"\n[[c]]\nd = [1, 2.5, true, 1979-05-27]\n[c.e]\n"f.g" = \'lit\'\n'
            'h = { i = 0x1f }\n')
    root = toml_root(text)
    a, c = root.value[0][1], root.value[1][1]
    b = a.value[0][1]
    assert b.value == "x\ty" and text[b.start_mark.index:b.end_mark.index] == '"x\\ty"'
    assert [text[i] for i in b.rsm_chars] == ["x", "t", "y"]  # the escape sits at its end
    assert [n.value for n in c.value[0].value[0][1].value] == ["1", "2.5", "true", "1979-05-27"]
    assert c.value[0].value[1][0].value == "e" and c.value[0].value[1][1].value[0][0].value == "f.g"
    assert root.value[1][1].value[0].value[1][1].value[1][1].value[0][1].value == "31"


UNIT = ("[Service]\nEnvironment=VLLM_USE_V2_MODEL_RUNNER=0\nExecStart=/usr/bin/docker run --rm --gpus all \\\n"
        "  -e VLLM_USE_V2_MODEL_RUNNER=0 vllm/vllm-openai:v0.33.0 --model nvidia/NVIDIA-Nemotron-Nano-9B-v2 \\\n"
        "  --use-replayssm --replayssm-buffer-len 0\n")


def test_a_systemd_unit_and_one_written_by_a_here_document():
    assert rsm007_lines(UNIT, "systemd") == [5]
    script = "#!/bin/bash\ncat > /etc/systemd/system/llm.service <<UNIT\n" + UNIT + "UNIT\n"
    assert rsm007_lines(script, "shell") == [7]
    fence = "Install it:\n\n```bash\n" + script.split("\n", 1)[1] + "```\n"
    assert rsm007_lines(fence, "markdown") == [9]
    other = script.replace("llm.service", "llm.conf")
    assert rsm007_lines(other, "shell") == []  # a file that is not a unit holds no commands


# -- wrong readings --------------------------------------------------------------------------------

def test_an_entrypoint_over_a_vllm_image_is_not_vllm_serve():
    text = 'ARG BASE=vllm/vllm-openai:v0.33.0\nFROM $BASE\nENTRYPOINT ["guidellm"]\nCMD ["run", "--use-replayssm"]\n'
    assert result(text, "dockerfile").launches == []
    served = 'FROM vllm/vllm-openai:v0.33.0\nENTRYPOINT ["vllm", "serve"]\nCMD ["m", "--use-replayssm", ' \
             '"--replayssm-buffer-len", "0"]\n'
    [launch] = result(served, "dockerfile").launches
    assert launch.release == "0.33.0"  # the image still pins the release


def test_a_container_command_replaces_the_image_entrypoint():
    text = ("containers:\n- name: bench\n  image: vllm/vllm-openai:v0.33.0\n  command: [guidellm]\n"
            "  args: [benchmark, --use-replayssm]\n")
    assert result(text, "yaml").launches == []


def test_a_framework_config_with_model_path_is_not_an_sglang_config_file():
    text = ("defaults:\n  - base\n  - _self_\nmodel_path: org/m\nrollout:\n  enable_linear_replayssm: true\n")
    found = result(text, "yaml")
    assert found.launches == [] and found.findings == []
    sglang = "model-path: org/m\nenable-linear-replayssm: true\nlinear-replayssm-cache-len: 0\n"
    [launch] = result(sglang, "yaml").launches
    assert launch.engine == "sglang"


def test_engine_kwargs_per_engine_is_not_a_ray_serve_config():
    text = "name: vllm\nengine_kwargs:\n  vllm:\n    use_replayssm: true\n"
    assert [n.label for n in result(text, "yaml").launches] == ["verl engine_kwargs.vllm"]
    ray = "llm_configs:\n- model_loading_config: {model_id: m}\n  engine_kwargs:\n    use_replayssm: true\n"
    assert [n.label for n in result(ray, "yaml").launches] == ["Ray Serve LLM config"]


def test_kubeai_url_is_the_model():
    text = ("apiVersion: kubeai.org/v1\nkind: Model\nspec:\n  url: hf://nvidia/NVIDIA-Nemotron-Nano-9B-v2\n"
            "  engine: VLLM\n  args: [--use-replayssm, --mamba-backend=flashinfer, --no-enable-prefix-caching]\n")
    found = result(text, "yaml")
    [launch] = found.launches
    assert launch.model.startswith("nvidia/NVIDIA-Nemotron-Nano-9B-v2") and found.findings == []
    pvc = text.replace("hf://nvidia/NVIDIA-Nemotron-Nano-9B-v2", "pvc://models")
    assert result(pvc, "yaml").launches[0].model.startswith("/model")


TOML_SAMPLES = [
    'a = """x""""\nb = \'\'\'\nline1\nline2\'\'\'\n',
    'a . b . c = "x"  # c\n[ t . u ]\nv = [ { w = 1 }, { w = [ "a", \'b\' ] } ]\n',
    '[[p.q]]\nr = 1\n[[p.q]]\nr = 2\n[p.q.s]\nt = "\\u00e9\\U0001F600"\n',
    'a = 1\r\nb = "x"\r\n[c]\r\nd = true\r\n',
    'x = +inf\nz = 1_000\nw = 0o17\nv = 0b101\nu = 3.14e-2\nd1 = 07:32:00\nd2 = 1979-05-27 07:32:00Z\n',
    'str = """\\\n   The quick \\\n   brown"""\n',
    'k = [\n  1,\n  # comment\n  2,\n]\n',
    '"a b" = 1\n\'c.d\' = 2\ninline = { a = { b = { c = 1 } } }\n',
]


@pytest.mark.parametrize("text", TOML_SAMPLES)
def test_toml_nodes_hold_what_tomllib_reads(text):
    import datetime

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    from flake8_replayssm.frontends.structured.nodes import node_value

    def plain(node):
        if node.id == "mapping":
            return {k.value: plain(v) for k, v in node.value}
        if node.id == "sequence":
            return [plain(v) for v in node.value]
        return node_value(node)

    def dates_as_text(value):
        if isinstance(value, dict):
            return {k: dates_as_text(v) for k, v in value.items()}
        if isinstance(value, list):
            return [dates_as_text(v) for v in value]
        return "date" if isinstance(value, (datetime.date, datetime.time)) or \
            isinstance(value, str) and value[:2].isdigit() and value[2:3] in ":0123456789" else value

    assert dates_as_text(plain(toml_root(text))) == dates_as_text(tomllib.loads(text))


def test_a_here_document_in_a_markdown_fence_is_its_own_file():
    """A manifest piped to kubectl and a config file written for --config, inside a fence: their
    brackets are YAML's, not an optional ``[--flag ...]`` group of documentation prose."""
    fence = ("```bash\ncat <<EOF | kubectl apply -f -\nkind: Pod\nspec:\n  containers:\n  - name: s\n"
             "    image: vllm/vllm-openai:v0.33.0\n"
             "    args: [--model, m, --use-replayssm, --replayssm-buffer-len, '0']\n"
             "EOF\ncat > cfg.yaml <<EOF\nuse-replayssm: true\nreplayssm-buffer-len: 0\nEOF\n"
             "vllm serve m --config cfg.yaml [--port 8000]\n```\n")
    found = result(fence, "markdown")
    assert sorted((f.span.line, f.code) for f in found.findings if f.code in ("RSM007", "RSM106")) == \
        [(8, "RSM007"), (12, "RSM007")]
    assert len(found.launches) == 2
