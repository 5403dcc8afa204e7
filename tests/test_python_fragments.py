"""A command built in Python from fragments (class E of survey 3): parts joined with a separator
the shell reads as a blank (``" \\\\\\n    ".join(parts)``, a command written over several lines),
and a command built inside a ``try`` body (straight-line code up to where it may raise), handed
to a project helper."""

from __future__ import annotations

import textwrap

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


def codes(source: str) -> set[str]:
    result = lint_text(textwrap.dedent(source).lstrip("\n"), "python", LintConfig(vllm_version="0.33.0"))
    return {f.code for f in result.findings}


FRAGMENTS = """
    def start(model, run_command):
        parts = ["docker run -d --gpus all", "vllm/vllm-openai:v0.33.0",
                 f"--model {{model}}", "--use-replayssm --replayssm-buffer-len 0"]
        return run_command({sep!r}.join(parts))
    """


@pytest.mark.parametrize("sep", [" ", " \\\n    ", "\t", " \\\n"])
def test_parts_joined_by_what_the_shell_reads_as_a_blank(sep):
    assert "RSM007" in codes(FRAGMENTS.format(sep=sep))


@pytest.mark.parametrize("sep", ["\n", ", ", ""])
def test_parts_joined_by_anything_else_are_not_one_command(sep):
    assert "RSM007" not in codes(FRAGMENTS.format(sep=sep))


def test_a_command_built_in_a_try_body():
    source = f"""
        import subprocess

        def go(max_tokens):
            try:
                parts = ["vllm serve {NANO}", "--use-replayssm --replayssm-buffer-len 0"]
                if max_tokens is not None:
                    parts.append(f"--max-model-len {{max_tokens}}")
                subprocess.run(" ".join(parts), shell=True)
            except Exception:
                pass
        """
    assert "RSM007" in codes(source)


def test_a_value_a_handler_may_give_is_unknown_after_the_try():
    source = f"""
        import subprocess

        try:
            length = "0"
        except Exception:
            length = "8"
        subprocess.run(["vllm", "serve", "{NANO}", "--use-replayssm", "--replayssm-buffer-len", length])
        """
    assert "RSM007" not in codes(source)  # 0 or 8: not 0 in every reading
