"""Edits on an engine's ``--config`` YAML file: its top-level ``key: value`` entries.

Both engines read a ``--config FILE`` of options (``use-replayssm: true``); a file judged on
its own is read as ``ENGINE serve --config FILE``, and its fixes are key edits: rename a key,
set a value, delete an entry, add entries after one.  :class:`ConfigFile` makes them the
way the file writes its other keys (dashes or underscores, quotes), and refuses (raises
AssertionError, which leaves the launch unfixed) where the file is not written one entry
a line.
"""

from __future__ import annotations

from typing import Any, Callable

from .yaml_edits import REST_OF_LINE, Entry, YamlFacts, node_is, quoted

#: how an edit is planned: (start, end, replacement, code)
AddEdit = Callable[[int, int, str, str], None]


def option_key(key: str) -> str:
    """A key as an option name with dashes (``mamba_cache_mode`` -> ``mamba-cache-mode``)."""
    return key.replace("_", "-")


class ConfigFile:
    """Edits on the top-level entries of an engine's ``--config`` YAML file.

    Engines' fixes get one from :meth:`.planner.Planner.config_file`; an entry is found by the
    position of a setting read from it (:meth:`entry`, :meth:`at`), or by its option name
    (``by_name``, dashes).  Every edit goes through ``add`` (the planner's).
    """

    def __init__(self, facts: YamlFacts, entries: list[Entry], add: AddEdit, newline: str, *,
                 model_known: bool | None = None, keywords: bool = False) -> None:
        self.facts, self.entries, self.add, self.newline = facts, entries, add, newline
        #: the entries are keyword arguments of the engine's class (a Ray Serve ``engine_kwargs``),
        #: not command-line options: a switch is one field set true or false, never a ``no-``/
        #: ``disable-`` spelling of it
        self.keywords = keywords
        #: whether the model these options are used with is known: a ``model`` key says so in a
        #: ``--config`` file (None), the launch's model for a block of options
        self.model_known = "model" in {option_key(e.key) for e in entries} if model_known is None else model_known
        self.by_pos = {(e.key_node.start_mark.line + 1, e.key_node.start_mark.column): e for e in entries}
        self.by_name = {option_key(e.key): e for e in entries}

    def entry(self, setting: Any) -> Entry | None:
        """The entry a setting was read from (None: no setting, or one from another file)."""
        if setting is None or setting.span.source is not None:
            return None
        return self.by_pos.get((setting.span.line, setting.span.col))

    def at(self, span: Any) -> Entry | None:
        """The entry whose key starts where ``span`` starts."""
        return self.by_pos.get((span.line, span.col))

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
        if not REST_OF_LINE.fullmatch(self.facts.rest_of_line(end)):
            raise AssertionError("something follows the entry on its line")
        nl = self.newline
        lines = "".join(f"{' ' * col}{self.key_like(k, entry)}: {v}{nl}" for k, v in pairs)
        at = self.facts.next_line_start(end)
        if at is None:
            self.add(len(self.facts.text), len(self.facts.text), nl + lines.rstrip("\r\n"), code)
        else:
            self.add(at, at, lines, code)

    def delete(self, entry: Entry, code: str) -> None:
        """Delete the entry with its line."""
        start = entry.key_node.start_mark.index
        if self.facts.line_prefix(start).strip():
            raise AssertionError("the key does not start its line")
        end = self.facts.end_of(entry.value_node)
        if not REST_OF_LINE.fullmatch(self.facts.rest_of_line(end)):
            raise AssertionError("something follows the entry on its line")
        line_start = self.facts.index.line_start(start)
        stop = self.facts.next_line_start(end)
        if stop is None:
            stop = len(self.facts.text)
            text = self.facts.text
            line_start = max(0, line_start - (2 if text[max(0, line_start - 2):line_start] == "\r\n" else 1))
        self.add(line_start, stop, "", code)

    def set_value(self, entry: Entry, value: str, code: str, *, raw: bool = False) -> None:
        """The entry's one-line scalar value becomes ``value`` (written like the old one,
        or as given with ``raw``)."""
        node = entry.value_node
        if not node_is(node, "scalar") or not self.facts.single_line(node) or (node.style or "") in ("|", ">"):
            raise AssertionError("not a one-line scalar")
        text = value if raw else self.facts.literal(node, value, False)
        self.add(node.start_mark.index, node.end_mark.index, text, code)

    def rename(self, entry: Entry, name: str, code: str) -> None:
        """The entry's key becomes option ``name`` (dashes), spelled like the old key."""
        node = entry.key_node
        self.add(node.start_mark.index, node.end_mark.index, self.key_like(name, entry), code)

    def replace_key(self, entry: Entry, text: str, code: str) -> None:
        """The entry's key becomes ``text`` exactly as given."""
        self.add(entry.key_node.start_mark.index, entry.key_node.end_mark.index, text, code)


def prefix_caching_off(cfg: ConfigFile, disable_aliases: bool) -> tuple[str, str]:
    """The entry that turns prefix caching off in ``cfg``: ``enable-prefix-caching: false`` among
    keyword arguments; in a ``--config`` file (where vLLM drops ``key: false``) the
    ``disable-``/``no-`` spelling set true."""
    if cfg.keywords:
        return "enable-prefix-caching", "false"
    return ("disable-prefix-caching" if disable_aliases else "no-enable-prefix-caching"), "true"
