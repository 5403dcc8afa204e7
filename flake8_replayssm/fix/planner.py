"""The fix planner: edits for the findings of one launch, as text splices on its spans.

:class:`Planner` is given a text of one kind and, per launch, the verdict and
the findings to fix; it adds :class:`~.edits.Edit` objects for the fixes listed
in :mod:`.codemod` (which runs rounds of planning, applying and re-linting).
Layout facts come from libcst for Python (:class:`_PyFacts`) and from
:class:`.yaml_edits.YamlFacts` for YAML; every edited span is first checked to
hold the word the launch says is there.
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from .. import engines
from ..verdicts import Verdict
from ..model import Finding, Launch, Setting, Span
from .edits import Edit, LineIndex, OverlapError, apply_edits, newline_of
from .messages import (ENV_RUNNER, backend_to_triton, needs_v2, replayssm_unsupported, triton_needs_v1,
                       wants_align_mode, wants_prefix_caching_off)
from .yaml_edits import YamlFacts

#: file kinds where words may be inserted and deleted (elsewhere only replaced)
STRUCTURAL_KINDS = frozenset({"python", "shell", "makefile", "dockerfile", "markdown"})
_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
_PLAIN = re.compile(r"[^\s'\"\\`$]+")
_PY_STRING = re.compile(r"(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)\Z", re.DOTALL)
_ENV_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_CMD_START = re.compile(r"(?:^|[;&|(`{]|\n|\$\()\s*(?:(?:[A-Za-z_][A-Za-z0-9_]*=\S*|env)\s+)*\Z")
#: what starts a shell command on a notebook line: ``!``, ``!!``, ``x = !``, ``%sx``, ``%system``
_IPYTHON_SHELL = re.compile(r"^[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*(?:[ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)*[ \t]*=[ \t]*)?"
                            r"(?:!!?|%(?:sx|system|sc)\b)")
#: a shell prompt before a command in a Markdown fence (``$ vllm serve ...``)
_PROMPT = re.compile(r"^[ \t]*[$%>][ \t]+")
_DOCKER_START = re.compile(r"(?:^|\n)[ \t]*(?:RUN|CMD|ENTRYPOINT)[ \t]+(?:(?:[A-Za-z_][A-Za-z0-9_]*=\S*|env)\s+)*\Z",
                           re.IGNORECASE)


def release_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


# ---------------------------------------------------------------------------
# Python layout facts (libcst), gathered once per text
# ---------------------------------------------------------------------------

@dataclass
class _PyFacts:
    #: span key -> SimpleString element of a list/tuple
    elements: set[tuple[int, int, int, int]] = field(default_factory=set)
    #: (start, end) character ranges of string-literal bodies
    string_bodies: list[tuple[int, int]] = field(default_factory=list)
    #: calls whose first argument is a list/tuple literal: (element keys, arg ranges, env node info)
    argv_calls: list[dict[str, Any]] = field(default_factory=list)
    #: engine calls by func span key: arg ranges and keyword names
    calls_by_func: dict[tuple[int, int, int, int], dict[str, Any]] = field(default_factory=dict)
    #: statements (start offset of the line, indentation, simple) containing a call func
    statements: list[tuple[int, int, str, bool]] = field(default_factory=list)
    imports_os: bool = False
    #: where a new top-level ``import os`` line goes (None: nowhere sensible)
    import_at: int | None = None
    #: key span key -> entry of a dict literal or ``dict(...)``: start, end, container, form, quote
    dict_entries: dict[tuple[int, int, int, int], dict[str, Any]] = field(default_factory=dict)
    #: id of a dict literal / ``dict(...)`` call -> the one name it is assigned to
    containers: dict[int, str] = field(default_factory=dict)
    #: ids of dict literals / ``dict(...)`` calls written as a call's argument (only that call has them)
    inline: set[int] = field(default_factory=set)
    #: name -> how often it is assigned / splatted (``**name``); names changed in place
    assigns: collections.Counter[str] = field(default_factory=collections.Counter)
    splats: collections.Counter[str] = field(default_factory=collections.Counter)
    mutated: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _KwTarget:
    """A keyword's text range and how a new keyword is written next to it."""

    start: int
    end: int
    #: "kwarg" (``name=value`` in a call, ``dict(...)`` included) or "dict" (``"name": value``)
    form: str
    quote: str

    def item(self, name: str, value: Any) -> str:
        text = f"{self.quote}{value}{self.quote}" if isinstance(value, str) else repr(value)
        return f"{self.quote}{name}{self.quote}: {text}" if self.form == "dict" else f"{name}={text}"


def span_key(span: Span) -> tuple[int, int, int, int]:
    return (span.line, span.col, span.end_line, span.end_col)


def _python_facts(text: str, index: LineIndex) -> _PyFacts | None:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from ..guard import check_python
    from ..unchecked import NotChecked

    try:
        check_python(text)  # libcst must never see what would crash it or take minutes
        module = cst.parse_module(text)
    except (NotChecked, Exception):
        return None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    pos = wrapper.resolve(PositionProvider)
    facts = _PyFacts()

    def key(node: Any) -> tuple[int, int, int, int]:
        r = pos[node]
        return (r.start.line, r.start.column, r.end.line, r.end.column)

    def offsets(node: Any) -> tuple[int, int]:
        r = pos[node]
        return index.offset(r.start.line, r.start.column), index.offset(r.end.line, r.end.column)

    class Visitor(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            for alias in node.names:
                if isinstance(alias.name, cst.Name) and alias.name.value == "os" and alias.asname is None:
                    facts.imports_os = True

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            start, end = offsets(node)
            lead = len(node.prefix) + len(node.quote)
            facts.string_bodies.append((start + lead, end - len(node.quote)))

        def visit_FormattedString(self, node: cst.FormattedString) -> None:
            start, end = offsets(node)
            facts.string_bodies.append((start + len(node.start), end - len(node.end)))

        def _sequence(self, node: cst.List | cst.Tuple) -> None:
            for element in node.elements:
                if isinstance(element, cst.Element) and isinstance(element.value, cst.SimpleString):
                    facts.elements.add(key(element.value))

        visit_List = _sequence  # type: ignore[assignment]
        visit_Tuple = _sequence  # type: ignore[assignment]

        def visit_Dict(self, node: cst.Dict) -> None:
            for element in node.elements:
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                    start, _ = offsets(element.key)
                    _, end = offsets(element.value)
                    facts.dict_entries[key(element.key)] = {
                        "start": start, "end": end, "container": id(node), "form": "dict",
                        "quote": element.key.quote if len(element.key.quote) == 1 else '"'}
                elif isinstance(element, cst.StarredDictElement) and isinstance(element.value, cst.Name):
                    facts.splats[element.value.value] += 1

        def _target(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
            if isinstance(target, cst.Name):
                facts.assigns[target.value] += 1
                if value is not None and (isinstance(value, cst.Dict) or isinstance(value, cst.Call)
                                          and isinstance(value.func, cst.Name) and value.func.value == "dict"):
                    facts.containers[id(value)] = target.value
            elif isinstance(target, (cst.Tuple, cst.List)):
                for element in target.elements:
                    self._target(element.value, None)
            elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                facts.mutated.add(target.value.value)

        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value if len(node.targets) == 1 else None
            for target in node.targets:
                self._target(target.target, value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self._target(node.target, node.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._target(node.target, None)
            if isinstance(node.target, cst.Name):
                facts.mutated.add(node.target.value)

        def visit_Del(self, node: cst.Del) -> None:
            if isinstance(node.target, cst.Subscript) and isinstance(node.target.value, cst.Name):
                facts.mutated.add(node.target.value.value)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name) and node.attr.value in (
                    "update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__"):
                facts.mutated.add(node.value.value)

        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            start, end = offsets(node)
            line_start = index.line_start(start)
            indent = text[line_start:start]
            facts.statements.append((start, end, indent, indent.strip() == "" and len(node.body) == 1))

        def visit_Call(self, node: cst.Call) -> None:
            args = []
            for arg in node.args:
                a_start, _ = offsets(arg.keyword) if arg.keyword is not None else offsets(arg.value)
                if arg.star:
                    a_start -= len(arg.star)
                _, v_end = offsets(arg.value)
                args.append({"start": a_start, "end": v_end,
                             "keyword": arg.keyword.value if arg.keyword is not None else None,
                             "node": arg.value})
            for arg in node.args:
                if arg.star == "**" and isinstance(arg.value, cst.Name):
                    facts.splats[arg.value.value] += 1
                if isinstance(arg.value, cst.Dict) or isinstance(arg.value, cst.Call) \
                        and isinstance(arg.value.func, cst.Name) and arg.value.func.value == "dict":
                    facts.inline.add(id(arg.value))  # engine_kwargs=dict(...), **{...}
            if isinstance(node.func, cst.Name) and node.func.value == "dict":
                quote = next((a.value.quote for a in node.args if isinstance(a.value, cst.SimpleString)
                              and len(a.value.quote) == 1), '"')
                for arg in node.args:
                    if arg.keyword is not None and not arg.star:
                        start, _ = offsets(arg.keyword)
                        _, end = offsets(arg.value)
                        facts.dict_entries[key(arg.keyword)] = {
                            "start": start, "end": end, "container": id(node), "form": "kwarg", "quote": quote}
            info: dict[str, Any] = {"args": args, "start": offsets(node)[0], "end": offsets(node)[1],
                                    "open": offsets(node.func)[1]}
            facts.calls_by_func[key(node.func)] = info
            if node.args and isinstance(node.args[0].value, (cst.List, cst.Tuple)) and node.args[0].keyword is None:
                info["elements"] = {key(e.value) for e in node.args[0].value.elements
                                    if isinstance(e, cst.Element)}
                env = next((a for a in args if a["keyword"] == "env"), None)
                if env is not None and isinstance(env["node"], cst.Dict):
                    d_start, d_end = offsets(env["node"])
                    info["env_dict"] = (d_start, d_end, len(env["node"].elements))
                info["has_env"] = env is not None
                facts.argv_calls.append(info)

    wrapper.visit(Visitor())
    facts.import_at = _import_position(module, pos, index)
    return facts


def _import_position(module: Any, pos: Any, index: LineIndex) -> int | None:
    """The start of the line after the module's leading docstring and imports, or of its first
    statement (after a shebang and header comments); None for an empty module."""
    import libcst as cst

    after = None
    for i, stmt in enumerate(module.body):
        simple = isinstance(stmt, cst.SimpleStatementLine)
        imports = simple and all(isinstance(part, (cst.Import, cst.ImportFrom)) for part in stmt.body)
        docstring = simple and i == 0 and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        if not (imports or docstring):
            break
        after = stmt
    if after is not None:
        end = pos[after].end
        offset = index.offset(end.line, end.column)
        line = index.line_of(offset)
        if offset == index.starts[line]:
            return offset
        return index.starts[line + 1] if line + 1 < len(index.starts) else len(index.text)
    if not module.body:
        return None
    first = pos[module.body[0]].start
    return index.offset(first.line, 0)


# ---------------------------------------------------------------------------
# The planner
# ---------------------------------------------------------------------------

class Planner:
    """Edits for the launches of one text."""

    def __init__(self, text: str, kind: str, *, unsafe: bool = False, ipython: bool = False) -> None:
        self.text, self.kind, self.unsafe = text, kind, unsafe
        #: a notebook cell: ``!cmd`` / ``%sx cmd`` lines start shell commands
        self.ipython = ipython
        self.index = LineIndex(text)
        self.newline = newline_of(text)
        self.py = _python_facts(text, self.index) if kind == "python" else None
        self.yaml: YamlFacts | None = None
        self.serve_config = False
        if kind == "yaml":
            try:
                self.yaml = YamlFacts(text, self.index)
            except Exception:  # not YAML we can read: replacements only where spans are sure
                self.yaml = None
            # the whole file is an engine's --config file (judged as `ENGINE serve --config FILE`)
            self.serve_config = self.yaml is not None and engines.config_launch(text, None) is not None
        #: YAML sequence items to delete: (sequence, item index, code)
        self.item_deletions: list[tuple[Any, int, str]] = []
        self.edits: list[Edit] = []
        self.skipped: list[str] = []
        #: where the edits of the launch being planned start in ``edits``
        self.launch_start = 0
        self.environ_planned = False
        #: words to delete in the launch being planned: (start, end, in a list, code)
        self.deletions: list[tuple[int, int, bool, str]] = []
        #: span -> the text the word there must have (checked before editing it)
        self.expected: dict[tuple[int, int, int, int], str] = {}

    # -- words ----------------------------------------------------------------
    def offsets(self, span: Span) -> tuple[int, int]:
        return self.index.span(span)

    def raw(self, span: Span) -> str:
        start, end = self.offsets(span)
        return self.text[start:end]

    def context(self, span: Span) -> str | None:
        """How a word is written: ``element`` (a quoted list item), ``json`` (a JSON
        array item), ``plain`` (a bare word in a command line), ``quoted`` (a
        quoted word in a command line) or None (cannot be edited)."""
        if span.cell is not None or span.source is not None:
            return None
        raw = self.raw(span)
        if not raw:
            return None
        expected = self.expected.get(span_key(span))
        if expected is not None and not _matches(raw, expected):
            return None  # the span does not hold the word we think (escapes, odd positions)
        if self.kind == "yaml":
            return self.yaml_context(span, raw)
        if self.kind == "python":
            if self.py is not None and span_key(span) in self.py.elements and _PY_STRING.match(raw):
                return "element"
            start, end = self.offsets(span)
            body = next(((s, e) for s, e in (self.py.string_bodies if self.py else ()) if s <= start < e), None)
            if body is None or end > body[1]:
                return None
            inner = self.text[body[0]:body[1]]
            if "\\" in inner or "{{" in inner or "}}" in inner:
                return None  # positions inside such strings are not exact
        elif raw.startswith('"') and self.kind == "dockerfile":
            before = self.text[:self.offsets(span)[0]].rstrip()
            if before.endswith(("[", ",")):
                try:
                    import json

                    json.loads(raw)
                    return "json"
                except ValueError:
                    return None
        if _PLAIN.fullmatch(raw):
            return "plain"
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and _PLAIN.fullmatch(raw[1:-1]):
            return "quoted"
        return None

    def yaml_context(self, span: Span, raw: str) -> str | None:
        """``yaml-item`` (one whole item of a sequence), ``plain``/``quoted`` (a word inside
        a longer scalar that is split into words), or None."""
        if self.yaml is None:
            return None
        start, end = self.offsets(span)
        if self.yaml.item_at(start, end) is not None:
            return "yaml-item"
        scalar = self.yaml.scalar_around(start, end)
        if scalar is None or not self.yaml.editable(scalar):
            return None
        parent = self.yaml.parent.get(id(scalar), (None, None))[0]
        if getattr(parent, "id", None) == "sequence" and not self.yaml.is_shell_script(scalar):
            return None  # one argv item: words cannot be added inside it
        if _PLAIN.fullmatch(raw):
            return "plain"
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and _PLAIN.fullmatch(raw[1:-1]):
            return "quoted"
        return None

    def yaml_item(self, span: Span) -> tuple[Any, int, Any] | None:
        if self.yaml is None:
            return None
        return self.yaml.item_at(*self.offsets(span))

    def structural(self, *spans: Span) -> bool:
        contexts = {self.context(s) for s in spans}
        if len(contexts) != 1:
            return False
        ctx = contexts.pop()
        if self.kind == "yaml":
            assert self.yaml is not None or ctx is None
            if ctx == "yaml-item":
                return len({id(self.yaml_item(s)[0]) for s in spans}) == 1  # type: ignore[index]
            if ctx == "plain":
                return len({id(self.yaml.scalar_around(*self.offsets(s))) for s in spans}) == 1  # type: ignore
            return False
        if self.kind not in STRUCTURAL_KINDS:
            return False
        return ctx in ("element", "json", "plain")

    def literal(self, like: Span, text: str) -> str:
        """``text`` written as a word next to the word at ``like``."""
        ctx = self.context(like)
        if ctx == "element":
            m = _PY_STRING.match(self.raw(like))
            assert m is not None
            return f"{m['quote']}{text}{m['quote']}"
        if ctx == "json":
            import json

            return json.dumps(text)
        return text

    def separator(self, like: Span) -> str:
        return ", " if self.context(like) in ("element", "json") else " "

    def add(self, start: int, end: int, replacement: str, code: str) -> None:
        self.edits.append(Edit(start, end, replacement, code))

    def replace_word(self, span: Span, new: str, code: str) -> bool:
        ctx = self.context(span)
        start, end = self.offsets(span)
        raw = self.text[start:end]
        if ctx == "yaml-item":
            seq, _, node = self.yaml_item(span)  # type: ignore[misc]
            assert self.yaml is not None
            self.add(start, end, self.yaml.literal(node, new, bool(seq.flow_style)), code)
        elif ctx == "element":
            m = _PY_STRING.match(raw)
            assert m is not None
            self.add(start, end, f"{m['prefix']}{m['quote']}{new}{m['quote']}", code)
        elif ctx == "json":
            import json

            self.add(start, end, json.dumps(new), code)
        elif ctx == "plain" and _PLAIN.fullmatch(new):
            self.add(start, end, new, code)
        elif ctx == "quoted" and _PLAIN.fullmatch(new):
            self.add(start + 1, end - 1, new, code)
        else:
            return False
        return True

    def replace_value(self, setting: Setting, new: str, code: str) -> bool:
        """The value of an argv option (``--x v`` or ``--x=v``)."""
        value_span = setting.value_span
        if value_span is None:
            return False
        if value_span == setting.span:  # --x=v in one word
            return self.replace_word(setting.span, f"{setting.spelling}={new}", code)
        return self.replace_word(value_span, new, code)

    def insert_words_after(self, span: Span, words: Sequence[str], code: str) -> bool:
        if not words or not self.structural(span):
            return False
        if self.context(span) == "yaml-item":
            return self.insert_items(span, words, code, before=False)
        sep = self.separator(span)
        _, end = self.offsets(span)
        self.add(end, end, "".join(sep + self.literal(span, w) for w in words), code)
        return True

    def insert_words_before(self, span: Span, words: Sequence[str], code: str) -> bool:
        if not words or not self.structural(span):
            return False
        if self.context(span) == "yaml-item":
            return self.insert_items(span, words, code, before=True)
        sep = self.separator(span)
        start, _ = self.offsets(span)
        self.add(start, start, "".join(self.literal(span, w) + sep for w in words), code)
        return True

    def insert_items(self, span: Span, words: Sequence[str], code: str, *, before: bool) -> bool:
        """New YAML sequence items next to the item at ``span``."""
        seq, index, _ = self.yaml_item(span)  # type: ignore[misc]
        assert self.yaml is not None
        edit = self.yaml.insert_items(seq, index, words, before=before, newline=self.newline)
        if edit is None:
            return False
        self.add(edit.start, edit.end, edit.replacement, code)
        return True

    def delete_words(self, spans: Sequence[Span], code: str) -> bool:
        """Delete consecutive words (a flag and its value) with their separator."""
        if not spans or not self.structural(*spans):
            return False
        if self.context(spans[0]) == "yaml-item":
            for span in spans:
                seq, index, _ = self.yaml_item(span)  # type: ignore[misc]
                self.item_deletions.append((seq, index, code))
            return True
        if self.kind == "yaml":
            assert self.yaml is not None
            scalar = self.yaml.scalar_around(*self.offsets(spans[0]))
            if scalar is None or len(str(scalar.value).split()) <= len(spans):
                return False  # the string would be left empty
        start = min(self.offsets(s)[0] for s in spans)
        end = max(self.offsets(s)[1] for s in spans)
        self.deletions.append((start, end, self.context(spans[0]) in ("element", "json"), code))
        return True

    def flush_deletions(self) -> None:
        """Turn the words to delete into edits; neighbouring words go in one edit, so
        that their separators are removed once (``"true", "--mamba-cache-mode", "all"``)."""
        runs: list[list[Any]] = []
        for start, end, listed, code in sorted(self.deletions):
            if runs and runs[-1][2] == listed and start >= runs[-1][1] and \
                    re.fullmatch(r"[\s,]*" if listed else r"[ \t]*", self.text[runs[-1][1]:start]):
                runs[-1][1] = max(runs[-1][1], end)
                continue
            runs.append([start, end, listed, code])
        self.deletions = []
        for start, end, listed, code in runs:
            start, end = self.list_item_range(start, end) if listed else self.word_range(start, end)
            self.add(start, end, "", code)
        by_seq: dict[int, tuple[Any, set[int], str]] = {}
        for seq, index, code in self.item_deletions:
            by_seq.setdefault(id(seq), (seq, set(), code))[1].add(index)
        self.item_deletions = []
        for seq, indexes, code in by_seq.values():
            assert self.yaml is not None
            ranges = self.yaml.delete_items(seq, indexes)
            if ranges is None:
                raise AssertionError("cannot delete these items")
            for start, end in ranges:
                self.add(start, end, "", code)

    def list_item_range(self, start: int, end: int) -> tuple[int, int]:
        """A list item or keyword argument with its comma; its whole line when alone on it."""
        text = self.text
        after = re.match(r"[ \t]*,[ \t]*", text[end:])
        if after:
            new_end = end + after.end()
            line_start = self.index.line_start(start)
            line_end = self.index.line_end(start)
            rest = text[new_end:line_end]
            if text[line_start:start].strip() == "" \
                    and (new_end >= line_end or self.kind == "python" and rest.lstrip().startswith("#")) \
                    and self.index.line_of(end) == self.index.line_of(start):
                terminator_end = self.index.starts[self.index.line_of(start) + 1] \
                    if self.index.line_of(start) + 1 < len(self.index.starts) else len(text)
                return line_start, terminator_end
            if new_end >= line_end:  # the last item on its line: no trailing blank left behind
                lead = re.search(r"[ \t]+\Z", text[line_start:start])
                if lead and text[line_start:start].strip():
                    start = line_start + lead.start()
            return start, new_end
        before = re.search(r",\s*\Z", text[:start])
        if before:
            line_end = self.index.line_end(end)
            if self.kind == "python" and text[self.index.line_start(start):start].strip() == "" \
                    and text[end:line_end].lstrip().startswith("#"):
                end = line_end  # the item's own comment goes with it
            return before.start(), end
        return start, end

    def word_range(self, start: int, end: int) -> tuple[int, int]:
        """A bare word (or words) with the whitespace before it; its whole line when alone on it."""
        text = self.text
        line_start = self.index.line_start(start)
        line_end = self.index.line_end(end)
        rest = text[end:line_end]
        if text[line_start:start].strip() == "" and re.fullmatch(r"[ \t]*\\[ \t]*", rest) \
                and self.index.line_of(start) > 0:
            next_line = self.index.line_of(end) + 1
            stop = self.index.starts[next_line] if next_line < len(self.index.starts) else len(text)
            return line_start, stop
        if self.kind == "yaml" and text[line_start:start].strip() == "" and rest.strip() == "" \
                and self.index.line_of(start) > 0:
            # a word alone on its line of a YAML string: the whole line (unless the line
            # before continues onto it with a backslash, which would then join the next line)
            previous = self.index.line_of(start) - 1
            before = text[self.index.starts[previous]:self.index.line_end(self.index.starts[previous])]
            if not before.rstrip().endswith("\\"):
                next_line = self.index.line_of(end) + 1
                if next_line < len(self.index.starts):
                    return line_start, self.index.starts[next_line]
        lead = re.search(r"[ \t]+\Z", text[:start])
        if lead:
            return lead.start(), end
        trail = re.match(r"[ \t]+", text[end:])
        return start, end + (trail.end() if trail else 0)

    # -- keyword arguments ----------------------------------------------------
    def call_info(self, launch: Launch) -> dict[str, Any] | None:
        if self.py is None:
            return None
        return self.py.calls_by_func.get(span_key(launch.anchor))

    def direct(self, setting: Setting | None) -> bool:
        """A keyword written in the call itself (not from a ``**dict``)."""
        return setting is not None and setting.spelling.endswith("=") and setting.value_span is not None

    def insert_args_after(self, arg_start: int, arg_end: int, items: Sequence[str], code: str) -> None:
        """Insert ``items`` (``name=value`` texts) after the argument at [arg_start, arg_end)."""
        text = self.text
        line_start = self.index.line_start(arg_start)
        indent = text[line_start:arg_start]
        comma = re.match(r"[ \t]*,", text[arg_end:])
        own_line = indent.strip() == "" and self.index.line_of(arg_start) > 0
        if own_line:
            line_end = self.index.line_end(arg_end)
            after_comma = arg_end + comma.end() if comma else arg_end
            tail = text[after_comma:line_end]
            if tail.strip() == "" or tail.lstrip().startswith("#"):
                nl = self.newline
                if comma:
                    self.add(line_end, line_end, "".join(f"{nl}{indent}{item}," for item in items), code)
                else:
                    body = f",{nl}".join(f"{indent}{item}" for item in items)
                    if line_end == arg_end:
                        self.add(arg_end, arg_end, f",{nl}{body}", code)
                    else:
                        self.add(arg_end, arg_end, ",", code)
                        self.add(line_end, line_end, f"{nl}{body}", code)
                return
        self.add(arg_end, arg_end, "".join(f", {item}" for item in items), code)

    def delete_arg(self, arg_start: int, arg_end: int, code: str) -> None:
        self.deletions.append((arg_start, arg_end, True, code))

    def kwarg_range(self, setting: Setting) -> tuple[int, int]:
        assert setting.value_span is not None
        return self.offsets(setting.span)[0], self.offsets(setting.value_span)[1]

    def replace_kwarg_value(self, setting: Setting, new: str, code: str) -> bool:
        if self.kw_target(setting) is None:
            return False
        assert setting.value_span is not None
        start, end = self.offsets(setting.value_span)
        m = _PY_STRING.match(self.text[start:end])
        if m is None or len(m["quote"]) != 1:
            return False
        self.add(start, end, f"{m['prefix']}{m['quote']}{new}{m['quote']}", code)
        return True

    # -- plans ----------------------------------------------------------------
    def plan(self, verdict: Verdict, findings: Sequence[Finding]) -> None:
        launch = verdict.launch
        if not findings:
            return
        if launch.anchor.cell is not None or launch.anchor.source is not None:
            self.skipped.extend(f"{f.code}: not fixable in this file kind" for f in findings)
            return
        before = self.launch_start = len(self.edits)
        self.expect(launch)
        try:
            engines.get(launch.engine).plan_fixes(self, verdict, findings)
            self.flush_deletions()
        except (AssertionError, IndexError, KeyError, TypeError):  # a launch we cannot edit: leave it
            del self.edits[before:]
            self.deletions = []
            return
        try:  # one launch must never garble itself; drop its edits when they collide
            apply_edits(self.text, self.edits[before:])
        except OverlapError:
            del self.edits[before:]

    def plan_vllm(self, verdict: Verdict, findings: Sequence[Finding]) -> None:
        """vLLM's edits (see the README's fix table): its serve config, keywords or argv."""
        launch = verdict.launch
        if verdict.target.release is None:  # a release without ReplaySSM: nothing to fix it with
            self.skipped.extend(f"{f.code}: vLLM {verdict.target.version} has no ReplaySSM" for f in findings)
        elif self.serve_config:
            from .yaml_edits import plan_serve_config

            plan_serve_config(self, verdict, findings)
        elif launch.form == "kwargs":
            self.plan_kwargs(verdict, findings)
        else:
            self.plan_argv(verdict, findings)

    def planned(self, code: str) -> bool:
        """Whether the plan of the current launch already has an edit for ``code``."""
        return any(code in edit.code.split(",") for edit in self.edits[self.launch_start:])

    def drops_overridden_mode(self, findings: Sequence[Finding], mode: Setting | None) -> bool:
        """RSM107 at ``mode``, and this plan does not turn prefix caching on (RSM006's fix would
        make the mode take effect, so it stays)."""
        return mode is not None and any(f.code == "RSM107" and f.span == mode.span for f in findings) \
            and not self.planned("RSM006")

    def expect(self, launch: Launch) -> None:
        if launch.form == "kwargs":
            return
        for setting in list(launch.options.values()) + list(launch.env.values()):
            if setting.spelling and setting.span != setting.value_span:
                self.expected[span_key(setting.span)] = setting.spelling
            value = setting.value
            if setting.value_span is not None and setting.value_span != setting.span \
                    and isinstance(value, (str, int)) and not isinstance(value, bool):
                self.expected[span_key(setting.value_span)] = str(value)
        if not launch.label.endswith(" entrypoint"):  # an image's arguments: the anchor is any word
            self.expected.setdefault(span_key(launch.anchor), "\0anchor")

    def plan_argv(self, verdict: Verdict, findings: Sequence[Finding]) -> None:
        launch, release = verdict.launch, verdict.target.release
        version = release_key(release.version)
        codes = {f.code for f in findings}
        opts = launch.options
        use = opts.get("use_replayssm")
        stray: Span | None = None
        for f in findings:
            if f.code == "RSM106" and "is a stray argument" in f.message:
                stray = f.span

        rsm103 = next((f for f in findings if f.code == "RSM103"), None)
        if rsm103 is not None:  # --model MODEL first: every other verdict was for vLLM's default model
            self.insert_words_before(rsm103.span, ["--model"], "RSM103")
            return
        if self.unsafe and "RSM001" in codes and use is not None and use.value is True:
            spans = [use.span] + ([stray] if stray is not None else [])
            self.delete_words(spans, "RSM001")
            return

        for f in findings:
            if f.code == "RSM106" and "takes no value (argument" in f.message:
                setting = next((s for s in opts.values() if s.span == f.span and s.value is True), None)
                raw = self.raw(f.span).strip("'\"")
                value = raw.partition("=")[2].lower()
                if setting is not None and value in _TRUE_WORDS:
                    self.replace_word(f.span, setting.spelling, "RSM106")
            elif f.code == "RSM106" and "is a stray argument" in f.message:
                if self.raw(f.span).strip("'\"").lower() in _TRUE_WORDS:
                    self.delete_words([f.span], "RSM106")
            elif f.code == "RSM101":
                self.fix_config_equals(f.span)
            elif f.code == "RSM105":
                mode = opts.get("mamba_cache_mode")
                if mode is not None:
                    self.delete_option(mode, "RSM105")
            elif f.code == "RSM104":
                mode = opts.get("mamba_cache_mode")
                if mode is not None and f.span in (mode.span, mode.value_span) and "choice" in f.message:
                    if release.cache_mode_deprecated:
                        self.delete_option(mode, "RSM104")
                    elif "align" in release.cache_mode_choices:
                        self.replace_value(mode, "align", "RSM104")
                    continue
                alias = next((s for s in opts.values() if s.span == f.span), None)
                if alias is not None and alias.name == "enable_prefix_caching" and alias.value is False \
                        and alias.spelling.replace("_", "-") == "--disable-prefix-caching":
                    self.replace_word(f.span, "--no-enable-prefix-caching", "RSM104")
            elif f.code == "RSM004" and self.unsafe and backend_to_triton(f.message):
                backend = opts.get("mamba_backend")
                if backend is not None and isinstance(backend.value, str):
                    self.replace_value(backend, "triton", "RSM004")
            elif f.code == "RSM006":
                block = opts.get("mamba_block_size")
                backend = opts.get("mamba_backend")
                prefix = opts.get("enable_prefix_caching")
                if block is not None and prefix is None and not launch.open_ended \
                        and not (backend is not None and backend.value == "flashinfer"):
                    self.insert_words_after(block.value_span or block.span, ["--enable-prefix-caching"], "RSM006")
                elif self.unsafe and block is not None and backend is not None and backend.value == "flashinfer":
                    self.delete_option(block, "RSM006")  # FlashInfer needs prefix caching off: no use for it
                elif self.unsafe and prefix is not None and prefix.value is False:  # an explicit "off"
                    self.switch_flag(prefix, "--enable-prefix-caching", "RSM006")

        mode = opts.get("mamba_cache_mode")
        if self.drops_overridden_mode(findings, mode):
            assert mode is not None
            self.delete_option(mode, "RSM107")
        if replayssm_unsupported(findings):
            return

        pins: list[str] = []
        pin_codes: list[str] = []
        align = next((f for f in findings if f.code == "RSM002" and wants_align_mode(f.message)), None)
        if align is not None:
            mode = opts.get("mamba_cache_mode")
            if mode is not None:
                if isinstance(mode.value, str):
                    self.replace_value(mode, "align", "RSM002")
            else:
                pins += ["--mamba-cache-mode", "align"]
                pin_codes.append("RSM002")
        if any(f.code == "RSM002" and wants_prefix_caching_off(f.message) for f in findings):
            prefix = opts.get("enable_prefix_caching")
            off = "--disable-prefix-caching" if release.disable_aliases else "--no-enable-prefix-caching"
            if prefix is None and not launch.open_ended:  # on by default: off is what vLLM requires
                pins.append(off)
                pin_codes.append("RSM002")
            elif prefix is not None and prefix.value is True and self.unsafe:  # on as written
                self.switch_flag(prefix, off, "RSM002")
        env_fixed = False
        if any(f.code == "RSM008" and triton_needs_v1(f.message) for f in findings) and version >= (0, 30):
            runner = launch.env.get(ENV_RUNNER)
            if runner is None and not launch.env_open_ended:
                env_fixed = self.add_runner_env(launch)
            elif runner is not None and self.unsafe:  # VLLM_USE_V2_MODEL_RUNNER=1 as written
                env_fixed = self.set_env_value(runner, "0", "RSM008")
            if env_fixed and not release.cache_mode_deprecated and "mamba_cache_mode" not in opts \
                    and "--mamba-cache-mode" not in pins and not _prefix_caching_off(launch) \
                    and "--disable-prefix-caching" not in pins and "--no-enable-prefix-caching" not in pins:
                pins += ["--mamba-cache-mode", "align"]
                pin_codes.append("RSM008")
        runner = launch.env.get(ENV_RUNNER)
        if any(f.code == "RSM008" and needs_v2(f.message) for f in findings) and self.unsafe \
                and runner is not None and str(runner.value) == "0":  # V1 pinned as written, V2 required
            self.set_env_value(runner, "1", "RSM008")
        if (align is not None and "--mamba-cache-mode" in pins or env_fixed) and "mamba_backend" not in opts \
                and not launch.open_ended:
            pins += ["--mamba-backend", "triton"]
            pin_codes.append("RSM008" if env_fixed else "RSM002")
        if pins and use is not None and use.value is True:
            target = stray if stray is not None and self.raw(stray).strip("'\"").lower() not in _TRUE_WORDS \
                else use.span
            self.insert_words_after(target, pins, ",".join(dict.fromkeys(pin_codes)))

    def switch_flag(self, setting: Setting, word: str, code: str) -> bool:
        """Replace a boolean flag written as one word (``--enable-prefix-caching``, ``--x=true``)."""
        if setting.value_span not in (None, setting.span):
            return False
        return self.replace_word(setting.span, word, code)

    def set_env_value(self, setting: Setting, value: str, code: str) -> bool:
        """An environment variable's value as written (``VAR=1``, ``"VAR": "1"``, ``value: "1"``)."""
        span = setting.value_span or setting.span
        if span.cell is not None or span.source is not None:
            return False
        start, end = self.offsets(span)
        raw = self.text[start:end]
        if raw not in (str(setting.value), f'"{setting.value}"', f"'{setting.value}'") or not raw:
            return False
        inner = 1 if raw[0] in "'\"" else 0
        self.add(start + inner, end - inner, value, code)
        return True

    def delete_option(self, setting: Setting, code: str) -> bool:
        spans = [setting.span]
        if setting.value_span is not None and setting.value_span != setting.span:
            spans.append(setting.value_span)
        return self.delete_words(spans, code)

    def fix_config_equals(self, span: Span) -> None:
        ctx = self.context(span)
        start, end = self.offsets(span)
        raw = self.text[start:end]
        if ctx == "yaml-item":
            seq, index, node = self.yaml_item(span)  # type: ignore[misc]
            assert self.yaml is not None
            value = str(node.value)
            if value.startswith("--config=") and len(value) > len("--config="):
                self.add(start, end, self.yaml.literal(node, "--config", bool(seq.flow_style)), "RSM101")
                edit = self.yaml.insert_items(seq, index, [value[len("--config="):]], newline=self.newline)
                if edit is not None:
                    self.add(edit.start, edit.end, edit.replacement, "RSM101")
                else:
                    self.edits.pop()
        elif ctx == "plain" and raw.startswith("--config="):
            self.add(start + len("--config"), start + len("--config="), " ", "RSM101")
        elif ctx == "element" and self.kind in STRUCTURAL_KINDS:
            m = _PY_STRING.match(raw)
            assert m is not None
            body = m["body"]
            if body.startswith("--config=") and len(body) > len("--config="):
                q, p = m["quote"], m["prefix"]
                self.add(start, end, f"{p}{q}--config{q}, {p}{q}{body[len('--config='):]}{q}", "RSM101")
        elif ctx == "json":
            import json

            value = json.loads(raw)
            if value.startswith("--config=") and len(value) > len("--config="):
                self.add(start, end, f'"--config", {json.dumps(value[len("--config="):])}', "RSM101")

    def add_runner_env(self, launch: Launch) -> bool:
        """Run the command with VLLM_USE_V2_MODEL_RUNNER=0; False when we cannot say how."""
        anchor = launch.anchor
        ctx = self.context(anchor)
        assignment = f"{ENV_RUNNER}=0"
        if launch.label.startswith(("docker run", "podman run")):
            return self.insert_words_before(anchor, ["-e", assignment], "RSM008")
        if self.kind == "yaml":
            return self.add_yaml_runner_env(launch, ctx)
        if self.kind == "dockerfile" and launch.label.endswith(" entrypoint"):
            # CMD/ENTRYPOINT arguments of a vLLM image: an ENV line right before the instruction
            start, _ = self.offsets(anchor)
            line_start = self.index.line_start(start)
            line = self.text[line_start:start]
            m = re.match(r"([ \t]*)(CMD|ENTRYPOINT)\b", line, re.IGNORECASE)
            if m is None:
                return False
            self.add(line_start, line_start, f"{m.group(1)}ENV {assignment}{self.newline}", "RSM008")
            return True
        if ctx == "plain" and self.kind in STRUCTURAL_KINDS:
            start, _ = self.offsets(anchor)
            if self.at_command_start(anchor):
                self.add(start, start, assignment + " ", "RSM008")
                return True
            if self.after_wrapper(anchor):  # `nohup env VAR=0 vllm ...`: env is a program
                self.add(start, start, f"env {assignment} ", "RSM008")
                return True
            return False
        if ctx == "element" and self.py is not None:
            call = next((c for c in self.py.argv_calls if span_key(anchor) in c.get("elements", ())), None)
            if call is None:
                return False
            entry = f'"{ENV_RUNNER}": "0"'
            if "env_dict" in call:
                d_start, _, count = call["env_dict"]
                self.add(d_start + 1, d_start + 1, entry + (", " if count else ""), "RSM008")
                return True
            if call["has_env"] or not self.py.imports_os:
                return False
            last = call["args"][-1]
            self.insert_args_after(last["start"], last["end"], [f"env={{**os.environ, {entry}}}"], "RSM008")
            return True
        return False

    def add_yaml_runner_env(self, launch: Launch, ctx: str | None) -> bool:
        """A shell script in YAML gets the prefix; an exec-form argv its container's or
        service's environment (compose ``environment:``, Kubernetes ``env:``)."""
        if self.yaml is None:
            return False
        anchor = launch.anchor
        start, end = self.offsets(anchor)
        if ctx == "plain":
            node = self.yaml.scalar_around(start, end)
            if node is not None and self.yaml.is_shell_script(node):
                if self.at_command_start(anchor):
                    self.add(start, start, f"{ENV_RUNNER}=0 ", "RSM008")
                    return True
                if self.after_wrapper(anchor):
                    self.add(start, start, f"env {ENV_RUNNER}=0 ", "RSM008")
                    return True
                return False
        elif ctx == "yaml-item":
            node = self.yaml.scalar_at(start, end)
        else:
            return False
        if node is None:
            return False
        edit = self.yaml.runner_env_edit(node, self.newline)
        if edit is None:
            return False
        self.add(edit.start, edit.end, edit.replacement, "RSM008")
        return True

    def after_wrapper(self, span: Span) -> bool:
        """Whether the word before ``span`` (same line) is a wrapper's word (``nohup``, ``srun -n 2``)."""
        from ..wrappers import wrappers as known

        wrappers = known()
        start, _ = self.offsets(span)
        before = self.text[self.index.line_start(start):start]
        if self.ipython:
            before = _IPYTHON_SHELL.sub("", before, count=1)
        if self.kind == "markdown":
            before = _PROMPT.sub("", before, count=1)
        words = before.split()
        if not words or not before[-1:].isspace():
            return False
        for word in reversed(words):
            name = word.rsplit("/", 1)[-1].strip("\"'")
            if name in wrappers and not wrappers[name].sub and name not in ("builtin", "env") \
                    or name in {sub for w in wrappers.values() for sub in w.sub} and len(words) > 1:
                return True
            if word.startswith("-") or word[:1].isdigit():
                continue  # a wrapper's option (srun -n 2, timeout 600)
            return False
        return False

    def at_command_start(self, span: Span) -> bool:
        start, _ = self.offsets(span)
        if self.kind == "python":
            assert self.py is not None
            body = next(((s, e) for s, e in self.py.string_bodies if s <= start < e), None)
            if body is None:
                return False
            return _CMD_START.search(self.text[body[0]:start]) is not None
        before = self.text[self.index.line_start(start):start]
        if self.ipython:
            before = _IPYTHON_SHELL.sub("", before, count=1)
        if self.kind == "markdown":
            before = _PROMPT.sub("", before, count=1)
        if self.kind == "dockerfile":
            return _DOCKER_START.search(before) is not None
        if self.kind == "makefile":
            before = before.lstrip("\t").lstrip("@-+")
        return _CMD_START.search(before) is not None

    def plan_kwargs(self, verdict: Verdict, findings: Sequence[Finding]) -> None:
        launch, release = verdict.launch, verdict.target.release
        version = release_key(release.version)
        if self.kind != "python":
            return
        opts = launch.options
        codes = {f.code for f in findings}
        use = opts.get("use_replayssm")
        use_at = self.kw_target(use)
        if self.unsafe and "RSM001" in codes and use_at is not None and use is not None and use.value is True:
            self.delete_arg(use_at.start, use_at.end, "RSM001")
            return
        mode = opts.get("mamba_cache_mode")
        mode_at = self.kw_target(mode)
        for f in findings:
            if f.code == "RSM105" and mode_at is not None:
                self.delete_arg(mode_at.start, mode_at.end, "RSM105")
            elif f.code == "RSM104" and mode is not None and f.span in (mode.span, mode.value_span):
                if release.cache_mode_deprecated and mode_at is not None:
                    self.delete_arg(mode_at.start, mode_at.end, "RSM104")
                elif "align" in release.cache_mode_choices:
                    self.replace_kwarg_value(mode, "align", "RSM104")
            elif f.code == "RSM004" and self.unsafe and backend_to_triton(f.message):
                backend = opts.get("mamba_backend")
                if backend is not None and isinstance(backend.value, str):
                    self.replace_kwarg_value(backend, "triton", "RSM004")
            elif f.code == "RSM006":
                block = opts.get("mamba_block_size")
                block_at = self.kw_target(block)
                call = self.call_info(launch)
                backend = opts.get("mamba_backend")
                if block_at is not None and call is not None and not launch.open_ended \
                        and "enable_prefix_caching" not in opts \
                        and not any(a["keyword"] == "enable_prefix_caching" for a in call["args"]) \
                        and not (backend is not None and backend.value == "flashinfer"):
                    self.insert_args_after(block_at.start, block_at.end,
                                           [block_at.item("enable_prefix_caching", True)], "RSM006")

        if mode_at is not None and self.drops_overridden_mode(findings, mode):
            self.delete_arg(mode_at.start, mode_at.end, "RSM107")
        if replayssm_unsupported(findings):
            return

        pins: list[tuple[str, Any, str]] = []
        call = self.call_info(launch)
        present = {a["keyword"] for a in call["args"]} if call is not None else set()
        align = any(f.code == "RSM002" and wants_align_mode(f.message) for f in findings)
        if align:
            if mode is not None:
                if isinstance(mode.value, str):
                    self.replace_kwarg_value(mode, "align", "RSM002")
            elif "mamba_cache_mode" not in present:
                pins.append(("mamba_cache_mode", "align", "RSM002"))
        prefix = opts.get("enable_prefix_caching")
        if any(f.code == "RSM002" and wants_prefix_caching_off(f.message) for f in findings):
            if prefix is None and "enable_prefix_caching" not in present and not launch.open_ended:
                pins.append(("enable_prefix_caching", False, "RSM002"))
            elif prefix is not None and prefix.value is True and self.unsafe:
                self.replace_kwarg_literal(prefix, "False", "RSM002")
        block_at = self.kw_target(opts.get("mamba_block_size"))
        backend = opts.get("mamba_backend")
        if "RSM006" in codes and self.unsafe and block_at is not None and backend is not None \
                and backend.value == "flashinfer":
            self.delete_arg(block_at.start, block_at.end, "RSM006")  # FlashInfer needs prefix caching off
        elif "RSM006" in codes and self.unsafe and prefix is not None and prefix.value is False:
            self.replace_kwarg_literal(prefix, "True", "RSM006")
        env_fixed = False
        if any(f.code == "RSM008" and triton_needs_v1(f.message) for f in findings) and self.unsafe \
                and version >= (0, 30):
            runner = launch.env.get(ENV_RUNNER)
            if runner is None and not launch.env_open_ended:
                env_fixed = self.add_environ_line(launch)
            elif runner is not None:  # os.environ[...] = "1" as written
                env_fixed = self.set_env_value(runner, "0", "RSM008")
            if env_fixed and not release.cache_mode_deprecated and "mamba_cache_mode" not in present \
                    and mode is None and not any(name == "mamba_cache_mode" for name, _, _ in pins) \
                    and not _prefix_caching_off(launch) and not any(v is False for _, v, _ in pins):
                pins.append(("mamba_cache_mode", "align", "RSM008"))
        runner = launch.env.get(ENV_RUNNER)
        if any(f.code == "RSM008" and needs_v2(f.message) for f in findings) and self.unsafe \
                and runner is not None and str(runner.value) == "0":  # V1 pinned as written, V2 required
            self.set_env_value(runner, "1", "RSM008")
        if (env_fixed or any(name == "mamba_cache_mode" for name, _, _ in pins)) and "mamba_backend" not in present \
                and "mamba_backend" not in opts and not launch.open_ended:
            pins.append(("mamba_backend", "triton", "RSM008" if env_fixed else "RSM002"))
        if pins and use_at is not None and use is not None and use.value is True:
            self.insert_args_after(use_at.start, use_at.end, [use_at.item(n, v) for n, v, _ in pins],
                                   ",".join(dict.fromkeys(code for _, _, code in pins)))

    def replace_kwarg_literal(self, setting: Setting, literal: str, code: str) -> bool:
        """A keyword's ``True``/``False`` value, where the keyword is written (call or dict entry)."""
        if self.kw_target(setting) is None or setting.value_span is None:
            return False
        start, end = self.offsets(setting.value_span)
        if self.text[start:end] not in ("True", "False"):
            return False
        self.add(start, end, literal, code)
        return True

    def kw_target(self, setting: Setting | None) -> _KwTarget | None:
        """Where a keyword is written: in the call (``x=...``), in a dict literal / ``dict(...)``
        written as the call's argument (``engine_kwargs=dict(...)``), or as an entry of a
        same-module dict that only this call splats (``**cfg``)."""
        if setting is None or setting.value_span is None:
            return None
        if self.direct(setting):
            start, end = self.kwarg_range(setting)
            return _KwTarget(start, end, "kwarg", '"')
        if self.py is None:
            return None
        info = self.py.dict_entries.get(span_key(setting.span))
        if info is None:
            return None
        name = self.py.containers.get(info["container"])
        if name is None and info["container"] in self.py.inline:
            return _KwTarget(info["start"], info["end"], info["form"], info["quote"])  # written in the call
        if name is None or self.py.assigns[name] != 1 or self.py.splats[name] != 1 \
                or name in self.py.mutated:
            return None  # the dict is shared, reassigned or changed elsewhere: leave it
        return _KwTarget(info["start"], info["end"], info["form"], info["quote"])

    def add_environ_line(self, launch: Launch) -> bool:
        """``os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"`` on its own line before the statement,
        and ``import os`` after the module's leading imports when the module has none."""
        if self.py is None or self.environ_planned:
            return False
        start, _ = self.offsets(launch.anchor)
        statement = min((s for s in self.py.statements if s[0] <= start < s[1]),
                        key=lambda s: s[1] - s[0], default=None)
        if statement is None or not statement[3]:
            return False
        s_start, _, indent, _ = statement
        line_start = self.index.line_start(s_start)
        line = f'{indent}os.environ["{ENV_RUNNER}"] = "0"{self.newline}'
        if not self.py.imports_os:
            at = self.py.import_at
            if at is None or at > line_start:
                return False
            head = ("" if at == 0 or self.text[at - 1] == "\n" else self.newline) + f"import os{self.newline}"
            if at == line_start:
                self.add(at, at, head + line, "RSM008")
                self.environ_planned = True
                return True
            self.add(at, at, head, "RSM008")
        self.add(line_start, line_start, line, "RSM008")
        self.environ_planned = True  # later launches see it in the next round
        return True


def _prefix_caching_off(launch: Launch) -> bool:
    """The launch turns prefix caching off, so a pinned mode would only be overridden (RSM107)."""
    setting = launch.options.get("enable_prefix_caching")
    return setting is not None and setting.value is False


def _matches(raw: str, expected: str) -> bool:
    text = raw
    m = _PY_STRING.match(raw)
    if m is not None:
        text = m["body"]
    elif len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        text = raw[1:-1]
    if expected == "\0anchor":
        name = text.rsplit("/", 1)[-1]
        return (re.fullmatch(r"vllm|python(\d+(\.\d+)?)?", name) is not None or "vllm" in text) \
            and not any(ch.isspace() for ch in text)
    return text == expected or text.startswith(expected + "=")
