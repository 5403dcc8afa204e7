"""docker-compose services: ``entrypoint``/``command`` with compose's own ``${VAR}``
interpolation (host variables unknown, defaults used) and the service's ``environment``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ...model import Command, Word
from .._common import Tok, image_for_command, is_vllm_image, shell_script_index
from ..shell_snippets import commands_from_argv
from .containers import looks_like_engine_args, seq_toks
from .nodes import NULL_TAG, Doc, get, is_map, is_scalar, is_seq, items, text_of

_COMPOSE_VAR = re.compile(
    r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+?])((?:[^{}]|\{[^{}]*\})*))?\}"
    r"|\$([A-Za-z_][A-Za-z0-9_]*)")


def _compose_interpolate(text: str | None) -> str | None:
    """Compose's ``${VAR}`` interpolation: host variables are unknown, defaults are used."""
    if text is None:
        return None
    result = _interpolate_mapped(text, list(range(len(text))))
    return None if result is None else result[0]


def _interpolate_mapped(text: str, chars: list[int]) -> tuple[str, list[int]] | None:
    """:func:`_compose_interpolate` keeping where each character came from (None: unknown)."""
    if "$" not in text:
        return text, chars
    out: list[str] = []
    out_chars: list[int] = []
    pos = 0
    for m in _COMPOSE_VAR.finditer(text):
        out.append(text[pos:m.start()])
        out_chars += chars[pos:m.start()]
        pos = m.end()
        if m.group(0) == "$$":
            out.append("$")
            out_chars.append(chars[m.start() + 1])
            continue
        if m.group(2) in (":-", "-"):
            a, b = m.start(3), m.end(3)
            inner = _interpolate_mapped(text[a:b], chars[a:b]) if a >= 0 else ("", [])
            if inner is None:
                return None
            out.append(inner[0])
            out_chars += inner[1]
            continue
        return None  # ${VAR}, $VAR, ${VAR:?err}, ${VAR:+x}: the host's environment
    out.append(text[pos:])
    out_chars += chars[pos:]
    return "".join(out), out_chars


def _compose_toks(node: Any, doc: Doc) -> list[Tok]:
    toks = []
    for t in seq_toks(node, doc):
        if t.text is None or "$" not in t.text:
            toks.append(t)
            continue
        if t.chars is not None and len(t.chars) == len(t.text):
            mapped = _interpolate_mapped(t.text, t.chars)
            toks.append(Tok(None, t.span) if mapped is None else Tok(mapped[0], t.span, mapped[1]))
        else:
            toks.append(Tok(_compose_interpolate(t.text), t.span, None))
    return toks


def _keep_script(toks: list[Tok], raw: list[Tok]) -> list[Tok]:
    """In ``sh -c SCRIPT``, a script compose cannot interpolate is read as written:
    the shell frontend then sees ``${VAR}`` as a variable it does not know."""
    k = shell_script_index(toks)
    if k is not None and toks[k].text is None and k < len(raw) and len(raw) == len(toks):
        toks = list(toks)
        toks[k] = raw[k]
    return toks


def _compose_env(svc: Any, doc: Doc) -> tuple[dict[str, Word], bool]:
    env: dict[str, Word] = {}
    node = get(svc, "environment")
    if is_map(node):
        for key, key_node, value in items(node):
            if is_scalar(value) and value.tag != NULL_TAG:
                env[key] = Word(_compose_interpolate(text_of(value)), doc.span(value))
            else:  # `KEY:` with no value: taken from the host
                env[key] = Word(None, doc.span(key_node))
    elif is_seq(node):
        for item in node.value:
            text = text_of(item)
            if not text:
                continue
            key, eq, value = text.partition("=")
            key = key.strip()
            if not eq:
                env[key] = Word(None, doc.span(item))
                continue
            chars = doc.chars(item)
            span = doc.span(item)
            if chars and len(chars) == len(text) and len(value) > 0:
                span = doc.lines.span(chars[len(key) + 1], chars[-1] + 1)
            env[key] = Word(_compose_interpolate(value), span)
    open_ended = get(svc, "env_file") is not None
    return env, open_ended


def compose_service(svc: Any, doc: Doc) -> list[Command]:
    entry_node, cmd_node = get(svc, "entrypoint"), get(svc, "command")
    if entry_node is None and cmd_node is None:
        return []
    doc.consumed.update(id(n) for n in (entry_node, cmd_node) if n is not None)
    env, open_ended = _compose_env(svc, doc)
    image = _compose_interpolate(text_of(get(svc, "image")))
    raw_image = text_of(get(svc, "image")) or ""
    vllm = image_for_command(image or raw_image) if is_vllm_image(image or raw_image) else None
    cmd = _compose_toks(cmd_node, doc) if cmd_node is not None else []
    if entry_node is not None:
        raw = seq_toks(entry_node, doc) + (seq_toks(cmd_node, doc) if cmd_node is not None else [])
        toks = _keep_script(_compose_toks(entry_node, doc) + cmd, raw)
        # `entrypoint:` replaces the image's own: the image says only which release
        return [replace(c, replaces_entrypoint=True)
                for c in commands_from_argv(toks, doc.lines, env=env, env_open_ended=open_ended,
                                            image=vllm, variables=env, base_dir=doc.base_dir)]
    cmd = _keep_script(cmd, seq_toks(cmd_node, doc))
    if not cmd:
        return []
    if vllm is None and looks_like_engine_args(cmd) and (
            "vllm" in raw_image.lower() or get(svc, "build") is not None):
        vllm = "vllm/vllm-openai"  # built from a Dockerfile (on vLLM's image, presumably)
    return commands_from_argv(cmd, doc.lines, env=env, env_open_ended=open_ended, image=vllm,
                              variables=env, base_dir=doc.base_dir)
