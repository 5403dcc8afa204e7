"""The commands of YAML documents: known places first (compose services, Actions
workflows, SkyPilot tasks), then a walk over every mapping (containers, scripts, Helm values),
then every string and list of strings left, by its content (:mod:`.content`).

An engine's standalone ``--config`` YAML (``vllm serve --config FILE``) is *not* a list of
commands: :func:`commands_in_document` returns ``[]`` for it (``engines.is_config_document``).
"""

from __future__ import annotations

from typing import Any

from ... import engines
from ...model import Command
from .compose import compose_service
from .content import commands_by_content
from .containers import container_commands, env_list, env_map, is_container
from .nodes import Doc, get, is_map, is_scalar, is_seq, items, text_of
from .scripts import (
    SCRIPT_KEYS,
    actions_steps,
    actions_workflow,
    engine_image_of,
    env_of,
    is_script,
    mentions_launch,
    script_commands,
    skypilot,
    top_variables,
)
from .values import helm_args, kubeai_model, production_stack


def commands_in_document(root: Any, doc: Doc) -> list[Command]:
    if root is None or engines.is_config_document(root):
        return []
    out: list[Command] = []
    services = get(root, "services")
    if is_map(services) and get(root, "apiVersion") is None:
        for _, _, svc in items(services):
            if is_map(svc):
                out += compose_service(svc, doc)
    jobs = get(root, "jobs")
    if is_map(jobs):
        out += actions_workflow(root, jobs, doc)
    runs = get(root, "runs")
    if is_map(runs) and is_seq(get(runs, "steps")):  # composite action
        out += actions_steps(get(runs, "steps"), {}, None, doc)
    if is_scalar(get(root, "run")) and get(root, "jobs") is None:
        out += skypilot(root, doc)
    out += walk(root, doc, [])
    return out + commands_by_content(root, doc)


def walk(node: Any, doc: Doc, parents: list[Any]) -> list[Command]:
    out: list[Command] = []
    stack: list[tuple[Any, list[Any]]] = [(node, parents)]
    seen: set[int] = set()
    while stack:
        current, chain = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if is_map(current):
            out += _mapping_commands(current, doc, chain)
            for _, _, value in reversed(list(items(current))):
                stack.append((value, chain + [current]))
        elif is_seq(current):
            for item in reversed(current.value):
                stack.append((item, chain + [current]))
    return out


def _mapping_commands(node: Any, doc: Doc, chain: list[Any]) -> list[Command]:
    out: list[Command] = []
    image = get(node, "image")
    command, args = get(node, "command"), get(node, "args")
    if (command is not None or args is not None) and id(command) not in doc.consumed \
            and id(args) not in doc.consumed and (is_scalar(image) or is_container(node, chain)):
        doc.consumed.update(id(n) for n in (command, args) if n is not None)
        out += container_commands(node, doc)
    script = get(node, "script")
    if script is not None and id(script) not in doc.consumed and is_script(script):
        env, _ = env_list(get(node, "env"), doc)  # Tekton
        variables = get(node, "variables")  # GitLab CI: global, then the job's
        job_vars = env_map(variables, doc) if is_map(variables) else {}
        env = {**top_variables(chain, doc), **job_vars, **env}
        for key in ("before_script", "script"):
            part = get(node, key)
            if part is not None and id(part) not in doc.consumed and is_script(part):
                out += script_commands(part, doc, env, image=engine_image_of(node))
    kubeai = kubeai_model(node, doc)
    if kubeai is not None:
        out.append(kubeai)
    if text_of(get(node, "modelURL")) \
            and (get(node, "repository") is not None or get(node, "vllmConfig") is not None):
        out += production_stack(node, doc)
    for key, key_node, value in items(node):
        if id(value) in doc.consumed:
            continue
        if key.lower() in SCRIPT_KEYS and is_script(value) and mentions_launch(value):
            out += script_commands(value, doc, env_of(node, doc), image=engine_image_of(node))
            continue
        command = helm_args(key, value, node, doc, chain)
        if command is not None:
            doc.consumed.add(id(value))
            out.append(command)
    return out
