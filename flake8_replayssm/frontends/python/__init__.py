"""Find vLLM and SGLang launches in Python source, on Python's own syntax tree (:mod:`ast`).

Two kinds of launch live in Python files:

- engine constructors: ``LLM(...)``, ``EngineArgs(...)``, ``AsyncEngineArgs(...)`` and
  SGLang's ``Engine(...)``/``ServerArgs(...)`` under any import alias or module attribute
  (``vllm.LLM``), with the model positional or as ``model=``, keywords from ``**cfg`` when
  ``cfg`` is a dict literal or ``dict(...)`` of the same scope or module; Ray Serve LLM
  configs (``LLMConfig(model_loading_config=..., engine_kwargs=...)`` and dict literals);
- command lines: argv lists and command strings handed to ``subprocess``,
  ``os.system``, ``shlex.split``, ``asyncio.create_subprocess_*``, including
  f-strings whose literal parts carry the flags, with ``env=`` dicts and
  ``os.environ[...] = ...`` assignments.

Nothing else is a launch: vLLM's own ``cache_config.use_replayssm = True``,
dataclass fields and help texts are never reported.

The modules, in the order a file goes through them:

- :mod:`.collect`: one pass over the tree: imports, assignments per scope, in-place
  changes and environment writes with where they run, candidate calls;
- :mod:`.readings`: a launch is read once per combination of the branches its values
  come from (``if``, ``a if c else b``);
- :mod:`.scopes`: which assignment and which changes of a name a launch sees;
- :mod:`.values`: what an expression evaluates to (constants, names, dicts,
  ``os.environ.get`` defaults); :mod:`.command_text`: command strings and argv lists,
  with the position of every character (:mod:`.source`);
- :mod:`.environment`: the environment a launch runs with;
- :mod:`.launch_calls` (with :mod:`.process_calls`): which calls are launches, turned
  into Commands and keyword launches by the engines.

Why :mod:`ast` and not libcst here: finding launches needs positions and values,
not layout.  ``ast.parse`` is a C parser that gives every node its position (the
screen in :mod:`..python_screen` has already paid for it), while libcst's parse and
position pass cost about 40 times as much on a launch file (README, "Speed").
libcst is what :mod:`flake8_replayssm.fix` edits Python with, where keeping
comments and layout matters.  Columns here are characters (ast counts UTF-8
bytes), and the characters of string literals are placed by reading the literal
tokens back from the source, as libcst would have kept them.
"""

from .launch_calls import launches_in_python

__all__ = ["launches_in_python"]
