"""systemd units (``*.service``, or one a script writes in a here-document): the commands they run.

``ExecStart=`` (and ``ExecStartPre=``/``ExecStartPost=``/``ExecReload=``) is a command line that
systemd splits much as a shell does (quotes, a backslash at the end of a line continues it),
after optional prefix characters (``-``, ``@``, ``:``, ``+``, ``!``); ``Environment=`` lines set
the variables it runs with, and an ``EnvironmentFile=`` may set any other (read like an env
file: DESIGN.md, unseen environments).  Each command goes to the shell frontend, placed in the
file, and the recogniser decides whether it starts an engine (``docker run vllm/vllm-openai``).

A Podman quadlet unit (``*.container``, or such a unit shown in a Markdown page) runs a container
from its ``[Container]`` section: ``Image=`` is the image, ``Exec=`` the words after the image
(``podman run IMAGE ARGS``: the image's entrypoint runs them, so on ``vllm/vllm-openai`` they are
``vllm serve``'s arguments, and ``Exec=vllm serve ...`` on another image is that command),
``Entrypoint=`` replaces the image's own, ``Environment=`` is the container's environment and an
``EnvironmentFile=`` an environment the file does not show (podman(1) quadlet, "Container units").
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field, replace

from ..model import Command, Span, Word
from ._common import LineIndex, image_for_command, is_vllm_image, merge_context, placer, split_words
from .shell_snippets import shell_commands

_EXEC = re.compile(r"^\s*(ExecStart|ExecStartPre|ExecStartPost|ExecReload)\s*=\s*[-@:+!]*")
_ENVIRONMENT = re.compile(r"^\s*Environment\s*=\s*")
_ENVIRONMENT_FILE = re.compile(r"^\s*EnvironmentFile\s*=\s*-?(\S+)")
_SECTION = re.compile(r"^\s*\[([A-Za-z]+)\]\s*$")
#: a quadlet ``[Container]`` section's keys that say what runs
_QUADLET = re.compile(r"^\s*(Exec|Image|Entrypoint)\s*=\s*")


@dataclass
class _Container:
    """What a quadlet ``[Container]`` section says about the container it runs."""

    exec_line: tuple[str, list[int]] | None = None
    image: str = ""
    image_span: Span | None = None
    entrypoint: list[Word] = field(default_factory=list)
    env: dict[str, Word] = field(default_factory=dict)
    unseen: list[str] = field(default_factory=list)
    header: Span | None = None


def commands_in_unit(text: str, *, path: str | None = None, base_dir: str | None = None) -> list[Command]:
    """The commands a unit file's ``Exec*=`` lines run, with its ``Environment=``."""
    lines = text.split("\n")
    index = LineIndex(text)
    env: dict[str, Word] = {}
    unseen: list[str] = []
    execs: list[tuple[str, list[int]]] = []
    containers: list[_Container] = []
    section = ""
    k = 0
    while k < len(lines):
        line = lines[k].rstrip("\r")
        start = index.starts[k]
        header = _SECTION.match(line)
        if header is not None:
            section = header.group(1)
            if section == "Container":
                containers.append(_Container(header=index.span(start, start + len(line))))
            k += 1
            continue
        container = containers[-1] if section == "Container" and containers else None
        exec_line = _EXEC.match(line) if container is None else _QUADLET.match(line)
        if exec_line is not None:
            k, script, chars = _logical_line(lines, index, k, exec_line.end())
            key = exec_line.group(1)
            if container is None:
                execs.append((script, chars))
            elif key == "Exec":
                container.exec_line = (script, chars)
            elif key == "Image" and script.strip():
                container.image = script.strip()
                first = chars[len(script) - len(script.lstrip())]
                container.image_span = index.span(first, first + len(container.image))
            elif key == "Entrypoint":
                container.entrypoint = [Word(text, index.span(chars[idx[0]], chars[idx[-1]] + 1))
                                        for text, idx, _, _ in split_words(script) if idx]
        elif _ENVIRONMENT.match(line):
            offset = _ENVIRONMENT.match(line).end()  # type: ignore[union-attr]
            for word, idx, _, _ in split_words(line[offset:]):
                name, eq, value = word.partition("=")
                if eq and idx:
                    first = start + offset + idx[min(len(name) + 1, len(idx) - 1)]
                    (container.env if container is not None else env)[name] = \
                        Word(value, index.span(first, start + offset + idx[-1] + 1))
        elif _ENVIRONMENT_FILE.match(line):
            said = f"EnvironmentFile={_ENVIRONMENT_FILE.match(line).group(1)}"  # type: ignore[union-attr]
            (container.unseen if container is not None else unseen).append(said)
        k += 1
    out: list[Command] = [c for container in containers
                          if (c := _container_command(container, index, base_dir)) is not None]
    for script, chars in execs:
        place = placer(script, chars, index, index.span(chars[0] if chars else 0, chars[0] if chars else 0))
        for command in shell_commands(script, place, env, base_dir):
            merged = merge_context(command, env=env, env_open_ended=bool(unseen), base_dir=base_dir)
            out.append(merged if not unseen else _with_unseen(merged, unseen))
    return out


def _logical_line(lines: list[str], index: LineIndex, k: int, begin: int) -> tuple[int, str, list[int]]:
    """The value of a key from column ``begin`` of line ``k``, with the lines a backslash at the
    end continues it on: (its last line, the text, each character's offset in the file)."""
    line, start = lines[k].rstrip("\r"), index.starts[k]
    script, chars = "", []
    while True:
        body = line[begin:]
        continued = body.rstrip().endswith("\\")
        if continued:
            body = body.rstrip()[:-1] + " "
        script += body
        chars += list(range(start + begin, start + begin + len(body)))
        if not continued or k + 1 >= len(lines):
            return k, script, chars
        k += 1
        line, start, begin = lines[k].rstrip("\r"), index.starts[k], 0


def _container_command(container: _Container, index: LineIndex, base_dir: str | None) -> Command | None:
    """The command a quadlet container runs: ``Exec=`` given to the image's entrypoint (or to
    ``Entrypoint=``), in the container's own environment."""
    words: list[Word] = []
    if container.exec_line is not None:
        script, chars = container.exec_line
        fallback = index.span(chars[0], chars[0]) if chars else container.header
        place = placer(script, chars, index, fallback)
        found = shell_commands(script, place, {}, base_dir)
        words = found[0].words if found else []
    words = container.entrypoint + words
    if not words:
        return None  # the image's own command: nothing written to judge
    image = image_for_command(container.image) if is_vllm_image(container.image) else None
    command = Command(words=words, env=dict(container.env), env_open_ended=bool(container.unseen), image=image,
                      base_dir=base_dir, env_unseen=list(container.unseen))
    return replace(command, replaces_entrypoint=True) if container.entrypoint else command


def _with_unseen(command: Command, unseen: list[str]) -> Command:
    return replace(command, env_unseen=list(dict.fromkeys(command.env_unseen + unseen)))
