"""YAML structure for fixes: list items, environments and ``--config`` keys as text edits.

The YAML frontend hands over words with the spans of their scalar nodes; to
*insert* or *delete* a word the fixer must know how the surrounding YAML is
written.  :class:`YamlFacts` composes the text once (PyYAML nodes, character
offsets) and answers:

- is a span exactly one item of a sequence (block ``- x`` or flow ``[a, x]``),
  and how to write a new item next to it (indentation, dash, quote style);
- is a span a word inside a longer scalar (a ``command: >`` string, a ``sh -c``
  script) that words may be added to;
- where a launch's environment lives (compose ``environment:`` map or list,
  Kubernetes ``env:`` list, or a new key at the container's indentation);
- the top-level entries of a ``vllm serve --config`` file.

Nothing reachable through an alias or a merge key (``<<: *x``) is edited: the
edit would change every place that shares the node.  Every method returns
``None`` (or ``False``) when the text is not written in a shape it knows; the
fixer then leaves that launch alone.
"""

from __future__ import annotations

import collections
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable

from .edits import Edit, LineIndex

ENV_RUNNER = "VLLM_USE_V2_MODEL_RUNNER"
_DASH_PREFIX = re.compile(r"[ \t]*-[ \t]+\Z")
_REST_OF_LINE = re.compile(r"[ \t]*(#.*)?\Z")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ash", "ksh"})
#: keys whose (string or list-of-strings) value a POSIX shell runs
_SCRIPT_KEYS = frozenset({"run", "script", "before_script", "after_script", "setup"})
_COMMAND_KEYS = ("command", "args", "entrypoint")


def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _is(node: Any, kind: str) -> bool:
    return getattr(node, "id", None) == kind


def plain_ok(text: str, flow: bool) -> bool:
    """Whether ``text`` can be written as a plain YAML scalar and read back as the same string."""
    import yaml

    if not text or text != text.strip() or "\n" in text or " #" in text or ": " in text:
        return False
    if flow and any(c in text for c in ",[]{}"):
        return False
    try:
        return yaml.safe_load(text) == text
    except Exception:
        return False


def quoted(text: str, quote: str) -> str:
    if quote == "'":
        return "'" + text.replace("'", "''") + "'"
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


@dataclass
class Entry:
    """One ``key: value`` of a mapping."""

    key: str
    key_node: Any
    value_node: Any


class YamlFacts:
    """The node structure of one YAML text, for edits."""

    def __init__(self, text: str, index: LineIndex) -> None:
        import yaml

        self.text, self.index = text, index
        self.docs: list[Any] = list(yaml.compose_all(text, Loader=_loader()))
        self.parent: dict[int, tuple[Any, Any]] = {}  # id(node) -> (parent, key node | item index)
        self.shared: set[int] = set()
        self.scalars: dict[tuple[int, int], Any] = {}
        self.scalar_ranges: list[tuple[int, int, Any]] = []
        self._key_steps: collections.Counter[int] = collections.Counter()
        self._seq_offsets: collections.Counter[int] = collections.Counter()
        for doc in self.docs:
            if doc is not None:
                self._walk(doc, None, None)
        self.scalar_ranges.sort(key=lambda r: (r[0], r[1]))

    # -- the tree -------------------------------------------------------------
    def _walk(self, root: Any, parent: Any, key: Any) -> None:
        stack = [(root, parent, key)]
        while stack:
            node, parent, key = stack.pop()
            if id(node) in self.parent:  # reached twice: an alias or a merge
                self._mark_shared(node)
                continue
            self.parent[id(node)] = (parent, key)
            if _is(node, "scalar"):
                rng = (node.start_mark.index, node.end_mark.index)
                self.scalars[rng] = node
                self.scalar_ranges.append((rng[0], rng[1], node))
            elif _is(node, "sequence"):
                for i, item in reversed(list(enumerate(node.value))):
                    stack.append((item, node, i))
                if not node.flow_style and node.value and parent is not None and _is(parent, "mapping") \
                        and key is not None and not isinstance(key, int):
                    dash = self.dash_column(node.value[0])
                    if dash is not None:
                        self._seq_offsets[dash - key.start_mark.column] += 1
            elif _is(node, "mapping"):
                for k, v in reversed(node.value):
                    stack.append((v, node, k))
                    stack.append((k, node, "key"))
                if not node.flow_style and node.value and _is(parent, "mapping") and key is not None \
                        and not isinstance(key, int) and key != "key":
                    step = node.value[0][0].start_mark.column - key.start_mark.column
                    if step > 0:
                        self._key_steps[step] += 1

    def _mark_shared(self, node: Any) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if id(current) in self.shared:
                continue
            self.shared.add(id(current))
            if _is(current, "sequence"):
                stack.extend(current.value)
            elif _is(current, "mapping"):
                for k, v in current.value:
                    stack += [k, v]

    def editable(self, node: Any) -> bool:
        """Not shared through an alias or merge key, nor below such a node."""
        while node is not None:
            if id(node) in self.shared:
                return False
            node = self.parent.get(id(node), (None, None))[0]
        return True

    @property
    def key_step(self) -> int:
        return self._key_steps.most_common(1)[0][0] if self._key_steps else 2

    @property
    def seq_offset(self) -> int:
        return self._seq_offsets.most_common(1)[0][0] if self._seq_offsets else 2

    # -- positions --------------------------------------------------------------
    def line_prefix(self, offset: int) -> str:
        return self.text[self.index.line_start(offset):offset]

    def rest_of_line(self, offset: int) -> str:
        return self.text[offset:self.index.line_end(offset)]

    def next_line_start(self, offset: int) -> int | None:
        """Start of the line after ``offset``'s line (None: the last line has no terminator)."""
        line = self.index.line_of(offset)
        if line + 1 < len(self.index.starts):
            return self.index.starts[line + 1]
        return None

    def dash_column(self, item: Any) -> int | None:
        prefix = self.line_prefix(item.start_mark.index)
        if not _DASH_PREFIX.fullmatch(prefix):
            return None
        return len(prefix) - len(prefix.lstrip(" \t"))

    def last_scalar(self, node: Any) -> Any:
        """The last scalar below ``node`` (its end is where the node's text ends)."""
        while True:
            if _is(node, "scalar"):
                return node
            if _is(node, "sequence") and node.value:
                node = node.value[-1]
            elif _is(node, "mapping") and node.value:
                node = node.value[-1][1]
            else:
                return node

    def end_of(self, node: Any) -> int:
        """Where the text of ``node`` ends (flow collections: after the closing bracket)."""
        if _is(node, "scalar") or getattr(node, "flow_style", False):
            return node.end_mark.index
        last = self.last_scalar(node)
        return last.end_mark.index if last is not node else node.end_mark.index

    def single_line(self, node: Any) -> bool:
        last = max(node.end_mark.index - 1, node.start_mark.index)
        return self.index.line_of(node.start_mark.index) == self.index.line_of(last)

    # -- scalars and items ----------------------------------------------------------
    def scalar_at(self, start: int, end: int) -> Any:
        return self.scalars.get((start, end))

    def scalar_around(self, start: int, end: int) -> Any:
        """The scalar whose text holds [start, end)."""
        for s, e, node in self.scalar_ranges:
            if s > start:
                break
            if s <= start and end <= e:
                return node
        return None

    def item_at(self, start: int, end: int) -> tuple[Any, int, Any] | None:
        """``(sequence, index, node)`` when [start, end) is exactly an editable one-line scalar item."""
        node = self.scalar_at(start, end)
        if node is None or not self.editable(node):
            return None
        parent, key = self.parent.get(id(node), (None, None))
        if not _is(parent, "sequence") or not isinstance(key, int) or not self.single_line(node):
            return None
        if (node.style or "") in ("|", ">"):
            return None
        if not parent.flow_style:
            if not _DASH_PREFIX.fullmatch(self.line_prefix(start)) \
                    or not _REST_OF_LINE.fullmatch(self.rest_of_line(end)):
                return None
        return parent, key, node

    def literal(self, like: Any, text: str, flow: bool) -> str:
        """``text`` as a scalar written like ``like`` (same quotes; plain when it can be)."""
        style = like.style or "" if like is not None else ""
        if style in ('"', "'"):
            return quoted(text, style)
        return text if plain_ok(text, flow) else quoted(text, '"')

    def insert_items(self, seq: Any, index: int, words: Iterable[str], *, before: bool = False,
                     newline: str = "\n") -> Edit | None:
        """New items next to item ``index`` of ``seq``, written like it."""
        words = list(words)
        node = seq.value[index]
        if seq.flow_style:
            items = [self.literal(node, w, True) for w in words]
            if before:
                return Edit(node.start_mark.index, node.start_mark.index, "".join(i + ", " for i in items))
            return Edit(node.end_mark.index, node.end_mark.index, "".join(", " + i for i in items))
        prefix = self.line_prefix(node.start_mark.index)
        lines = [prefix + self.literal(node, w, False) for w in words]
        if before:
            start = self.index.line_start(node.start_mark.index)
            return Edit(start, start, "".join(line + newline for line in lines))
        end = self.index.line_end(node.end_mark.index)
        return Edit(end, end, "".join(newline + line for line in lines))

    def delete_items(self, seq: Any, indexes: set[int]) -> list[tuple[int, int]] | None:
        """Text ranges that remove the items ``indexes`` of ``seq`` (not every item)."""
        if not indexes or len(indexes) >= len(seq.value):
            return None
        runs: list[list[int]] = []
        for i in sorted(indexes):
            if runs and runs[-1][1] == i - 1:
                runs[-1][1] = i
            else:
                runs.append([i, i])
        out = []
        for first, last in runs:
            a, b = seq.value[first], seq.value[last]
            if seq.flow_style:
                if first > 0:
                    out.append((seq.value[first - 1].end_mark.index, b.end_mark.index))
                else:
                    out.append((a.start_mark.index, seq.value[last + 1].start_mark.index))
                continue
            start = self.index.line_start(a.start_mark.index)
            stop = self.next_line_start(b.end_mark.index)
            if stop is None:
                stop = len(self.text)
                start = max(0, start - (2 if self.text[max(0, start - 2):start] == "\r\n" else 1))
            out.append((start, stop))
        return out

    # -- shells ---------------------------------------------------------------------
    def owner(self, node: Any) -> tuple[Any, str] | None:
        """The mapping (container, service) whose ``command``/``args``/``entrypoint`` holds ``node``."""
        current = node
        parent, key = self.parent.get(id(current), (None, None))
        if _is(parent, "sequence"):
            current = parent
            parent, key = self.parent.get(id(current), (None, None))
        if _is(parent, "mapping") and key is not None and not isinstance(key, int) and key != "key" \
                and _is(key, "scalar") and str(key.value) in _COMMAND_KEYS:
            return parent, str(key.value)
        return None

    def argv_nodes(self, owner: Any) -> list[Any]:
        """Items of the owner's exec-form argv in order (entrypoint/command + command/args)."""
        direct = self.direct_entries(owner)
        out: list[Any] = []
        order = ("entrypoint", "command") if self.is_compose_service(owner) else ("command", "args")
        for name in order:
            entry = direct.get(name)
            if entry is None:
                continue
            value = entry.value_node
            out += list(value.value) if _is(value, "sequence") else [value]
        return out

    def is_shell_script(self, scalar: Any) -> bool:
        """Whether a POSIX shell runs the text of ``scalar``."""
        parent, key = self.parent.get(id(scalar), (None, None))
        if _is(parent, "sequence"):
            up, up_key = self.parent.get(id(parent), (None, None))
            if _is(up, "mapping") and _is(up_key, "scalar") \
                    and str(up_key.value) in _SCRIPT_KEYS - {"run", "setup"}:
                return True  # GitLab CI / Tekton `script:` lists: one shell line per item
        if _is(parent, "mapping") and _is(key, "scalar") and str(key.value) in _SCRIPT_KEYS:
            return True
        found = self.owner(scalar)
        if found is None:
            return False
        argv = self.argv_nodes(found[0])
        k = next((i for i, n in enumerate(argv) if n is scalar), None)
        if k is None or k < 2:
            return False
        flag = argv[k - 1]
        if not _is(flag, "scalar") or not re.fullmatch(r"-[a-z]*c", str(flag.value)):
            return False
        return any(_is(n, "scalar") and str(n.value).rsplit("/", 1)[-1] in _SHELLS for n in argv[:k - 1])

    # -- mappings -------------------------------------------------------------------
    def direct_entries(self, mapping: Any) -> dict[str, Entry]:
        """Keys written in the mapping itself (merge keys not followed)."""
        out: dict[str, Entry] = {}
        for k, v in getattr(mapping, "value", []):
            if _is(k, "scalar") and k.tag != "tag:yaml.org,2002:merge":
                out[str(k.value)] = Entry(str(k.value), k, v)
        return out

    def has_merge(self, mapping: Any) -> bool:
        return any(_is(k, "scalar") and k.tag == "tag:yaml.org,2002:merge" for k, _ in mapping.value)

    def is_compose_service(self, mapping: Any) -> bool:
        parent, key = self.parent.get(id(mapping), (None, None))
        if not _is(parent, "mapping"):
            return False
        up, up_key = self.parent.get(id(parent), (None, None))
        return _is(up, "mapping") and _is(up_key, "scalar") and str(up_key.value) == "services" \
            and self.parent.get(id(up), (None, None))[0] is None

    # -- the environment ---------------------------------------------------------------
    def runner_env_edit(self, item: Any, newline: str) -> Edit | None:
        """Set VLLM_USE_V2_MODEL_RUNNER=0 for the container/service whose argv holds ``item``."""
        found = self.owner(item)
        if found is None:
            return None
        mapping, _ = found
        if not self.editable(mapping) or mapping.flow_style:
            return None
        direct = self.direct_entries(mapping)
        if self.is_compose_service(mapping):
            env = direct.get("environment")
            if env is None:
                if self.has_merge(mapping):
                    return None  # the service may inherit `environment:`; a new key would replace it
                return self.new_key(mapping, direct, "environment",
                                    [f'{ENV_RUNNER}: "0"'], newline)
            return self.compose_env_edit(env.value_node, newline)
        if "image" not in direct:
            return None
        env = direct.get("env")
        if env is None:
            if self.has_merge(mapping):
                return None
            if "envFrom" in direct:
                return None
            off = " " * self.seq_offset
            return self.new_key(mapping, direct, "env",
                                [f"{off}- name: {ENV_RUNNER}", f'{off}  value: "0"'], newline, nested=False)
        return self.k8s_env_edit(env.value_node, newline)

    def new_key(self, mapping: Any, direct: dict[str, Entry], key: str, body: list[str], newline: str,
                nested: bool = True) -> Edit | None:
        """``key:`` with ``body`` lines, at the mapping's indentation (after ``image:`` or
        before the command key)."""
        first_key = mapping.value[0][0]
        col = first_key.start_mark.column
        indent = " " * col
        step = " " * self.key_step if nested else ""
        block = f"{indent}{key}:{newline}" + "".join(f"{indent}{step}{line}{newline}" for line in body)
        image = direct.get("image")
        if image is not None and _is(image.value_node, "scalar"):
            after = self.next_line_start(image.value_node.end_mark.index)
            if after is not None and _REST_OF_LINE.fullmatch(self.rest_of_line(image.value_node.end_mark.index)):
                return Edit(after, after, block)
        for name in _COMMAND_KEYS:
            entry = direct.get(name)
            if entry is None:
                continue
            start = entry.key_node.start_mark.index
            if self.line_prefix(start).strip() == "":
                line_start = self.index.line_start(start)
                return Edit(line_start, line_start, block)
        return None

    def compose_env_edit(self, env: Any, newline: str) -> Edit | None:
        if not self.editable(env):
            return None
        if _is(env, "mapping") and env.value:
            k_last, v_last = env.value[-1]
            q_key = k_last.style if (k_last.style or "") in ('"', "'") else ""
            key = quoted(ENV_RUNNER, q_key) if q_key else ENV_RUNNER
            q_val = v_last.style if _is(v_last, "scalar") and (v_last.style or "") in ('"', "'") else '"'
            item = f"{key}: {quoted('0', q_val)}"
            if env.flow_style:
                end = self.end_of(v_last)
                return Edit(end, end, ", " + item)
            prefix = self.line_prefix(k_last.start_mark.index)
            if prefix.strip():
                return None
            end = self.end_of(v_last)
            if not _REST_OF_LINE.fullmatch(self.rest_of_line(end)):
                return None
            line_end = self.index.line_end(end)
            return Edit(line_end, line_end, newline + prefix + item)
        if _is(env, "sequence") and env.value:
            last = env.value[-1]
            if not _is(last, "scalar"):
                return None
            if env.flow_style:
                return Edit(last.end_mark.index, last.end_mark.index,
                            ", " + self.literal(last, f"{ENV_RUNNER}=0", True))
            index = len(env.value) - 1
            if self.item_at(last.start_mark.index, last.end_mark.index) is None:
                return None
            return self.insert_items(env, index, [f"{ENV_RUNNER}=0"], newline=newline)
        return None

    def k8s_env_edit(self, env: Any, newline: str) -> Edit | None:
        if not _is(env, "sequence") or not env.value or not self.editable(env):
            return None
        last = env.value[-1]
        if not _is(last, "mapping") or not last.value:
            return None
        value = self.direct_entries(last).get("value")
        q_val = value.value_node.style if value is not None and _is(value.value_node, "scalar") \
            and (value.value_node.style or "") in ('"', "'") else '"'
        flow_item = f"{{name: {ENV_RUNNER}, value: {quoted('0', q_val)}}}"
        if env.flow_style:
            end = self.end_of(last)
            return Edit(end, end, ", " + flow_item)
        prefix = self.line_prefix(last.start_mark.index)
        if not _DASH_PREFIX.fullmatch(prefix):
            return None
        end = self.end_of(last)
        if not _REST_OF_LINE.fullmatch(self.rest_of_line(end)):
            return None
        line_end = self.index.line_end(end)
        if last.flow_style:
            return Edit(line_end, line_end, newline + prefix + flow_item)
        cont = " " * len(prefix)
        return Edit(line_end, line_end,
                    f"{newline}{prefix}name: {ENV_RUNNER}{newline}{cont}value: {quoted('0', q_val)}")

    # -- vllm serve --config files ---------------------------------------------------------
    def config_entries(self) -> list[Entry] | None:
        """Top-level entries of a one-document block-mapping file (None: another shape)."""
        docs = [d for d in self.docs if d is not None]
        if len(docs) != 1 or not _is(docs[0], "mapping") or docs[0].flow_style:
            return None
        out = []
        for k, v in docs[0].value:
            if not _is(k, "scalar"):
                return None
            out.append(Entry(str(k.value), k, v))
        return out


# ---------------------------------------------------------------------------
# vllm serve --config files
# ---------------------------------------------------------------------------

_TRUE = frozenset({"true", "yes", "on", "1"})
_PREFIX_CACHING_KEYS = frozenset({"enable-prefix-caching", "no-enable-prefix-caching",
                                  "disable-prefix-caching", "no-disable-prefix-caching"})


def _norm(key: str) -> str:
    return key.replace("_", "-")


class _ConfigFile:
    """Edits on the top-level entries of a ``vllm serve --config`` YAML."""

    def __init__(self, planner: Any, facts: YamlFacts, entries: list[Entry]) -> None:
        self.p, self.facts, self.entries = planner, facts, entries
        self.by_pos = {(e.key_node.start_mark.line + 1, e.key_node.start_mark.column): e for e in entries}
        self.by_name = {_norm(e.key): e for e in entries}

    def entry(self, setting: Any) -> Entry | None:
        if setting is None or setting.span.source is not None:
            return None
        return self.by_pos.get((setting.span.line, setting.span.col))

    def key_like(self, name: str, like: Entry | None) -> str:
        """Option ``name`` (dashes) spelled and quoted like ``like``'s key."""
        keys = [like.key] if like is not None else [e.key for e in self.entries]
        underscores = sum("_" in k for k in keys) > sum("-" in k for k in keys)
        text = name.replace("-", "_") if underscores else name
        style = (like.key_node.style or "") if like is not None else ""
        return quoted(text, style) if style in ('"', "'") else text

    def insert_after(self, entry: Entry, pairs: list[tuple[str, str]], code: str) -> None:
        """``key: value`` lines after ``entry`` (values written as given)."""
        col = entry.key_node.start_mark.column
        end = self.facts.end_of(entry.value_node)
        if not _REST_OF_LINE.fullmatch(self.facts.rest_of_line(end)):
            raise AssertionError("something follows the entry on its line")
        nl = self.p.newline
        lines = "".join(f"{' ' * col}{self.key_like(k, entry)}: {v}{nl}" for k, v in pairs)
        at = self.facts.next_line_start(end)
        if at is None:
            self.p.add(len(self.facts.text), len(self.facts.text), nl + lines.rstrip("\r\n"), code)
        else:
            self.p.add(at, at, lines, code)

    def delete(self, entry: Entry, code: str) -> None:
        start = entry.key_node.start_mark.index
        if self.facts.line_prefix(start).strip():
            raise AssertionError("the key does not start its line")
        end = self.facts.end_of(entry.value_node)
        if not _REST_OF_LINE.fullmatch(self.facts.rest_of_line(end)):
            raise AssertionError("something follows the entry on its line")
        line_start = self.facts.index.line_start(start)
        stop = self.facts.next_line_start(end)
        if stop is None:
            stop = len(self.facts.text)
            text = self.facts.text
            line_start = max(0, line_start - (2 if text[max(0, line_start - 2):line_start] == "\r\n" else 1))
        self.p.add(line_start, stop, "", code)

    def set_value(self, entry: Entry, value: str, code: str, *, raw: bool = False) -> None:
        node = entry.value_node
        if not _is(node, "scalar") or not self.facts.single_line(node) or (node.style or "") in ("|", ">"):
            raise AssertionError("not a one-line scalar")
        text = value if raw else self.facts.literal(node, value, False)
        self.p.add(node.start_mark.index, node.end_mark.index, text, code)

    def rename(self, entry: Entry, name: str, code: str) -> None:
        node = entry.key_node
        self.p.add(node.start_mark.index, node.end_mark.index, self.key_like(name, entry), code)


def plan_serve_config(planner: Any, verdict: Any, findings: Any) -> None:
    """Fixes inside a ``vllm serve --config`` file (the file judged as ``vllm serve --config FILE``).

    The environment cannot be set from such a file, so RSM008 is left alone (and
    with it the pins that come only with a real fix).
    """
    from .messages import (
        backend_to_triton, replayssm_unsupported, triton_needs_v1, wants_align_mode, wants_prefix_caching_off,
    )

    facts = planner.yaml
    entries = facts.config_entries() if facts is not None else None
    if not entries:
        return
    cfg = _ConfigFile(planner, facts, entries)
    launch, release = verdict.launch, verdict.target.release
    opts = launch.options
    codes = {f.code for f in findings}
    use = cfg.entry(opts.get("use_replayssm"))
    # without a `model:` key the model comes from the command line (`vllm serve MODEL --config F`):
    # verdicts about "the" model are not about the model this file is used with
    model_known = "model" in cfg.by_name
    if planner.unsafe and model_known and "RSM001" in codes and use is not None and opts["use_replayssm"].value is True:
        cfg.delete(use, "RSM001")
        return
    mode_setting = opts.get("mamba_cache_mode")
    mode = cfg.entry(mode_setting)
    prefix_keys = [e for e in entries if _norm(e.key) in _PREFIX_CACHING_KEYS]
    for f in findings:
        if f.span.source is not None:
            continue
        if f.code == "RSM105" and mode is not None:
            cfg.delete(mode, "RSM105")
        elif f.code == "RSM104":
            on_mode = mode_setting is not None and f.span in (mode_setting.span, mode_setting.value_span)
            if mode is not None and on_mode and "choice" in f.message:
                if release.cache_mode_deprecated:
                    cfg.delete(mode, "RSM104")
                elif "align" in release.cache_mode_choices:
                    cfg.set_value(mode, "align", "RSM104")
                continue
            entry = cfg.by_pos.get((f.span.line, f.span.col))
            if entry is not None and _norm(entry.key) == "disable-prefix-caching" \
                    and str(entry.value_node.value).lower() in _TRUE and len(prefix_keys) == 1:
                cfg.rename(entry, "no-enable-prefix-caching", "RSM104")
        elif f.code == "RSM106" and "is a stray argument" in f.message and use is not None:
            node = use.value_node
            if _is(node, "scalar") and (f.span.line, f.span.col) == (node.start_mark.line + 1,
                                                                     node.start_mark.column) \
                    and str(node.value).lower() in _TRUE:
                cfg.set_value(use, "true", "RSM106", raw=True)
        elif f.code == "RSM004" and planner.unsafe and model_known and backend_to_triton(f.message):
            backend = cfg.entry(opts.get("mamba_backend"))
            if backend is not None:
                cfg.set_value(backend, "triton", "RSM004")
        elif f.code == "RSM006":
            block = cfg.entry(opts.get("mamba_block_size"))
            backend = opts.get("mamba_backend")
            flashinfer = backend is not None and backend.value == "flashinfer"
            if block is not None and not prefix_keys and not launch.open_ended and not flashinfer:
                cfg.insert_after(block, [("enable-prefix-caching", "true")], "RSM006")
            elif planner.unsafe and model_known and flashinfer and block is not None:
                cfg.delete(block, "RSM006")  # FlashInfer needs prefix caching off: the block size has no use
            elif planner.unsafe and model_known and len(prefix_keys) == 1 \
                    and _prefix_caching_value(prefix_keys[0]) is False:
                entry = prefix_keys[0]  # turned off as written: turn it on, as the message says
                cfg.rename(entry, "enable-prefix-caching", "RSM006")
                cfg.set_value(entry, "true", "RSM006", raw=True)
        elif f.code == "RSM102":
            entry = cfg.by_pos.get((f.span.line, f.span.col))
            if entry is None or _norm(entry.key) != "enable-prefix-caching" or len(prefix_keys) != 1 \
                    or "mamba_block_size" in opts:  # prefix caching off would reject the block size
                continue
            new = "disable-prefix-caching" if release.disable_aliases else "no-enable-prefix-caching"
            cfg.rename(entry, new, "RSM102")
            cfg.set_value(entry, "true", "RSM102", raw=True)
    if mode is not None and planner.drops_overridden_mode(findings, mode_setting):
        cfg.delete(mode, "RSM107")
    if replayssm_unsupported(findings):
        return

    pins: list[tuple[str, str, str]] = []  # one insertion after `use-replayssm`, whatever asks for it
    if any(f.code == "RSM002" and wants_align_mode(f.message) for f in findings):
        if mode is not None:
            if isinstance(mode_setting.value, str):
                cfg.set_value(mode, "align", "RSM002")
        elif "mamba_cache_mode" not in opts:
            pins.append(("mamba-cache-mode", "align", "RSM002"))
            if "mamba_backend" not in opts and not launch.open_ended:
                pins.append(("mamba-backend", "triton", "RSM002"))
    off = "disable-prefix-caching" if release.disable_aliases else "no-enable-prefix-caching"
    prefix_off = any(f.code == "RSM002" and wants_prefix_caching_off(f.message) for f in findings)
    runner = any(f.code == "RSM008" and triton_needs_v1(f.message) for f in findings)
    if runner and planner.unsafe and model_known and "speculative_config" not in opts:
        # the environment cannot be set from this file: the message's other way is FlashInfer,
        # with prefix caching off (a different kernel, so only with --unsafe)
        backend = cfg.entry(opts.get("mamba_backend"))
        if backend is not None:
            cfg.set_value(backend, "flashinfer", "RSM008")
        elif "mamba_backend" not in opts:
            pins.append(("mamba-backend", "flashinfer", "RSM008"))
        prefix_off = True
    if prefix_off:
        explicit = [e for e in prefix_keys if _prefix_caching_value(e) is not None]
        if not prefix_keys and not launch.open_ended:  # on by default: off is what vLLM requires
            pins.append((off, "true", "RSM002"))
        elif planner.unsafe and len(explicit) == 1 and len(prefix_keys) == 1 and _prefix_caching_value(explicit[0]):
            cfg.rename(explicit[0], off, "RSM002")
            cfg.set_value(explicit[0], "true", "RSM002", raw=True)
    if pins and use is not None:
        cfg.insert_after(use, [(k, v) for k, v, _ in pins], ",".join(dict.fromkeys(c for _, _, c in pins)))


def _prefix_caching_value(entry: Entry) -> bool | None:
    """Whether a prefix-caching key turns prefix caching on (True), off (False), or cannot say."""
    node = entry.value_node
    if not _is(node, "scalar"):
        return None
    value = str(node.value).lower()
    if value not in _TRUE and value not in ("false", "no", "off", "0"):
        return None
    on = value in _TRUE
    return on if _norm(entry.key) in ("enable-prefix-caching", "no-disable-prefix-caching") else not on
