"""``sglang.Engine(...)`` and ``ServerArgs(...)`` keywords as an SGLang Launch.

``Engine(**kwargs)`` builds ``ServerArgs(**kwargs)`` (``srt/entrypoints/engine.py``),
so a keyword is a ServerArgs field name and needs no spelling rules; the deprecated
CLI aliases are not fields, and a field a release does not have is a ``TypeError``
(judged per release by :mod:`.form`).  ``ServerArgs``' first positional field is
``model_path``; ``Engine(server_args=...)`` is judged where that ServerArgs is built.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ...lookalikes import unexpected_keywords
from ...model import UNKNOWN, Launch, Setting, Span
from .knowledge import knowledge

#: the classes whose keywords are ServerArgs fields
CLASSES = frozenset({"Engine", "ServerArgs"})


def launch_from_keywords(cls: str, *, label: str, anchor: Span, model: Setting | None,
                         keywords: Mapping[str, Setting], unseen: Sequence[str],
                         env: Mapping[str, Setting], env_open_ended: bool = False,
                         base_dir: str | None = None) -> Launch | None:
    """The launch an Engine/ServerArgs call performs (None for ``Engine(server_args=...)``).

    ``unseen`` are the ``**kwargs`` / ``*args`` the frontend could not read.
    """
    if "server_args" in keywords:
        return None
    know = knowledge()
    launch = Launch(entry="python", anchor=anchor, env=dict(env), unseen=list(unseen),
                    env_open_ended=env_open_ended, label=label, base_dir=base_dir, form="kwargs",
                    engine="sglang")
    for name, setting in keywords.items():
        if name in ("model_path", "model"):
            model = setting
            continue
        option = know.options.get(name)
        canonical = option.same_as if option is not None and option.same_as else name
        if setting.value is None:  # None means the field's default
            continue
        renamed = Setting(canonical, setting.value, setting.span, setting.spelling, setting.value_span)
        if option is not None or name in know.proposal_names:
            launch.history.append(renamed)
        launch.options[canonical] = renamed
    if model is not None and model.value is not None:
        launch.model = Setting("model", model.value, model.span, model.spelling, model.value_span)
    elif unseen:  # the model may be in the part we cannot see
        launch.model = Setting("model", UNKNOWN, anchor, "")
    fields = {flag[2:].replace("-", "_") for flag in know.long_options} | set(know.options) | set(know.proposal_names)
    launch.form_findings += unexpected_keywords(keywords, fields,
                                                [o[2:].replace("-", "_") for o in know.replayssm_options],
                                                "ServerArgs.__init__()")
    return launch


def keyword_options() -> frozenset[str]:
    """ServerArgs fields (and the RFC's names) a keyword launch may set; the model is not one."""
    know = knowledge()
    return frozenset((set(know.options) | set(know.proposal_names)) - {"model_path"})
