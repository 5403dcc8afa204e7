"""Commands in values: what ``subprocess``, ``os.system`` and friends are given, and any argv
list or command string handed on, returned or stored.

A call is a process call by the function it names through the file's import aliases
(:meth:`Imports.process_name`): ``subprocess.run/Popen/call/check_call/check_output``
with an argv list (or a command string and ``shell=True``), ``os.system`` and
``os.popen`` and ``asyncio.create_subprocess_shell`` with a command string,
``asyncio.create_subprocess_exec(*argv)``, ``shlex.split(cmd)``.  :class:`ProcessCalls`
turns one into commands (:class:`Command`) with the environment of the call; a command string a
shell runs (``shell=True``, ``["bash", "-c", script]``) is read by the shell frontend,
its positions mapped back onto the Python literals.  :meth:`ProcessCalls.value_commands`
reads any other value the same way (an argv list's words, a command string as a shell reads
it): a command handed to another API, returned or stored.  Which commands are vLLM or SGLang
launches is the engines' business (:mod:`.launch_calls`).
"""

from __future__ import annotations

import ast

from ...model import Command, Span, Word
from ...recognise import written_as_command
from .collect import Scope, keyword_value
from .command_text import CommandText
from .environment import Environment
from .source import PlacedText, shlex_words, unmasked_word
from .values import Values

SUBPROCESS_FUNCS = frozenset({"run", "Popen", "call", "check_call", "check_output"})
ASYNC_EXEC = "create_subprocess_exec"
ASYNC_SHELL = "create_subprocess_shell"
#: programs whose ``-c`` argument is a shell script
_SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash", "zsh", "dash"})


class ProcessCalls:
    """The commands of a process call, in the reading under way."""

    def __init__(self, values: Values, text: CommandText, environment: Environment, base_dir: str | None) -> None:
        self.values = values
        self.text = text
        self.environment = environment
        self.base_dir = base_dir

    def commands_for(self, call: ast.Call, name: str, scope: Scope, consumed: set[int]) -> list[Command]:
        """The commands ``call`` (of process function ``name``) runs."""
        module, _, func = name.partition(".")
        if not call.args or isinstance(call.args[0], ast.Starred) and not (module == "asyncio"
                                                                           and func == ASYNC_EXEC):
            return []
        first = call.args[0]
        env, env_open = self.environment.of_call(call, scope)
        if name == "os.system" or name == "os.popen" or func == ASYNC_SHELL:
            return self.shell_commands(first, scope, env, env_open)
        if name == "shlex.split":
            words = self.text.split_words(first, scope)
            return [Command(words, env, env_open, base_dir=self.base_dir)] if words else []
        if module == "asyncio" and func == ASYNC_EXEC:
            words = self.text.element_words([(a.value if isinstance(a, ast.Starred) else a,
                                              isinstance(a, ast.Starred)) for a in call.args], scope, consumed)
            return [Command(words, env, env_open, base_dir=self.base_dir)] if words else []
        if module != "subprocess" or func not in SUBPROCESS_FUNCS:
            return []
        shell = keyword_value(call, "shell")
        if shell is not None and self.values.value(shell, scope) is True:
            return self.shell_commands(first, scope, env, env_open)
        return self.argv_commands(first, scope, env, env_open, consumed)

    def argv_commands(self, node: ast.expr, scope: Scope, env: dict[str, Word], env_open: bool,
                      consumed: set[int]) -> list[Command]:
        """The command of an argv list (a shell's ``["bash", "-c", script]``: the script's)."""
        words = self.text.sequence_words(node, scope, consumed)
        if not words or all(w.splat for w in words):
            return []
        if len(words) >= 3 and words[0].text in _SHELLS and words[1].text == "-c":
            target = self.text.bindings.resolve(node, scope)
            if isinstance(target, (ast.List, ast.Tuple)) and len(target.elts) >= 3:
                script = self.text.text_of(target.elts[2], scope, [])
                if script is not None:
                    return self.commands_from_text(script, env, env_open)
        return [Command(words, env, env_open, base_dir=self.base_dir)]

    def value_commands(self, node: ast.expr, scope: Scope, env: dict[str, Word], env_open: bool,
                       consumed: set[int]) -> list[Command]:
        """The commands a value holds that is handed on, returned or stored: an argv list's, or
        those of a command string as a shell would read it that are written as commands (not a
        sentence that mentions an entry point: "Please run vllm serve MODEL"); the recogniser
        decides which are launches."""
        if self.text.is_sequence(node, scope):
            return self.argv_commands(node, scope, env, env_open, consumed)
        text = self.text.text_of(node, scope, [])
        if text is None:
            return []
        return [c for c in self.commands_from_text(text, env, env_open) if written_as_command(c.words)]

    def shell_commands(self, node: ast.expr, scope: Scope, env: dict[str, Word],
                       env_open: bool) -> list[Command]:
        """The commands of a command string ``node`` run by a shell."""
        text = self.text.text_of(node, scope, [])
        if text is None:
            return []
        return self.commands_from_text(text, env, env_open)

    def commands_from_text(self, text: PlacedText, env: dict[str, Word], env_open: bool) -> list[Command]:
        """A command string run by a shell: the shell frontend when available."""
        shell_text = text.text
        lines = shell_text.split("\n")
        offsets = [0]
        for line in lines[:-1]:
            offsets.append(offsets[-1] + len(line) + 1)

        def place(row: int, col: int, erow: int, ecol: int) -> Span:
            start = offsets[min(row, len(offsets) - 1)] + col
            end = offsets[min(erow, len(offsets) - 1)] + ecol
            return text.span(start, max(end, start + 1))

        try:
            from ..shell import commands_in_shell
        except ImportError:  # pragma: no cover - the shell frontend is part of the package
            return [Command(shlex_words(text), env, env_open, base_dir=self.base_dir)]
        commands = commands_in_shell(shell_text, place=place, base_dir=self.base_dir)
        out = []
        for command in commands:
            words = [unmasked_word(w.text, w.span) if w.text is not None else w for w in command.words]
            merged_env = dict(env)
            merged_env.update({k: (unmasked_word(w.text, w.span) if w.text is not None else w)
                               for k, w in command.env.items()})
            out.append(Command(words, merged_env, env_open or command.env_open_ended,
                               base_dir=self.base_dir))
        return out
