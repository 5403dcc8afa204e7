"""``LLM(...)``, ``EngineArgs(...)`` and ``AsyncEngineArgs(...)`` keywords as a Launch.

``LLM(model, **kwargs)`` hands its keywords straight to ``EngineArgs``, so a
keyword name is always the EngineArgs field name and needs no spelling rules;
the Python frontend has already turned literal values into Python values.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...lookalikes import unexpected_keywords
from ...model import UNKNOWN, Launch, Setting, Span


def launch_from_kwargs(*, label: str, anchor: Span, model: Setting | None,
                       keywords: Mapping[str, Setting], unseen: Sequence[str],
                       env: Mapping[str, Setting], env_open_ended: bool = False,
                       base_dir: str | None = None) -> Launch:
    """The launch an engine constructor call performs.

    A keyword given ``None`` means the field's default, as in EngineArgs.
    ``unseen`` are the ``**kwargs`` / ``*args`` the frontend could not read.
    """
    options = {name: s for name, s in keywords.items() if s.value is not None and name != "model"}
    if model is None and "model" in keywords:
        model = keywords["model"]
    if model is not None and model.value is None:
        model = None
    launch = Launch(entry="python", anchor=anchor, model=model, options=options, env=dict(env),
                    unseen=list(unseen), env_open_ended=env_open_ended, label=label,
                    base_dir=base_dir, form="kwargs")
    if model is None and unseen:
        # the model may be in the part we cannot see; without it EngineArgs uses its default
        launch.model = Setting("model", UNKNOWN, anchor, "")
    return launch


def launch_from_keywords(cls: str, **keywords: Any) -> Launch:
    """The launch of ``cls(...)`` (``LLM``, ``EngineArgs``, ``AsyncEngineArgs``: the same fields)."""
    from .knowledge import knowledge

    launch = launch_from_kwargs(**keywords)
    know = knowledge()
    fields = {o[2:].replace("-", "_") for o in know.long_options} | set(know.options)
    launch.form_findings += unexpected_keywords(keywords["keywords"], fields,
                                                [o[2:].replace("-", "_") for o in know.replayssm_options],
                                                "EngineArgs.__init__()")
    return launch


def keyword_options() -> frozenset[str]:
    """EngineArgs fields the linter reads (the model is not an option)."""
    from .knowledge import knowledge

    return frozenset(knowledge().options) - {"model"}
