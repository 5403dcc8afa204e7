"""Which values and calls of a Python file are launches, and the Launches they are.

- keyword launches: ``LLM(...)``, ``EngineArgs(...)``, ``AsyncEngineArgs(...)`` of vLLM and
  SGLang's ``Engine(...)``/``ServerArgs(...)``, under any import alias or module attribute,
  with the model positional or as ``model=`` and keywords from ``**cfg`` dicts;
- Ray Serve LLM configs: ``LLMConfig(model_loading_config=..., engine_kwargs=...)``,
  ``dict(engine_kwargs=...)`` and dict literals with an ``engine_kwargs`` key;
- commands: an argv list or a command string whose words the recogniser reads as a launch
  (:func:`~flake8_replayssm.recognise.launch_from_command`), wherever it is written
  (:mod:`.places`).  Read in this order, each written command once (by the place of its
  first word): given to a process call (``subprocess``, ``os.system``..., with its ``env=``,
  :mod:`.process_calls`); handed to any other call (a cloud SDK's container arguments, a
  serving framework's method, a notebook helper such as ``launch_server_cmd(...)``); then
  returned, yielded or stored (a variable, an attribute, a dict value).  Only a process call
  shows the environment the command runs with; elsewhere that environment is unseen, as an
  unknown wrapper's is (README, "Unseen environments"), and what is only kept as a string must
  also be written as a command (:func:`~flake8_replayssm.recognise.written_as_command`: not
  ``"Please run vllm serve MODEL"``).

This is the one module of the Python frontend that asks the engine registry
(:mod:`flake8_replayssm.engines`): which class names are engine classes, and which engine
judges keywords and commands.  :func:`launches_in_python` wires the frontend's readers
together for one file.
"""

from __future__ import annotations

import ast
from typing import Iterator

from ... import engines
from ...frameworks import RAY_SERVE_LLM
from ...model import UNKNOWN, Launch, Setting
from ...recognise import launch_from_command
from ...unchecked import not_followed
from .collect import Collector, EngineRegistry, Scope, collect, dotted
from .command_text import CommandText
from .environment import Environment
from .process_calls import ProcessCalls
from .readings import Reading
from .scopes import Bindings
from .source import Source
from .value_launches import Anchors, ValueLaunches
from .values import Entries, Values

#: what the collector asks the engine registry about imported names and strings
_REGISTRY = EngineRegistry(keyword_class=engines.keyword_class, programs=engines.programs,
                           launch_word=lambda text: engines.launch_word().search(text) is not None)


class LaunchCalls:
    """The launches of the collected calls, each read once per combination of its branches."""

    def __init__(self, source: Source, facts: Collector, reading: Reading, values: Values,
                 environment: Environment, processes: ProcessCalls, base_dir: str | None) -> None:
        self.source = source
        self.facts = facts
        self.imports = facts.imports
        self.reading = reading
        self.values = values
        self.environment = environment
        self.processes = processes
        self.base_dir = base_dir
        #: the first words of the launches read so far (a command is read once, where first met)
        self.anchors = Anchors()

    def launches(self) -> Iterator[Launch]:
        consumed: set[int] = set()
        reading = self.reading
        for node, scope, path in self.facts.ray_dicts:
            reading.order = self.facts.orders[id(node)]
            yield from self.written(node, reading.each(path, lambda: self.ray_dict_launches(node, scope)))
        for call, scope, path in self.facts.calls:
            if id(call) not in consumed:
                reading.order = self.facts.orders[id(call)]
                found = reading.each(path, lambda: list(self.call_launches(call, scope, consumed)))
                yield from self.written(call, found)
        yield from ValueLaunches(self.source, self.facts, reading, self.environment, self.processes,
                                 self.reads_itself, self.anchors).launches()

    def written(self, node: ast.AST, launches: list[Launch]) -> list[Launch]:
        """The launches of ``node``, which covers them: a ``# noqa`` on any line of the call applies."""
        for launch in launches:
            launch.written = self.source.span(node)
            self.anchors.add(launch)
        return launches

    def call_launches(self, call: ast.Call, scope: Scope, consumed: set[int]) -> Iterator[Launch]:
        """The launches of ``call`` when it is an engine's class, a Ray Serve LLM config or a process
        call (any other call's arguments are read by :class:`ValueLaunches`)."""
        engine = self.engine_class(call.func)
        if engine is not None:
            launch = self.engine_launch(call, engine, scope)
            if launch is not None:  # `sgl.Engine(server_args=...)` is judged at the ServerArgs
                yield launch
            return
        if self.is_ray_llm_config(call):
            entries = self.values.dict_entries(ast.Call(func=ast.Name(id="dict", ctx=ast.Load()), args=[],
                                                        keywords=call.keywords), scope)
            if entries is not None:
                yield self.ray_launch(call.func, entries, scope, "LLMConfig(...)")
            return
        name = self.imports.process_name(call.func)
        if name is None:
            return
        for command in self.processes.commands_for(call, name, scope, consumed):
            launch = launch_from_command(command)
            if launch is not None:
                yield launch

    # keyword launches -------------------------------------------------------
    def engine_class(self, func: ast.expr) -> str | None:
        """The engine class ``func`` names through the file's imports, or None."""
        if isinstance(func, ast.Name):
            return self.imports.engine_names.get(func.id)
        name = dotted(func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        module = self.imports.module_aliases.get(head)
        if module is None:
            return None
        full = f"{module}.{rest}" if rest else module
        mod, _, cls = full.rpartition(".")
        return engines.keyword_class(mod, cls)

    def engine_launch(self, call: ast.Call, engine: str, scope: Scope) -> Launch | None:
        where, code, value = self.source.where, self.source.code, self.values.value
        keywords: dict[str, Setting] = {}
        model: Setting | None = None
        unseen: list[str] = []
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                unseen.append("*" + code(arg.value))
            elif index == 0:
                model = Setting("model", value(arg, scope), where(arg), "", where(arg))
        for keyword in call.keywords:
            if keyword.arg is None:  # **cfg
                entries = self.values.dict_entries(keyword.value, scope)
                if entries is None:
                    unseen.append("**" + code(keyword.value))
                    continue
                items, more = entries
                if more:
                    unseen.append("**" + code(keyword.value))
                for key, (key_node, value_node) in items.items():
                    keywords[key] = Setting(key, value(value_node, scope), where(key_node), key, where(value_node))
            else:
                key = keyword.arg
                keywords[key] = Setting(key, value(keyword.value, scope), where(keyword),
                                        f"{key}=", where(keyword.value))
        env, env_open = self.environment.settings(scope)
        name, _, cls = engine.partition(":")
        cls, _, via = cls.partition(":")
        if via and model is None and "model" not in keywords:  # another package's class: its model is
            model = Setting("model", UNKNOWN, where(call.func), "")  # that package's, not the engine's default
        return engines.get(name).launch_from_keywords(
            cls, label=f"{via or cls}(...)", anchor=where(call.func), model=model, keywords=keywords,
            unseen=unseen, env=env, env_open_ended=env_open, base_dir=self.base_dir)

    # Ray Serve LLM configs ----------------------------------------------------
    def reads_itself(self, call: ast.Call) -> bool:
        """Whether ``call`` is read as a launch of its own: an engine's class, a Ray Serve LLM
        config, a process call (its arguments are not commands handed on)."""
        return self.engine_class(call.func) is not None or self.is_ray_llm_config(call) \
            or self.imports.process_name(call.func) is not None

    def is_ray_llm_config(self, call: ast.Call) -> bool:
        """``LLMConfig(...)`` of Ray Serve LLM, or ``dict(engine_kwargs=..., ...)``."""
        func = call.func
        if isinstance(func, ast.Name) and func.id == "dict":
            return any(k.arg == "engine_kwargs" for k in call.keywords)
        name = dotted(func) or ""
        head, _, rest = name.partition(".")
        base = self.imports.imported.get(head) or self.imports.module_aliases.get(head) or head
        origin = f"{base}.{rest}" if rest else base
        return origin.startswith("ray.") and origin.endswith(".LLMConfig")

    def ray_dict_launches(self, node: ast.Dict, scope: Scope) -> list[Launch]:
        entries = self.values.dict_entries(node, scope)
        return [self.ray_launch(node, entries, scope, "Ray Serve LLM config")] if entries is not None else []

    def ray_launch(self, at: ast.AST, entries: Entries, scope: Scope, label: str) -> Launch:
        """A Ray Serve LLM config: the model is ``model_loading_config.model_source`` (else its
        ``model_id``), the engine options are ``engine_kwargs`` (vLLM's EngineArgs fields)."""
        where, value = self.source.where, self.values.value
        items, _ = entries
        model: Setting | None = None
        loading = items.get("model_loading_config")
        if loading is not None:
            source = self.values.dict_entries(loading[1], scope)
            if source is None:
                model = Setting("model", UNKNOWN, where(loading[1]), "", where(loading[1]))
            else:
                found = source[0].get("model_source") or source[0].get("model_id")
                if found is not None:
                    model = Setting("model", value(found[1], scope), where(found[1]), "", where(found[1]))
        keywords: dict[str, Setting] = {}
        unseen: list[str] = []
        engine_kwargs = items.get("engine_kwargs")
        if engine_kwargs is not None:
            inner = self.values.dict_entries(engine_kwargs[1], scope)
            if inner is None or inner[1]:
                unseen.append(f"engine_kwargs={self.source.code(engine_kwargs[1])}")
            for key, (key_node, value_node) in (inner[0] if inner is not None else {}).items():
                keywords[key] = Setting(key, value(value_node, scope), where(key_node), key, where(value_node))
        keywords.pop("model", None)  # Ray serves model_loading_config's model
        if model is None:
            model = Setting("model", UNKNOWN, where(at), "")
        env, env_open = self.environment.settings(scope)
        name, cls = RAY_SERVE_LLM
        return engines.get(name).launch_from_keywords(
            cls, label=label, anchor=where(at), model=model, keywords=keywords, unseen=unseen, env=env,
            env_open_ended=env_open, base_dir=self.base_dir)


def launches_in_python(text: str, *, base_dir: str | None = None, tree: ast.Module | None = None,
                       candidate_lines: frozenset[int] | None = None) -> list[Launch]:
    """Every vLLM launch in a Python source text (raises SyntaxError, as ``ast.parse`` does).

    ``tree`` is the text's :mod:`ast` tree when the caller has it (the screen or flake8
    parsed it already); ``candidate_lines`` (from the screen) are the lines of the calls
    that can be launches: functions and classes holding none of them are not read.
    """
    if tree is None:
        tree = ast.parse(text.lstrip("\ufeff"))
    source = Source(text)
    facts = collect(tree, source.lines, candidate_lines, _REGISTRY)
    reading = Reading()
    bindings = Bindings(facts, reading)
    values = Values(facts, bindings, reading)
    environment = Environment(source, facts, bindings, values)
    processes = ProcessCalls(values, CommandText(source, values, bindings, reading), environment, base_dir)
    calls = LaunchCalls(source, facts, reading, values, environment, processes, base_dir)
    launches = list(calls.launches())
    for span, why in reading.skipped:  # bounds hit: RSM900 says which part was not followed
        not_followed(span, why)
    return launches
