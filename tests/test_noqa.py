"""Suppressions in every file kind: ``# noqa`` on any line of a launch, the line-above directive,
the file-level directive, notebook cells and their ``!`` lines.

Fact used: on 0.33.0 a plain Nemotron-H Triton launch is RSM008 and Falcon-H1 is RSM001.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FALCON = "tiiuae/Falcon-H1-1.5B-Instruct"
CONFIG = LintConfig(vllm_version="0.33.0")


def found(text: str, kind: str = "shell") -> list[tuple[int, str]]:
    return [(f.span.line, f.code) for f in lint_text(text, kind, CONFIG).findings]


MULTILINE = f"vllm serve {NANO} \\\n  --use-replayssm \\\n  --port 8000{{tail}}\n"


K8S = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: v}}\nspec:\n  containers:\n    - name: v\n"
       "      image: vllm/vllm-openai:v0.33.0\n      args:\n        - --model{0}\n        - " + NANO + "{1}\n"
       "        - --use-replayssm{2}\n        - --port\n        - \"8000\"\n")


@pytest.mark.parametrize("where", [0, 1, 2])
def test_noqa_on_any_line_of_a_launch_written_over_several_lines(where):
    assert found(K8S.format("", "", ""), "yaml") == [(11, "RSM008")]
    tails = ["", "", ""]
    tails[where] = "  # noqa: RSM008"
    assert found(K8S.format(*tails), "yaml") == []


def test_noqa_on_the_last_line_of_a_continued_command():
    assert found(MULTILINE.format(tail="  # noqa: RSM008")) == []
    assert found(MULTILINE.format(tail="  # noqa: RSM001")) == [(2, "RSM008")]


@pytest.mark.parametrize("directive,left", [
    ("# replayssm-lint: disable=RSM008", []),
    ("# replayssm-lint: disable", []),
    ("# replayssm-lint: disable=RSM0", []),
    ("# replayssm-lint: disable=RSM001", [(3, "RSM008")]),
])
def test_directive_on_the_line_above_the_launch(directive, left):
    text = f"{directive}\n# the replica for the chat service\nvllm serve {NANO} --use-replayssm\n"
    assert found(text) == left


def test_directive_above_covers_only_the_next_launch():
    text = f"# replayssm-lint: disable=RSM008\nvllm serve {NANO} --use-replayssm\n\nvllm serve {NANO} --use-replayssm\n"
    assert found(text) == [(4, "RSM008")]


@pytest.mark.parametrize("kind,comment_first", [("shell", "#!/bin/bash\n"), ("dockerfile", ""), ("python", "")])
def test_file_level_directive(kind, comment_first):
    body = {"shell": f"vllm serve {NANO} --use-replayssm\nvllm serve {FALCON} --use-replayssm\n",
            "dockerfile": f'FROM vllm/vllm-openai:v0.33.0\nCMD ["--model", "{NANO}", "--use-replayssm"]\n',
            "python": f'from vllm import LLM\nLLM("{NANO}", use_replayssm=True)\n'}[kind]
    text = comment_first + body
    assert found(text, kind)
    assert found(text + "# replayssm-lint: disable-file\n", kind) == []
    assert {code for _, code in found(text + "# replayssm-lint: disable-file=RSM008\n", kind)} <= {"RSM001"}


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": source} for source in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_noqa_in_notebook_code_cells_and_bang_lines():
    python = f'from vllm import LLM\nllm = LLM("{NANO}", use_replayssm=True)'
    bang = f"!vllm serve {NANO} --use-replayssm"
    text = _notebook(python, bang)
    assert sorted(code for _, code in found(text, "notebook")) == ["RSM008", "RSM008"]
    quiet = _notebook(python + "  # noqa: RSM008", bang + "  # noqa: RSM008")
    assert found(quiet, "notebook") == []
    one = _notebook(python, bang + "  # noqa")
    assert [(f.span.cell, f.code) for f in lint_text(one, "notebook", CONFIG).findings] == [(0, "RSM008")]


def test_markdown_fence_noqa_and_directive():
    text = (f"# Recipe\n\n```bash\n# replayssm-lint: disable=RSM008\nvllm serve {NANO} --use-replayssm\n```\n\n"
            f"```bash\nvllm serve {NANO} --use-replayssm  # noqa\n```\n")
    assert found(text, "markdown") == []


def test_flake8_honours_the_same_directives(tmp_path):
    (tmp_path / "setup.cfg").write_text("[flake8]\nreplayssm-vllm-version = 0.33.0\n")
    (tmp_path / "a.py").write_text(f'from vllm import LLM\n# replayssm-lint: disable=RSM008\nLLM("{NANO}", '
                                   "use_replayssm=True)\n")
    (tmp_path / "b.py").write_text(f'from vllm import LLM\nLLM(\n    "{NANO}",  # noqa: RSM008\n'
                                   "    use_replayssm=True)\n")
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "RSM", "."], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout) == (0, "")
    disabled = subprocess.run([sys.executable, "-m", "flake8", "--select", "RSM", "--disable-noqa", "."],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert disabled.stdout.count("RSM008") == 2
