"""Blocks of a framework's config whose keys are an engine's options (data/frameworks.toml).

verl's ``engine_kwargs.vllm:``, NeMo-RL's ``vllm_kwargs:``, SkyRL's ``engine_init_kwargs:``,
prime-rl's ``[inference.vllm]``, PipelineRL's ``vllm_kwargs:`` (as ``--key value``),
BentoVLLM's ``cli_args:``, a Triton ``model.json``: a block is found by the keys that lead to
it (the data's ``anchor``), in a YAML, TOML or JSON document alike, and read as the engine's
launch the way the framework hands it over.  A block the framework does not use (the
``name:`` beside it picks another engine) or that sets nothing is no launch.  An environment
whose variables a container entrypoint turns into options (``SM_VLLM_*``) is read here too.
"""

from __future__ import annotations

import posixpath
from typing import Any, Iterable

from ... import passthrough
from ...model import UNKNOWN, Command, Launch, Setting, Span, Word
from ...passthrough import Forward
from .nodes import NULL_TAG, Doc, get, is_map, is_scalar, is_seq, items, node_value, text_of


def forwarded_in_document(root: Any, doc: Doc, path: str | None) -> tuple[list[Launch], list[Command]]:
    """The launches (keyword blocks) and commands (option and argv blocks) of ``root``'s
    forwarded blocks."""
    launches: list[Launch] = []
    commands: list[Command] = []
    forwards = passthrough.tables().forwards
    name = posixpath.basename(path) if path else ""
    for forward in forwards:
        if not forward.block and name in forward.files and is_map(root):
            _read_block(forward, root, [root], root, doc, launches, commands)
    anchors = {forward.anchor_keys[-1] for forward in forwards if forward.anchor_keys}
    stack: list[tuple[Any, tuple[str, ...], list[Any]]] = [(root, (), [])]
    seen: set[int] = set()
    while stack:
        node, keys, chain = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if is_map(node):
            commands += _args_strings(node, doc)
            for key, _, value in items(node):
                here = keys + (key,)
                if key in anchors and (is_map(value) or is_seq(value)):
                    for forward in passthrough.best_forwards(here):
                        if forward.files and name not in forward.files:
                            continue  # a block of one file's (KAITO's inference_config.yaml `vllm:`)
                        if is_map(value) != (forward.form == "argv"):
                            _read_block(forward, value, chain + [node], root, doc, launches, commands)
                stack.append((value, here, chain + [node]))
        elif is_seq(node):
            stack.extend((item, keys, chain + [node]) for item in node.value)
    return launches, commands


def _args_strings(node: Any, doc: Doc) -> list[Command]:
    """NeMo-Skills' ``server_type: sglang`` beside ``server_args: "--tp 8 ..."``: the engine's
    command the framework starts, each word of the string where it is written."""
    out = []
    for entry in passthrough.tables().args_strings:
        args, choice = get(node, entry.key), get(node, entry.choose)
        if not (is_scalar(args) and is_scalar(choice)) or text_of(choice) is None:
            continue
        model = get(node, entry.model) if entry.model else None
        model_word = Word(text_of(model), doc.span(model)) if is_scalar(model) else None
        chars = doc.chars(args)
        text = text_of(args)
        lines = doc.lines

        def where(k: int, chars: list[int] | None = chars, text: str | None = text) -> Span | None:
            if not chars or text is None or len(chars) != len(text) or k >= len(chars):
                return None
            return lines.span(chars[k], chars[k] + 1)

        command = passthrough.args_string_command(entry, text_of(choice) or "", model_word,
                                                  Word(text, doc.span(args)), where, base_dir=doc.base_dir)
        if command is not None:
            out.append(command)
    return out


def _lookup(root: Any, path: Iterable[str]) -> Any:
    node = root
    for key in path:
        node = get(node, key)
        if node is None:
            return None
    return node


def _read_block(forward: Forward, block: Any, chain: list[Any], root: Any, doc: Doc,
                launches: list[Launch], commands: list[Command]) -> None:
    if not items(block) and not is_seq(block):
        return  # sets nothing: the framework adds nothing to the engine's launch
    # the mapping that holds the anchor's first key (`rollout` for `engine_kwargs.vllm`)
    holder = chain[-len(forward.anchor_keys)] if forward.anchor_keys and len(chain) >= len(forward.anchor_keys) \
        else root
    choice = get(holder, forward.choose_key) if forward.choose_key else None
    if not passthrough.chosen(forward, text_of(choice) if is_scalar(choice) else None):
        return
    model_node = next((found for p in forward.model if (found := _lookup(root, p)) is not None), None)
    anchor = doc.span(block)
    model = None
    if is_scalar(model_node):
        model = Setting("model", text_of(model_node) or UNKNOWN, doc.span(model_node), "", doc.span(model_node))
    if forward.form == "keywords":
        launch = _keyword_block(forward, block, holder, model, anchor, doc)
        if launch is not None:
            launches.append(launch)
    else:
        command = _command_block(forward, block, model_node, anchor, doc)
        if command is not None:
            commands.append(command)


def _keyword_block(forward: Forward, block: Any, holder: Any, model: Setting | None, anchor: Span,
                   doc: Doc) -> Launch | None:
    keywords: dict[str, Setting] = {}
    sizes: dict[int, int] = {}
    for key, key_node, value in items(block):  # every key: the framework forwards them all
        name = key.replace("-", "_") if forward.dashes else key
        keywords[name] = Setting(name, node_value(value, sizes), doc.span(key_node), key, doc.span(value))
    if not keywords:
        return None
    for name, where in forward.sets:
        if name not in keywords:
            found = _lookup(holder, where)
            keywords[name] = Setting(name, node_value(found) if found is not None else UNKNOWN,
                                     doc.span(found) if found is not None else anchor, name)
    return passthrough.keyword_launch(forward.engine, label=forward.label(), anchor=anchor, model=model,
                                      keywords=keywords, env={}, base_dir=doc.base_dir,
                                      forwarded_by=forward.framework)


def _command_block(forward: Forward, block: Any, model_node: Any, anchor: Span, doc: Doc) -> Command | None:
    """An ``options`` block (``key: value`` -> ``--key value``) or an ``argv`` list, as the
    command the framework starts."""
    words = [Word(text, anchor) for text in forward.runs]
    if model_node is not None:
        model_word = Word(text_of(model_node) if is_scalar(model_node) else None, doc.span(model_node))
        words += ([Word(forward.model_option, model_word.span)] if forward.model_option else []) + [model_word]
    else:
        words += ([Word(forward.model_option, anchor)] if forward.model_option else []) + [Word(None, anchor)]
    if forward.form == "argv":
        if not is_seq(block):
            return None
        words += [Word(text_of(item) if is_scalar(item) else None, doc.span(item)) for item in block.value]
    else:
        for key, key_node, value in items(block):
            words += _option_words(key, key_node, value, doc)
    return Command(words=words, base_dir=doc.base_dir, forwarded_by=forward.framework)


def _option_words(key: str, key_node: Any, value: Any, doc: Doc) -> list[Word]:
    flag = Word("--" + key, doc.span(key_node))
    if not is_scalar(value):
        return [flag, Word(None, doc.span(value))]
    text = text_of(value)
    if value.tag == NULL_TAG or text == "":
        return [flag]
    if value.tag.endswith(":bool"):
        on = node_value(value)
        return [flag if on is True else Word("--no-" + key, doc.span(key_node))]
    return [flag, Word(text, doc.span(value))]


def env_command(node: Any, doc: Doc, image: str | None) -> Command | None:
    """The command a container entrypoint builds from an environment's ``SM_VLLM_*`` variables
    (a mapping of names, or a Kubernetes-style list of ``{name, value}``)."""
    env: dict[str, Word] = {}
    if is_map(node):
        for key, key_node, value in items(node):
            env[key] = Word(text_of(value) if is_scalar(value) and value.tag != NULL_TAG else None,
                            doc.span(value if is_scalar(value) else key_node))
    elif is_seq(node):
        for item in node.value:
            name, value = text_of(get(item, "name")), get(item, "value")
            if name:
                env[name] = Word(text_of(value) if is_scalar(value) else None, doc.span(value or item))
    if not passthrough.env_forwarding(env):
        return None
    return passthrough.command_from_env(env, doc.span(node), base_dir=doc.base_dir, image=image)
