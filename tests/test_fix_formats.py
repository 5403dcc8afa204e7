"""``replayssm-lint fix`` in YAML (manifests, compose, serve configs), notebooks and ``**cfg`` dicts.

Every golden case checks: the fixed text is exactly the expected one; a second
run changes nothing; the fixed codes are gone on a re-lint (what is left is
listed); the result parses; and every line that changed held a word of the
launch (bytes elsewhere are identical).
"""

from __future__ import annotations

import ast
import collections
import difflib
import json
import re
from pathlib import Path

import pytest
import yaml

from flake8_replayssm import cli
from flake8_replayssm.config import LintConfig
from flake8_replayssm.fix.codemod import fix_text
from flake8_replayssm.fix.notebook import locate_sources, render_source
from flake8_replayssm.lint import detect_kind, lint_text

FIXTURES = Path(__file__).resolve().parent / "fix_pairs"
M = "nvidia/Nemotron-H-8B-Base-8K"
PAIR = re.compile(r"(?P<name>.+)\.(?P<release>\d+\.\d+\.\d+)(?P<unsafe>\.unsafe)?\.before\.(?P<ext>\w+)$")
#: a changed line must hold one of these (the launch's words, or the environment it gets)
LAUNCH_LINE = re.compile(r"vllm|replayssm|mamba|prefix[-_]caching|--|VLLM_|\b(flashinfer|triton|align|all|none|"
                         r"true|yes|on|env|environment)\b", re.IGNORECASE)


def findings(text: str, version: str, kind: str) -> list[tuple[str, str]]:
    result = lint_text(text, kind, LintConfig(vllm_version=version))
    return sorted((f"{f.span.cell}/{f.span.line}" if f.span.cell is not None else str(f.span.line), f.code)
                  for f in result.findings)


def fixed(text: str, version: str, kind: str, *, unsafe: bool = False) -> str:
    outcome = fix_text(text, kind, LintConfig(vllm_version=version), unsafe=unsafe)
    assert outcome.error is None
    return outcome.text


def assert_parses(text: str, kind: str) -> None:
    if kind == "yaml":
        list(yaml.safe_load_all(text))
    elif kind == "notebook":
        json.loads(text)
    elif kind == "python":
        ast.parse(text)


def assert_only_launch_lines_changed(before: str, after: str) -> None:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            for line in old[i1:i2]:
                assert LAUNCH_LINE.search(line), f"a line without a launch word changed: {line!r}"
    assert before.count("\r\n") == 0 or after.count("\n") == after.count("\r\n") or \
        after.count("\r\n") >= before.count("\r\n")


def check_golden(before: str, expected: str, version: str, kind: str, *, unsafe: bool = False,
                 left: list[tuple[str, str]] | None = None) -> None:
    left = sorted(left or [])
    start = findings(before, version, kind)
    assert collections.Counter(start) - collections.Counter(left), "the case must start with a finding it fixes"
    after = fixed(before, version, kind, unsafe=unsafe)
    assert after == expected
    assert_parses(after, kind)
    assert findings(after, version, kind) == left
    assert fixed(after, version, kind, unsafe=unsafe) == after
    assert_only_launch_lines_changed(before, after)


# ---------------------------------------------------------------------------
# golden fixture pairs: tests/fix_pairs/NAME.RELEASE[.unsafe].before.EXT -> .after.EXT
# ---------------------------------------------------------------------------

#: findings a fixed fixture still has, and why
LEFT = {
    # `<<: *vllm` may bring an `environment:`; a new key would replace it, so no fix
    "compose.0.31.0": [("48", "RSM008")],
    # `shared` is splatted by two calls: editing it would change both
    "dict-config.0.27.0": [("17", "RSM002")],
    # LLM(**cfg) needs os.environ, which only --unsafe writes
    "notebook.0.33.0": [("4/5", "RSM008")],
}


def _pairs():
    for before in sorted(FIXTURES.glob("*.before.*")):
        m = PAIR.match(before.name)
        if m is None:
            continue  # launch_0.30.0.*: tests/test_fix.py
        key = f"{m['name']}.{m['release']}{m['unsafe'] or ''}"
        yield pytest.param(before, m["release"], bool(m["unsafe"]), key, id=key)


def test_every_format_has_a_pair():
    kinds = {detect_kind(str(p.values[0])) for p in _pairs()}
    assert {"yaml", "notebook", "python"} <= kinds
    assert len(list(_pairs())) >= 12


@pytest.mark.parametrize("before_path,release,unsafe,key", list(_pairs()))
def test_fixture_pair(before_path, release, unsafe, key):
    before = before_path.read_bytes().decode("utf-8")
    expected = before_path.with_name(before_path.name.replace(".before.", ".after.")).read_bytes().decode("utf-8")
    kind = detect_kind(str(before_path), before)
    check_golden(before, expected, release, kind, unsafe=unsafe, left=LEFT.get(key))
    if unsafe:
        assert fixed(before, release, kind) != expected, "an .unsafe pair must need --unsafe"


def test_fixture_pair_through_the_cli(tmp_path):
    """The command writes what fix_text computes (one YAML, one notebook)."""
    for name in ("compose.0.31.0.before.yml", "notebook.0.33.0.before.ipynb"):
        target = tmp_path / name.replace(".before", "")
        target.write_bytes((FIXTURES / name).read_bytes())
        release = PAIR.match(name)["release"]  # type: ignore[index]
        left = 1 if LEFT.get(name.split(".before.")[0]) else 0  # exit 1 while findings remain
        assert cli.main(["fix", "--vllm-version", release, str(target)]) == left
        expected = (FIXTURES / name.replace(".before.", ".after.")).read_bytes()
        assert target.read_bytes() == expected
        assert cli.main(["fix", "--check", "--vllm-version", release, str(target)]) == left


# ---------------------------------------------------------------------------
# YAML
# ---------------------------------------------------------------------------

K8S_HEAD = "# head line, kept as is  \t\napiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n"
K8S_TAIL = "---\n# another document\nkind: Service\n"

YAML_GOLDEN = [
    ("k8s-single-quoted-items-0.27", "0.27.0", False,
     "  - name: vllm\n    image: vllm/vllm-openai:v0.27.0\n    args:\n"
     f"    - '--model'\n    - '{M}'\n    - '--use-replayssm'  # on\n    - '--enable-prefix-caching'\n",
     "  - name: vllm\n    image: vllm/vllm-openai:v0.27.0\n    args:\n"
     f"    - '--model'\n    - '{M}'\n    - '--use-replayssm'  # on\n    - '--mamba-cache-mode'\n    - 'align'\n"
     "    - '--mamba-backend'\n    - 'triton'\n    - '--enable-prefix-caching'\n", []),
    ("k8s-flow-env-list-0.30", "0.30.0", False,
     "  - name: vllm\n    image: vllm/vllm-openai:v0.30.0\n    env: [{name: HF_HOME, value: /data}]\n"
     f"    args: [--model, {M}, --use-replayssm]\n",
     "  - name: vllm\n    image: vllm/vllm-openai:v0.30.0\n"
     '    env: [{name: HF_HOME, value: /data}, {name: VLLM_USE_V2_MODEL_RUNNER, value: "0"}]\n'
     f"    args: [--model, {M}, --use-replayssm, --mamba-cache-mode, align, --mamba-backend, triton]\n", []),
    ("k8s-env-created-after-image-on-dash-line-0.33", "0.33.0", False,
     f"  - image: vllm/vllm-openai:v0.33.0\n    name: vllm\n    args: [\"--model\", \"{M}\", \"--use-replayssm\"]\n",
     "  - image: vllm/vllm-openai:v0.33.0\n    env:\n    - name: VLLM_USE_V2_MODEL_RUNNER\n"
     f'      value: "0"\n    name: vllm\n'
     f'    args: ["--model", "{M}", "--use-replayssm", "--mamba-backend", "triton"]\n',
     []),
    ("k8s-flow-mapping-env-items-0.33", "0.33.0", False,
     "  - name: vllm\n    image: vllm/vllm-openai:v0.33.0\n    env:\n      - {name: A, value: 'b'}\n"
     f"    command: [vllm, serve, {M}, --use-replayssm]\n",
     "  - name: vllm\n    image: vllm/vllm-openai:v0.33.0\n    env:\n      - {name: A, value: 'b'}\n"
     "      - {name: VLLM_USE_V2_MODEL_RUNNER, value: '0'}\n"
     f"    command: [vllm, serve, {M}, --use-replayssm, --mamba-backend, triton]\n", []),
    ("k8s-rsm101-rsm105-items-0.33", "0.33.0", False,
     "  - name: vllm\n    image: vllm/vllm-openai:v0.33.0\n    env:\n    - name: VLLM_USE_V2_MODEL_RUNNER\n"
     f'      value: "0"\n    args:\n    - --model\n    - {M}\n    - --use-replayssm\n    - --mamba-cache-mode\n'
     "    - align\n    - --config=/etc/vllm/serve.yaml\n",
     "  - name: vllm\n    image: vllm/vllm-openai:v0.33.0\n    env:\n    - name: VLLM_USE_V2_MODEL_RUNNER\n"
     f'      value: "0"\n    args:\n    - --model\n    - {M}\n    - --use-replayssm\n'
     "    - --config\n    - /etc/vllm/serve.yaml\n", []),
    ("k8s-unsafe-rsm001-block-item-0.28", "0.28.0", True,
     "  - name: vllm\n    image: vllm/vllm-openai:v0.28.0\n    args:\n    - --model\n"
     "    - state-spaces/mamba-130m-hf\n    - --use-replayssm   # try it\n    - --port\n    - '8000'\n",
     "  - name: vllm\n    image: vllm/vllm-openai:v0.28.0\n    args:\n    - --model\n"
     "    - state-spaces/mamba-130m-hf\n    - --port\n    - '8000'\n", []),
    ("k8s-shell-script-0.31", "0.31.0", False,
     "  - name: vllm\n    image: vllm/vllm-openai:v0.31.0\n    command: [/bin/bash, -c]\n    args:\n    - |\n"
     f"      set -e\n      exec vllm serve {M} \\\n        --use-replayssm \\\n        --port 8000\n",
     "  - name: vllm\n    image: vllm/vllm-openai:v0.31.0\n    command: [/bin/bash, -c]\n    args:\n    - |\n"
     f"      set -e\n      exec env VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} \\\n"
     "        --use-replayssm --mamba-cache-mode align --mamba-backend triton \\\n        --port 8000\n", []),
]


@pytest.mark.parametrize("case", YAML_GOLDEN, ids=[c[0] for c in YAML_GOLDEN])
def test_yaml_golden(case):
    _, version, unsafe, before_body, after_body, left = case
    before, expected = K8S_HEAD + before_body + K8S_TAIL, K8S_HEAD + after_body + K8S_TAIL
    check_golden(before, expected, version, "yaml", unsafe=unsafe, left=left)
    assert fixed(before, version, "yaml", unsafe=unsafe).startswith(K8S_HEAD)


COMPOSE_GOLDEN = [
    ("compose-flow-env-map-and-list-crlf-no-final-newline-0.30", "0.30.0",
     "services:\r\n  a:\r\n    image: vllm/vllm-openai:v0.30.0\r\n    environment: {HF_HOME: /data}\r\n"
     f"    command: [--model, {M}, --use-replayssm]\r\n  b:\r\n    image: vllm/vllm-openai:v0.30.0\r\n"
     f'    environment: ["HF_HOME=/data"]\r\n    command:\r\n      - --model\r\n      - {M}\r\n      - --use-replayssm',
     "services:\r\n  a:\r\n    image: vllm/vllm-openai:v0.30.0\r\n"
     '    environment: {HF_HOME: /data, VLLM_USE_V2_MODEL_RUNNER: "0"}\r\n'
     f"    command: [--model, {M}, --use-replayssm, --mamba-cache-mode, align, --mamba-backend, triton]\r\n"
     "  b:\r\n    image: vllm/vllm-openai:v0.30.0\r\n"
     f'    environment: ["HF_HOME=/data", "VLLM_USE_V2_MODEL_RUNNER=0"]\r\n    command:\r\n      - --model\r\n'
     f"      - {M}\r\n      - --use-replayssm\r\n      - --mamba-cache-mode\r\n      - align\r\n"
     "      - --mamba-backend\r\n      - triton"),
    ("compose-string-command-no-environment-0.33", "0.33.0",
     f"services:\n  vllm:\n    build: .\n    command: --model {M} --use-replayssm --mamba-cache-mode align\n",
     f'services:\n  vllm:\n    build: .\n    environment:\n      VLLM_USE_V2_MODEL_RUNNER: "0"\n'
     f"    command: --model {M} --use-replayssm --mamba-backend triton\n"),
    ("helm-values-extra-args-0.27", "0.27.0",
     "vllm:\n  image:\n    repository: vllm/vllm-openai\n    tag: v0.27.0\n  extraArgs:\n"
     f"    - --model\n    - {M}\n    - --use-replayssm\n    - --enable-prefix-caching\n",
     "vllm:\n  image:\n    repository: vllm/vllm-openai\n    tag: v0.27.0\n  extraArgs:\n"
     f"    - --model\n    - {M}\n    - --use-replayssm\n    - --mamba-cache-mode\n    - align\n"
     "    - --mamba-backend\n    - triton\n    - --enable-prefix-caching\n"),
]


@pytest.mark.parametrize("case", COMPOSE_GOLDEN, ids=[c[0] for c in COMPOSE_GOLDEN])
def test_compose_and_helm_golden(case):
    _, version, before, expected = case
    check_golden(before, expected, version, "yaml")


SERVE_GOLDEN = [
    ("rsm102-0.33-underscore", "0.33.0",
     "# vllm serve --config\nmodel: nvidia/NVIDIA-Nemotron-Nano-9B-v2\nuse_replayssm: true\n"
     "mamba_backend: flashinfer\nenable_prefix_caching: false   # off, we hoped\nport: 8000",
     "# vllm serve --config\nmodel: nvidia/NVIDIA-Nemotron-Nano-9B-v2\nuse_replayssm: true\n"
     "mamba_backend: flashinfer\ndisable_prefix_caching: true   # off, we hoped\nport: 8000"),
    ("rsm102-before-0.33", "0.31.0",
     f"model: {M}\nuse-replayssm: true\nmamba-backend: flashinfer\nenable-prefix-caching: false\n",
     f"model: {M}\nuse-replayssm: true\nmamba-backend: flashinfer\nno-enable-prefix-caching: true\n"),
    ("pins-after-last-key-without-newline-0.27", "0.27.0",
     f"model: {M}\nenable-prefix-caching: true\nuse-replayssm: true",
     f"model: {M}\nenable-prefix-caching: true\nuse-replayssm: true\nmamba-cache-mode: align\n"
     "mamba-backend: triton"),
    ("rsm104-mode-all-dropped-0.33", "0.33.0",
     f"model: {M}\nuse-replayssm: true\nmamba-backend: flashinfer\ndisable-prefix-caching: true\n"
     "mamba-cache-mode: all\nmax-model-len: 4096\n",
     f"model: {M}\nuse-replayssm: true\nmamba-backend: flashinfer\ndisable-prefix-caching: true\n"
     "max-model-len: 4096\n"),
]


@pytest.mark.parametrize("case", SERVE_GOLDEN, ids=[c[0] for c in SERVE_GOLDEN])
def test_serve_config_golden(case):
    _, version, before, expected = case
    check_golden(before, expected, version, "yaml")


def test_serve_config_unsafe_drops_the_key():
    before = "model: state-spaces/mamba-130m-hf\nuse-replayssm: true  # try\nmax-model-len: 4096\n"
    check_golden(before, "model: state-spaces/mamba-130m-hf\nmax-model-len: 4096\n", "0.28.0", "yaml",
                 unsafe=True)
    assert fixed(before, "0.28.0", "yaml") == before


def test_serve_config_rsm102_is_left_when_it_would_break_the_block_size():
    """Prefix caching off + --mamba-block-size is rejected (RSM006): the launch runs today."""
    text = f"model: {M}\nuse-replayssm: true\nmamba-block-size: 64\nenable-prefix-caching: false\n"
    assert [c for _, c in findings(text, "0.28.0", "yaml")] == ["RSM102"]
    assert fixed(text, "0.28.0", "yaml") == text


def test_yaml_shared_nodes_are_left_alone():
    """An anchored list used by two containers, and a service whose environment comes from a
    merge key: an edit would change the other user, or replace the inherited environment."""
    text = (K8S_HEAD + "  - name: a\n    image: vllm/vllm-openai:v0.33.0\n"
            f'    args: &args ["--model", "{M}", "--use-replayssm"]\n'
            "  - name: b\n    image: vllm/vllm-openai:v0.33.0\n    args: *args\n")
    assert findings(text, "0.33.0", "yaml")
    assert fixed(text, "0.33.0", "yaml") == text
    compose = ("x-base: &base\n  image: vllm/vllm-openai:v0.33.0\n  environment:\n    HF_HOME: /data\n"
               f"services:\n  a:\n    <<: *base\n    command: [--model, {M}, --use-replayssm]\n")
    assert findings(compose, "0.33.0", "yaml")
    assert fixed(compose, "0.33.0", "yaml") == compose


def test_yaml_env_from_is_left_alone():
    """The runner may come from the config map: the finding assumes it does not (DESIGN.md), but
    a fix that pins the runner next to it could contradict what the config map says."""
    text = (K8S_HEAD + "  - name: a\n    image: vllm/vllm-openai:v0.33.0\n    envFrom: [{configMapRef: {name: x}}]\n"
            f'    args: ["--model", "{M}", "--use-replayssm"]\n')
    assert findings(text, "0.33.0", "yaml") == [("10", "RSM008")]
    assert fixed(text, "0.33.0", "yaml") == text


def test_yaml_exec_form_is_never_given_a_shell_prefix():
    """`command: >` of a compose service is split by compose, not run by a shell."""
    text = (f"services:\n  v:\n    image: vllm/vllm-openai:v0.33.0\n    command: >\n      vllm serve {M}\n"
            "      --use-replayssm\n")
    after = fixed(text, "0.33.0", "yaml")
    assert "VLLM_USE_V2_MODEL_RUNNER=0 vllm" not in after
    assert 'VLLM_USE_V2_MODEL_RUNNER: "0"' in after
    assert findings(after, "0.33.0", "yaml") == []


def test_yaml_words_inside_one_argv_item_are_not_edited():
    """A list item is one argv element: words are never added inside it."""
    text = (K8S_HEAD + "  - name: a\n    image: vllm/vllm-openai:v0.27.0\n"
            f'    args: ["--model", "{M}", "--use-replayssm --enable-prefix-caching"]\n')
    assert fixed(text, "0.27.0", "yaml") == text


# ---------------------------------------------------------------------------
# notebooks
# ---------------------------------------------------------------------------

def _notebook(cells: list, **dump) -> str:
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": src} for src in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, **{"indent": 1, "ensure_ascii": False, **dump}) + "\n"


def test_notebook_ascii_escaped_file_stays_escaped():
    before = _notebook([["# résumé\n", f"!vllm serve {M} --use-replayssm  # é\n"], ["x = 1\n"]],
                       ensure_ascii=True)
    assert before.isascii()
    after = fixed(before, "0.33.0", "notebook")
    assert after.isascii()
    assert json.loads(after)["cells"][0]["source"] == [
        "# résumé\n", f"!VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} --use-replayssm --mamba-backend triton  # é\n"]
    assert after.split('"x = 1\\n"')[1] == before.split('"x = 1\\n"')[1]
    assert fixed(after, "0.33.0", "notebook") == after


def test_notebook_assignment_and_sx_forms():
    before = _notebook([[f"out = !vllm serve {M} --use-replayssm\n", f"%sx vllm serve {M} --use-replayssm"]])
    after = fixed(before, "0.31.0", "notebook")
    assert json.loads(after)["cells"][0]["source"] == [
        f"out = !VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} --use-replayssm --mamba-cache-mode align "
        "--mamba-backend triton\n",
        f"%sx VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} --use-replayssm --mamba-cache-mode align "
        "--mamba-backend triton"]
    assert findings(after, "0.31.0", "notebook") == []


def test_notebook_python_cell_keeps_ipython_lines():
    src = ["import os\n", "from vllm import LLM\n", "%load_ext autoreload\n",
           f'llm = LLM("{M}", use_replayssm=True, mamba_cache_mode="all")\n', "llm?"]
    before = _notebook([src])
    after = fixed(before, "0.28.0", "notebook")
    assert json.loads(after)["cells"][0]["source"] == src[:3] + [
        f'llm = LLM("{M}", use_replayssm=True, mamba_cache_mode="align")\n', "llm?"]


def test_locate_and_render_sources_round_trip():
    text = (FIXTURES / "notebook.0.33.0.before.ipynb").read_text(encoding="utf-8")
    sources = locate_sources(text)
    data = json.loads(text)
    assert sources is not None and sorted(sources) == list(range(len(data["cells"])))
    for index, source in sources.items():
        raw = data["cells"][index]["source"]
        assert source.value == ("".join(raw) if isinstance(raw, list) else raw)
        assert render_source(text, source, source.value) == text[source.start:source.end]


def test_notebook_that_is_not_json_is_left_alone(tmp_path, capsys):
    path = tmp_path / "broken.ipynb"
    text = '{"cells": [{"cell_type": "code", "source": ["!vllm serve x --use-replayssm"]}'
    path.write_text(text)
    assert cli.main(["fix", "--vllm-version", "0.33.0", str(path)]) == 1  # RSM900 is left
    assert "RSM900" in capsys.readouterr().out
    assert path.read_text() == text


# ---------------------------------------------------------------------------
# Python **cfg dicts
# ---------------------------------------------------------------------------

PY_HEAD = "import os\nfrom vllm import LLM, EngineArgs\n# untouched  \t\n"
PY_TAIL = "x = 1  # untouched too\n"

DICT_GOLDEN = [
    ("one-line-dict-pins-0.27", "0.27.0", False,
     f'cfg = {{"model": "{M}", "use_replayssm": True, "enable_prefix_caching": True}}\nLLM(**cfg)\n',
     f'cfg = {{"model": "{M}", "use_replayssm": True, "mamba_cache_mode": "align", "mamba_backend": "triton", '
     '"enable_prefix_caching": True}\nLLM(**cfg)\n'),
    ("dict-call-value-0.28", "0.28.0", False,
     f"kw = dict(model='{M}', use_replayssm=True, mamba_cache_mode='all')\nEngineArgs(**kw)\n",
     f"kw = dict(model='{M}', use_replayssm=True, mamba_cache_mode='align')\nEngineArgs(**kw)\n"),
    ("entry-with-comment-removed-0.33", "0.33.0", False,
     f'cfg = {{\n    "model": "{M}",\n    "use_replayssm": True,\n    "mamba_backend": "flashinfer",\n'
     '    "enable_prefix_caching": False,\n    "mamba_cache_mode": "none"  # deprecated\n}\nLLM(**cfg)\n',
     f'cfg = {{\n    "model": "{M}",\n    "use_replayssm": True,\n    "mamba_backend": "flashinfer",\n'
     '    "enable_prefix_caching": False\n}\nLLM(**cfg)\n'),
    ("unsafe-entry-removed-0.28", "0.28.0", True,
     'cfg = {"model": "state-spaces/mamba-130m-hf",\n       "use_replayssm": True}\nLLM(**cfg)\n',
     'cfg = {"model": "state-spaces/mamba-130m-hf"}\nLLM(**cfg)\n'),
    ("nested-base-dict-0.27", "0.27.0", False,
     f'base = {{"model": "{M}", "use_replayssm": True}}\ncfg = {{**base, "enable_prefix_caching": True}}\n'
     "LLM(**cfg)\n",
     f'base = {{"model": "{M}", "use_replayssm": True, "mamba_cache_mode": "align", "mamba_backend": "triton"}}\n'
     'cfg = {**base, "enable_prefix_caching": True}\nLLM(**cfg)\n'),
]


@pytest.mark.parametrize("case", DICT_GOLDEN, ids=[c[0] for c in DICT_GOLDEN])
def test_dict_golden(case):
    _, version, unsafe, before_body, after_body = case
    before, expected = PY_HEAD + before_body + PY_TAIL, PY_HEAD + after_body + PY_TAIL
    check_golden(before, expected, version, "python", unsafe=unsafe)
    assert fixed(before, version, "python", unsafe=unsafe).startswith(PY_HEAD)


@pytest.mark.parametrize("body", [
    # changed after it is built
    f'cfg = {{"model": "{M}", "use_replayssm": True, "enable_prefix_caching": True}}\ncfg["seed"] = 1\nLLM(**cfg)\n',
    f'cfg = {{"model": "{M}", "use_replayssm": True, "enable_prefix_caching": True}}\ncfg.update(seed=1)\n'
    "LLM(**cfg)\n",
    # splatted twice
    f'cfg = {{"model": "{M}", "use_replayssm": True, "enable_prefix_caching": True}}\nLLM(**cfg)\n'
    "EngineArgs(**cfg)\n",
], ids=["subscript-assignment", "update", "two-calls"])
def test_dict_that_is_not_only_this_launchs_is_left_alone(body):
    text = PY_HEAD + body + PY_TAIL
    assert "RSM002" in [c for _, c in findings(text, "0.27.0", "python")]
    assert fixed(text, "0.27.0", "python") == text


# ---------------------------------------------------------------------------
# safety
# ---------------------------------------------------------------------------

def test_a_fix_never_makes_an_accepted_launch_rejected(monkeypatch):
    """Fixes that would leave a launch vLLM accepts today rejected are rolled back."""
    import flake8_replayssm.engines.vllm.fixes as vllm_fixes
    from flake8_replayssm.fix import codemod

    text = f"model: {M}\nuse-replayssm: true\nmamba-block-size: 64\nenable-prefix-caching: false\n"
    outcome = codemod.fix_text(text, "yaml", LintConfig(vllm_version="0.28.0"))
    assert outcome.text == text and outcome.notes == []  # RSM102 is not even tried here
    original = vllm_fixes._plan_config

    def without_block_size_guard(planner, verdict, found):
        options = verdict.launch.options
        saved = options.pop("mamba_block_size", None)
        try:
            original(planner, verdict, found)
        finally:
            if saved is not None:
                options["mamba_block_size"] = saved

    monkeypatch.setattr(vllm_fixes, "_plan_config", without_block_size_guard)
    outcome = codemod.fix_text(text, "yaml", LintConfig(vllm_version="0.28.0"))
    assert outcome.text == text
    assert outcome.notes and "RSM006" in outcome.notes[0]


# ---------------------------------------------------------------------------
# property: random launches in YAML
# ---------------------------------------------------------------------------

from conftest import FIX_FAMILIES, FIX_RELEASES, fixable_left  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FAMILIES, RELEASES = FIX_FAMILIES, FIX_RELEASES


def _fixable_left(text: str, version: str, flags: list[str]) -> list[str]:
    return fixable_left(text, "yaml", version, flags)


def _yaml_launch(words: list[str], form: str) -> str:
    if form == "k8s-block":
        items = "".join(f"        - {json.dumps(w) if w[0] in '{[' else w}\n" for w in words)
        return ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n    - name: vllm\n"
                "      image: vllm/vllm-openai:latest\n      args:\n" + items)
    if form == "k8s-flow":
        return ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n    - name: vllm\n"
                "      image: vllm/vllm-openai:latest\n      env: [{name: HF_HOME, value: /data}]\n"
                f"      args: [{', '.join(json.dumps(w) for w in words)}]\n")
    if form == "compose-string":
        return ("services:\n  vllm:\n    image: vllm/vllm-openai:latest\n    command: >\n"
                + "".join(f"      {w}\n" for w in words))
    return ("services:\n  vllm:\n    image: vllm/vllm-openai:latest\n    environment:\n      - A=1\n"
            "    command:\n" + "".join(f"      - '{w}'\n" for w in words))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    version=st.sampled_from(RELEASES),
    picks=st.lists(st.tuples(st.integers(0, len(FAMILIES) - 1), st.integers(0, 3)),
                   max_size=len(FAMILIES), unique_by=lambda p: p[0]),
    form=st.sampled_from(["k8s-block", "k8s-flow", "compose-string", "compose-list"]),
)
def test_property_yaml_launch_has_no_fixable_finding_after_fix(version, picks, form):
    flags = [FAMILIES[f][i % len(FAMILIES[f])] for f, i in picks]
    words = ["--model", M] + [w for flag in flags for w in flag.split()]
    before = _yaml_launch(words, form) + "---\n# tail\nkind: Service\n"
    after = fixed(before, version, "yaml")
    list(yaml.safe_load_all(after))
    assert after.endswith("---\n# tail\nkind: Service\n")
    assert _fixable_left(after, version, flags) == []
    assert fixed(after, version, "yaml") == after
