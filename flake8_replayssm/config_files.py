"""``vllm serve --config FILE.yaml``: the file's keys as the argv words vLLM inserts.

vLLM's ``load_config_file`` (argparse_utils.py:606 in 0.33) turns each key into
``--key``: ``true`` becomes the bare flag, a list ``--key v1 v2``, a dict
``--key '<json>'``, any other scalar ``--key str(value)``; ``false`` becomes
``--no-key`` only where the loading parser has that option, which
:func:`flake8_replayssm.facts.false_key_applies` decides per release.  Words
keep the YAML node positions, with ``source`` set to the file, so findings land
on the key in the YAML file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from .model import Setting, Span, Word

MAX_CONFIG_BYTES = 1_000_000


@dataclass
class ConfigArgs:
    words: list[Word] = field(default_factory=list)
    false_keys: list[Setting] = field(default_factory=list)


def _span(node: Any, source: str | None, place: Callable[[Span], Span] | None = None) -> Span:
    start, end = node.start_mark, node.end_mark
    span = Span(start.line + 1, start.column, end.line + 1, end.column, source=source)
    return place(span) if place is not None else span


def _scalar_text(value: Any) -> str:
    """What Python's ``str(v)`` gives for a YAML scalar, as vLLM uses it."""
    return str(value)


def config_args_from_text(text: str, source: str | None = None,
                          place: Callable[[Span], Span] | None = None) -> ConfigArgs | None:
    """The argv words of a serve config YAML, or None if it is not a mapping.

    ``place`` moves spans of ``text`` into the file they are written in (a config written
    by a here-document of the launching script)."""
    try:
        import yaml

        loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        root = yaml.compose(text, Loader=loader_cls)
    except Exception:  # any YAML error: not a config we can read
        return None
    if root is None or not hasattr(root, "value") or root.tag != "tag:yaml.org,2002:map":
        return None
    constructor = yaml.SafeLoader("")
    args = ConfigArgs()
    for key_node, value_node in root.value:
        if key_node.tag != "tag:yaml.org,2002:str":
            continue
        key = key_node.value
        try:
            value = constructor.construct_object(value_node, deep=True)
        except Exception:
            value = None
        flag = Word("--" + key, _span(key_node, source, place))
        if value is True:
            args.words.append(flag)
        elif value is False:
            args.false_keys.append(Setting(key.replace("-", "_"), False, flag.span, key))
        elif isinstance(value, list):
            args.words.append(flag)
            for item_node, item in zip(getattr(value_node, "value", []), value):
                args.words.append(Word(_scalar_text(item), _span(item_node, source, place)))
        elif isinstance(value, dict):
            args.words.extend([flag, Word(json.dumps(value, default=str), _span(value_node, source, place))])
        else:
            args.words.extend([flag, Word(_scalar_text(value), _span(value_node, source, place))])
    return args


def reader_with_files(files: dict[str, tuple[str, Callable[[Span], Span]]]) -> Callable[
        [str, str | None], ConfigArgs | None]:
    """A ``--config`` reader that finds the files the launching script writes itself first."""
    def read(path: str, base_dir: str | None) -> ConfigArgs | None:
        written = files.get(os.path.normpath(path))
        if written is not None:
            text, place = written
            return config_args_from_text(text.replace("\x00", ""), place=place)
        return read_config_file(path, base_dir)

    return read


def read_config_file(path: str, base_dir: str | None) -> ConfigArgs | None:
    """Read ``--config PATH`` relative to ``base_dir``; None when it cannot be read."""
    full = path if os.path.isabs(path) or base_dir is None else os.path.join(base_dir, path)
    try:
        if os.path.getsize(full) > MAX_CONFIG_BYTES:
            return None
        with open(full, "rb") as fh:
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    return config_args_from_text(text, source=full)
