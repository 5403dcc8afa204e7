"""YAML structure for fixes: sequence items and words inside scalars, as text edits.

The YAML frontend hands over words with the spans of their scalar nodes; to
*insert* or *delete* a word the fixer must know how the surrounding YAML is
written.  :class:`YamlFacts` composes the text once (PyYAML nodes, character
offsets) and answers:

- is a span exactly one item of a sequence (block ``- x`` or flow ``[a, x]``),
  and how to write a new item next to it (indentation, dash, quote style);
- is a span a word inside a longer scalar (a ``command: >`` string, a ``sh -c``
  script) that words may be added to;
- which container or compose service runs an argv (its environment is edited by
  :mod:`.yaml_env`);
- the top-level entries of an engine's ``--config`` file (edited by :mod:`.config_file`).

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

DASH_PREFIX = re.compile(r"[ \t]*-[ \t]+\Z")
REST_OF_LINE = re.compile(r"[ \t]*(#.*)?\Z")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ash", "ksh"})
#: keys whose (string or list-of-strings) value a POSIX shell runs
_SCRIPT_KEYS = frozenset({"run", "script", "before_script", "after_script", "setup"})
COMMAND_KEYS = ("command", "args", "entrypoint")


def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def node_is(node: Any, kind: str) -> bool:
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
        #: the key scalars of mappings by where they start
        self.key_starts: dict[int, Any] = {}
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
            if node_is(node, "scalar"):
                rng = (node.start_mark.index, node.end_mark.index)
                self.scalars[rng] = node
                self.scalar_ranges.append((rng[0], rng[1], node))
                if key == "key":
                    self.key_starts[rng[0]] = node
            elif node_is(node, "sequence"):
                for i, item in reversed(list(enumerate(node.value))):
                    stack.append((item, node, i))
                if not node.flow_style and node.value and parent is not None and node_is(parent, "mapping") \
                        and key is not None and not isinstance(key, int):
                    dash = self.dash_column(node.value[0])
                    if dash is not None:
                        self._seq_offsets[dash - key.start_mark.column] += 1
            elif node_is(node, "mapping"):
                for k, v in reversed(node.value):
                    stack.append((v, node, k))
                    stack.append((k, node, "key"))
                if not node.flow_style and node.value and node_is(parent, "mapping") and key is not None \
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
            if node_is(current, "sequence"):
                stack.extend(current.value)
            elif node_is(current, "mapping"):
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
        if not DASH_PREFIX.fullmatch(prefix):
            return None
        return len(prefix) - len(prefix.lstrip(" \t"))

    def last_scalar(self, node: Any) -> Any:
        """The last scalar below ``node`` (its end is where the node's text ends)."""
        while True:
            if node_is(node, "scalar"):
                return node
            if node_is(node, "sequence") and node.value:
                node = node.value[-1]
            elif node_is(node, "mapping") and node.value:
                node = node.value[-1][1]
            else:
                return node

    def end_of(self, node: Any) -> int:
        """Where the text of ``node`` ends (flow collections: after the closing bracket)."""
        if node_is(node, "scalar") or getattr(node, "flow_style", False):
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
        if not node_is(parent, "sequence") or not isinstance(key, int) or not self.single_line(node):
            return None
        if (node.style or "") in ("|", ">"):
            return None
        if not parent.flow_style:
            if not DASH_PREFIX.fullmatch(self.line_prefix(start)) \
                    or not REST_OF_LINE.fullmatch(self.rest_of_line(end)):
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
        if node_is(parent, "sequence"):
            current = parent
            parent, key = self.parent.get(id(current), (None, None))
        if node_is(parent, "mapping") and key is not None and not isinstance(key, int) and key != "key" \
                and node_is(key, "scalar") and str(key.value) in COMMAND_KEYS:
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
            out += list(value.value) if node_is(value, "sequence") else [value]
        return out

    def is_shell_script(self, scalar: Any) -> bool:
        """Whether a POSIX shell runs the text of ``scalar``."""
        parent, key = self.parent.get(id(scalar), (None, None))
        if node_is(parent, "sequence"):
            up, up_key = self.parent.get(id(parent), (None, None))
            if node_is(up, "mapping") and node_is(up_key, "scalar") \
                    and str(up_key.value) in _SCRIPT_KEYS - {"run", "setup"}:
                return True  # GitLab CI / Tekton `script:` lists: one shell line per item
        if node_is(parent, "mapping") and node_is(key, "scalar") and str(key.value) in _SCRIPT_KEYS:
            return True
        found = self.owner(scalar)
        if found is None:
            return False
        argv = self.argv_nodes(found[0])
        k = next((i for i, n in enumerate(argv) if n is scalar), None)
        if k is None or k < 2:
            return False
        flag = argv[k - 1]
        if not node_is(flag, "scalar") or not re.fullmatch(r"-[a-z]*c", str(flag.value)):
            return False
        return any(node_is(n, "scalar") and str(n.value).rsplit("/", 1)[-1] in _SHELLS for n in argv[:k - 1])

    # -- mappings -------------------------------------------------------------------
    def direct_entries(self, mapping: Any) -> dict[str, Entry]:
        """Keys written in the mapping itself (merge keys not followed)."""
        out: dict[str, Entry] = {}
        for k, v in getattr(mapping, "value", []):
            if node_is(k, "scalar") and k.tag != "tag:yaml.org,2002:merge":
                out[str(k.value)] = Entry(str(k.value), k, v)
        return out

    def has_merge(self, mapping: Any) -> bool:
        return any(node_is(k, "scalar") and k.tag == "tag:yaml.org,2002:merge" for k, _ in mapping.value)

    def is_compose_service(self, mapping: Any) -> bool:
        parent, key = self.parent.get(id(mapping), (None, None))
        if not node_is(parent, "mapping"):
            return False
        up, up_key = self.parent.get(id(parent), (None, None))
        return node_is(up, "mapping") and node_is(up_key, "scalar") and str(up_key.value) == "services" \
            and self.parent.get(id(up), (None, None))[0] is None

    def block_entries(self, points: Iterable[int]) -> list[Entry] | None:
        """The entries of the one editable block mapping whose keys start at ``points`` (offsets of
        a launch's options), or None (no such key, several mappings, a flow or shared one)."""
        mappings = []
        for point in points:
            key = self.key_starts.get(point)
            if key is None:
                continue
            mapping = self.parent.get(id(key), (None, None))[0]
            if mapping not in mappings:
                mappings.append(mapping)
        if len(mappings) != 1 or not node_is(mappings[0], "mapping") or mappings[0].flow_style \
                or not self.editable(mappings[0]) or self.has_merge(mappings[0]):
            return None
        return [Entry(str(k.value), k, v) for k, v in mappings[0].value if node_is(k, "scalar")]

    # -- --config files ---------------------------------------------------------------------
    def config_entries(self) -> list[Entry] | None:
        """Top-level entries of a one-document block-mapping file (None: another shape)."""
        docs = [d for d in self.docs if d is not None]
        if len(docs) != 1 or not node_is(docs[0], "mapping") or docs[0].flow_style:
            return None
        out = []
        for k, v in docs[0].value:
            if not node_is(k, "scalar"):
                return None
            out.append(Entry(str(k.value), k, v))
        return out
