"""Launches written in any key: every string and list of strings a document holds, read by what it says.

Serving platforms and benchmark configs each have their own key for "the command to run"
(Truss ``start_command``, Beaker ``arguments``, a launcher's ``cmd``).  So after the places
the readers know (containers, compose services, workflows: they add the environment and the
image), every string and every list of strings left is handed to the recogniser with its
context: a string as a shell script (what a platform's shell runs), a list as an argv when
it starts a program.  The recogniser decides what is a launch (DESIGN.md, "recognised by
what it says").

Precision stays: strings under prose keys (``description``, ``help``: data/documents.toml)
are not read, and a command read from a string that is written as a sentence (``Run vllm
serve ...``, ``To start, use vllm serve``) is not a command.  A string that is a document of
its own (Markdown, a manifest) is left to :mod:`.embedded`.  The context of a value is what
its enclosing mappings say: the nearest engine image (the release it pins) and the
environments on the way down (data/documents.toml names their keys).
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Any

from ... import engines
from ...data_files import read_data
from ...model import Command, Word
from ...recognise import starts_program
from .._common import SHELLS, image_for_command, is_vllm_image
from ..shell_snippets import commands_from_argv
from .containers import env_list, env_map, image_of, seq_toks
from .embedded import document_kind
from .forwarded import env_command
from .nodes import STR_TAG, Doc, get, is_map, is_scalar, is_seq, items, text_of
from .scripts import script_commands

#: a word of a sentence before the command: trailing punctuation, or a word only prose starts with
_SENTENCE_END = re.compile(r"[,;:.!?)]$")
_PROSE_STARTS = frozenset({"to", "then", "please", "you", "we", "use", "using", "with", "run", "start", "launch",
                           "try", "e.g.", "i.e.", "for", "example", "via", "and", "or", "the", "a", "an"})


def _norm(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


@lru_cache(maxsize=1)
def _keys() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    raw = read_data("data/documents.toml")
    return (frozenset(raw["context"]["image_keys"]), frozenset(raw["context"]["env_keys"]),
            frozenset(raw["prose"]["keys"]))


def commands_by_content(root: Any, doc: Doc) -> list[Command]:
    """The commands of the strings and lists of strings the known readers left (``doc.consumed``)."""
    image_keys, env_keys, prose_keys = _keys()
    looking = engines.launch_looking()
    out: list[Command] = []
    stack: list[tuple[Any, list[Any], str]] = [(root, [], "")]
    seen: set[int] = set()
    while stack:
        node, chain, key = stack.pop()
        if id(node) in seen or id(node) in doc.consumed:
            continue
        seen.add(id(node))
        if is_map(node):
            for name, _, value in reversed(items(node)):
                norm = _norm(name)
                if norm in prose_keys and not is_map(value) or norm in image_keys:
                    continue  # prose, and an image (its name is context: `_image`)
                if norm in env_keys and id(value) not in doc.consumed:
                    found = env_command(value, doc, _image(chain + [node], doc))
                    if found is not None:
                        doc.consumed.add(id(value))
                        out.append(found)
                        continue
                stack.append((value, chain + [node], name))
        elif is_seq(node):
            argv = _argv(node, chain, doc)
            if argv is not None:
                out += argv
                continue
            stack.extend((item, chain, key) for item in reversed(node.value))
        elif is_scalar(node) and node.tag == STR_TAG and looking.search(str(node.value)) \
                and not engines.image_name().fullmatch(str(node.value).strip()) \
                and document_kind(str(node.value), key) is None:
            env, image = _env(chain, doc), _image(chain, doc)
            out += [_whole(c) for c in script_commands(node, doc, env, image=image) if written_as_command(c)]
    return out


def _whole(command: Command) -> Command:
    """A command read from a value is a whole command line, never arguments for the image's
    entrypoint (the image around it only says which release)."""
    return replace(command, replaces_entrypoint=True)


def _argv(node: Any, chain: list[Any], doc: Doc) -> list[Command] | None:
    """A list of strings that is one command's words (``["vllm", "serve", ...]``, ``["sh",
    "-c", "..."]``), or None (a list of commands, of arguments, of data)."""
    if not node.value or not all(is_scalar(item) and item.tag == STR_TAG for item in node.value):
        return None
    first = text_of(node.value[0]) or ""
    if not (starts_program(first) or first.rsplit("/", 1)[-1] in SHELLS):
        return None
    if not any(engines.launch_looking().search(text_of(item) or "") for item in node.value) \
            and first.rsplit("/", 1)[-1] not in SHELLS:
        return None
    doc.consumed.add(id(node))
    env = _env(chain, doc)
    return [_whole(c) for c in commands_from_argv(seq_toks(node, doc), doc.lines, env=env, image=_image(chain, doc),
                                                  variables=env, base_dir=doc.base_dir)]


def _env(chain: list[Any], doc: Doc) -> dict[str, Word]:
    """The environment the mappings around a value give it, outer first."""
    _, env_keys, _ = _keys()
    env: dict[str, Word] = {}
    for mapping in chain:
        if not is_map(mapping):
            continue
        for name, _, value in items(mapping):
            if _norm(name) not in env_keys:
                continue
            if is_map(value):
                env.update(env_map(value, doc))
            elif is_seq(value):
                env.update(env_list(value, doc)[0])
    return env


def _image(chain: list[Any], doc: Doc) -> str | None:
    """The nearest engine image around a value (``image:``, Truss ``base_image: {image: ...}``)."""
    image_keys, _, _ = _keys()
    for mapping in reversed(chain):
        if not is_map(mapping):
            continue
        for name, _, value in items(mapping):
            if _norm(name) not in image_keys:
                continue
            text = text_of(value) if is_scalar(value) else (image_of(value) or text_of(get(value, "name")))
            if text and is_vllm_image(text):
                return image_for_command(text)
    return None


def written_as_command(command: Command) -> bool:
    """Whether a command read from a string is written as one, not as a sentence: its program
    is no capitalised or prose word, and no word before the engine's command ends a clause."""
    words = [w.text for w in command.words]
    k = 0
    while k < len(words) and words[k] is not None and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[k] or ""):
        k += 1
    if k >= len(words) or words[k] is None:
        return True
    first = words[k] or ""
    if re.fullmatch(r"[A-Z][a-z]+[,:.]?", first) or first.lower() in _PROSE_STARTS:
        return False
    for text in words[k:]:
        if text is None or starts_program(text):
            return True
        if _SENTENCE_END.search(text) and not text.endswith(("..", "/.")):
            return False
    return True


#: a line of a structured document that is only a key (``engine_kwargs:``, ``engine_kwargs: {}``)
#: or a key and its value: the key's name, for :func:`never_a_command`
_KEY_LINE = re.compile(r"""^\s*(?:-\s+)?["']?([\w.-]+)["']?\s*[:=]\s*(?P<rest>.*)$""")


def never_a_command(line: str) -> bool:
    """A line of a structured document no launch is written on, for the list of launch-looking
    lines (``--show-launches``): a key alone (``engine_kwargs:``) or a prose key's value."""
    match = _KEY_LINE.match(line)
    if match is None:
        return False
    rest = match.group("rest").strip()
    return rest in ("", "{}", "[]", "|", ">", "|-", ">-") or _norm(match.group(1)) in _keys()[2]
