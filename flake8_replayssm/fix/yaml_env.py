"""An environment variable for the container or compose service that runs a YAML argv.

A launch written as an exec-form argv in YAML (Kubernetes ``command:``/``args:``, compose
``command:``/``entrypoint:``) cannot get a ``VAR=value`` prefix word; its environment lives
next to it: compose ``environment:`` (a map or a ``VAR=value`` list), Kubernetes ``env:``
(``- name: VAR`` / ``value: "..."``), or a new such key at the mapping's indentation.
Each entry is written like its neighbours (quotes, flow or block style); nothing shared
through an alias or merge key is edited, and None means "not a shape we know".
"""

from __future__ import annotations

from typing import Any

from .edits import Edit
from .yaml_edits import COMMAND_KEYS, DASH_PREFIX, REST_OF_LINE, Entry, YamlFacts, node_is, quoted


def env_edit(facts: YamlFacts, item: Any, name: str, value: str, newline: str) -> Edit | None:
    """Set ``name=value`` for the container/service whose argv holds the scalar ``item``."""
    found = facts.owner(item)
    if found is None:
        return None
    mapping, _ = found
    if not facts.editable(mapping) or mapping.flow_style:
        return None
    direct = facts.direct_entries(mapping)
    double = quoted(value, '"')
    if facts.is_compose_service(mapping):
        env = direct.get("environment")
        if env is None:
            if facts.has_merge(mapping):
                return None  # the service may inherit `environment:`; a new key would replace it
            return _new_key(facts, mapping, direct, "environment", [f"{name}: {double}"], newline)
        return _compose_env_edit(facts, env.value_node, name, value, newline)
    if "image" not in direct:
        return None
    env = direct.get("env")
    if env is None:
        if facts.has_merge(mapping):
            return None
        if "envFrom" in direct:
            return None
        off = " " * facts.seq_offset
        return _new_key(facts, mapping, direct, "env", [f"{off}- name: {name}", f"{off}  value: {double}"],
                        newline, nested=False)
    return _k8s_env_edit(facts, env.value_node, name, value, newline)


def _new_key(facts: YamlFacts, mapping: Any, direct: dict[str, Entry], key: str, body: list[str], newline: str,
             nested: bool = True) -> Edit | None:
    """``key:`` with ``body`` lines, at the mapping's indentation (after ``image:`` or
    before the command key)."""
    first_key = mapping.value[0][0]
    col = first_key.start_mark.column
    indent = " " * col
    step = " " * facts.key_step if nested else ""
    block = f"{indent}{key}:{newline}" + "".join(f"{indent}{step}{line}{newline}" for line in body)
    image = direct.get("image")
    if image is not None and node_is(image.value_node, "scalar"):
        after = facts.next_line_start(image.value_node.end_mark.index)
        if after is not None and REST_OF_LINE.fullmatch(facts.rest_of_line(image.value_node.end_mark.index)):
            return Edit(after, after, block)
    for command in COMMAND_KEYS:
        entry = direct.get(command)
        if entry is None:
            continue
        start = entry.key_node.start_mark.index
        if facts.line_prefix(start).strip() == "":
            line_start = facts.index.line_start(start)
            return Edit(line_start, line_start, block)
    return None


def _compose_env_edit(facts: YamlFacts, env: Any, name: str, value: str, newline: str) -> Edit | None:
    """A compose ``environment:`` map (``VAR: "value"``) or list (``- VAR=value``) gets the entry."""
    if not facts.editable(env):
        return None
    if node_is(env, "mapping") and env.value:
        k_last, v_last = env.value[-1]
        q_key = k_last.style if (k_last.style or "") in ('"', "'") else ""
        key = quoted(name, q_key) if q_key else name
        q_val = v_last.style if node_is(v_last, "scalar") and (v_last.style or "") in ('"', "'") else '"'
        item = f"{key}: {quoted(value, q_val)}"
        if env.flow_style:
            end = facts.end_of(v_last)
            return Edit(end, end, ", " + item)
        prefix = facts.line_prefix(k_last.start_mark.index)
        if prefix.strip():
            return None
        end = facts.end_of(v_last)
        if not REST_OF_LINE.fullmatch(facts.rest_of_line(end)):
            return None
        line_end = facts.index.line_end(end)
        return Edit(line_end, line_end, newline + prefix + item)
    if node_is(env, "sequence") and env.value:
        last = env.value[-1]
        if not node_is(last, "scalar"):
            return None
        if env.flow_style:
            return Edit(last.end_mark.index, last.end_mark.index,
                        ", " + facts.literal(last, f"{name}={value}", True))
        index = len(env.value) - 1
        if facts.item_at(last.start_mark.index, last.end_mark.index) is None:
            return None
        return facts.insert_items(env, index, [f"{name}={value}"], newline=newline)
    return None


def _k8s_env_edit(facts: YamlFacts, env: Any, name: str, value: str, newline: str) -> Edit | None:
    """A Kubernetes ``env:`` list gets ``- name: VAR`` / ``value: "..."`` after its last entry."""
    if not node_is(env, "sequence") or not env.value or not facts.editable(env):
        return None
    last = env.value[-1]
    if not node_is(last, "mapping") or not last.value:
        return None
    written = facts.direct_entries(last).get("value")
    q_val = written.value_node.style if written is not None and node_is(written.value_node, "scalar") \
        and (written.value_node.style or "") in ('"', "'") else '"'
    flow_item = f"{{name: {name}, value: {quoted(value, q_val)}}}"
    if env.flow_style:
        end = facts.end_of(last)
        return Edit(end, end, ", " + flow_item)
    prefix = facts.line_prefix(last.start_mark.index)
    if not DASH_PREFIX.fullmatch(prefix):
        return None
    end = facts.end_of(last)
    if not REST_OF_LINE.fullmatch(facts.rest_of_line(end)):
        return None
    line_end = facts.index.line_end(end)
    if last.flow_style:
        return Edit(line_end, line_end, newline + prefix + flow_item)
    cont = " " * len(prefix)
    return Edit(line_end, line_end,
                f"{newline}{prefix}name: {name}{newline}{cont}value: {quoted(value, q_val)}")
