"""``docker``/``podman``/``nerdctl`` command lines: which image runs, with which environment.

A container has its own environment: only the ``-e`` options reach it (``-e NAME``
passes the caller's value), an ``--env-file`` or ``-e "$VAR"`` may set anything, and
a running container's environment (``docker exec``) is not shown at all.  What the
image then does with the words after it is the engine's business
(:meth:`flake8_replayssm.engines.base.Engine.image_role`).
"""

from __future__ import annotations

from typing import Sequence

from .model import UNKNOWN_PART, Word

#: programs that start containers: `run IMAGE ...` or `exec CONTAINER ...`
CONTAINER_RUNTIMES = frozenset({"docker", "podman", "nerdctl"})
_VALUE_OPTIONS = frozenset({
    "-p", "--publish", "-v", "--volume", "--name", "--gpus", "--ipc", "--network", "--net",
    "-w", "--workdir", "--shm-size", "--runtime", "--mount", "--device", "-u", "--user",
    "--entrypoint", "--label", "-l", "--add-host", "--ulimit", "--cpus", "-m", "--memory",
    "--platform", "--pull", "--restart", "--hostname", "-h", "--cap-add", "--security-opt",
    "--env-file", "-e", "--env", "--group-add", "--pid", "--uts", "--tmpfs", "--log-driver",
    "--detach-keys", "--cidfile", "--cgroup-parent", "--dns", "--expose", "--health-cmd",
    "--memory-swap", "--userns", "--stop-signal", "--stop-timeout", "--device-cgroup-rule",
})


class Container:
    """What ``docker run [OPTIONS] IMAGE`` / ``docker exec [OPTIONS] CONTAINER`` says."""

    def __init__(self, action: str, env: dict[str, Word], env_unseen: list[str], entrypoint: Word | None,
                 image: Word | None, args: list[Word]) -> None:
        self.action, self.env, self.env_unseen = action, env, env_unseen
        self.env_open = bool(env_unseen)
        self.entrypoint, self.image, self.args = entrypoint, image, args


def read_container(words: Sequence[Word], i: int, env: dict[str, Word]) -> Container | None:
    """The container ``words[i]`` (a container runtime) runs or enters, or None for other actions."""
    action = words[i + 1].text if i + 1 < len(words) else None
    if action not in ("run", "create", "exec"):
        return None
    j = i + 2
    box_env: dict[str, Word] = {}
    unseen = [f"the running container's environment ({words[i].text} exec)"] if action == "exec" else []
    entrypoint: Word | None = None
    while j < len(words):
        text = words[j].text
        if text is None:
            j += 1
            continue
        if not text.startswith("-"):
            break
        flag, eq, inline = text.partition("=")
        value_word = None
        if flag in _VALUE_OPTIONS and not eq and j + 1 < len(words):
            value_word = words[j + 1]
            j += 1
        value = inline if eq else (value_word.text if value_word else None)
        if flag in ("-e", "--env") and value and "=" in value:
            key, _, val = value.partition("=")
            box_env[key] = Word(None if UNKNOWN_PART in val else val, (value_word or words[j]).span)
        elif flag in ("-e", "--env") and value and UNKNOWN_PART not in value:
            # `-e NAME`: the caller's value of NAME
            box_env[value] = env.get(value) or Word(None, (value_word or words[j]).span)
        elif flag in ("-e", "--env") and value_word is not None:
            unseen.append(f"{flag} {value_word.label or 'an unseen variable'}")  # `-e "$VAR"`: which one?
        elif flag == "--env-file":
            unseen.append(f"--env-file {value or ''}".rstrip())
        elif flag == "--entrypoint" and value is not None:
            entrypoint = Word(value, (value_word or words[j]).span)
        j += 1
    image = words[j] if j < len(words) else None
    return Container(action, box_env, unseen, entrypoint, image, list(words[j + 1:]))
