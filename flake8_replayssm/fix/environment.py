"""Setting an environment variable for one launch, the way its file can say it.

A shell command gets a ``VAR=value`` prefix word (``env VAR=value`` after a wrapper such as
``nohup``), ``docker run`` an ``-e VAR=value``, a Dockerfile ``CMD``/``ENTRYPOINT`` an ``ENV``
line before it, a container or compose service in YAML an ``env:`` / ``environment:`` entry
(:mod:`.yaml_env`), a ``subprocess`` argv list an ``env=`` mapping, and a keyword launch an
``os.environ[...]`` line before its statement.  Each edit returns False where the file
does not say clearly enough where the command starts.
"""

from __future__ import annotations

import json
import re

from ..model import Launch, Setting, Span
from .edits import span_key
from .keywords import KeywordEdits
from .state import STRUCTURAL_KINDS
from .words import WordEdits
from .yaml_env import env_edit

_CMD_START = re.compile(r"(?:^|[;&|(`{]|\n|\$\()\s*(?:(?:[A-Za-z_][A-Za-z0-9_]*=\S*|env)\s+)*\Z")
#: what starts a shell command on a notebook line: ``!``, ``!!``, ``x = !``, ``%sx``, ``%system``
_IPYTHON_SHELL = re.compile(r"^[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*(?:[ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)*[ \t]*=[ \t]*)?"
                            r"(?:!!?|%(?:sx|system|sc)\b)")
#: a shell prompt before a command in a Markdown fence (``$ vllm serve ...``)
_PROMPT = re.compile(r"^[ \t]*[$%>][ \t]+")
_DOCKER_START = re.compile(r"(?:^|\n)[ \t]*(?:RUN|CMD|ENTRYPOINT)[ \t]+(?:(?:[A-Za-z_][A-Za-z0-9_]*=\S*|env)\s+)*\Z",
                           re.IGNORECASE)


class EnvironmentEdits(WordEdits, KeywordEdits):
    """Environment variables of launches: set where missing, changed where written."""

    def set_env_value(self, setting: Setting, value: str, code: str) -> bool:
        """An environment variable's value as written (``VAR=1``, ``"VAR": "1"``, ``value: "1"``)."""
        span = setting.value_span or setting.span
        if span.cell is not None or span.source is not None:
            return False
        start, end = self.offsets(span)
        raw = self.text[start:end]
        if raw not in (str(setting.value), f'"{setting.value}"', f"'{setting.value}'") or not raw:
            return False
        inner = 1 if raw[0] in "'\"" else 0
        self.add(start + inner, end - inner, value, code)
        return True

    def set_launch_env(self, launch: Launch, name: str, value: str, code: str) -> bool:
        """Run the command of ``launch`` with ``name=value``; False when we cannot say how."""
        anchor = launch.anchor
        ctx = self.context(anchor)
        assignment = f"{name}={value}"
        if launch.label.startswith(("docker run", "podman run")):
            return self.insert_words_before(anchor, ["-e", assignment], code)
        if self.kind == "yaml":
            return self._yaml_env(launch, ctx, name, value, code)
        if self.kind == "dockerfile" and launch.label.endswith(" entrypoint"):
            # CMD/ENTRYPOINT arguments of an engine's image: an ENV line right before the instruction
            start, _ = self.offsets(anchor)
            line_start = self.index.line_start(start)
            line = self.text[line_start:start]
            m = re.match(r"([ \t]*)(CMD|ENTRYPOINT)\b", line, re.IGNORECASE)
            if m is None:
                return False
            self.add(line_start, line_start, f"{m.group(1)}ENV {assignment}{self.newline}", code)
            return True
        if ctx == "plain" and self.kind in STRUCTURAL_KINDS:
            return self._prefix_env(anchor, assignment, code)
        if ctx == "element" and self.py is not None:
            return self._argv_call_env(launch, name, value, code)
        return False

    def _prefix_env(self, anchor: Span, assignment: str, code: str) -> bool:
        """``VAR=value`` before the command's first word (``env VAR=value`` after a wrapper)."""
        start, _ = self.offsets(anchor)
        if self.at_command_start(anchor):
            self.add(start, start, assignment + " ", code)
            return True
        if self.after_wrapper(anchor):  # `nohup env VAR=0 vllm ...`: env is a program
            self.add(start, start, f"env {assignment} ", code)
            return True
        return False

    def _argv_call_env(self, launch: Launch, name: str, value: str, code: str) -> bool:
        """An entry in the ``env={...}`` of the ``subprocess`` call that runs the argv list holding
        the anchor (written in the call, or a variable the call is given: the launch was read at
        that call), or ``env={**os.environ, ...}`` where the call has none (``import os`` added
        when the module has none)."""
        assert self.py is not None
        anchor = launch.anchor
        call = next((c for c in self.py.argv_calls if span_key(anchor) in c.get("elements", ())), None)
        if call is None and launch.written is not None:
            call = self.py.calls_by_range.get(self.offsets(launch.written))
        if call is None or not call["args"]:
            return False
        entry = f"{json.dumps(name)}: {json.dumps(value)}"
        if "env_dict" in call:
            d_start, _, count = call["env_dict"]
            self.add(d_start + 1, d_start + 1, entry + (", " if count else ""), code)
            return True
        if call["has_env"] or not self.ensure_os_import(call["start"], code):
            return False
        last = call["args"][-1]
        self.insert_args_after(last["start"], last["end"], [f"env={{**os.environ, {entry}}}"], code)
        return True

    def ensure_os_import(self, before: int, code: str) -> bool:
        """``import os`` after the module's leading imports when it has none (False: no place for
        it before offset ``before``)."""
        assert self.py is not None
        if self.py.imports_os or self.os_import_planned:
            return True
        at = self.py.import_at
        if at is None or at > self.index.line_start(before):
            return False
        head = ("" if at == 0 or self.text[at - 1] == "\n" else self.newline) + f"import os{self.newline}"
        self.add(at, at, head, code)
        self.os_import_planned = True
        return True

    def _yaml_env(self, launch: Launch, ctx: str | None, name: str, value: str, code: str) -> bool:
        """A shell script in YAML gets the prefix; an exec-form argv its container's or
        service's environment (compose ``environment:``, Kubernetes ``env:``)."""
        if self.yaml is None:
            return False
        anchor = launch.anchor
        start, end = self.offsets(anchor)
        if ctx == "plain":
            node = self.yaml.scalar_around(start, end)
            if node is not None and self.yaml.is_shell_script(node):
                return self._prefix_env(anchor, f"{name}={value}", code)
        elif ctx == "yaml-item":
            node = self.yaml.scalar_at(start, end)
        else:
            return False
        if node is None:
            return False
        edit = env_edit(self.yaml, node, name, value, self.newline)
        if edit is None:
            return False
        self.add(edit.start, edit.end, edit.replacement, code)
        return True

    def add_environ_line(self, launch: Launch, name: str, value: str, code: str) -> bool:
        """``os.environ["NAME"] = "value"`` on its own line before the launch's statement,
        and ``import os`` after the module's leading imports when the module has none."""
        if self.py is None or name in self.environ_planned:
            return False
        start, _ = self.offsets(launch.anchor)
        statement = min((s for s in self.py.statements if s[0] <= start < s[1]),
                        key=lambda s: s[1] - s[0], default=None)
        if statement is None or not statement[3]:
            return False
        s_start, _, indent, _ = statement
        line_start = self.index.line_start(s_start)
        line = f"{indent}os.environ[{json.dumps(name)}] = {json.dumps(value)}{self.newline}"
        if not self.py.imports_os and not self.os_import_planned:
            at = self.py.import_at
            if at is None or at > line_start:
                return False
            head = ("" if at == 0 or self.text[at - 1] == "\n" else self.newline) + f"import os{self.newline}"
            self.os_import_planned = True
            if at == line_start:
                self.add(at, at, head + line, code)
                self.environ_planned.add(name)
                return True
            self.add(at, at, head, code)
        self.add(line_start, line_start, line, code)
        self.environ_planned.add(name)  # later launches see it in the next round
        return True

    def after_wrapper(self, span: Span) -> bool:
        """Whether the word before ``span`` (same line) is a wrapper's word (``nohup``, ``srun -n 2``)."""
        from ..wrappers import wrappers as known

        wrappers = known()
        start, _ = self.offsets(span)
        before = self._line_before(start)
        words = before.split()
        if not words or not before[-1:].isspace():
            return False
        for word in reversed(words):
            name = word.rsplit("/", 1)[-1].strip("\"'")
            if name in wrappers and not wrappers[name].sub and name not in ("builtin", "env") \
                    or name in {sub for w in wrappers.values() for sub in w.sub} and len(words) > 1:
                return True
            if word.startswith("-") or word[:1].isdigit():
                continue  # a wrapper's option (srun -n 2, timeout 600)
            return False
        return False

    def at_command_start(self, span: Span) -> bool:
        """Whether ``span`` is the first word of a command (environment words may go before it)."""
        start, _ = self.offsets(span)
        if self.kind == "python":
            assert self.py is not None
            body = next(((s, e) for s, e in self.py.string_bodies if s <= start < e), None)
            if body is None:
                return False
            return _CMD_START.search(self.text[body[0]:start]) is not None
        before = self._line_before(start)
        if self.kind == "dockerfile":
            return _DOCKER_START.search(before) is not None
        if self.kind == "makefile":
            before = before.lstrip("\t").lstrip("@-+")
        return _CMD_START.search(before) is not None

    def _line_before(self, start: int) -> str:
        """The text of ``start``'s line before it, without a notebook's ``!`` or a prompt."""
        before = self.text[self.index.line_start(start):start]
        if self.ipython:
            before = _IPYTHON_SHELL.sub("", before, count=1)
        if self.kind == "markdown":
            before = _PROMPT.sub("", before, count=1)
        return before
