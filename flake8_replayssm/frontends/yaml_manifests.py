"""YAML files: Kubernetes / KServe / Helm-rendered manifests, docker-compose,
GitHub Actions (and SkyPilot, GitLab CI, Tekton ``script``), Helm values.

Documents are read with PyYAML ``compose_all`` so every scalar keeps its place
(``start_mark`` / ``end_mark``); spans of words are the scalar nodes as written
(quotes included).  Strings that a shell runs (``sh -c``, Actions ``run:``) go
to the shell frontend with a ``place`` that maps positions inside the string's
*value* back to the file: the value is aligned character by character with the
raw text between the node marks (block scalars, folded lines, quotes and
escapes), so a word is never placed on a wrong line.

An engine's standalone ``--config`` YAML (``vllm serve --config FILE``) is *not* a list of
commands: :func:`commands_in_yaml` returns ``[]`` for it (``engines.is_config_document``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from typing import Any, Callable

from .. import engines
from ..config_files import MAX_EXPANDED_NODES, expanded_size
from ..frameworks import RAY_SERVE_LLM
from ..model import UNKNOWN, Command, Launch, Setting, Span, Word
from ..unchecked import frontend_failed
from ..yaml_nodes import is_map as _is_map, is_scalar as _is_scalar, is_seq as _is_seq
from ..yaml_nodes import loader as _loader
from ..yaml_templates import has_actions_expression, mask_expressions, mask_templates, ranged_lines, template_lines
from ._common import (
    LineIndex,
    Tok,
    image_for_command,
    is_vllm_image,
    merge_context,
    placer,
    shell_script_index,
    split_words,
)
from .shell_snippets import commands_from_argv, shell_commands

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"

#: keys of Helm values / CRDs that hold vLLM's arguments
ARG_KEYS = frozenset({
    "args", "extraargs", "extra_args", "extra-args", "arguments", "extraarguments",
    "serverargs", "server_args", "vllmargs", "vllm_args", "engineargs", "cmdargs",
    "containerargs", "additionalargs", "additional_args", "command", "cmd",
})
_REPLAYSSM_FLAG = re.compile(r"^--(no[-_])?use[-_]replayssm(=|$)")

_STAND_IN = re.compile(r"__RSMTPL_+")
#: a template value that names arguments, not one value (``{{ .Values.extraArgs }}``)
_ARGUMENTS_NAME = re.compile(r"(?i)arg|flag|option|param|extra")


# ---------------------------------------------------------------------------
# node helpers
# ---------------------------------------------------------------------------

def _items(node: Any) -> list[tuple[str, Any, Any]]:
    """``(key, key_node, value_node)`` of a mapping, merge keys (``<<``) resolved (cached)."""
    if not _is_map(node):
        return []
    cached = node.__dict__.get("_rsm_items")
    if cached is not None:
        return cached
    node._rsm_items = []  # a merge cycle ends here
    out: list[tuple[str, Any, Any]] = []
    merged: list[Any] = []
    seen: set[str] = set()
    for key_node, value_node in node.value:
        if _is_scalar(key_node) and key_node.tag == _MERGE:
            merged += value_node.value if _is_seq(value_node) else [value_node]
            continue
        if _is_scalar(key_node):
            out.append((str(key_node.value), key_node, value_node))
            seen.add(str(key_node.value))
    for m in merged:
        for key, key_node, value_node in _items(m):
            if key not in seen:
                seen.add(key)
                out.append((key, key_node, value_node))
    node._rsm_items = out
    node._rsm_get = {k: v for k, _, v in out}
    return out


def _get(node: Any, key: str) -> Any:
    if not _is_map(node):
        return None
    if "_rsm_get" not in node.__dict__:
        _items(node)
    return node.__dict__.get("_rsm_get", {}).get(key)


def _text(node: Any) -> str | None:
    """A scalar's value as written (``None`` for null / non-scalars)."""
    if not _is_scalar(node) or node.tag == _NULL:
        return None
    return str(node.value)


class _Doc:
    """One YAML text: positions and scalar alignment."""

    def __init__(self, text: str, base_dir: str | None, original: str | None = None) -> None:
        self.text = text
        self.lines = LineIndex(text)
        self.base_dir = base_dir
        self.consumed: set[int] = set()
        #: the text before template actions were masked, and its template-only lines
        self.original = original if original is not None and len(original) == len(text) else text
        self.templates = template_lines(self.original) if self.original is not text else {}
        self.ranged = ranged_lines(self.original) if self.templates or "{{" in self.original else set()

    def as_written(self, node: Any) -> str | None:
        """A scalar's value with its template actions as written (``vllm/vllm-openai:{{ .Values.tag }}``),
        for what is shown to the user; the value PyYAML read when they cannot be placed."""
        value = _text(node)
        if value is None or "__RSMTPL" not in value:
            return value
        chars = self.chars(node)
        if chars is None or len(chars) != len(value):
            return value
        return "".join(self.original[k] for k in chars)

    def written(self, node: Any) -> str:
        """A node as written in the file (template actions included)."""
        return self.original[node.start_mark.index:node.end_mark.index]

    def span(self, node: Any) -> Span:
        return self.lines.span(node.start_mark.index, node.end_mark.index)

    def tok(self, node: Any) -> Tok:
        value = _text(node)
        if value is not None and _STAND_IN.fullmatch(value.strip()):
            # `- {{ . }}` in a `range`, `[..., {{ .Values.args }}]`: arguments the chart adds;
            # `- {{ .Values.model }}`: one value, unknown
            written = self.written(node).strip()
            many = node.start_mark.line in self.ranged or bool(_ARGUMENTS_NAME.search(written))
            return Tok(None, self.span(node), None, many, written)
        return Tok(value, self.span(node), self.chars(node) if value is not None else None)

    def chars(self, node: Any) -> list[int] | None:
        """The file offset of every character of a scalar's value."""
        try:
            return self._chars(node)
        except (MemoryError, RecursionError):  # too large or deep: reported, never dropped
            raise
        except Exception:
            return None

    def _chars(self, node: Any) -> list[int] | None:
        value = str(node.value)
        start, end = node.start_mark.index, node.end_mark.index
        style = node.style or None
        text = self.text
        if style in ("|", ">"):
            nl = text.find("\n", start, end)
            if nl < 0:
                return None
            start = nl + 1
        elif style in ('"', "'"):
            start, end = start + 1, max(start + 1, end - 1)
        raw = text[start:end]
        if style is None and "\n" not in raw and raw == value:
            return list(range(start, start + len(value)))
        mapped = _align(value, raw, style == '"')
        return [start + k for k in mapped]


def _align(value: str, raw: str, double_quoted: bool) -> list[int]:
    """Index in ``raw`` of each character of ``value`` (YAML folding, quotes, escapes)."""
    out: list[int] = []
    j, n = 0, len(raw)
    for c in value:
        k = j
        found, step = None, 1
        while k < n:
            r = raw[k]
            if double_quoted and r == "\\" and k + 1 < n:
                nxt = raw[k + 1]
                if nxt in "\r\n":  # escaped line break: joins without a space
                    k += 2
                    while k < n and raw[k] in " \t\r\n":
                        k += 1
                    continue
                found = k
                step = {"x": 4, "u": 6, "U": 10}.get(nxt, 2)
                break
            if r == c:
                found = k
                break
            if c in " \n" and r in " \t\r\n":
                found = k
                break
            if r in " \t\r\n'\"\\":
                k += 1
                continue
            break
        if found is None:
            out.append(min(j, max(n - 1, 0)))
            continue
        out.append(found + step - 1)  # an escaped character sits at its escape's end
        j = found + step
    return out


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------

def _documents(text: str) -> tuple[str, list[Any]] | None:
    """``text`` with its template expressions masked, and its YAML documents' root nodes;
    None when it does not parse (the caller finds nothing there; lint.py reports why)."""
    text = mask_templates(text)
    try:
        import yaml

        return text, list(yaml.compose_all(text, Loader=_loader()))
    except (MemoryError, RecursionError):  # too large or deep: reported, never dropped
        raise
    except Exception:  # unparsable YAML (or PyYAML missing)
        return None


def _node_line(node: Any) -> Span:
    """The line a YAML node starts on (line 1 when it has no mark)."""
    line = getattr(getattr(node, "start_mark", None), "line", 0) + 1
    return Span(line, 0, line, 0)


def commands_in_yaml(text: str, *, path: str | None = None,
                     base_dir: str | None = None) -> list[Command]:
    """The commands YAML manifests, compose files, workflows and Helm values start."""
    parsed = _documents(text)
    if parsed is None:
        return []
    masked, docs = parsed
    out: list[Command] = []
    doc = _Doc(masked, base_dir, text)
    for root in docs:
        try:
            out += _commands_in_document(root, doc)
        except Exception as exc:  # this document is not checked; the others are
            frontend_failed(_node_line(root), "YAML", exc)
    return out


def _commands_in_document(root: Any, doc: _Doc) -> list[Command]:
    if root is None or engines.is_config_document(root):
        return []
    out: list[Command] = []
    services = _get(root, "services")
    if _is_map(services) and _get(root, "apiVersion") is None:
        for _, _, svc in _items(services):
            if _is_map(svc):
                out += _compose_service(svc, doc)
    jobs = _get(root, "jobs")
    if _is_map(jobs):
        out += _actions_workflow(root, jobs, doc)
    runs = _get(root, "runs")
    if _is_map(runs) and _is_seq(_get(runs, "steps")):  # composite action
        out += _actions_steps(_get(runs, "steps"), {}, None, doc)
    if _is_scalar(_get(root, "run")) and _get(root, "jobs") is None:
        out += _skypilot(root, doc)
    out += _walk(root, doc, [])
    return out


# ---------------------------------------------------------------------------
# environments
# ---------------------------------------------------------------------------

def _env_list(node: Any, doc: _Doc) -> tuple[dict[str, Word], bool]:
    """Kubernetes / Tekton ``env: [{name, value | valueFrom}]``."""
    env: dict[str, Word] = {}
    if not _is_seq(node):
        return env, False
    for item in node.value:
        name = _text(_get(item, "name"))
        if not name:
            continue
        value = _get(item, "value")
        if value is not None and _is_scalar(value):
            env[name] = Word(_text(value) if value.tag != _NULL else "", doc.span(value))
        else:
            where = _get(item, "valueFrom") or _get(item, "name")
            env[name] = Word(None, doc.span(where))
    return env, False


def _env_map(node: Any, doc: _Doc, unknown: Callable[[str], bool] | None = None) -> dict[str, Word]:
    env: dict[str, Word] = {}
    for key, key_node, value in _items(node):
        text = _text(value) if _is_scalar(value) else None
        if text is not None and unknown is not None and unknown(text):
            text = None
        env[key] = Word(text, doc.span(value if _is_scalar(value) and value.tag != _NULL
                                       else key_node))
    return env


# ---------------------------------------------------------------------------
# Kubernetes containers (and anything shaped like one)
# ---------------------------------------------------------------------------

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


def _seq_toks(node: Any, doc: _Doc) -> list[Tok]:
    """Words of a sequence node (or of a string, split like a shell would without one)."""
    toks: list[Tok] = []
    if _is_seq(node):
        for item in node.value:
            if _is_scalar(item):
                toks.append(doc.tok(item))
            else:
                toks.append(Tok(None, doc.span(item)))
    elif _is_scalar(node) and node.tag != _NULL:
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


def _image_of(node: Any) -> str | None:
    image = _get(node, "image")
    text = _text(image)
    if text:
        return text
    if _is_map(image):  # Helm values: image: {repository, tag}
        repo = _text(_get(image, "repository"))
        tag = _text(_get(image, "tag"))
        if repo:
            return f"{repo}:{tag}" if tag else repo
    repo = _text(_get(node, "repository"))
    if repo:
        tag = _text(_get(node, "tag"))
        return f"{repo}:{tag}" if tag else repo
    return None


def _templated_keys(node: Any, doc: _Doc) -> dict[str, list[Tok]]:
    """Where a mapping's template-only lines write: key -> an unseen word per line inside that
    key's value, ``""`` -> lines at the mapping's own level (they may add any key)."""
    if not doc.templates or not _is_map(node):
        return {}
    keys = sorted(((k.start_mark.line, k.start_mark.column, key) for key, k, _ in _items(node)
                   if k.start_mark.line >= node.start_mark.line), key=lambda item: item[0])
    if not keys:
        return {}
    out: dict[str, list[Tok]] = {}
    last = node.end_mark.line
    for line, indent in doc.templates.items():
        if not keys[0][0] < line <= last:
            continue
        key_line, key_col, key = max((k for k in keys if k[0] < line), key=lambda k: k[0])
        value = _get(node, key)
        inside = indent > key_col or (indent == key_col and _is_seq(value)
                                      and value.start_mark.column == key_col)
        start = doc.lines.index(line + 1, indent)
        text = doc.original[start:].split("\n", 1)[0].rstrip()
        owner = key if inside and not (_is_scalar(value) and value.tag != _NULL) else ""
        out.setdefault(owner, []).append(Tok(None, doc.lines.span(start, start + len(text)), None, True,
                                             text.strip()))
    return out


def _container(node: Any, doc: _Doc) -> list[Command]:
    command, args = _get(node, "command"), _get(node, "args")
    env, _ = _env_list(_get(node, "env"), doc)
    templated = _templated_keys(node, doc)
    # a template writing env:, envFrom: or any key of the container: its environment is unseen
    open_ended = _get(node, "envFrom") is not None or any(k in templated for k in ("env", "envFrom", ""))
    image = doc.as_written(_get(node, "image"))
    vllm = image_for_command(image) if image and is_vllm_image(image) else None

    def expand(toks: list[Tok]) -> list[Tok]:
        out = []
        for t in toks:
            new = _k8s_expand(t.text, env, open_ended)
            out.append(t if new == t.text else replace(t, text=new, chars=None))
        return out

    cmd_toks = expand(_seq_toks(command, doc)) + templated.get("command", []) if command is not None else []
    arg_toks = expand(_seq_toks(args, doc)) + templated.get("args", []) if args is not None else []
    if command is None:
        if not arg_toks:
            return []
        if vllm is None and _looks_like_vllm_args(arg_toks) and "vllm" in (image or "").lower():
            vllm = "vllm/vllm-openai"  # a vLLM-based image of someone else's; tag unknown
        return commands_from_argv(arg_toks, doc.lines, env=env, env_open_ended=open_ended,
                                  image=vllm, variables=env, base_dir=doc.base_dir)
    toks = cmd_toks + arg_toks
    return commands_from_argv(toks, doc.lines, env=env, env_open_ended=open_ended, image=vllm,
                              variables=env, base_dir=doc.base_dir)


def _looks_like_vllm_args(toks: list[Tok]) -> bool:
    if not toks or not (toks[0].text or "").startswith("-"):
        return False
    return any(_REPLAYSSM_FLAG.match(t.text or "") or (t.text or "").startswith("--model")
               for t in toks)


# ---------------------------------------------------------------------------
# docker-compose
# ---------------------------------------------------------------------------

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


def _compose_toks(node: Any, doc: _Doc) -> list[Tok]:
    toks = []
    for t in _seq_toks(node, doc):
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


def _compose_env(svc: Any, doc: _Doc) -> tuple[dict[str, Word], bool]:
    env: dict[str, Word] = {}
    node = _get(svc, "environment")
    if _is_map(node):
        for key, key_node, value in _items(node):
            if _is_scalar(value) and value.tag != _NULL:
                env[key] = Word(_compose_interpolate(_text(value)), doc.span(value))
            else:  # `KEY:` with no value: taken from the host
                env[key] = Word(None, doc.span(key_node))
    elif _is_seq(node):
        for item in node.value:
            text = _text(item)
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
    open_ended = _get(svc, "env_file") is not None
    return env, open_ended


def _compose_service(svc: Any, doc: _Doc) -> list[Command]:
    entry_node, cmd_node = _get(svc, "entrypoint"), _get(svc, "command")
    if entry_node is None and cmd_node is None:
        return []
    doc.consumed.update(id(n) for n in (entry_node, cmd_node) if n is not None)
    env, open_ended = _compose_env(svc, doc)
    image = _compose_interpolate(_text(_get(svc, "image")))
    raw_image = _text(_get(svc, "image")) or ""
    vllm = image_for_command(image or raw_image) if is_vllm_image(image or raw_image) else None
    cmd = _compose_toks(cmd_node, doc) if cmd_node is not None else []
    if entry_node is not None:
        raw = _seq_toks(entry_node, doc) + (_seq_toks(cmd_node, doc) if cmd_node is not None else [])
        toks = _keep_script(_compose_toks(entry_node, doc) + cmd, raw)
        return commands_from_argv(toks, doc.lines, env=env, env_open_ended=open_ended,
                                  image=vllm, variables=env, base_dir=doc.base_dir)
    cmd = _keep_script(cmd, _seq_toks(cmd_node, doc))
    if not cmd:
        return []
    if vllm is None and _looks_like_vllm_args(cmd) and (
            "vllm" in raw_image.lower() or _get(svc, "build") is not None):
        vllm = "vllm/vllm-openai"  # built from a Dockerfile (on vLLM's image, presumably)
    return commands_from_argv(cmd, doc.lines, env=env, env_open_ended=open_ended, image=vllm,
                              variables=env, base_dir=doc.base_dir)


# ---------------------------------------------------------------------------
# GitHub Actions, SkyPilot, GitLab CI / Tekton scripts
# ---------------------------------------------------------------------------

_NON_POSIX = ("python", "pwsh", "powershell", "cmd", "node")


def _vllm_image_of(node: Any) -> str | None:
    """The vLLM image a CI job / step runs in (``image: x`` or ``image: {name: x}``)."""
    image = _get(node, "image")
    text = _text(image) if _is_scalar(image) else _text(_get(image, "name"))
    return image_for_command(text) if text and is_vllm_image(text) else None


def _script_commands(node: Any, doc: _Doc, env: dict[str, Word], *, mask_gha: bool = False,
                     image: str | None = None, env_open_ended: bool = False) -> list[Command]:
    """A scalar (or list of scalars) that a POSIX shell runs."""
    if _is_seq(node):
        doc.consumed.add(id(node))
        parts, chars = [], []
        for item in node.value:
            if not _is_scalar(item):
                continue
            doc.consumed.add(id(item))
            text = str(item.value)
            c = doc.chars(item) or [item.start_mark.index] * len(text)
            parts.append(text + "\n")
            chars += c + [c[-1] + 1 if c else item.end_mark.index]
        script, script_chars = "".join(parts), chars
        fallback = doc.span(node)
    elif _is_scalar(node) and node.tag != _NULL:
        doc.consumed.add(id(node))
        script, script_chars = str(node.value), doc.chars(node)
        fallback = doc.span(node)
    else:
        return []
    if mask_gha:
        script = mask_expressions(script)
    place = placer(script, script_chars, doc.lines, fallback)
    found = shell_commands(script, place, env, doc.base_dir)
    if mask_gha:
        found = [_expressions_as_values(c, doc) for c in found]
    return [merge_context(c, env=env, env_open_ended=env_open_ended, image=image, base_dir=doc.base_dir)
            for c in found]


_MASKED_EXPRESSION = re.compile(r"\$\{_+\}")


def _expressions_as_values(command: Command, doc: _Doc) -> Command:
    """A ``${{ expr }}`` word is one unknown value (Actions substitutes it before the shell
    runs), not extra arguments, and it is shown as written."""
    words = []
    for word in command.words:
        if word.label is not None and _MASKED_EXPRESSION.search(word.label) and word.span.source is None:
            start = doc.lines.index(word.span.line, word.span.col)
            written = doc.original[start:doc.lines.index(word.span.end_line, word.span.end_col)]
            word = Word(None, word.span, False, written.strip() or word.label)
        words.append(word)
    return replace(command, words=words)


#: ``echo "NAME=value" >> "$GITHUB_ENV"`` (or ``| tee -a $GITHUB_ENV``): a variable later steps get
_GITHUB_ENV_LINE = re.compile(
    r"""^\s*echo\s+(?P<q>["']?)(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>[^"'$`\\\s]*)(?P=q)\s*"""
    r"""(?:>>\s*|\|\s*tee\s+(?:-a|--append)\s+)(?P<file>"\$\{?GITHUB_ENV\}?"|\$\{?GITHUB_ENV\}?)"""
    r"""\s*(?:>\s*/dev/null\s*)?$""")


def _github_env_writes(run: Any, doc: _Doc) -> tuple[dict[str, Word], bool]:
    """What a step's ``run`` writes to ``$GITHUB_ENV`` for the steps after it: literal
    ``NAME=value`` lines, and whether it writes anything else there (then unknown)."""
    script = _text(run) if _is_scalar(run) else None
    if script is None or "GITHUB_ENV" not in script:
        return {}, False
    chars = doc.chars(run)
    written: dict[str, Word] = {}
    unknown = False
    offset = 0
    for line in script.split("\n"):
        match = _GITHUB_ENV_LINE.match(line)
        if match is not None:
            a, b = offset + match.start("value"), offset + match.end("value")
            span = doc.lines.span(chars[a], chars[b - 1] + 1) if chars and b > a and b <= len(chars) \
                else doc.span(run)
            written[match.group("name")] = Word(match.group("value"), span)
        elif "GITHUB_ENV" in line:
            unknown = True
        offset += len(line) + 1
    return written, unknown


def _actions_workflow(root: Any, jobs: Any, doc: _Doc) -> list[Command]:
    out: list[Command] = []
    wf_env = _env_map(_get(root, "env"), doc, has_actions_expression)
    wf_shell = _text(_get(_get(_get(root, "defaults"), "run"), "shell"))
    for _, _, job in _items(jobs):
        if not _is_map(job):
            continue
        env = {**wf_env, **_env_map(_get(job, "env"), doc, has_actions_expression)}
        shell = _text(_get(_get(_get(job, "defaults"), "run"), "shell")) or wf_shell
        container = _get(job, "container")
        image = _vllm_image_of(container) if _is_map(container) else None
        if image is None and _is_scalar(container) and is_vllm_image(_text(container)):
            image = image_for_command(_text(container) or "")
        out += _actions_steps(_get(job, "steps"), env, shell, doc, image)
    return out


def _actions_steps(steps: Any, env: dict[str, Word], shell: str | None, doc: _Doc,
                   image: str | None = None) -> list[Command]:
    out: list[Command] = []
    if not _is_seq(steps):
        return out
    exported: dict[str, Word] = {}  # written to $GITHUB_ENV by an earlier step
    exported_unknown = False
    for step in steps.value:
        run = _get(step, "run")
        if run is None:
            continue
        step_shell = (_text(_get(step, "shell")) or shell or "bash").strip().lower()
        if step_shell.split()[0].startswith(_NON_POSIX):
            doc.consumed.add(id(run))
            continue
        step_env = {**env, **exported, **_env_map(_get(step, "env"), doc, has_actions_expression)}
        out += _script_commands(run, doc, step_env, mask_gha=True, image=image, env_open_ended=exported_unknown)
        written, unknown = _github_env_writes(run, doc)
        exported.update(written)
        exported_unknown = exported_unknown or unknown
    return out


def _skypilot(root: Any, doc: _Doc) -> list[Command]:
    env = _env_map(_get(root, "envs"), doc) if _is_map(_get(root, "envs")) else {}
    out: list[Command] = []
    for key in ("setup", "run"):
        node = _get(root, key)
        if _is_scalar(node):
            out += _script_commands(node, doc, env)
    return out


# ---------------------------------------------------------------------------
# the generic walk: containers, scripts, Helm values
# ---------------------------------------------------------------------------

def _walk(node: Any, doc: _Doc, parents: list[Any]) -> list[Command]:
    out: list[Command] = []
    stack: list[tuple[Any, list[Any]]] = [(node, parents)]
    seen: set[int] = set()
    while stack:
        current, chain = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if _is_map(current):
            out += _mapping_commands(current, doc, chain)
            for _, _, value in reversed(list(_items(current))):
                stack.append((value, chain + [current]))
        elif _is_seq(current):
            for item in reversed(current.value):
                stack.append((item, chain + [current]))
    return out


def _mapping_commands(node: Any, doc: _Doc, chain: list[Any]) -> list[Command]:
    out: list[Command] = []
    image = _get(node, "image")
    command, args = _get(node, "command"), _get(node, "args")
    if (command is not None or args is not None) and id(command) not in doc.consumed \
            and id(args) not in doc.consumed and (_is_scalar(image) or _is_container(node, chain)):
        doc.consumed.update(id(n) for n in (command, args) if n is not None)
        out += _container(node, doc)
    script = _get(node, "script")
    if script is not None and id(script) not in doc.consumed and _is_script(script):
        env, _ = _env_list(_get(node, "env"), doc)  # Tekton
        variables = _get(node, "variables")  # GitLab CI: global, then the job's
        job_vars = _env_map(variables, doc) if _is_map(variables) else {}
        env = {**_top_variables(chain, doc), **job_vars, **env}
        for key in ("before_script", "script"):
            part = _get(node, key)
            if part is not None and id(part) not in doc.consumed and _is_script(part):
                out += _script_commands(part, doc, env, image=_vllm_image_of(node))
    if _text(_get(node, "modelURL")) \
            and (_get(node, "repository") is not None or _get(node, "vllmConfig") is not None):
        out += _production_stack(node, doc)
    for key, key_node, value in _items(node):
        if id(value) in doc.consumed:
            continue
        if key.lower() in SCRIPT_KEYS and _is_script(value) and _mentions_launch(value):
            out += _script_commands(value, doc, _env_of(node, doc), image=_vllm_image_of(node))
            continue
        command = _helm_args(key, value, node, doc, chain)
        if command is not None:
            doc.consumed.add(id(value))
            out.append(command)
    return out


#: keys whose string (or list of strings) a shell runs: SkyPilot and Actions ``run``/``setup``,
#: GitLab ``script``, dstack ``commands``, RayJob ``entrypoint``, Helm values' custom commands
SCRIPT_KEYS = frozenset({
    "run", "setup", "script", "before_script", "after_script", "commands", "entrypoint",
    "customcommand", "startcommand", "launchcommand", "servecommand", "startupcommand",
    "startscript", "runscript", "shell",
})


def _mentions_launch(node: Any) -> bool:
    values = [node] if _is_scalar(node) else list(node.value)
    return any("vllm" in str(v.value).lower() or "replayssm" in str(v.value).lower() for v in values)


def _env_of(node: Any, doc: _Doc) -> dict[str, Word]:
    """The environment a mapping gives its script (``env:`` as a list or a map, ``envs:``)."""
    env = _get(node, "env")
    if _is_seq(env):
        return _env_list(env, doc)[0]
    if _is_map(env):
        return _env_map(env, doc)
    envs = _get(node, "envs")
    return _env_map(envs, doc) if _is_map(envs) else {}


#: sequences whose items are container specs (Pods, Jobs, LeaderWorkerSets, KServe runtimes...)
_CONTAINER_LISTS = frozenset({"containers", "initcontainers", "ephemeralcontainers", "sidecars",
                              "extracontainers"})


def _is_container(node: Any, chain: list[Any]) -> bool:
    """A container spec without ``image:`` (a kustomize patch, a template's, a values file's)."""
    if len(chain) >= 2 and _is_seq(chain[-1]) and _is_map(chain[-2]):
        for key, _, value in _items(chain[-2]):
            if value is chain[-1] and key.lower() in _CONTAINER_LISTS:
                return True
    return _get(node, "name") is not None and (_get(node, "env") is not None
                                               or _get(node, "resources") is not None)


def _is_script(node: Any) -> bool:
    if _is_scalar(node):
        return node.tag == _STR
    return _is_seq(node) and bool(node.value) and all(_is_scalar(i) for i in node.value)


def _top_variables(chain: list[Any], doc: _Doc) -> dict[str, Word]:
    if chain and _is_map(_get(chain[0], "variables")):
        return _env_map(_get(chain[0], "variables"), doc)
    return {}


def _helm_args(key: str, value: Any, owner: Any, doc: _Doc, chain: list[Any]) -> Command | None:
    """A Helm-values list of vLLM arguments (``extraArgs: [--use-replayssm, ...]``)."""
    if _is_seq(value):
        if not value.value or not all(_is_scalar(i) for i in value.value):
            return None
        texts = [_text(i) or "" for i in value.value]
    elif _is_scalar(value) and value.tag == _STR and key.lower() in ARG_KEYS:
        texts = [w[0] for w in split_words(str(value.value))]
    else:
        return None
    if not texts:
        return None
    full_argv = posixpath.basename(texts[0]) == "vllm" and texts[1:2] == ["serve"]
    if not full_argv:
        if key.lower() not in ARG_KEYS:
            return None
        if not (any(_REPLAYSSM_FLAG.match(t) for t in texts) or texts[0].startswith("--model")):
            return None
    toks = _seq_toks(value, doc)
    image = None
    for ancestor in [owner] + list(reversed(chain)):
        found = _image_of(ancestor) if _is_map(ancestor) else None
        if found:
            image = found
            break
    if full_argv:
        return Command(words=[t.word() for t in toks], base_dir=doc.base_dir,
                       image=image_for_command(image) if image and is_vllm_image(image) else None)
    vllm = image_for_command(image) if image and is_vllm_image(image) else "vllm/vllm-openai"
    words = [t.word() for t in toks]
    model_url = None
    for ancestor in [owner] + list(reversed(chain)):
        if _is_map(ancestor) and _text(_get(ancestor, "modelURL")):
            model_url = _get(ancestor, "modelURL")
            break
    if model_url is not None and not any((w.text or "").startswith("--model") for w in words):
        words.insert(0, Word(_text(model_url), doc.span(model_url)))
    return Command(words=words, image=vllm, base_dir=doc.base_dir)


def _production_stack(spec: Any, doc: _Doc) -> list[Command]:
    """vllm-project/production-stack ``servingEngineSpec.modelSpec[]`` (chart template rules)."""
    url = _get(spec, "modelURL")
    words = [Word(_text(url), doc.span(url))]
    config = _get(spec, "vllmConfig")
    if _is_map(config):
        for key, key_node, value in _items(config):
            flag = _PS_FLAGS.get(key)
            text = _text(value)
            if key in ("enableChunkedPrefill", "enablePrefixCaching"):
                base = "--enable-chunked-prefill" if key == "enableChunkedPrefill" \
                    else "--enable-prefix-caching"
                on = (text or "").lower() in ("true", "yes", "on", "1")
                words.append(Word(base if on else "--no-" + base[2:], doc.span(key_node)))
            elif flag and text is not None:
                words += [Word(flag, doc.span(key_node)), Word(text, doc.span(value))]
        if _get(config, "enablePrefixCaching") is None:
            words.append(Word("--no-enable-prefix-caching", doc.span(config)))
        extra = _get(config, "extraArgs")
        if _is_seq(extra):
            doc.consumed.add(id(extra))
            words += [t.word() for t in _seq_toks(extra, doc)]
    lmcache = _get(spec, "lmcacheConfig")
    if _is_map(lmcache) and (_text(_get(lmcache, "enabled")) or "").lower() == "true":
        where = doc.span(_get(lmcache, "enabled"))
        words += [Word("--kv-transfer-config", where),
                  Word('{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}', where)]
    env, _ = _env_list(_get(spec, "env"), doc)
    image = _image_of(spec)
    vllm = image_for_command(image) if image and is_vllm_image(image) else "vllm/vllm-openai"
    return [Command(words=words, env=env, image=vllm, base_dir=doc.base_dir)]


_PS_FLAGS = {
    "maxModelLen": "--max-model-len", "dtype": "--dtype",
    "tensorParallelSize": "--tensor-parallel-size", "maxNumSeqs": "--max-num-seqs",
    "gpuMemoryUtilization": "--gpu-memory-utilization", "maxLoras": "--max-loras",
}


# ---------------------------------------------------------------------------
# Ray Serve LLM configs (a Serve config's llm_configs, a RayService's serveConfigV2)
# ---------------------------------------------------------------------------

#: keys of a RayService / Serve deployment whose string value is itself a Serve config YAML
_NESTED_CONFIG_KEYS = frozenset({"serveconfigv2", "serveconfig"})


def ray_launches_in_yaml(text: str, *, base_dir: str | None = None) -> list[Launch]:
    """Ray Serve LLM configs: any mapping with ``engine_kwargs`` (vLLM's EngineArgs fields),
    served model ``model_loading_config.model_source`` (else ``model_id``); also inside a
    KubeRay RayService's ``serveConfigV2`` string."""
    if "engine_kwargs" not in text:
        return []
    parsed = _documents(text)
    if parsed is None:
        return []
    text, docs = parsed
    doc = _Doc(text, base_dir)
    out: list[Launch] = []
    for root in docs:
        try:
            out += _ray_configs(root, doc, doc.span)
        except Exception as exc:
            frontend_failed(_node_line(root), "Ray Serve YAML", exc)
    return out


def _ray_configs(root: Any, doc: _Doc, span: Callable[[Any], Span]) -> list[Launch]:
    name, cls = RAY_SERVE_LLM
    engine = engines.get(name)

    def launch_from_kwargs(**keywords: Any) -> Launch:
        return engine.launch_from_keywords(cls, **keywords)

    out: list[Launch] = []
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if _is_map(node):
            engine_kwargs = _get(node, "engine_kwargs")
            if engine_kwargs is not None:
                out.append(_ray_launch(node, engine_kwargs, span, launch_from_kwargs))
            for key, _, value in _items(node):
                if key.lower() in _NESTED_CONFIG_KEYS and _is_scalar(value) and "engine_kwargs" in str(value.value):
                    out += _nested_ray_configs(value, doc, span)
                else:
                    stack.append(value)
        elif _is_seq(node):
            stack.extend(node.value)
    return out


def _ray_launch(node: Any, engine_kwargs: Any, span: Callable[[Any], Span], make: Any) -> Launch:
    import yaml

    constructor = yaml.SafeLoader("")
    model: Setting | None = None
    loading = _get(node, "model_loading_config")
    source = (_get(loading, "model_source") or _get(loading, "model_id")) if _is_map(loading) else None
    if source is not None:
        model = Setting("model", _text(source) if _is_scalar(source) else UNKNOWN, span(source), "",
                        span(source))
    keywords: dict[str, Setting] = {}
    unseen: list[str] = []
    if _is_map(engine_kwargs):
        sizes: dict[int, int] = {}
        for key, key_node, value in _items(engine_kwargs):
            if expanded_size(value, sizes) > MAX_EXPANDED_NODES:
                converted: Any = UNKNOWN  # aliases that expand past any real value
            else:
                try:
                    converted = constructor.construct_object(value, deep=True)
                except (MemoryError, RecursionError) as exc:
                    frontend_failed(span(value), "Ray Serve YAML", exc)
                    converted = UNKNOWN
                except Exception:
                    converted = UNKNOWN
            if isinstance(converted, str) and "__RSMTPL" in converted:
                converted = UNKNOWN
            keywords[key] = Setting(key, converted, span(key_node), key, span(value))
    else:
        unseen.append("engine_kwargs")
    keywords.pop("model", None)
    anchor = span(loading if loading is not None else engine_kwargs)
    if model is None:
        model = Setting("model", UNKNOWN, anchor, "")
    return make(label="Ray Serve LLM config", anchor=anchor, model=model, keywords=keywords,
                unseen=unseen, env={})


def _nested_ray_configs(value: Any, doc: _Doc, span: Callable[[Any], Span]) -> list[Launch]:
    """A YAML document written as a string (``serveConfigV2: |``), placed in the file."""
    import yaml

    inner = str(value.value)
    chars = doc.chars(value)
    if chars is None or len(chars) != len(inner):
        return []

    def inner_span(node: Any) -> Span:
        a = chars[min(node.start_mark.index, len(chars) - 1)]
        b = chars[min(max(node.end_mark.index - 1, node.start_mark.index), len(chars) - 1)] + 1
        return doc.lines.span(a, b)

    try:
        roots = list(yaml.compose_all(inner, Loader=_loader()))
    except (MemoryError, RecursionError):  # too large or deep: reported, never dropped
        raise
    except Exception:
        return []
    return [launch for root in roots for launch in _ray_configs(root, doc, inner_span)]


# ---------------------------------------------------------------------------
# documents held in a string (a recipe's `guide: |` Markdown, a pod patch in an annotation)
# ---------------------------------------------------------------------------

#: whitespace at a line's start is ``[^\S\n]*``, never ``\s*``: that runs on over following
#: lines, from every line start, which made a string of many blank lines quadratic
_FENCE = re.compile(r"^[^\S\n]*(```|~~~)", re.M)
_MANIFEST_KEY = re.compile(r"^[^\S\n]*(?:-[^\S\n]*)?(?:command|args|containers)[^\S\n]*:", re.M)


def embedded_documents(text: str) -> list[tuple[str, str, Callable[[Span], Span]]]:
    """``(kind, text, place)`` of the Markdown and YAML documents written as string values,
    ``place`` moving a span of that text to where it is written in the file.  Only strings
    that mention vLLM count; the caller lints them as their own kind."""
    if "vllm" not in text.lower() and "replayssm" not in text.lower():
        return []
    parsed = _documents(text)
    if parsed is None:
        return []
    text, docs = parsed
    doc = _Doc(text, None)
    out: list[tuple[str, str, Callable[[Span], Span]]] = []
    stack = [d for d in docs if d is not None]
    seen: set[int] = set()  # aliases: each node once, however often it is referred to
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if _is_map(node):
            stack.extend(value for _, _, value in _items(node))
        elif _is_seq(node):
            stack.extend(node.value)
        elif _is_scalar(node) and node.tag == _STR and "\n" in str(node.value):
            value = str(node.value)
            lowered = value.lower()
            if "vllm" not in lowered and "replayssm" not in lowered:
                continue
            kind = "markdown" if _FENCE.search(value) else (
                "yaml" if _MANIFEST_KEY.search(value) else None)
            chars = doc.chars(node) if kind else None
            if kind and chars is not None and len(chars) == len(value):
                out.append((kind, value, _inner_placer(value, chars, doc.lines)))
    return out


def _inner_placer(value: str, chars: list[int], lines: LineIndex) -> Callable[[Span], Span]:
    inner = LineIndex(value)

    def place(span: Span) -> Span:
        if span.source is not None:
            return span
        a = inner.index(span.line, span.col)
        b = inner.index(span.end_line, span.end_col)
        last = len(chars) - 1
        start = chars[min(max(a, 0), last)]
        end = chars[min(max(b - 1, a, 0), last)] + 1
        moved = lines.span(start, end)
        return Span(moved.line, moved.col, moved.end_line, moved.end_col, span.cell, span.source)

    return place
