"""Commands handed to any call, returned or stored: launches recognised by what they say.

An argv list or a command string whose words begin with an engine's entry point is a launch
wherever the file writes it (DESIGN.md), not only where ``subprocess`` runs it: handed to a
cloud SDK's container arguments, to a serving framework's method, to a notebook helper
(``launch_server_cmd("python -m sglang.launch_server ...")``), returned from a method a
framework calls (``__command__``), kept in an attribute or a dict.  :mod:`.places` tells where
such a value is written and whether that place is talk; this module reads each value the way
the process calls' commands are read (:meth:`.process_calls.ProcessCalls.value_commands`) and
lets the recogniser decide.

The environment such a command runs with is not in the file: the call it is handed to, or
whoever runs what is returned or stored, gives it.  It is unseen, as an unknown wrapper's is
(README, "Unseen environments"): a finding that rests on a variable being unset says so.  A
string must also be written as a command (:func:`~flake8_replayssm.recognise.written_as_command`),
so a sentence that mentions an entry point (``"Please run vllm serve MODEL"``) is not one.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator

from ...model import Command, Launch
from ...recognise import launch_from_command
from .collect import Collector, Scope, Site, keyword_value, launch_names, value_names
from .environment import Environment
from .places import CALL, NAME, RETURN, TALK_KEYWORDS, is_talk_call
from .process_calls import ProcessCalls
from .readings import Reading
from .source import Source


class Anchors:
    """The first words of the launches read so far: a written command is read once, where it is
    met first.  Its word is known by where it is written; two readers may place it with or
    without its quotes (an argv element, the same text joined into a string), so a word is
    known again when the two places overlap."""

    def __init__(self) -> None:
        self.by_line: dict[tuple[int | None, int], list[tuple[int, int]]] = {}

    def add(self, launch: Launch) -> None:
        anchor = launch.anchor
        end = max(anchor.end_col, anchor.col + 1)
        self.by_line.setdefault((anchor.cell, anchor.line), []).append((anchor.col, end))

    def __contains__(self, launch: Launch) -> bool:
        anchor = launch.anchor
        end = max(anchor.end_col, anchor.col + 1)
        return any(col < end and anchor.col < other_end
                   for col, other_end in self.by_line.get((anchor.cell, anchor.line), ()))


class ValueLaunches:
    """The launches of commands handed to calls (other than process calls and engine classes),
    then of those returned or stored, each written command once (``seen``: the first words of
    the launches already read, by the process calls among them)."""

    def __init__(self, source: Source, facts: Collector, reading: Reading, environment: Environment,
                 processes: ProcessCalls, reads_itself: Callable[[ast.Call], bool], seen: Anchors) -> None:
        self.source = source
        self.facts = facts
        self.reading = reading
        self.environment = environment
        self.processes = processes
        self.reads_itself = reads_itself
        self.seen = seen
        self.consumed: set[int] = set()
        self.names = launch_names(facts)

    def launches(self) -> Iterator[Launch]:
        reading, facts = self.reading, self.facts
        for call, scope, path in facts.calls:
            args = self.handed_args(call)
            if args:
                reading.order = facts.orders[id(call)]
                yield from self.new(call, reading.each(path, lambda: self.call_launches(call, args, scope)))
        kept = [site for site in facts.sites.values() if site.place.role != CALL]
        kept += [site for site in facts.handed if self.names.intersection(value_names(site.place.value))]
        # a variable's own assignment last: where it is returned or stored it may have grown
        for site in sorted(kept, key=lambda s: (s.place.role == NAME, s.order)):
            reading.order = site.order
            yield from self.new(site.place.value, reading.each(site.path, lambda: self.kept_launches(site)))

    def new(self, node: ast.AST, found: list[Launch]) -> list[Launch]:
        """The launches of one place not read at an earlier one; they cover ``node``'s lines."""
        fresh = [launch for launch in found if launch not in self.seen]  # every reading of this place
        for launch in fresh:
            launch.written = self.source.span(node)
        for launch in fresh:
            self.seen.add(launch)
        return fresh

    # handed to a call -------------------------------------------------------------
    def handed_args(self, call: ast.Call) -> list[ast.expr]:
        """The arguments of ``call`` that may be commands: strings naming an entry point (or
        values built from them), or variables holding one."""
        if self.reads_itself(call) or is_talk_call(call):
            return []
        args = [arg for arg in call.args if self.may_hold_command(arg)]
        args += [k.value for k in call.keywords
                 if k.arg is not None and k.arg not in TALK_KEYWORDS and self.may_hold_command(k.value)]
        return args

    def may_hold_command(self, node: ast.expr) -> bool:
        site = self.facts.sites.get(id(node))
        if site is not None:
            return site.place.role == CALL
        return bool(self.names.intersection(value_names(node)))

    def call_launches(self, call: ast.Call, args: list[ast.expr], scope: Scope) -> list[Launch]:
        env, env_open = self.environment.of_call(call, scope)
        unseen = [] if keyword_value(call, "env") is not None else \
            [f"the environment {self.source.code(call.func)}() gives"]
        commands: list[Command] = []
        starred = [arg for arg in call.args if isinstance(arg, ast.Starred)]
        if starred and any(arg in args for arg in starred):  # `run(*cmd)`: the arguments are the argv
            words = self.processes.text.element_words(
                [(a.value if isinstance(a, ast.Starred) else a, isinstance(a, ast.Starred)) for a in call.args],
                scope, self.consumed)
            commands.append(Command(words, env, env_open, base_dir=self.processes.base_dir))
            args = [arg for arg in args if arg not in call.args]
        for arg in args:
            commands += self.processes.value_commands(arg, scope, env, env_open, self.consumed)
        return self.recognised(commands, unseen)

    # returned or stored -------------------------------------------------------------
    def kept_launches(self, site: Site) -> list[Launch]:
        place = site.place
        env, env_open = self.environment.seen_in(site.scope)
        commands = self.processes.value_commands(place.value, site.scope, env, env_open, self.consumed)
        return self.recognised(commands, [self.runs_in(site)])

    def runs_in(self, site: Site) -> str:
        """How the environment of a command returned or stored is named in an assumption."""
        place, code = site.place, self.source.code
        if place.role == RETURN:
            return f"the environment the caller of {site.scope.name or 'the module'}() gives"
        holder = place.holder
        if isinstance(holder, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            target = holder.targets[0] if isinstance(holder, ast.Assign) else holder.target
            return f"the environment {code(target)} is run in"
        if isinstance(holder, ast.Dict):
            key = next((k for k, v in zip(holder.keys, holder.values) if v is place.value), None)
            if key is not None:
                return f"the environment {code(key)} is run in"
        return f"the environment {code(place.value)} is run in" if place.role != NAME \
            else "the environment it is run in"

    def recognised(self, commands: list[Command], unseen: list[str]) -> list[Launch]:
        """The launches among ``commands``, run where ``unseen`` names the environment."""
        out = []
        for command in commands:
            command.env_unseen = [*command.env_unseen, *unseen]
            command.env_open_ended = command.env_open_ended or bool(unseen)
            launch = launch_from_command(command)
            if launch is not None:
                out.append(launch)
        return out
