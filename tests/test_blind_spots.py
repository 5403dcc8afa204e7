"""Blind spots in the default output (issue 18): the summary line counts the launch-looking
lines no recognised launch covers, in the files that can hold a finding, and
``--show-launches`` lists them (SGLang-only files and notebooks too).

A launch-looking line names an engine's entry point (``vllm serve``, ``python -m
vllm.entrypoints.openai.api_server``, ``sglang serve``, ``python -m sglang.launch_server``...)
outside prose: not a comment, an echo or log line, an import, a step's name, and in Python
only a string written where a command can be (not a docstring, ``print``, ``help=``...).
"""

from __future__ import annotations

import json
import textwrap

import pytest

from flake8_replayssm.cli import main
from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


def unrecognised(text: str, kind: str) -> list[int]:
    result = lint_text(textwrap.dedent(text).lstrip("\n"), kind, LintConfig(vllm_version="0.33.0", inventory=True))
    return [u.line for u in result.unrecognised]


@pytest.mark.parametrize("kind, text, lines", [
    # an unknown program's option value (`--engine vllm serve`), not a wrapper: not read, listed
    ("shell", f"myrunner --engine vllm serve {NANO} --use-replayssm\n", [1]),
    ("shell", f"# vllm serve {NANO} --use-replayssm\necho 'vllm serve {NANO}'\n", []),
    ("shell", f"vllm serve {NANO} --use-replayssm\n", []),  # recognised
    ("dockerfile", "FROM vllm/vllm-openai:v0.33.0\n", []),  # an image names no entry point
    ("yaml", "steps:\n  - name: Dump vllm serve flags\n    run: ./dump.sh --use-replayssm\n", []),
    ("python", "from vllm.entrypoints.openai.api_server import build_app\nbuild_app(use_replayssm=True)\n", []),
    ("python", f'"""vllm serve {NANO} --use-replayssm"""\nprint("vllm serve {NANO} --use-replayssm")\n', []),
    ("python", 'logger = init_logger("vllm.entrypoints.openai.api_server")  # use_replayssm\n', []),
    ("python", f'from vllm import LLM\nllm = LLM("{NANO}")\n', []),  # an engine class call names no entry point
    # an argv list is a command whatever its program (an unknown one's option value here)
    ("python", f'run(["my-launcher", "--engine", "vllm", "serve", "{NANO}", "--use-replayssm"])\n', [1]),
    ("python", f'run(["vllm", "serve", "{NANO}", "--use-replayssm"])\n', []),
])
def test_what_counts_as_a_launch_looking_line(kind, text, lines):
    assert unrecognised(text, kind) == lines


def test_the_summary_line_counts_blind_spots_in_files_that_can_hold_a_finding(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.sh").write_text(f"myrunner --engine vllm serve {NANO} --use-replayssm\n"
                                       f"wrapper --mode vllm serve {NANO} --use-replayssm\n")
    (tmp_path / "notes.sh").write_text(f"myrunner --engine vllm serve {NANO}\n")  # nothing to report here
    assert main(["check", "--vllm-version", "0.33.0", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == \
        "No findings (2 files checked); 2 launch-looking lines not recognised: --show-launches lists them."
    assert main(["check", "--show-launches", "--format", "json", "--vllm-version", "0.33.0", str(tmp_path)]) == 0
    listed = json.loads(capsys.readouterr().out)["unrecognised"]
    assert sorted((u["path"].rsplit("/", 1)[-1], u["line"]) for u in listed) == \
        [("notes.sh", 1), ("serve.sh", 1), ("serve.sh", 2)]
    (tmp_path / "serve.sh").write_text(f"vllm serve {NANO} --use-replayssm\n")
    assert main(["check", "--vllm-version", "0.33.0", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "Found 1 finding (1 error) in 1 file (2 checked)."
    (tmp_path / "other.sh").write_text(f"wrapper --mode vllm serve {NANO} --use-replayssm\n")
    main(["check", "--vllm-version", "0.33.0", str(tmp_path)])
    assert capsys.readouterr().out.splitlines()[-1].endswith(
        "; 1 launch-looking line not recognised: --show-launches lists it.")
    main(["check", "-q", "--vllm-version", "0.33.0", str(tmp_path)])
    assert "launch-looking" not in capsys.readouterr().out


def _notebook(*cells: tuple[str, str]) -> str:
    return json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": source,
                                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                 for kind, source in cells],
                       "metadata": {"kernelspec": {"name": "python3", "language": "python"}},
                       "nbformat": 4, "nbformat_minor": 5})


def test_an_sglang_only_notebook_is_listed_by_show_launches(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.ipynb").write_text(_notebook(
        ("code", "!python3 -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct --port 30000\n"),
        ("code", "!my-launcher --backend sglang.launch_server --port 30000\n")))
    assert main(["check", "--show-launches", "--format", "json", str(tmp_path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [(item["cell"], item["engine"]) for item in shown["launches"]] == [(0, "sglang")]
    assert [(item["cell"], item["line"]) for item in shown["unrecognised"]] == [(1, 1)]


@pytest.mark.parametrize("name, body, expected", [
    ("serve.sh", f"#!/bin/bash\nvllm serve {NANO} --use-replayssm --replayssm-buffer-len 0\n", {(3, "RSM007")}),
    ("serve", f"#!/bin/bash\nvllm serve {NANO} --use-replayssm --replayssm-buffer-len 0\n", {(3, "RSM007")}),
    ("serve.yaml", f"model: {NANO}\nuse-replayssm: true\nreplayssm-buffer-len: 0\n", {(4, "RSM007")}),
    ("notes.txt", f"vllm serve {NANO} --use-replayssm --replayssm-buffer-len 0\n", set()),  # no kind we read
])
def test_a_writefile_cell_is_read_as_the_file_it_writes(name, body, expected):
    text = _notebook(("code", f"%%writefile {name}\n{body}"))
    result = lint_text(text, "notebook", LintConfig(vllm_version="0.33.0", inventory=True))
    assert {(f.span.line, f.code) for f in result.findings if f.code == "RSM007"} == expected
    assert all(f.span.cell == 0 for f in result.findings)
    assert [u.line for u in result.unrecognised] == ([] if expected or "vllm serve" not in body else [2])


@pytest.mark.parametrize("writes", ["cat > notes.md <<EOF", "cat <<'EOF' > notes.md",
                                    "tee -a notes.md <<EOF >/dev/null"])
def test_a_here_document_that_writes_a_markdown_page_counts_as_that_page(writes):
    """Its prose is prose (never launch-looking), its code blocks are code: a script that writes
    `To try it: vllm serve ...` into notes.md hides no launch there."""
    text = textwrap.dedent(f"""\
        {writes}
        To try ReplaySSM: vllm serve $MODEL --use-replayssm
        ```bash
        vllm serve $MODEL --use-replayssm
        ```
        EOF
        echo done --use-replayssm
        """)
    assert unrecognised(text, "shell") == [4]


@pytest.mark.parametrize("target", ["run.sh", "notes.txt", "$OUT"])
def test_a_here_document_that_writes_anything_else_keeps_every_line(target):
    text = f"cat > {target} <<EOF\nmyrunner --engine vllm serve m --use-replayssm\nEOF\n"
    assert unrecognised(text, "shell") == [2]


#: a page with a vLLM trigger (``api_server``) and an SGLang launch in a YAML block scalar whose
#: own text holds no trigger: both launches are recognised
_BOTH_ENGINES = """\
```yaml
image: lmsysorg/sglang:v0.5.10
commands:
  - |
    sglang serve \\
      --model-path org/model
```

```yaml
commands:
  - python -m vllm.entrypoints.openai.api_server --model $MODEL --port 8000
```
"""


def _summary_and_listed(tmp_path, capsys, *options: str) -> tuple[str, list[int]]:
    main(["check", *options, "--vllm-version", "0.33.0", "--sglang-version", "0.5.23", str(tmp_path)])
    text = capsys.readouterr().out.splitlines()
    main(["check", "--show-launches", "--format", "json", "--vllm-version", "0.33.0", "--sglang-version", "0.5.23",
          str(tmp_path)])
    listed = [u["line"] for u in json.loads(capsys.readouterr().out)["unrecognised"]]
    return text[0] if options else text[-1], listed


def test_the_summary_counts_no_line_that_show_launches_recognises(tmp_path, capsys):
    """The count and the list are one computation: the default pass reads the SGLang launch in
    the fence as --show-launches does, rather than counting it as not recognised."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "page.md").write_text(_BOTH_ENGINES)
    summary, listed = _summary_and_listed(tmp_path, capsys)
    assert listed == []
    assert summary == "No findings (1 file checked)."
    # one launch the linter cannot read: counted by both, once
    (tmp_path / "page.md").write_text(_BOTH_ENGINES + "\n```bash\nmyrunner --engine sglang serve org/model\n```\n")
    summary, listed = _summary_and_listed(tmp_path, capsys)
    assert listed == [15]
    assert summary.endswith("; 1 launch-looking line not recognised: --show-launches lists it.")


def test_every_line_show_launches_lists_is_in_its_summary_count(tmp_path, capsys):
    """A file without a trigger cannot hold a finding, so the default summary is silent on it; with
    --show-launches its listed lines are counted on the summary line too."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "unit.md").write_text("```bash\nmyrunner --runtime=vllm serve --name tiny\n```\n"
                                      "```bash\nmyrunner --engine sglang serve org/model\n```\n")
    summary, listed = _summary_and_listed(tmp_path, capsys, "--show-launches")
    assert listed == [2, 5]
    assert summary == "No findings (1 file checked); 2 launch-looking lines not recognised: --show-launches lists them."
    summary, _ = _summary_and_listed(tmp_path, capsys)
    assert summary == "No findings (1 file checked)."
