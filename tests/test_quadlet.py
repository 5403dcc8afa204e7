"""Podman quadlet units (``*.container``) and unit files shown on a Markdown page, read like the
systemd units already are: ``[Container]``'s ``Exec=`` is what follows the image on ``podman
run`` (the image's entrypoint runs it), ``Image=`` pins the release, ``Entrypoint=`` replaces
the image's own, ``Environment=`` is the container's environment."""

from __future__ import annotations

import textwrap

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import detect_kind, lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
BAD = "--use-replayssm --replayssm-buffer-len 0"
CONFIG = LintConfig(vllm_version="0.33.0", inventory=True)


def read(text: str, kind: str):
    return lint_text(textwrap.dedent(text).lstrip("\n"), kind, CONFIG)


def codes_at(text: str, kind: str) -> list[tuple[int, str]]:
    return sorted((f.span.line, f.code) for f in read(text, kind).findings)


def test_a_container_file_is_a_unit():
    assert detect_kind("deploy/vllm.container") == "systemd"


def test_exec_is_the_command_the_container_runs():
    unit = f"""
        [Unit]
        Description=vLLM

        [Container]
        Image=quay.io/example/vllm:latest
        Exec=vllm serve {BAD} --port 8080 \\
          {NANO}

        [Install]
        WantedBy=default.target
        """
    assert codes_at(unit, "systemd") == [(6, "RSM007"), (6, "RSM008")]
    result = read(unit, "systemd")
    assert [(n.line, n.model) for n in result.launches] == [(6, f"{NANO} (NemotronHForCausalLM)")]


def test_exec_on_the_vllm_image_is_the_entrypoints_arguments_and_the_tag_pins_the_release():
    unit = f"""
        [Container]
        Image=docker.io/vllm/vllm-openai:v0.31.0
        Environment=VLLM_USE_V2_MODEL_RUNNER=0
        Exec={NANO} {BAD}
        """
    result = lint_text(textwrap.dedent(unit).lstrip("\n"), "systemd", LintConfig(inventory=True))
    [note] = result.launches
    assert note.release == "0.31.0" and "image tag" in note.release_reason
    assert sorted(f.code for f in result.findings) == ["RSM007"]  # the container's environment: Model Runner V1


def test_an_environment_file_is_an_environment_the_file_does_not_show():
    unit = f"""
        [Container]
        Image=docker.io/vllm/vllm-openai:v0.33.0
        EnvironmentFile=/etc/vllm.env
        Exec={NANO} --use-replayssm
        """
    [rsm008] = [f for f in read(unit, "systemd").findings if f.code == "RSM008"]
    assert "EnvironmentFile=/etc/vllm.env" in rsm008.message


def test_an_entrypoint_replaces_the_images_own():
    unit = f"""
        [Container]
        Image=docker.io/vllm/vllm-openai:v0.33.0
        Entrypoint=/usr/bin/guidellm
        Exec=benchmark --target http://localhost:8000 {BAD}
        """
    assert read(unit, "systemd").launches == []


@pytest.mark.parametrize("page", [
    # the output of `cat` in a fence, after the command that wrote the unit
    f"""
    # Generate a unit

    ```
    $ mytool generate --quadlet tiny
    Generating quadlet file: tiny.container

    $ cat tiny.container
    [Container]
    Image=quay.io/example/vllm:latest
    Exec=vllm serve {BAD} {NANO}

    [Install]
    WantedBy=default.target
    ```
    """,
    # an indented code block
    f"""
    # Generate a unit

    The generated unit:

        [Container]
        Image=quay.io/example/vllm:latest
        Exec=vllm serve {BAD} {NANO}
    """,
    # an ini fence with a systemd service
    f"""
    # Service

    ```ini
    [Service]
    Environment=HF_HOME=/models
    ExecStart=/usr/bin/env vllm serve {BAD} {NANO}
    ```
    """,
])
def test_a_unit_on_a_markdown_page_is_read_once_where_it_is_written(page):
    result = read(page, "markdown")
    text = textwrap.dedent(page).lstrip("\n").split("\n")
    line = next(k + 1 for k, ln in enumerate(text) if "vllm serve" in ln)
    assert [n.line for n in result.launches] == [line]
    assert {(f.span.line, f.code) for f in result.findings} >= {(line, "RSM007")}
    assert result.unrecognised == []


def test_an_indented_paragraph_is_not_a_unit():
    page = f"""
    1. Start it:

        vllm serve {NANO} {BAD}
    """
    assert read(page, "markdown").launches == []
