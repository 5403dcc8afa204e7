"""Kubernetes containers (and anything shaped like one): ``command``/``args`` with the
container's ``env`` (``$(VAR)`` references expanded), its image, and what template lines
write into it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable

from ...model import UNKNOWN_PART, Command, Word
from .._common import Tok, image_for_command, is_vllm_image, split_words
from ..shell_snippets import commands_from_argv
from .nodes import NULL_TAG, STR_TAG, Doc, get, is_map, is_scalar, is_seq, items, text_of

REPLAYSSM_FLAG = re.compile(r"^--(no[-_])?use[-_]replayssm(=|$)")


def env_list(node: Any, doc: Doc) -> tuple[dict[str, Word], bool]:
    """Kubernetes / Tekton ``env: [{name, value | valueFrom}]``; dstack's and compose's list of
    ``NAME=value`` strings (``NAME`` alone: taken from outside, unknown)."""
    env: dict[str, Word] = {}
    if not is_seq(node):
        return env, False
    for item in node.value:
        if is_scalar(item) and item.tag == STR_TAG:
            key, eq, value = str(item.value).partition("=")
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()):
                env[key.strip()] = Word(value if eq else None, doc.span(item))
            continue
        name = text_of(get(item, "name"))
        if not name:
            continue
        value = get(item, "value")
        if value is not None and is_scalar(value):
            env[name] = Word(text_of(value) if value.tag != NULL_TAG else "", doc.span(value))
        else:
            where = get(item, "valueFrom") or get(item, "name")
            env[name] = Word(None, doc.span(where))
    return env, False


def env_map(node: Any, doc: Doc, unknown: Callable[[str], bool] | None = None) -> dict[str, Word]:
    env: dict[str, Word] = {}
    for key, key_node, value in items(node):
        text = text_of(value) if is_scalar(value) else None
        if text is not None and unknown is not None and unknown(text):
            text = None
        env[key] = Word(text, doc.span(value if is_scalar(value) and value.tag != NULL_TAG
                                       else key_node))
    return env


_K8S_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def _k8s_expand(text: str | None, env: dict[str, Word], open_ended: bool) -> str | None:
    """Kubernetes ``$(VAR)`` references in command/args, from the container's env."""
    if text is None or "$" not in text:
        return text
    unknown = False

    def repl(m: re.Match[str]) -> str:
        nonlocal unknown
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        if name in env:
            if env[name].text is None:
                unknown = True
                return ""
            return env[name].text  # type: ignore[return-value]
        if open_ended:
            unknown = True
        return m.group(0)  # an undefined reference is left as written

    out = _K8S_REF.sub(repl, text)
    return None if unknown else out


def seq_toks(node: Any, doc: Doc) -> list[Tok]:
    """Words of a sequence node (or of a string, split like a shell would without one)."""
    toks: list[Tok] = []
    if is_seq(node):
        for item in node.value:
            if is_scalar(item):
                toks.append(doc.tok(item))
            else:
                toks.append(Tok(None, doc.span(item)))
    elif is_scalar(node) and node.tag != NULL_TAG:
        value = str(node.value)
        chars = doc.chars(node)
        for text, idx, start, end in split_words(value):
            if chars is not None and idx:
                word_chars = [chars[k] for k in idx]
                span = doc.lines.span(chars[start], chars[end - 1] + 1)
            else:
                word_chars = None
                span = doc.span(node)
            toks.append(Tok(text, span, word_chars))
    return toks


def image_of(node: Any) -> str | None:
    image = get(node, "image")
    text = text_of(image)
    if text:
        return text
    if is_map(image):  # Helm values: image: {repository, tag}
        repo = text_of(get(image, "repository"))
        tag = text_of(get(image, "tag"))
        if repo:
            return f"{repo}:{tag}" if tag else repo
    repo = text_of(get(node, "repository"))
    if repo:
        tag = text_of(get(node, "tag"))
        return f"{repo}:{tag}" if tag else repo
    return None


def _templated_keys(node: Any, doc: Doc) -> dict[str, list[Tok]]:
    """Where a mapping's template-only lines write: key -> an unseen word per line inside that
    key's value, ``""`` -> lines at the mapping's own level (they may add any key)."""
    if not doc.templates or not is_map(node):
        return {}
    keys = sorted(((k.start_mark.line, k.start_mark.column, key) for key, k, _ in items(node)
                   if k.start_mark.line >= node.start_mark.line), key=lambda item: item[0])
    if not keys:
        return {}
    out: dict[str, list[Tok]] = {}
    last = node.end_mark.line
    for line, indent in doc.templates.items():
        if not keys[0][0] < line <= last:
            continue
        key_line, key_col, key = max((k for k in keys if k[0] < line), key=lambda k: k[0])
        value = get(node, key)
        inside = indent > key_col or (indent == key_col and is_seq(value)
                                      and value.start_mark.column == key_col)
        start = doc.lines.index(line + 1, indent)
        text = doc.original[start:].split("\n", 1)[0].rstrip()
        owner = key if inside and not (is_scalar(value) and value.tag != NULL_TAG) else ""
        out.setdefault(owner, []).append(Tok(None, doc.lines.span(start, start + len(text)), None, True,
                                             text.strip()))
    return out


def container_commands(node: Any, doc: Doc) -> list[Command]:
    command, args = get(node, "command"), get(node, "args")
    env, _ = env_list(get(node, "env"), doc)
    templated = _templated_keys(node, doc)
    # a template writing env:, envFrom: or any key of the container: its environment is unseen
    open_ended = get(node, "envFrom") is not None or any(k in templated for k in ("env", "envFrom", ""))
    image = doc.as_written(get(node, "image"))
    vllm = image_for_command(image) if image and is_vllm_image(image) else None

    def expand(toks: list[Tok]) -> list[Tok]:
        out = []
        for t in toks:
            new = _k8s_expand(t.text, env, open_ended)
            out.append(t if new == t.text else replace(t, text=new, chars=None))
        return out

    cmd_toks = expand(seq_toks(command, doc)) + templated.get("command", []) if command is not None else []
    arg_toks = expand(seq_toks(args, doc)) + templated.get("args", []) if args is not None else []
    if command is None:
        if not arg_toks:
            return []
        if vllm is None and looks_like_engine_args(arg_toks) and "vllm" in (image or "").lower():
            vllm = "vllm/vllm-openai"  # a vLLM-based image of someone else's; tag unknown
        return commands_from_argv(arg_toks, doc.lines, env=env, env_open_ended=open_ended,
                                  image=vllm, variables=env, base_dir=doc.base_dir)
    toks = cmd_toks + arg_toks
    # `command:` replaces the image's entrypoint: the image says only which release
    return [replace(c, replaces_entrypoint=True)
            for c in commands_from_argv(toks, doc.lines, env=env, env_open_ended=open_ended, image=vllm,
                                        variables=env, base_dir=doc.base_dir)]


def looks_like_engine_args(toks: list[Tok]) -> bool:
    """Options an engine image's entrypoint would take: the first written word is an option (after
    words wholly behind a variable, ``${MODEL_SPECIFIER} --max-model-len 4096``, which may hold
    the model or more options) and one names the model or a ReplaySSM option."""
    written = next((t.text for t in toks if t.text is not None and not _unseen(t.text)), None)
    if written is None or not written.startswith("-"):
        return False
    return any(REPLAYSSM_FLAG.match(t.text or "") or (t.text or "").startswith("--model")
               for t in toks)


def _unseen(text: str) -> bool:
    """A word that is only a variable (``${VLLM_MODEL_SPECIFIER}``, ``$ARGS``), as compose leaves it."""
    return re.fullmatch(r"\$\{?\w+(?::?-[^}]*)?\}?", text) is not None or UNKNOWN_PART in text


_CONTAINER_LISTS = frozenset({"containers", "initcontainers", "ephemeralcontainers", "sidecars",
                              "extracontainers"})


def is_container(node: Any, chain: list[Any]) -> bool:
    """A container spec without ``image:`` (a kustomize patch, a template's, a values file's)."""
    if len(chain) >= 2 and is_seq(chain[-1]) and is_map(chain[-2]):
        for key, _, value in items(chain[-2]):
            if value is chain[-1] and key.lower() in _CONTAINER_LISTS:
                return True
    return get(node, "name") is not None and (get(node, "env") is not None
                                              or get(node, "resources") is not None)
