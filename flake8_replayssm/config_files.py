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

from .files import MAX_SETTINGS_BYTES, inside_project, read_bounded
from .model import Setting, Span, Word
from .unchecked import NotChecked, frontend_failed, not_followed, note
from .yaml_nodes import too_deep


#: a value whose aliases expand past this many nodes is not a real option value
MAX_EXPANDED_NODES = 10_000


@dataclass
class ConfigArgs:
    words: list[Word] = field(default_factory=list)
    false_keys: list[Setting] = field(default_factory=list)
    #: values not followed because a bound was hit: (span, why)
    bounded: list[tuple[Span, str]] = field(default_factory=list)


def expanded_size(node: Any, sizes: dict[int, int] | None = None) -> int:
    """How many nodes ``node`` stands for once its aliases are expanded (memoised: a chain of
    aliases is counted in time linear in the document, however large it expands)."""
    sizes = {} if sizes is None else sizes
    stack = [(node, False)]
    while stack:
        current, done = stack.pop()
        key = id(current)
        if key in sizes and not done:
            continue
        children = _children(current)
        if not done:
            sizes[key] = 1  # a cycle counts once
            stack.append((current, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
        else:
            sizes[key] = min(1 + sum(sizes.get(id(child), 1) for child in children), 1 << 40)
    return sizes[id(node)]


def _children(node: Any) -> list[Any]:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []
    return [n for item in value for n in (item if isinstance(item, tuple) else (item,))]


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
    by a here-document of the launching script).  A file nested deeper than
    :data:`~flake8_replayssm.yaml_nodes.MAX_DEPTH` or too large to read, and a value whose
    aliases expand past :data:`MAX_EXPANDED_NODES` nodes, is RSM900 where it is written; such
    a value is unknown, the file's other keys are read.
    """
    import yaml

    whole = Span(1, 0, 1, 0, source=source)
    where = place(whole) if place is not None else whole
    try:
        loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        root = yaml.compose(text, Loader=loader_cls)
    except MemoryError as exc:
        frontend_failed(where, "--config YAML", exc)
        return None
    except RecursionError:
        root, deep = None, "nested too deeply to read safely"
    except Exception as exc:  # any YAML error: not a config we can read
        if "maximum nesting depth" not in str(exc):  # libyaml's own bound (1,000 levels)
            return None
        root, deep = None, "nested too deeply to read safely"
    else:
        deep = too_deep(root) if root is not None else None
    if deep is not None:  # the launch is judged with the file's options unknown, and says why
        not_followed(where, f"--config file {deep}")
        return None
    if root is None or not hasattr(root, "value") or root.tag != "tag:yaml.org,2002:map":
        return None
    constructor = yaml.SafeLoader("")
    args = ConfigArgs()
    sizes: dict[int, int] = {}
    for key_node, value_node in root.value:
        if key_node.tag != "tag:yaml.org,2002:str":
            continue
        key = key_node.value
        if expanded_size(value_node, sizes) > MAX_EXPANDED_NODES:
            # aliases that expand past any real option value (`a9: [*a8, *a8, ...]`): unknown
            args.bounded.append((_span(value_node, source, place), f"the value of '{key}' expands past "
                                                                   f"{MAX_EXPANDED_NODES} YAML nodes"))
            args.words.extend([Word("--" + key, _span(key_node, source, place)),
                               Word(None, _span(value_node, source, place))])
            continue
        try:
            value = constructor.construct_object(value_node, deep=True)
        except Exception:  # a value the YAML constructor rejects: unknown, never the text "None"
            args.words.extend([Word("--" + key, _span(key_node, source, place)),
                               Word(None, _span(value_node, source, place))])
            continue
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
    for span, why in args.bounded:
        not_followed(span, why)
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
    """Read ``--config PATH`` relative to ``base_dir``; None when it cannot or may not be read.

    The path is written inside a linted file, by whoever wrote that file: it is read
    only inside the project (:func:`flake8_replayssm.files.inside_project`), only if it
    is a regular file, and only up to a size bound.  Otherwise the launch is judged
    with the file unknown, and ``--verbose`` says why.
    """
    full = path if os.path.isabs(path) or base_dir is None else os.path.join(base_dir, path)
    if not os.path.lexists(full):
        return None  # a path on the serving machine (an image, a volume): nothing to say
    if not inside_project(full):
        note(f"--config {path}: outside the project, not read; the launch is judged with its options unknown")
        return None
    try:
        text = read_bounded(full, MAX_SETTINGS_BYTES).decode("utf-8", errors="replace")
    except NotChecked as exc:
        note(f"--config {path}: {exc.reason}, not read; the launch is judged with its options unknown")
        return None
    return config_args_from_text(text, source=full)
