"""Programs that run another command (``nohup``, ``srun``, ``env``, ``sudo``, ``nsys profile``...).

A launch is often written behind a profiler, a scheduler or an environment tool; this
is shell and tool knowledge, not any engine's, so it is data (``data/launchers.toml``)
read here once.  A wrapper is skipped with its own arguments, and what it does to the
environment of the command it runs (``srun --export=ALL,V=0``, ``env -i``, ``sudo``'s
reset) is applied, because an engine's verdict may depend on an environment variable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Mapping, Sequence

from .data_files import read_data
from .model import UNKNOWN_PART, Word, readable

ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: env_options kinds (data/launchers.toml) whose option takes a value (inline or the next word)
_ENV_VALUE_KINDS = frozenset({"assignment", "assignments", "slurm-export", "unknown", "unset"})


@dataclass(frozen=True)
class Wrapper:
    """A program that runs the rest of its arguments as a command (data/launchers.toml)."""

    name: str
    sub: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    env: str = "inherit"  # "inherit" the caller's environment, "reset" (sudo), or "unknown"
    #: options that change the command's environment -> how (launchers.toml header)
    env_options: Mapping[str, str] = field(default_factory=dict)
    #: plain words before the command are NAME=VALUE assignments (env, sudo): an unseen one may set any
    env_words: bool = False


@lru_cache(maxsize=1)
def not_launchers() -> frozenset[str]:
    """Programs whose arguments are never a launch (``echo``, ``grep``, ``pip``...)."""
    return frozenset(read_data("data/launchers.toml")["not_launchers"]["programs"])


@lru_cache(maxsize=1)
def wrappers() -> Mapping[str, Wrapper]:
    """Every wrapper of data/launchers.toml, by program name."""
    return {name: Wrapper(name, frozenset(spec.get("sub", ())), frozenset(spec.get("values", ())),
                          spec.get("env", "inherit"), dict(spec.get("env_options", {})),
                          bool(spec.get("env_words", False)))
            for name, spec in read_data("data/launchers.toml")["wrappers"].items()}


class WrapperEnv:
    """The environment a wrapper gives the command it runs: the caller's (``env`` of the
    wrapper in data/launchers.toml), changed by its ``env_options`` in the order written.

    ``open`` is True when some variable may be set that the file does not show;
    ``changed`` when it differs from the caller's in any way (then a ``bash -c`` string
    behind it is read with this environment, not the caller's).
    """

    def __init__(self, wrapper: Wrapper, caller: dict[str, Word]) -> None:
        self.caller = caller
        self.env: dict[str, Word] = {} if wrapper.env in ("reset", "unknown") else dict(caller)
        self.open = wrapper.env == "unknown"
        #: how the sources of unseen variables are written (for messages)
        self.unseen: list[str] = [f"the environment {wrapper.name} gives"] if self.open else []
        self.written: str | None = None
        self.changed = wrapper.env != "inherit"
        self.cleaned = wrapper.env != "inherit"

    def option(self, kind: str, value: Word | None, at: Word) -> None:
        """Apply one environment option (``value``: its value word, None for a flag)."""
        self.changed = True
        self.written = at.text if value is None or value is at or "=" in (at.text or "") \
            else f"{at.text} {value.text}"  # how the option is written, for messages
        text = value.text if value is not None else None
        if kind == "clean":
            self.env, self.cleaned = {}, True
        elif kind == "keep":
            self.keep(text, at)
        elif kind in _ENV_VALUE_KINDS and (text is None or kind == "unknown"):
            self.see_not(self.written or "")  # `--env-file F`, `--export=$X`: anything may be set
        elif kind == "unset" and UNKNOWN_PART in (text or ""):
            self.see_not(self.written or "")
        elif kind == "unset":
            self.env.pop(text or "", None)
        elif kind == "slurm-export":
            self.slurm_export(text or "", value or at)
        else:
            for item in (text or "").split(",") if kind == "assignments" else [text or ""]:
                self.assign(item, value or at)

    def assign(self, item: str, where: Word) -> None:
        """``NAME=VALUE`` sets NAME; ``NAME`` alone passes the caller's NAME."""
        name, eq, val = item.partition("=")
        if not _NAME.fullmatch(name):
            if UNKNOWN_PART in name:  # `-x $NAME=1`: some variable
                self.see_not(self.written or where.text or "")
            return
        if eq:
            self.env[name] = Word(None if UNKNOWN_PART in val else val, where.span)
        elif name in self.caller:
            self.env[name] = self.caller[name]
        else:
            self.env.pop(name, None)

    def slurm_export(self, text: str, where: Word) -> None:
        items = [item for item in text.split(",") if item]
        if "ALL" not in items:
            self.env, self.cleaned = {}, True  # NONE/NIL, or only the listed variables
        for item in items:
            if item not in ("ALL", "NONE", "NIL"):
                self.assign(item, where)

    def keep(self, names: str | None, at: Word) -> None:
        """``sudo -E``: the caller's environment after all; ``--preserve-env=A,B``: those names."""
        if names is None:
            self.env = {**self.caller, **self.env}
            self.cleaned = False
            return
        for name in names.split(","):
            if name in self.caller:
                self.env[name] = self.caller[name]

    def unseen_word(self, word: Word) -> None:
        """A word the file does not show where the wrapper reads assignments (``env $VARS``)."""
        self.changed = True
        self.see_not(word.label or "an assignment the file does not show")

    def see_not(self, label: str) -> None:
        """Some variable may be set that the file does not show; ``label`` says where."""
        label = readable(label) or "an assignment the file does not show"
        self.open = True
        if label not in self.unseen:
            self.unseen.append(label)


def after_wrapper(words: Sequence[Word], i: int, wrapper: Wrapper, change: WrapperEnv,
                  starts_command: Callable[[Sequence[Word], int], bool]) -> int:
    """The index of the command a wrapper at ``i`` runs (len(words) when there is none);
    its environment options are applied to ``change``.  ``starts_command(words, j)`` says
    whether a command the linter knows starts at ``j`` (where the wrapper's own words end)."""
    j = i + 1
    if wrapper.sub:
        if j >= len(words) or words[j].text not in wrapper.sub:
            return len(words)
        j += 1
    while j < len(words):
        text = words[j].text
        if text is None and starts_command(words, j):
            return j
        if text is None and wrapper.env_words:
            change.unseen_word(words[j])
        if text is None or text == "--":
            j += 1
            continue
        if text in wrapper.env_options or text.partition("=")[0] in wrapper.env_options:
            j = _env_option(words, j, wrapper, change)
            continue
        if text.startswith("-") and len(text) > 1:
            flag, eq, _ = text.partition("=")
            j += 2 if not eq and flag in wrapper.values else 1
            continue
        if ENV_ASSIGNMENT.match(text) or starts_command(words, j):
            return j
        j += 1  # the wrapper's own word: a CPU list, a duration, an image, a host, a pod
    return j


def _env_option(words: Sequence[Word], j: int, wrapper: Wrapper, change: WrapperEnv) -> int:
    """Apply the environment option at ``j`` (``--export=ALL,V=0``, ``-x V=0``, ``-i``);
    the index after it."""
    word = words[j]
    text = word.text or ""
    flag, eq, inline = text.partition("=")
    kind = wrapper.env_options.get(text) or wrapper.env_options[flag]
    if kind in _ENV_VALUE_KINDS and not eq:
        change.option(kind, words[j + 1] if j + 1 < len(words) else None, word)
        return j + 2
    change.option(kind, Word(inline, word.span) if eq else None, word)
    return j + 1
