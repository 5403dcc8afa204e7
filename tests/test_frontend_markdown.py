"""Markdown frontend: code blocks judged by content, placed exactly in the document."""

from __future__ import annotations


import pytest

from flake8_replayssm.frontends.markdown import commands_in_markdown, python_blocks_of_markdown
from conftest import raw


DOC = """\
# Recipe

Pass `vllm serve m --use-replayssm` to turn it on (prose, never a launch):
vllm serve prose --use-replayssm

```bash
env VLLM_USE_V2_MODEL_RUNNER=0 vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 \\
  --use-replayssm
```

A healthy start logs:

```text
INFO 08-20 10:12:03 [api_server.py:1751] non-default args: {'model': 'm', 'use_replayssm': True}
vllm serve nvidia/Nemotron-H-8B-Base-8K --use-replayssm --mamba-cache-mode all
```

```python
vllm serve nvidia/Nemotron-H-8B-Base-8K \\
    --use-replayssm --mamba-backend flashinfer
```

```python
from vllm import LLM
llm = LLM(model="nvidia/Nemotron-H-8B-Base-8K", use_replayssm=True)
```

```json
{"cmd": "vllm serve m --use-replayssm"}
```
"""


def test_bash_block_and_python_fenced_shell_are_placed_exactly(recording_shell):
    commands = commands_in_markdown(DOC)
    assert len(recording_shell) == 2  # the bash block and the shell in a python fence
    first, second = commands
    assert (first.words[0].span.line, raw(DOC, first.words[0].span)) == (7, "env")
    flag = next(w for w in first.words if w.text == "--use-replayssm")
    assert (flag.span.line, flag.span.col, raw(DOC, flag.span)) == (8, 2, "--use-replayssm")
    backend = next(w for w in second.words if w.text == "flashinfer")
    assert (backend.span.line, raw(DOC, backend.span)) == (20, "flashinfer")


def test_text_and_json_blocks_prose_and_inline_code_are_ignored(recording_shell):
    commands_in_markdown(DOC)
    assert not any("mamba-cache-mode all" in s or "prose" in s or '"cmd"' in s
                   for s, _ in recording_shell)


def test_python_engine_block_is_handed_over_with_its_first_line(recording_shell):
    assert python_blocks_of_markdown(DOC) == [
        (24, 'from vllm import LLM\nllm = LLM(model="nvidia/Nemotron-H-8B-Base-8K", '
             'use_replayssm=True)')]
    assert not any("LLM(" in s for s, _ in recording_shell)


def test_console_prompts_keep_commands_and_drop_output(recording_shell):
    doc = ("```console\n"
           "$ vllm serve m \\\n"
           "    --use-replayssm\n"
           "INFO vllm serve m --use-replayssm --mamba-cache-mode all\n"
           "(venv) $ vllm serve n --use-replayssm\n"
           "```\n")
    commands = commands_in_markdown(doc)
    [(script, _)] = recording_shell
    assert "INFO" not in script and "all" not in script
    assert script.split("\n")[0] == "  vllm serve m \\"  # the prompt became spaces
    words = [w for c in commands for w in c.words]
    n = next(w for w in words if w.text == "n")
    assert (n.span.line, raw(doc, n.span)) == (5, "n")


def test_console_block_without_prompts_counts_only_when_it_starts_with_a_command(recording_shell):
    logs = "```console\nINFO 08-20 starting\nvllm serve m --use-replayssm\n```\n"
    assert commands_in_markdown(logs) == []
    plain = "```console\nvllm serve m --use-replayssm\n```\n"
    assert len(commands_in_markdown(plain)) == 1


def test_indented_fence_in_a_list_and_tilde_fence(recording_shell):
    doc = ("1. Start:\n"
           "\n"
           "   ```sh\n"
           "   vllm serve m --use-replayssm\n"
           "   ```\n"
           "\n"
           "~~~~\n"
           "CUDA_VISIBLE_DEVICES=0 vllm serve n --use-replayssm\n"
           "~~~~\n")
    first, second = commands_in_markdown(doc)
    flag = first.words[-1]
    assert (flag.span.line, flag.span.col, raw(doc, flag.span)) == (4, 16, "--use-replayssm")
    assert second.words[0].span.line == 8


def test_untagged_block_needs_a_command_line(recording_shell):
    doc = "```\nsome output\n{'model': 'm', 'use_replayssm': True}\n```\n"
    assert commands_in_markdown(doc) == []
    assert recording_shell == []


def test_unclosed_fence_runs_to_the_end(recording_shell):
    doc = "text\n```bash\nvllm serve m --use-replayssm\n"
    [cmd] = commands_in_markdown(doc)
    assert cmd.words[0].span.line == 3


def test_yaml_and_dockerfile_blocks_go_to_their_frontends():
    doc = ("Deploy:\n"
           "\n"
           "```yaml\n"
           "containers:\n"
           "  - image: vllm/vllm-openai:v0.33.0\n"
           "    args: [--model, m, --use-replayssm]\n"
           "```\n"
           "\n"
           "```dockerfile\n"
           "FROM vllm/vllm-openai:v0.29.0\n"
           'CMD ["--model", "m", "--use-replayssm"]\n'
           "```\n"
           "\n"
           "```yaml\n"
           "model: m\n"
           "use-replayssm: true\n"
           "```\n")
    [docker] = commands_in_markdown(doc)  # YAML blocks go to the YAML reader through lint
    assert docker.image == "vllm/vllm-openai:v0.29.0"
    assert (docker.words[2].span.line, raw(doc, docker.words[2].span)) == (11, '"--use-replayssm"')
    from flake8_replayssm.frontends.markdown import document_blocks_of_markdown
    from flake8_replayssm.lint import launches_in

    assert [(line, indents) for kind, line, _, indents in document_blocks_of_markdown(doc) if kind == "yaml"] \
        == [(4, [0, 0, 0]), (15, [0, 0])]
    by_line = {launch.anchor.line: launch for launch in launches_in(doc, "markdown")}
    k8s = by_line[6]
    assert k8s.release_hint == "0.33.0"
    flag = k8s.options["use_replayssm"].span
    assert (flag.line, raw(doc, flag)) == (6, "--use-replayssm")
    serve_config = by_line[15]  # a serve config on its own: `vllm serve --config FILE`
    assert serve_config.label == "vllm serve --config" and serve_config.options["use_replayssm"].span.line == 16


def test_rst_code_block(recording_shell):
    doc = ("Serving\n"
           "=======\n"
           "\n"
           ".. code-block:: bash\n"
           "   :caption: serve\n"
           "\n"
           "   vllm serve m --use-replayssm\n"
           "\n"
           "Done.\n")
    [cmd] = commands_in_markdown(doc)
    assert (cmd.words[-1].span.line, raw(doc, cmd.words[-1].span)) == (7, "--use-replayssm")


def test_real_shell_end_to_end():
    pytest.importorskip("tree_sitter_bash")
    from flake8_replayssm.recognise import launch_from_command

    launches = [launch_from_command(c) for c in commands_in_markdown(DOC)]
    assert [lau.model.value for lau in launches if lau and lau.model] == [
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nvidia/Nemotron-H-8B-Base-8K"]
    first = launches[0]
    assert first is not None
    assert first.env["VLLM_USE_V2_MODEL_RUNNER"].value == "0"
    assert first.options["use_replayssm"].span.line == 8
    assert launches[1] is not None and launches[1].options["mamba_backend"].value == "flashinfer"


@pytest.mark.parametrize("text", ["", "```", "~~~\n", "```bash\n\\", "\x00\x01```\x02",
                                  ".. code-block::\n", "```{code-block} bash\n$\n```"])
def test_malformed_documents_never_raise(text):
    assert isinstance(commands_in_markdown(text), list)
    assert isinstance(python_blocks_of_markdown(text), list)


def test_indented_python_block_keeps_document_columns():
    doc = ("1. Load it:\n"
           "\n"
           "   ```python\n"
           "   from vllm import LLM\n"
           "   llm = LLM(model=\"m\", use_replayssm=True)\n"
           "   ```\n")
    [(first, source)] = python_blocks_of_markdown(doc)
    doc_lines = doc.split("\n")
    # source line k is document line first + k - 1, character for character
    for k, line in enumerate(source.split("\n")[1:], start=2):
        assert doc_lines[first + k - 2] == line
    assert first == 3  # the `if True:` wrapper sits on the fence line
    compile(source, "block", "exec")
