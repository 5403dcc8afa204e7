"""Strings a shell runs: GitHub Actions steps (``${{ expr }}`` masked, ``$GITHUB_ENV``
writes carried to later steps), SkyPilot ``setup``/``run``, GitLab CI and Tekton ``script``,
and the script keys of other task files.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ...model import Command, Word
from .._common import image_for_command, is_vllm_image, merge_context, placer
from ...yaml_templates import has_actions_expression, mask_expressions
from ..shell_snippets import shell_commands
from .containers import env_list, env_map
from .nodes import NULL_TAG, STR_TAG, Doc, get, is_map, is_scalar, is_seq, items, text_of

_NON_POSIX = ("python", "pwsh", "powershell", "cmd", "node")


def engine_image_of(node: Any) -> str | None:
    """The vLLM image a CI job / step runs in (``image: x`` or ``image: {name: x}``)."""
    image = get(node, "image")
    text = text_of(image) if is_scalar(image) else text_of(get(image, "name"))
    return image_for_command(text) if text and is_vllm_image(text) else None


def script_commands(node: Any, doc: Doc, env: dict[str, Word], *, mask_gha: bool = False,
                    image: str | None = None, env_open_ended: bool = False) -> list[Command]:
    """A scalar (or list of scalars) that a POSIX shell runs."""
    if is_seq(node):
        doc.consumed.add(id(node))
        parts, chars = [], []
        for item in node.value:
            if not is_scalar(item):
                continue
            doc.consumed.add(id(item))
            text = str(item.value)
            c = doc.chars(item) or [item.start_mark.index] * len(text)
            parts.append(text + "\n")
            chars += c + [c[-1] + 1 if c else item.end_mark.index]
        script, script_chars = "".join(parts), chars
        fallback = doc.span(node)
    elif is_scalar(node) and node.tag != NULL_TAG:
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


def _expressions_as_values(command: Command, doc: Doc) -> Command:
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


def _github_env_writes(run: Any, doc: Doc) -> tuple[dict[str, Word], bool]:
    """What a step's ``run`` writes to ``$GITHUB_ENV`` for the steps after it: literal
    ``NAME=value`` lines, and whether it writes anything else there (then unknown)."""
    script = text_of(run) if is_scalar(run) else None
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


def actions_workflow(root: Any, jobs: Any, doc: Doc) -> list[Command]:
    out: list[Command] = []
    wf_env = env_map(get(root, "env"), doc, has_actions_expression)
    wf_shell = text_of(get(get(get(root, "defaults"), "run"), "shell"))
    for _, _, job in items(jobs):
        if not is_map(job):
            continue
        env = {**wf_env, **env_map(get(job, "env"), doc, has_actions_expression)}
        shell = text_of(get(get(get(job, "defaults"), "run"), "shell")) or wf_shell
        container = get(job, "container")
        image = engine_image_of(container) if is_map(container) else None
        if image is None and is_scalar(container) and is_vllm_image(text_of(container)):
            image = image_for_command(text_of(container) or "")
        out += actions_steps(get(job, "steps"), env, shell, doc, image)
    return out


def actions_steps(steps: Any, env: dict[str, Word], shell: str | None, doc: Doc,
                  image: str | None = None) -> list[Command]:
    out: list[Command] = []
    if not is_seq(steps):
        return out
    exported: dict[str, Word] = {}  # written to $GITHUB_ENV by an earlier step
    exported_unknown = False
    for step in steps.value:
        run = get(step, "run")
        if run is None:
            continue
        step_shell = (text_of(get(step, "shell")) or shell or "bash").strip().lower()
        if step_shell.split()[0].startswith(_NON_POSIX):
            doc.consumed.add(id(run))
            continue
        step_env = {**env, **exported, **env_map(get(step, "env"), doc, has_actions_expression)}
        out += script_commands(run, doc, step_env, mask_gha=True, image=image, env_open_ended=exported_unknown)
        written, unknown = _github_env_writes(run, doc)
        exported.update(written)
        exported_unknown = exported_unknown or unknown
    return out


def skypilot(root: Any, doc: Doc) -> list[Command]:
    env = env_map(get(root, "envs"), doc) if is_map(get(root, "envs")) else {}
    out: list[Command] = []
    for key in ("setup", "run"):
        node = get(root, key)
        if is_scalar(node):
            out += script_commands(node, doc, env)
    return out


#: keys whose string (or list of strings) a shell runs: SkyPilot and Actions ``run``/``setup``,
#: GitLab ``script``, dstack ``commands``, RayJob ``entrypoint``, Helm values' custom commands
SCRIPT_KEYS = frozenset({
    "run", "setup", "script", "before_script", "after_script", "commands", "entrypoint",
    "customcommand", "startcommand", "launchcommand", "servecommand", "startupcommand",
    "startscript", "runscript", "shell",
})


def mentions_launch(node: Any) -> bool:
    values = [node] if is_scalar(node) else list(node.value)
    return any("vllm" in str(v.value).lower() or "replayssm" in str(v.value).lower() for v in values)


def env_of(node: Any, doc: Doc) -> dict[str, Word]:
    """The environment a mapping gives its script (``env:`` as a list or a map, ``envs:``)."""
    env = get(node, "env")
    if is_seq(env):
        return env_list(env, doc)[0]
    if is_map(env):
        return env_map(env, doc)
    envs = get(node, "envs")
    return env_map(envs, doc) if is_map(envs) else {}


def is_script(node: Any) -> bool:
    if is_scalar(node):
        return node.tag == STR_TAG
    return is_seq(node) and bool(node.value) and all(is_scalar(i) for i in node.value)


def top_variables(chain: list[Any], doc: Doc) -> dict[str, Word]:
    if chain and is_map(get(chain[0], "variables")):
        return env_map(get(chain[0], "variables"), doc)
    return {}
