"""Notebook frontend: shell escapes and cells, numbered by cell (markdown counted) and line."""

from __future__ import annotations

import json

import pytest

from flake8_replayssm.frontends.notebook import (
    commands_in_notebook,
    python_cells_of_notebook,
    shell_parts_of_notebook,
)
from flake8_replayssm.model import Span


def notebook(*cells: tuple[str, str | list[str]]) -> str:
    out = []
    for kind, source in cells:
        cell = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        out.append(cell)
    return json.dumps({"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


NB = notebook(
    ("markdown", ["# Quickstart\n", "Run `!vllm serve x --use-replayssm` below.\n"]),
    ("code", ["!pip install -q vllm\n"]),
    ("code", ["# start the server\n",
              "!vllm serve nvidia/Nemotron-H-8B-Base-8K --port 8000 \\\n",
              "    --use-replayssm &\n",
              "import time\n",
              "if True:\n",
              "    !sleep 5\n",
              "time.sleep(1)\n"]),
    ("raw", "!vllm serve raw --use-replayssm"),
    ("code", "%%bash\nexport X=1\nvllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm\n"),
    ("code", "%%writefile serve.sh\nvllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm\n"),
    ("code", ["%%time\n", "out = !vllm serve m --use-replayssm\n", "x = 1\n"]),
)


def test_shell_parts_count_markdown_cells_and_keep_lines_and_columns():
    parts = shell_parts_of_notebook(NB)
    assert [(cell, first) for cell, _, first in parts] == [(1, 1), (2, 2), (2, 6), (4, 2), (6, 2)]
    cell, text, first = parts[1]
    assert text == (" vllm serve nvidia/Nemotron-H-8B-Base-8K --port 8000 \\\n"
                    "    --use-replayssm &")
    assert parts[3][1].startswith("export X=1\nvllm serve")
    assert parts[4][1] == " " * len("out = !") + "vllm serve m --use-replayssm"


def test_python_cells_blank_ipython_lines_and_stay_valid():
    cells = dict(python_cells_of_notebook(NB))
    assert sorted(cells) == [1, 2, 6]  # no markdown/raw, no %%bash or %%writefile
    source = cells[2]
    assert source.split("\n")[1:3] == ["", ""]
    assert source.split("\n")[5] == "    pass"  # keeps the if-block valid
    assert len(source.split("\n")) == 8
    compile(source, "cell", "exec")
    assert cells[6].split("\n")[:3] == ["", "", "x = 1"]


def test_commands_carry_cell_and_cell_lines(recording_shell):
    commands = commands_in_notebook(NB)
    serve = next(c for c in commands if c.words[0].text == "vllm" and c.words[0].span.cell == 2)
    spans = {w.text: w.span for w in serve.words}
    assert spans["vllm"] == Span(2, 1, 2, 5, cell=2)
    assert spans["--use-replayssm"] == Span(3, 4, 3, 19, cell=2)
    bash = next(c for c in commands if c.words[0].span.cell == 4)
    assert bash.words[0].span.line == 2  # the %%bash line is line 1


def test_env_magic_and_os_environ_apply_to_later_shell_commands(recording_shell):
    nb = notebook(
        ("code", ["!vllm serve a --use-replayssm\n"]),
        ("code", ["%env VLLM_USE_V2_MODEL_RUNNER=0\n", "import os\n",
                  "os.environ['HF_HOME'] = '/data'\n"]),
        ("code", ["!vllm serve b --use-replayssm\n"]),
    )
    first, second = commands_in_notebook(nb)
    assert first.env == {}
    assert {k: v.text for k, v in second.env.items()} == {"VLLM_USE_V2_MODEL_RUNNER": "0",
                                                          "HF_HOME": "/data"}
    runner = second.env["VLLM_USE_V2_MODEL_RUNNER"].span
    assert (runner.cell, runner.line, runner.col) == (1, 1, 30)


def test_source_as_a_single_string_and_assignment_form():
    nb = notebook(("code", "x = 1\nfiles = !ls\n!vllm serve m --use-replayssm"))
    assert [(c, f) for c, _, f in shell_parts_of_notebook(nb)] == [(0, 2), (0, 3)]


def test_real_shell_end_to_end():
    pytest.importorskip("tree_sitter_bash")
    from flake8_replayssm.recognise import launch_from_command

    commands = commands_in_notebook(NB)
    launches = [launch_from_command(c) for c in commands]
    launches = [lau for lau in launches if lau is not None]
    assert [lau.model.value for lau in launches if lau.model] == [
        "nvidia/Nemotron-H-8B-Base-8K", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "m"]
    first = launches[0].options["use_replayssm"].span
    assert (first.cell, first.line, first.col) == (2, 3, 4)


@pytest.mark.parametrize("text", [
    "", "not json", "[]", "{}", '{"cells": 3}', '{"cells": [1, "x", null]}',
    '{"cells": [{"cell_type": "code", "source": 7}]}',
    '{"cells": [{"cell_type": "code", "source": ["!", "\\\\"]}]}',
])
def test_bad_notebooks_give_nothing(text):
    assert commands_in_notebook(text) == []
    assert isinstance(shell_parts_of_notebook(text), list)
    assert isinstance(python_cells_of_notebook(text), list)
