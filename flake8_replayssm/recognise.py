"""Which commands start an engine: wrappers, interpreters, containers and entry points.

Frontends hand over :class:`~flake8_replayssm.model.Command` objects (a command's
words, with its environment and context); this module strips what runs the engine
(``env``, ``nohup``, ``srun ...``, ``uv run``, ``docker run IMAGE``, ``python -m``)
and asks the engines (:mod:`flake8_replayssm.engines`) whose entry point the rest
starts.  The engine reads its own arguments into a
:class:`~flake8_replayssm.model.Launch`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Sequence

from . import config_files, engines
from .forwarded_options import forwarded_by_command
from .argv import exits_before_launch
from .containers import CONTAINER_RUNTIMES, read_container
from .engines.base import ConfigReader
from .model import UNKNOWN_PART, Command, Entry, Launch, Word, readable
from .wrappers import ENV_ASSIGNMENT, WrapperEnv, after_wrapper, not_launchers, wrappers

PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


def basename(text: str | None) -> str:
    return posixpath.basename(text) if text else ""


def find_entry(words: Sequence[Word], env: dict[str, Word]) -> Entry | None:
    """Strip wrappers and find the entry point the command starts, or None.

    Wrappers (``nohup``, ``srun ...``, ``nsys profile ...``, ``conda run -n ENV``,
    data/launchers.toml) are skipped with their own arguments, applying what
    they do to the environment (``srun --export=ALL,V=0``, ``env -i``, ``sudo``);
    ``VAR=value`` words set the environment; ``docker``/``podman run`` starts an image.
    """
    env = dict(env)
    env_unseen: list[str] = []
    i = 0
    while i < len(words):
        text = words[i].text
        unseen = engines.unseen_program(words[i], words[i + 1] if i + 1 < len(words) else None) \
            if text is None else None
        if unseen is not None:
            return _with_unseen_env(unseen.program_entry(words, i, env), env_unseen)
        if _unseen_interpreter(words, i):
            return _with_unseen_env(_python_entry(words, i, env), env_unseen)  # `$PYTHON -m vllm...`
        if text is None and words[i].splat and i + 1 < len(words):
            i += 1  # `$PROFILER vllm serve ...`: an unseen wrapper, judged as written
            continue
        if text is not None and UNKNOWN_PART in text and not ENV_ASSIGNMENT.match(text):
            text = _program_behind_path(text)  # `"$VENV/bin/python" -m ...`, `$ROOT/bin/vllm serve`
        if text is None:
            return None
        if ENV_ASSIGNMENT.match(text):
            key, _, value = text.partition("=")
            env[key] = Word(None if UNKNOWN_PART in value else value, words[i].span)
            i += 1
            continue
        name = basename(text)
        engine = engines.for_program(name)
        entry: Entry | None = None
        if engine is not None:
            entry = engine.program_entry(words, i, env)
        elif PYTHON.match(name):
            entry = _python_entry(words, i, env)
        elif name in CONTAINER_RUNTIMES:
            entry = _container_entry(words, i, env)
        else:
            wrapper = wrappers().get(name)
            if wrapper is None or wrapper.sub and not _runs_subcommand(words, i, wrapper.sub):
                behind = _behind_unknown_program(words, i, name)
                if behind is None:
                    return None
                i = behind
                env_unseen.append(f"the environment {name} gives")  # what that program passes is not shown
                continue
            change = WrapperEnv(wrapper, env)
            i = after_wrapper(words, i, wrapper, change, starts_command)
            env = change.env
            env_unseen += change.unseen
            continue
        return _with_unseen_env(entry, env_unseen)
    return None


def _program_behind_path(text: str) -> str | None:
    """The program a path with an unseen folder names (``$VENV/bin/vllm``): its basename, when
    that is written in full; None when the program's own name is not seen."""
    name = basename(text)
    return name if name and UNKNOWN_PART not in name and "/" in text else None


def _with_unseen_env(entry: Entry | None, labels: list[str]) -> Entry | None:
    """``entry``, run in an environment that the sources ``labels`` may add variables to."""
    for label in labels if entry is not None else ():
        entry.unseen_env(label)
    return entry


def _runs_subcommand(words: Sequence[Word], i: int, subcommands: frozenset[str]) -> bool:
    return i + 1 < len(words) and words[i + 1].text in subcommands


def _behind_unknown_program(words: Sequence[Word], i: int, name: str) -> int | None:
    """Where an engine's command starts behind a program the linter does not know at ``i``
    (``ray job submit --address X -- vllm serve ...``): after its ``--``, or at an entry point
    that is not the value of one of its options; None when there is none, or when the program
    only prints, searches or installs (data/launchers.toml, ``not_launchers``)."""
    if name in not_launchers():
        return None
    for k in range(i + 1, len(words)):
        text = words[k].text
        if text == "--":
            return k + 1 if k + 1 < len(words) and _starts_entry(words, k + 1) else None
        before = words[k - 1].text
        if _starts_entry(words, k) and (k == i + 1 or before is None or not before.startswith("-")):
            return k
    return None


def _unseen_interpreter(words: Sequence[Word], k: int) -> bool:
    """An unseen word followed by ``-m`` (``$PYTHON -m vllm.entrypoints...``): an interpreter."""
    return words[k].text is None and k + 1 < len(words) and words[k + 1].text == "-m"


def _starts_entry(words: Sequence[Word], k: int) -> bool:
    """An engine's program or an interpreter starts at ``k`` (what an unknown program may run)."""
    if words[k].text is None:
        return _unseen_interpreter(words, k) \
            or engines.unseen_program(words[k], words[k + 1] if k + 1 < len(words) else None) is not None
    name = basename(words[k].text)
    return engines.is_program(name) or bool(PYTHON.match(name))


def starts_command(words: Sequence[Word], i: int) -> bool:
    """Whether a command :func:`find_entry` knows starts at ``words[i]`` (where a wrapper's own
    words end): an engine's program, an interpreter, a container runtime or another wrapper."""
    if words[i].text is None:
        return _unseen_interpreter(words, i) \
            or engines.unseen_program(words[i], words[i + 1] if i + 1 < len(words) else None) is not None
    return starts_program(words[i].text)


def starts_program(text: str | None) -> bool:
    name = basename(text)
    return engines.is_program(name) or bool(PYTHON.match(name)) or name in CONTAINER_RUNTIMES \
        or name in wrappers()


#: shells: ``sh -c "..."`` in a value is a command (its script is read as shell)
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash"})


def written_as_command(words: Sequence[Word]) -> bool:
    """Whether ``words`` begin the way a command is written: after ``NAME=value`` words, a
    program the linter knows (an engine's, an interpreter, a container runtime, a wrapper, a
    shell), a path or an unseen word (``$VLLM``, an f-string's ``{python}``), or a program it
    does not know that hands the rest on after ``--`` (``ray job submit ... -- vllm serve``).

    Where text is only kept or handed on (a Python string, not a shell script), this tells a
    command from a sentence that mentions an entry point (``"Please run vllm serve MODEL"``).
    """
    i = 0
    while i < len(words) and words[i].text is not None and ENV_ASSIGNMENT.match(words[i].text):
        i += 1
    if i >= len(words):
        return False
    first = words[i].text
    if first is None or "/" in first or UNKNOWN_PART in first:
        return True
    return starts_program(first) or basename(first) in SHELLS or any(w.text == "--" for w in words[i + 1:])


def _python_entry(words: Sequence[Word], i: int, env: dict[str, Word]) -> Entry | None:
    j = i + 1
    while j < len(words):
        text = words[j].text
        if text is None:
            return None
        module: str | None = None
        if text == "-m" and j + 1 < len(words):
            module, rest = words[j + 1].text, j + 2
        elif text.startswith("-m") and len(text) > 2:
            module, rest = text[2:], j + 1
        elif text in ("-X", "-W", "-Q"):
            j += 2
            continue
        elif text.startswith("-") and text not in ("-c", "-"):
            j += 1
            continue
        else:
            return None  # a script, `-c CODE` or stdin: not an entry point we read
        if module is None:
            return None
        return next((entry for engine in engines.all_engines()
                     if (entry := engine.module_entry(module, words, i, rest, env)) is not None), None)
    return None


def _container_entry(words: Sequence[Word], i: int, env: dict[str, Word]) -> Entry | None:
    """``docker run [OPTIONS] IMAGE [ARGS]`` and ``docker exec [OPTIONS] CONTAINER COMMAND``.

    The arguments of an engine's serving image go to its entrypoint, unless they start a
    program of their own or ``--entrypoint`` replaces it.
    """
    box = read_container(words, i, env)
    if box is None or box.image is None:
        return None
    image, args = box.image, box.args
    if box.entrypoint is not None:
        args = [box.entrypoint, *args]
    role = engines.image_role(image.text) if box.action != "exec" else None
    if role is not None and role.entry is not None and box.entrypoint is None \
            and not (args and starts_program(args[0].text)):
        entry = Entry(role.engine, role.entry, args, image.span, box.env, image=image.text,
                      label=f"{basename(words[i].text)} run {readable(image.text)}")
    else:
        found = find_entry(args, box.env)
        if found is None:
            return None
        entry = found
        if role is not None:
            entry.image = image.text
    for label in box.env_unseen:
        entry.unseen_env(label)
    return entry


class Elsewhere:
    """The environment a command gets when a prefix hands it to another place or changes it.

    ``inherits``: the caller's environment is part of it (a wrapper that only changes some
    variables), so what the caller's file does not show is still open.
    """

    def __init__(self, env: dict[str, Word], unseen: list[str], image: str | None = None,
                 inherits: bool = False) -> None:
        self.env, self.unseen, self.image, self.inherits = env, unseen, image, inherits
        self.open_ended = bool(unseen)


def elsewhere(words: Sequence[Word], env: dict[str, Word]) -> Elsewhere | None:
    """Where the command after the prefix ``words`` runs, if not in the caller's environment.

    ``docker run -e X=1 IMAGE`` (a new container: its ``-e`` options, and the image's
    release when it is an engine's image), ``ssh host`` or ``kubectl exec POD --`` (an
    environment this file does not show), a wrapper that changes the environment (``srun
    --export=ALL,V=0``, ``env -i``, ``sudo``); None for wrappers that keep the caller's
    environment as it is (``nohup``, ``srun``, ``apptainer exec``).
    """
    env = dict(env)
    env_unseen: list[str] = []
    changed = cleaned = False
    known = wrappers()
    i = 0
    while i < len(words):
        text = words[i].text
        name = basename(text)
        if name in CONTAINER_RUNTIMES:
            box = read_container(words, i, env)
            if box is None:
                return Elsewhere({}, [f"the environment {name} gives"])
            image = box.image.text if box.image is not None and box.action != "exec" else None
            return Elsewhere(box.env, box.env_unseen, image if engines.image_role(image) is not None else None)
        wrapper = known.get(name)
        if wrapper is not None and wrapper.env == "unknown":
            return Elsewhere({}, [f"the environment {name} gives"])
        if wrapper is not None:
            change = WrapperEnv(wrapper, env)
            i = after_wrapper(words, i, wrapper, change, starts_command)
            env = change.env
            env_unseen += change.unseen
            changed, cleaned = changed or change.changed, cleaned or change.cleaned
            continue
        if changed and text is not None and ENV_ASSIGNMENT.match(text):  # `env -i A=1 bash -c ...`
            key, _, value = text.partition("=")
            env[key] = Word(None if UNKNOWN_PART in value else value, words[i].span)
        i += 1
    return Elsewhere(env, env_unseen, inherits=not cleaned) if changed else None


def launch_from_command(command: Command, *, read_config: ConfigReader | None = None) -> Launch | None:
    """The launch ``command`` performs, or ``None`` if it starts no engine.

    A command that starts no engine's entry point may still hand options to one under a
    framework's own names (:mod:`.passthrough`: Hydra overrides, prefixed options,
    ``--model_args``): that is read as the engine's launch.
    """
    role = engines.image_role(command.image) if command.image is not None else None
    if command.image is not None and command.words and not command.replaces_entrypoint \
            and not _image_command(command.words):
        if role is None or role.entry is None:
            return None  # an image without a serving entrypoint for bare arguments
        entry = Entry(role.engine, role.entry, list(command.words), command.words[0].span, dict(command.env),
                      image=command.image, label=f"{readable(command.image)} entrypoint")
    elif command.image is not None and not command.words:
        return None
    else:
        found = find_entry(command.words, command.env)
        if found is None:
            return _forwarded(command, read_config)
        entry = found
        if entry.image is None and command.image is not None:
            entry.image = command.image
    if exits_before_launch(entry.args):
        return None
    reader = read_config or (config_files.reader_with_files(command.files) if command.files
                             else config_files.read_config_file)
    launch = engines.get(entry.engine).launch_from_entry(entry, command.base_dir, reader)
    launch.env_unseen = list(dict.fromkeys(
        command.env_unseen + (["an environment the file does not show"]
                              if command.env_open_ended and not command.env_unseen else []) + entry.env_unseen))
    launch.env_open_ended = bool(launch.env_unseen)
    launch.group = command.group
    if command.forwarded_by:
        launch.forwarded_by = command.forwarded_by
        launch.label = f"{command.forwarded_by}: {launch.label or launch.entry}"
    return launch


def _forwarded(command: Command, read_config: ConfigReader | None) -> Launch | None:
    """The engine launch a framework's command line hands its options to (:mod:`.passthrough`)."""
    if command.forwarded_by or exits_before_launch(command.words):
        return None  # already a framework's forwarded command; `--help` runs nothing
    found = forwarded_by_command(command)
    if isinstance(found, Command):
        return launch_from_command(found, read_config=read_config)
    if found is not None:
        found.env_unseen = list(command.env_unseen)
        found.env_open_ended = bool(found.env_unseen) or command.env_open_ended
        found.group = command.group
    return found


def _image_command(words: Sequence[Word]) -> bool:
    """Whether an image's words replace its entrypoint (``vllm serve ...``, ``python -m ...``)."""
    return starts_program(words[0].text) or basename(words[0].text) in ("sh", "bash")
