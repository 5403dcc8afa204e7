"""systemd units (``*.service``, or one a script writes in a here-document): the commands they run.

``ExecStart=`` (and ``ExecStartPre=``/``ExecStartPost=``/``ExecReload=``) is a command line that
systemd splits much as a shell does (quotes, a backslash at the end of a line continues it),
after optional prefix characters (``-``, ``@``, ``:``, ``+``, ``!``); ``Environment=`` lines set
the variables it runs with, and an ``EnvironmentFile=`` may set any other (read like an env
file: DESIGN.md, unseen environments).  Each command goes to the shell frontend, placed in the
file, and the recogniser decides whether it starts an engine (``docker run vllm/vllm-openai``).
"""

from __future__ import annotations

import re

from ..model import Command, Word
from ._common import LineIndex, merge_context, placer, split_words
from .shell_snippets import shell_commands

_EXEC = re.compile(r"^\s*(ExecStart|ExecStartPre|ExecStartPost|ExecReload)\s*=\s*[-@:+!]*")
_ENVIRONMENT = re.compile(r"^\s*Environment\s*=\s*")
_ENVIRONMENT_FILE = re.compile(r"^\s*EnvironmentFile\s*=\s*-?(\S+)")


def commands_in_unit(text: str, *, path: str | None = None, base_dir: str | None = None) -> list[Command]:
    """The commands a unit file's ``Exec*=`` lines run, with its ``Environment=``."""
    lines = text.split("\n")
    index = LineIndex(text)
    env: dict[str, Word] = {}
    unseen: list[str] = []
    execs: list[tuple[str, list[int]]] = []
    k = 0
    while k < len(lines):
        line = lines[k].rstrip("\r")
        start = index.starts[k]
        exec_line = _EXEC.match(line)
        if exec_line is not None:
            script, chars = "", []
            begin = exec_line.end()
            while True:  # a backslash at the end of a line continues the command
                body = line[begin:]
                continued = body.rstrip().endswith("\\")
                if continued:
                    body = body.rstrip()[:-1] + " "
                script += body
                chars += list(range(start + begin, start + begin + len(body)))
                if not continued or k + 1 >= len(lines):
                    break
                k += 1
                line, start, begin = lines[k].rstrip("\r"), index.starts[k], 0
            execs.append((script, chars))
        elif _ENVIRONMENT.match(line):
            offset = _ENVIRONMENT.match(line).end()  # type: ignore[union-attr]
            for word, idx, _, _ in split_words(line[offset:]):
                name, eq, value = word.partition("=")
                if eq and idx:
                    first = start + offset + idx[min(len(name) + 1, len(idx) - 1)]
                    env[name] = Word(value, index.span(first, start + offset + idx[-1] + 1))
        elif _ENVIRONMENT_FILE.match(line):
            unseen.append(f"EnvironmentFile={_ENVIRONMENT_FILE.match(line).group(1)}")  # type: ignore[union-attr]
        k += 1
    out: list[Command] = []
    for script, chars in execs:
        place = placer(script, chars, index, index.span(chars[0] if chars else 0, chars[0] if chars else 0))
        for command in shell_commands(script, place, env, base_dir):
            merged = merge_context(command, env=env, env_open_ended=bool(unseen), base_dir=base_dir)
            out.append(merged if not unseen else _with_unseen(merged, unseen))
    return out


def _with_unseen(command: Command, unseen: list[str]) -> Command:
    from dataclasses import replace

    return replace(command, env_unseen=list(dict.fromkeys(command.env_unseen + unseen)))
