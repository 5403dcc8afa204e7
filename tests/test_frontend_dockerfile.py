"""Dockerfile frontend: instructions, stages, exec/shell forms, exact spans."""

from __future__ import annotations


import pytest

from flake8_replayssm.frontends._common import LineIndex, json_string_array, placer, split_words
from flake8_replayssm.frontends.dockerfile import commands_in_dockerfile
from conftest import raw, texts
from flake8_replayssm.model import Span


DOCKERFILE = """\
# Nemotron-H image
FROM vllm/vllm-openai:v0.33.0

ENV HF_HOME=/models/hf-cache \\
    VLLM_USE_V2_MODEL_RUNNER=0

CMD ["--model", "nvidia/Nemotron-H-8B-Base-8K", \\
     "--use-replayssm", \\
     "--mamba-backend", "flashinfer"]
"""


def test_exec_cmd_on_vllm_image_gives_entrypoint_args_with_exact_spans():
    [cmd] = commands_in_dockerfile(DOCKERFILE)
    assert cmd.image == "vllm/vllm-openai:v0.33.0"
    assert texts(cmd) == ["--model", "nvidia/Nemotron-H-8B-Base-8K", "--use-replayssm",
                          "--mamba-backend", "flashinfer"]
    spans = [w.span for w in cmd.words]
    assert [(s.line, s.col, s.end_col) for s in spans] == [
        (7, 5, 14), (7, 16, 46), (8, 5, 22), (9, 5, 22), (9, 24, 36)]
    assert [raw(DOCKERFILE, s) for s in spans][2] == '"--use-replayssm"'


def test_env_multi_pair_with_continuation():
    [cmd] = commands_in_dockerfile(DOCKERFILE)
    assert {k: v.text for k, v in cmd.env.items()} == {
        "HF_HOME": "/models/hf-cache", "VLLM_USE_V2_MODEL_RUNNER": "0"}
    runner = cmd.env["VLLM_USE_V2_MODEL_RUNNER"].span
    assert (runner.line, raw(DOCKERFILE, runner)) == (5, "0")


def test_legacy_env_form_and_quoted_values():
    text = ('FROM vllm/vllm-openai:v0.30.0\n'
            'ENV VLLM_USE_V2_MODEL_RUNNER 1\n'
            'ENV A="two words" B=\'$NOT_EXPANDED\' C=${A}\n'
            'CMD ["--model", "m"]\n')
    [cmd] = commands_in_dockerfile(text)
    env = {k: v.text for k, v in cmd.env.items()}
    assert env == {"VLLM_USE_V2_MODEL_RUNNER": "1", "A": "two words", "B": "$NOT_EXPANDED",
                   "C": "two words"}
    assert raw(text, cmd.env["VLLM_USE_V2_MODEL_RUNNER"].span) == "1"


def test_global_arg_is_substituted_in_from_and_unknown_tag_is_an_unknown_part():
    text = ("ARG VLLM_VERSION=v0.31.0\n"
            "FROM vllm/vllm-openai:${VLLM_VERSION}\n"
            'CMD ["--use-replayssm"]\n'
            "FROM vllm/vllm-openai:${OTHER} AS two\n"
            'CMD ["--model", "x"]\n')
    first, second = commands_in_dockerfile(text)
    assert first.image == "vllm/vllm-openai:v0.31.0"
    assert second.image == "vllm/vllm-openai:\x00"  # any release: the engine judges every one it knows


def test_stage_inheritance_env_image_and_no_duplicate_launch():
    text = ("FROM vllm/vllm-openai:v0.32.0 AS base\n"
            "ENV VLLM_USE_V2_MODEL_RUNNER=1\n"
            'CMD ["--model", "nvidia/Nemotron-H-8B-Base-8K", "--use-replayssm"]\n'
            "\n"
            "FROM base AS prod\n"
            "ENV VLLM_USE_V2_MODEL_RUNNER=0\n")
    commands = commands_in_dockerfile(text)
    assert len(commands) == 1  # the CMD is written once, so it is one launch
    [cmd] = commands
    assert cmd.image == "vllm/vllm-openai:v0.32.0"  # inherited through the stage
    assert cmd.env["VLLM_USE_V2_MODEL_RUNNER"].text == "0"  # the final stage's env
    assert cmd.words[2].span.line == 3


def test_derived_stage_with_own_cmd_is_its_own_launch():
    text = ("FROM vllm/vllm-openai:v0.32.0 AS base\n"
            'CMD ["--model", "a"]\n'
            "FROM base\n"
            'CMD ["--model", "b"]\n')
    commands = commands_in_dockerfile(text)
    assert [texts(c) for c in commands] == [["--model", "a"], ["--model", "b"]]
    assert all(c.image == "vllm/vllm-openai:v0.32.0" for c in commands)


def test_exec_entrypoint_override_plus_cmd_gives_full_argv_and_keeps_image():
    text = ("FROM vllm/vllm-openai:v0.29.0\n"
            'ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]\n'
            'CMD ["--model", "/model", "--use-replayssm"]\n')
    [cmd] = commands_in_dockerfile(text)
    assert texts(cmd) == ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
                          "/model", "--use-replayssm"]
    assert cmd.image == "vllm/vllm-openai:v0.29.0"
    assert [w.span.line for w in cmd.words] == [2, 2, 2, 3, 3, 3]


def test_own_entrypoint_resets_inherited_cmd():
    text = ("FROM vllm/vllm-openai:v0.29.0 AS base\n"
            'CMD ["--model", "x", "--use-replayssm"]\n'
            "FROM base AS custom\n"
            'ENTRYPOINT ["vllm", "serve", "y"]\n')
    commands = commands_in_dockerfile(text)
    assert texts(commands[-1]) == ["vllm", "serve", "y"]


def test_tini_wrapper_and_exec_script_entrypoints_are_stripped():
    text = ("FROM ubuntu:22.04\n"
            'ENTRYPOINT ["/usr/bin/tini", "--"]\n'
            'CMD ["vllm", "serve", "m", "--use-replayssm"]\n'
            "FROM ubuntu:22.04\n"
            'ENTRYPOINT ["/docker-entrypoint.sh"]\n'
            'CMD ["python3", "-m", "vllm.entrypoints.openai.api_server"]\n')
    first, second = commands_in_dockerfile(text)
    assert texts(first) == ["vllm", "serve", "m", "--use-replayssm"]
    assert first.image is None
    assert texts(second)[0] == "python3"


def test_escape_directive_backtick_continuation():
    text = ("# escape=`\n"
            "FROM vllm/vllm-openai:v0.33.0\n"
            'CMD ["--model", "m", `\n'
            '     "--use-replayssm"]\n')
    [cmd] = commands_in_dockerfile(text)
    assert texts(cmd) == ["--model", "m", "--use-replayssm"]
    assert cmd.words[2].span.line == 4


def test_comment_and_empty_lines_inside_continuation_are_dropped():
    text = ("FROM vllm/vllm-openai:v0.33.0\n"
            'CMD ["--model", "m", \\\n'
            "# the next flag turns ReplaySSM on\n"
            "\n"
            '     "--use-replayssm"]\n')
    [cmd] = commands_in_dockerfile(text)
    assert texts(cmd) == ["--model", "m", "--use-replayssm"]
    assert cmd.words[2].span.line == 5


def test_shell_form_cmd_is_placed_back_into_the_dockerfile(recording_shell):
    text = ("FROM vllm/vllm-openai:v0.33.0\n"
            "ENV MODEL=nvidia/Nemotron-H-8B-Base-8K\n"
            "CMD vllm serve $MODEL \\\n"
            "    --use-replayssm\n")
    [cmd] = commands_in_dockerfile(text)
    [(script, variables)] = recording_shell
    assert script == "vllm serve $MODEL     --use-replayssm"  # Docker joins the lines
    assert variables == {"MODEL": "nvidia/Nemotron-H-8B-Base-8K"}
    by_text = {w.text: w.span for w in cmd.words}
    assert (by_text["vllm"].line, raw(text, by_text["vllm"])) == (3, "vllm")
    assert (by_text["--use-replayssm"].line, raw(text, by_text["--use-replayssm"])) \
        == (4, "--use-replayssm")
    assert cmd.image == "vllm/vllm-openai:v0.33.0"
    assert cmd.env["MODEL"].span.line == 2


def test_sh_c_in_exec_form_goes_through_the_shell_with_json_escapes_mapped(recording_shell):
    text = ('FROM vllm/vllm-openai:v0.31.0\n'
            'ENTRYPOINT ["/bin/sh", "-c", "vllm serve m --use-replayssm --x \\"y\\""]\n')
    [cmd] = commands_in_dockerfile(text)
    [(script, _)] = recording_shell
    assert script == 'vllm serve m --use-replayssm --x "y"'
    spans = {w.text: w.span for w in cmd.words}
    assert raw(text, spans["--use-replayssm"]) == "--use-replayssm"
    assert raw(text, spans['"y"']).endswith('y\\"')


def test_run_line_is_shell_with_arg_and_env(recording_shell):
    text = ("FROM python:3.11\n"
            "ARG MODEL=nvidia/Nemotron-H-8B-Base-8K\n"
            "RUN --mount=type=cache,target=/root/.cache pip install vllm && \\\n"
            "    vllm serve $MODEL --use-replayssm\n")
    commands = commands_in_dockerfile(text)
    [(script, variables)] = recording_shell
    assert script.startswith("pip install vllm")
    assert variables["MODEL"] == "nvidia/Nemotron-H-8B-Base-8K"
    assert commands[0].image is None


def test_run_heredoc_body_is_the_script(recording_shell):
    text = ("FROM vllm/vllm-openai:v0.30.0\n"
            "RUN <<EOF\n"
            "vllm serve m --use-replayssm\n"
            "EOF\n"
            'CMD ["--model", "m"]\n')
    commands = commands_in_dockerfile(text)
    assert recording_shell[0][0] == "vllm serve m --use-replayssm\n"
    assert commands[0].words[0].span.line == 3
    assert texts(commands[-1]) == ["--model", "m"]  # the body did not become instructions


def test_non_posix_shell_instruction_skips_shell_forms(recording_shell):
    text = ('FROM mcr.microsoft.com/windows:ltsc2022\n'
            'SHELL ["powershell", "-Command"]\n'
            'CMD vllm serve m --use-replayssm\n')
    assert commands_in_dockerfile(text) == []
    assert recording_shell == []


def test_real_shell_form_entrypoint_with_default_expansion():
    pytest.importorskip("tree_sitter_bash")
    text = ("FROM vllm/vllm-openai:v0.31.0\n"
            "ENV MODEL_NAME=nvidia/NVIDIA-Nemotron-Nano-9B-v2\n"
            "ENTRYPOINT python3 -m vllm.entrypoints.openai.api_server \\\n"
            "    --model ${MODEL_NAME:-other/model} \\\n"
            "    --use-replayssm\n"
            'CMD ["--ignored"]\n')
    [cmd] = commands_in_dockerfile(text)
    assert texts(cmd) == ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
                          "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "--use-replayssm"]
    model = cmd.words[4].span
    assert raw(text, model) == "${MODEL_NAME:-other/model}"
    assert cmd.words[5].span.line == 5


def test_end_to_end_launch():
    from flake8_replayssm.recognise import launch_from_command

    [cmd] = commands_in_dockerfile(DOCKERFILE)
    launch = launch_from_command(cmd)
    assert launch is not None
    assert launch.model is not None and launch.model.value == "nvidia/Nemotron-H-8B-Base-8K"
    assert launch.options["use_replayssm"].value is True
    assert launch.options["use_replayssm"].span.line == 8
    assert launch.options["mamba_backend"].value == "flashinfer"
    assert launch.release_hint == "0.33.0"
    assert launch.env["VLLM_USE_V2_MODEL_RUNNER"].value == "0"


@pytest.mark.parametrize("text", [
    "", "\x00\x01\x02", "FROM", "CMD [", 'FROM vllm/vllm-openai\nCMD ["a", 1]\n',
    "FROM x\nENV\nARG\nRUN\nENTRYPOINT []\n", "\\\n\\\n", "FROM a AS\nFROM a AS a\nFROM a\n",
    'FROM vllm/vllm-openai:v0.3\nCMD ["\\ud800"]\n', "RUN <<EOF\nno end",
])
def test_malformed_input_never_raises(text):
    result = commands_in_dockerfile(text)
    assert isinstance(result, list)


def test_exec_form_with_non_strings_is_shell_form(recording_shell):
    commands_in_dockerfile('FROM vllm/vllm-openai:v0.30.0\nCMD ["--port", 8000]\n')
    assert recording_shell[0][0] == '["--port", 8000]'


def test_helpers_keep_character_positions():
    words = split_words("a 'b c' \"d\\\"e\" f\\ g")
    assert [w[0] for w in words] == ["a", "b c", 'd"e', "f g"]
    assert words[2][2:] == (8, 14)
    items = json_string_array('["x", "a\\u00e9b"]')
    assert items is not None and items[1][0] == "aéb"
    assert json_string_array('["x", 1]') is None
    lines = LineIndex("ab\ncd")
    place = placer("cd", [3, 4], lines, Span(1, 0, 1, 0))
    assert place(0, 0, 0, 2) == Span(2, 0, 2, 2)
