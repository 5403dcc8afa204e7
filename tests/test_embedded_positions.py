"""A finding inside a document inside another is reported where its flag is written: a YAML
block scalar in a Markdown fence (dstack's pages), in a list item's fence, in a notebook cell.
The spellings SGLang judges per release (an ambiguous prefix such as ``--cuda-graph-max-bs`` in
0.5.23) are kept in the launch's history, which moves with the launch like its options."""

from __future__ import annotations

import json

from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text

CONFIG = LintConfig(sglang_version="0.5.23", inventory=True)

_FENCE = """\
# Page

Some text.

```yaml
commands:
  - |
    sglang serve \\
      --model-path org/model \\
      --cuda-graph-max-bs 64
```
"""


def places(text: str, kind: str) -> list[tuple[object, int, int]]:
    return [(f.span.cell, f.span.line, f.span.col) for f in lint_text(text, kind, CONFIG).findings
            if f.code == "RSM106"]


def test_a_flag_in_a_block_scalar_in_a_markdown_fence():
    assert places(_FENCE, "markdown") == [(None, 10, 6)]


def test_the_same_flag_in_a_list_items_fence_and_further_down():
    indented = "".join("   " + line if line.strip() else line for line in _FENCE.splitlines(True)[4:])
    text = "# Page\n\n" + "\n" * 5 + "1. Run it:\n\n" + indented
    line = text.splitlines().index("         --cuda-graph-max-bs 64") + 1
    assert places(text, "markdown") == [(None, line, 9)]


def test_a_flag_in_a_notebook_cell():
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# Serve\n"},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "!sglang serve --model-path org/model \\\n    --cuda-graph-max-bs 64\n"}]
    notebook = json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3"}},
                           "nbformat": 4, "nbformat_minor": 5})
    assert places(notebook, "notebook") == [(1, 2, 4)]  # cells counted from 0
