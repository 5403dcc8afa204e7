"""A compose service built from a Dockerfile (on vLLM's image, presumably: its ``build:``) whose
``command:`` starts with a word wholly behind a variable (Harbor's ``${HARBOR_VLLM_MODEL_SPECIFIER}``,
which holds ``--model M``): the options after it are the image entrypoint's, as when the first
word is an option."""

from __future__ import annotations

import textwrap

from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text


def read(text: str):
    return lint_text(textwrap.dedent(text).lstrip("\n"), "yaml", LintConfig(vllm_version="0.33.0", inventory=True))


BUILT = """
    services:
      vllm:
        build: {context: ./vllm}
        command: >
          ${VLLM_MODEL_SPECIFIER}
          --use-replayssm --replayssm-buffer-len 0
    """


def test_a_built_service_whose_command_starts_with_a_variable():
    result = read(BUILT)
    assert [(n.line, n.model) for n in result.launches] == [(5, "unknown (the model is not static)")]
    assert {(f.span.line, f.code) for f in result.findings} >= {(6, "RSM007")}


def test_a_variable_then_options_that_name_no_engine_option_is_no_launch():
    assert read(BUILT.replace("--use-replayssm --replayssm-buffer-len 0", "--port 8000 --workers 2")).launches == []


def test_an_image_that_is_not_vllms_and_is_not_built_is_no_launch():
    assert read(BUILT.replace("build: {context: ./vllm}", "image: example/app:1")).launches == []
