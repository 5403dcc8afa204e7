"""The environment a launch in a Python file runs with.

vLLM reads variables such as ``VLLM_USE_V2_MODEL_RUNNER`` from its environment, so a
launch is judged with the environment the file gives it: its ``os.environ`` writes
(``os.environ["X"] = v``, ``update``, ``setdefault``, ``pop``...) that run before the
launch in the reading under way (:mod:`.scopes`), and for a process, the ``env=`` of the
call (with ``**os.environ`` spread in or not).  A write whose value the linter cannot see
(``monkeypatch.setenv``, ``patch.dict``, a write in another function) leaves that variable
unknown; one whose keys it cannot see (``load_dotenv()``, ``update(other)``) makes the
environment open-ended, as unseen extra arguments are (README, "Judge what is written").
"""

from __future__ import annotations

import ast

from ...model import UNKNOWN, Setting, Word
from .collect import ENVIRON, Collector, Scope, keyword_value, literal_str
from .scopes import Bindings
from .source import Source
from .values import Values


class Environment:
    """Environment variables as a launch sees them, in the reading under way."""

    def __init__(self, source: Source, facts: Collector, bindings: Bindings, values: Values) -> None:
        self.source = source
        self.facts = facts
        self.bindings = bindings
        self.values = values

    def seen_in(self, scope: Scope) -> tuple[dict[str, Word], bool]:
        """The environment this file gives a launch in ``scope`` (its ``os.environ`` writes
        before the launch, see :meth:`Bindings.changes`), and whether more may be set than it
        shows (``load_dotenv()``, ``os.environ.update(other)``).  A variable written where the
        launch may or may not see it (another function, a test's ``monkeypatch.setenv``, a
        ``patch.dict`` block) is there with an unknown value."""
        env: dict[str, Word] = {}
        open_ended = False
        where = self.source.where
        for change, known in self.bindings.changes(ENVIRON, scope, self.facts.module_scope, 0):
            entries = self.values.changed_dict(({}, False), [(change, known)], change.scope) \
                if change.op not in ("clear", "unknown") else None
            if change.op == "clear" and known:
                env, open_ended = {}, False
            elif entries is None or entries[1]:  # unseen keys: every variable may be set
                key = literal_str(change.args[0]) if change.args else None
                if key is not None:
                    env[key] = Word(None, where(change.node))
                else:
                    env = {k: Word(None, w.span) for k, w in env.items()}
                    open_ended = True
            elif change.op in ("del", "pop") and known:
                env.pop(literal_str(change.args[0]) or "", None)
            else:
                for key, (_, value_node) in entries[0].items():
                    if change.op == "setdefault" and (key in env or open_ended):
                        if key not in env:  # the file read into the environment may set it
                            env[key] = Word(None, where(change.node))
                        continue
                    value = self.values.value(value_node, change.scope)
                    env[key] = Word(value if isinstance(value, str) else None, where(value_node))
        return env, open_ended

    def settings(self, scope: Scope) -> tuple[dict[str, Setting], bool]:
        """:meth:`seen_in` as the settings of an in-process launch (``LLM(...)``)."""
        words, open_ended = self.seen_in(scope)
        return {k: Setting(k, w.text if w.text is not None else UNKNOWN, w.span, k, w.span)
                for k, w in words.items()}, open_ended

    def of_call(self, call: ast.Call, scope: Scope) -> tuple[dict[str, Word], bool]:
        """``env=`` of a subprocess call, over the file's ``os.environ`` writes."""
        inherited, inherited_open = self.seen_in(scope)
        env_node = keyword_value(call, "env")
        if env_node is None:
            return inherited, inherited_open
        entries = self.values.dict_entries(env_node, scope)
        is_environ = self.facts.imports.is_environ
        if entries is None:
            return ({}, True) if not is_environ(env_node) else (inherited, inherited_open)
        items, open_ended = entries
        env = {}
        if self.spreads_environ(env_node, scope):
            env, open_ended = dict(inherited), open_ended or inherited_open
        for key, (_, value_node) in items.items():
            value = self.values.value(value_node, scope)
            env[key] = Word(value if isinstance(value, str) else None, self.source.where(value_node))
        return env, open_ended

    def spreads_environ(self, node: ast.expr, scope: Scope) -> bool:
        """Whether an ``env=`` dict is ``{**os.environ, ...}`` or ``dict(**os.environ, ...)``."""
        is_environ = self.facts.imports.is_environ
        target = self.bindings.resolve(node, scope)
        if isinstance(target, ast.Dict):
            return any(key is None and is_environ(value) for key, value in zip(target.keys, target.values))
        if isinstance(target, ast.Call):
            return any(k.arg is None and is_environ(k.value) for k in target.keywords)
        return False
