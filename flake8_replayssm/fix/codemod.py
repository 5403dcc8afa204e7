"""Plan fixes for rejected ReplaySSM launches, as text edits on source spans.

One pass: lint the text (``# noqa`` respected), and for every finding of every
launch that has a known fix for the target release, compute edits from the
launch's spans.  :func:`fix_text` applies them, re-parses and re-lints, and
repeats (a fix may uncover the next one, e.g. enabling prefix caching on 0.27
needs ``--mamba-cache-mode align``) until nothing changes.

Fixes ([safe] always, [unsafe] only with ``--unsafe``), for the target release
of each launch (``judge(...).target.release``):

- RSM101 [safe]: ``--config=F`` -> ``--config F`` (two list items in an argv list).
- RSM104 [safe]: ``--disable-prefix-caching`` before 0.33 -> ``--no-enable-prefix-caching``;
  ``--mamba-cache-mode all`` -> ``align`` on 0.32, dropped on 0.33.
- RSM105 [safe]: drop the deprecated ``--mamba-cache-mode X`` / ``mamba_cache_mode=...``.
- RSM106 [safe]: ``--use-replayssm=true`` -> ``--use-replayssm``; ``--use-replayssm true``
  -> drop ``true``.  False-ish values (``=false``, ``false``) are left to the user.
- RSM002 [safe], only the "only in align mode" check: an explicit mode -> ``align``;
  no mode given (0.27 with prefix caching) -> pin ``--mamba-cache-mode align
  --mamba-backend triton`` after ``--use-replayssm`` (``mamba_cache_mode="align",
  mamba_backend="triton"`` after ``use_replayssm=True``).
- RSM006 [safe]: add ``--enable-prefix-caching`` after the block size (not when prefix
  caching is set explicitly, nor on flashinfer).
- RSM008 [safe], the Triton-needs-V1 check on 0.30+ with the variable unset: run with
  ``VLLM_USE_V2_MODEL_RUNNER=0`` -- a prefix word at the start of a shell command,
  ``env VAR=0`` after ``nohup``/``srun``-like wrappers, ``docker run -e VAR=0``, an
  ``ENV`` line before a Dockerfile ``CMD``/``ENTRYPOINT`` of a vLLM image,
  ``env={**os.environ, ...}`` on a ``subprocess`` call with an argv list literal
  when ``os`` is imported (an existing ``env={...}`` literal gets the entry) --
  and pin ``--mamba-backend triton`` (plus ``--mamba-cache-mode align`` before
  0.33, where that flag is deprecated).  The pins are added only together with a
  real fix, never alone.
- RSM008 [unsafe] for ``LLM(...)``/``EngineArgs(...)``: an ``os.environ[...] = "0"``
  line before the statement (it changes the whole process), plus the pins.
- RSM001 [unsafe]: drop ``--use-replayssm`` / ``use_replayssm=True``.
- RSM004 [unsafe]: switch the backend value to ``triton`` (not where the check asks
  for flashinfer).

Structural edits (insert/delete words) are made in Python (argv lists, command
strings without escapes, keywords written in the call or in a same-module dict
literal / ``dict(...)`` that only this call splats as ``**cfg``), shell,
Makefile and Dockerfile text, and YAML (:mod:`.yaml_edits`: sequence items
written like their neighbours, words inside a string that compose or a shell
splits, compose ``environment:`` / Kubernetes ``env:`` entries, top-level keys
of a ``vllm serve --config`` file, where RSM102 ``enable-prefix-caching: false``
becomes ``disable-prefix-caching: true`` (0.33) or ``no-enable-prefix-caching:
true``).  Notebooks are fixed cell by cell (:mod:`.notebook`).  Markdown gets
only in-place word replacements; findings inside other files (a ``--config``
YAML a command line reads) are left to that file's own run.  Every edited span
is first checked to hold the word the launch says is there; nothing reachable
through a YAML alias or merge key is edited; and a round that would make vLLM
refuse a launch it accepted before is left out (:func:`fix_text`).

The libcst codemod :class:`ReplaySSMFixCommand` runs the same planner on a
module's code, so comments and layout outside the edits stay byte for byte::

    python -m libcst.tool codemod codemod.ReplaySSMFixCommand --no-format [--vllm-version V] [--unsafe] FILES

``libcst.tool`` finds commands only under the ``modules`` listed in
``.libcst.codemod.yaml`` (``python -m libcst.tool initialize .`` writes one):
add ``flake8_replayssm.fix`` there.  Pass ``--no-format`` when black is not
installed (black would also reformat the rest of the file).
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..config import LintConfig
from ..engine import Verdict
from ..model import Finding, Launch, Setting, Span
from .edits import Edit, LineIndex, OverlapError, apply_edits, newline_of, parse_error
from .yaml_edits import YamlFacts

ENV_RUNNER = "VLLM_USE_V2_MODEL_RUNNER"
#: file kinds where words may be inserted and deleted (elsewhere only replaced)
STRUCTURAL_KINDS = frozenset({"python", "shell", "makefile", "dockerfile"})
_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
_PLAIN = re.compile(r"[^\s'\"\\`$]+")
_PY_STRING = re.compile(r"(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)\Z", re.DOTALL)
_ENV_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_CMD_START = re.compile(r"(?:^|[;&|(`{]|\n|\$\()\s*(?:(?:[A-Za-z_][A-Za-z0-9_]*=\S*|env)\s+)*\Z")
#: what starts a shell command on a notebook line: ``!``, ``!!``, ``x = !``, ``%sx``, ``%system``
_IPYTHON_SHELL = re.compile(r"^[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*(?:[ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)*[ \t]*=[ \t]*)?"
                            r"(?:!!?|%(?:sx|system|sc)\b)")
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
    #: key span key -> entry of a dict literal or ``dict(...)``: start, end, container, form, quote
    dict_entries: dict[tuple[int, int, int, int], dict[str, Any]] = field(default_factory=dict)
    #: id of a dict literal / ``dict(...)`` call -> the one name it is assigned to
    containers: dict[int, str] = field(default_factory=dict)
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


def _key(span: Span) -> tuple[int, int, int, int]:
    return (span.line, span.col, span.end_line, span.end_col)


def _python_facts(text: str, index: LineIndex) -> _PyFacts | None:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    try:
        module = cst.parse_module(text)
    except Exception:
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
    return facts


# ---------------------------------------------------------------------------
# The planner
# ---------------------------------------------------------------------------

class _Planner:
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
            from ..frontends.yaml_manifests import is_serve_config

            self.serve_config = self.yaml is not None and is_serve_config(text)
        #: YAML sequence items to delete: (sequence, item index, code)
        self.item_deletions: list[tuple[Any, int, str]] = []
        self.edits: list[Edit] = []
        self.skipped: list[str] = []
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
        expected = self.expected.get(_key(span))
        if expected is not None and not _matches(raw, expected):
            return None  # the span does not hold the word we think (escapes, odd positions)
        if self.kind == "yaml":
            return self.yaml_context(span, raw)
        if self.kind == "python":
            if self.py is not None and _key(span) in self.py.elements and _PY_STRING.match(raw):
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
        return self.py.calls_by_func.get(_key(launch.anchor))

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
        if verdict.target.release is None:  # a release without ReplaySSM: nothing to fix it with
            self.skipped.extend(f"{f.code}: vLLM {verdict.target.version} has no ReplaySSM" for f in findings)
            return
        if launch.anchor.cell is not None or launch.anchor.source is not None:
            self.skipped.extend(f"{f.code}: not fixable in this file kind" for f in findings)
            return
        before = len(self.edits)
        self.expect(launch)
        try:
            if launch.engine == "sglang":
                from .sglang_fixes import plan as plan_sglang

                plan_sglang(self, verdict, findings)
            elif self.serve_config:
                from .yaml_edits import plan_serve_config

                plan_serve_config(self, verdict, findings)
            elif launch.form == "kwargs":
                self.plan_kwargs(verdict, findings)
            else:
                self.plan_argv(verdict, findings)
            self.flush_deletions()
        except (AssertionError, IndexError, KeyError, TypeError):  # a launch we cannot edit: leave it
            del self.edits[before:]
            self.deletions = []
            return
        try:  # one launch must never garble itself; drop its edits when they collide
            apply_edits(self.text, self.edits[before:])
        except OverlapError:
            del self.edits[before:]

    def expect(self, launch: Launch) -> None:
        if launch.form == "kwargs":
            return
        for setting in list(launch.options.values()) + list(launch.env.values()):
            if setting.spelling and setting.span != setting.value_span:
                self.expected[_key(setting.span)] = setting.spelling
            value = setting.value
            if setting.value_span is not None and setting.value_span != setting.span \
                    and isinstance(value, (str, int)) and not isinstance(value, bool):
                self.expected[_key(setting.value_span)] = str(value)
        if not launch.label.endswith(" entrypoint"):  # an image's arguments: the anchor is any word
            self.expected.setdefault(_key(launch.anchor), "\0anchor")

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
            elif f.code == "RSM004" and self.unsafe and _backend_to_triton(f.message):
                backend = opts.get("mamba_backend")
                if backend is not None and isinstance(backend.value, str):
                    self.replace_value(backend, "triton", "RSM004")
            elif f.code == "RSM006":
                block = opts.get("mamba_block_size")
                backend = opts.get("mamba_backend")
                if block is not None and "enable_prefix_caching" not in opts and not launch.open_ended \
                        and not (backend is not None and backend.value == "flashinfer"):
                    self.insert_words_after(block.value_span or block.span, ["--enable-prefix-caching"], "RSM006")

        pins: list[str] = []
        rsm002 = next((f for f in findings if f.code == "RSM002" and "only in align mode" in f.message), None)
        if rsm002 is not None:
            mode = opts.get("mamba_cache_mode")
            if mode is not None:
                if isinstance(mode.value, str):
                    self.replace_value(mode, "align", "RSM002")
            else:
                pins += ["--mamba-cache-mode", "align"]
        env_fixed = False
        rsm008 = next((f for f in findings if f.code == "RSM008"
                       and f.message.startswith("Triton ReplaySSM requires Model Runner V1")), None)
        if rsm008 is not None and version >= (0, 30) and ENV_RUNNER not in launch.env \
                and not launch.env_open_ended:
            if self.add_runner_env(launch):
                env_fixed = True
                if not release.cache_mode_deprecated and "mamba_cache_mode" not in opts \
                        and "--mamba-cache-mode" not in pins:
                    pins += ["--mamba-cache-mode", "align"]
        if (pins or env_fixed) and "mamba_backend" not in opts and not launch.open_ended:
            pins += ["--mamba-backend", "triton"]
        if pins and use is not None and use.value is True:
            target = stray if stray is not None and self.raw(stray).strip("'\"").lower() not in _TRUE_WORDS \
                else use.span
            self.insert_words_after(target, pins, "RSM002" if rsm002 is not None else "RSM008")

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
            call = next((c for c in self.py.argv_calls if _key(anchor) in c.get("elements", ())), None)
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
        from ..knowledge import knowledge

        wrappers = knowledge().wrappers
        start, _ = self.offsets(span)
        before = self.text[self.index.line_start(start):start]
        if self.ipython:
            before = _IPYTHON_SHELL.sub("", before, count=1)
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
            elif f.code == "RSM004" and self.unsafe and _backend_to_triton(f.message):
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

        pins: list[tuple[str, Any]] = []
        call = self.call_info(launch)
        present = {a["keyword"] for a in call["args"]} if call is not None else set()
        rsm002 = any(f.code == "RSM002" and "only in align mode" in f.message for f in findings)
        if rsm002:
            if mode is not None:
                if isinstance(mode.value, str):
                    self.replace_kwarg_value(mode, "align", "RSM002")
            elif "mamba_cache_mode" not in present:
                pins.append(("mamba_cache_mode", "align"))
        rsm008 = any(f.code == "RSM008" and f.message.startswith("Triton ReplaySSM requires Model Runner V1")
                     for f in findings)
        env_fixed = False
        if rsm008 and self.unsafe and version >= (0, 30) and ENV_RUNNER not in launch.env \
                and not launch.env_open_ended and self.add_environ_line(launch):
            env_fixed = True
            if not release.cache_mode_deprecated and "mamba_cache_mode" not in present \
                    and mode is None and not pins:
                pins.append(("mamba_cache_mode", "align"))
        if (pins or env_fixed) and "mamba_backend" not in present and "mamba_backend" not in opts \
                and not launch.open_ended:
            pins.append(("mamba_backend", "triton"))
        if pins and use_at is not None and use is not None and use.value is True:
            self.insert_args_after(use_at.start, use_at.end, [use_at.item(n, v) for n, v in pins],
                                   "RSM002" if rsm002 else "RSM008")

    def kw_target(self, setting: Setting | None) -> _KwTarget | None:
        """Where a keyword is written: in the call (``x=...``) or as an entry of a same-module
        dict literal / ``dict(...)`` that only this call splats (``**cfg``)."""
        if setting is None or setting.value_span is None:
            return None
        if self.direct(setting):
            start, end = self.kwarg_range(setting)
            return _KwTarget(start, end, "kwarg", '"')
        if self.py is None:
            return None
        info = self.py.dict_entries.get(_key(setting.span))
        if info is None:
            return None
        name = self.py.containers.get(info["container"])
        if name is None or self.py.assigns[name] != 1 or self.py.splats[name] != 1 \
                or name in self.py.mutated:
            return None  # the dict is shared, reassigned or changed elsewhere: leave it
        return _KwTarget(info["start"], info["end"], info["form"], info["quote"])

    def add_environ_line(self, launch: Launch) -> bool:
        """``os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"`` on its own line before the statement."""
        if self.py is None or not self.py.imports_os or self.environ_planned:
            return False
        start, _ = self.offsets(launch.anchor)
        statement = min((s for s in self.py.statements if s[0] <= start < s[1]),
                        key=lambda s: s[1] - s[0], default=None)
        if statement is None or not statement[3]:
            return False
        s_start, _, indent, _ = statement
        line_start = self.index.line_start(s_start)
        self.add(line_start, line_start, f'{indent}os.environ["{ENV_RUNNER}"] = "0"{self.newline}', "RSM008")
        self.environ_planned = True  # later launches see it in the next round
        return True


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


def _backend_to_triton(message: str) -> bool:
    return "requires --mamba-backend triton" in message and "requires --mamba-backend flashinfer" not in message


# ---------------------------------------------------------------------------
# Planning and fixing a text
# ---------------------------------------------------------------------------

@dataclass
class FixOutcome:
    """What fixing one text did."""

    original: str
    text: str
    #: codes fixed, in the order the edits were made (one entry per edit)
    fixed: list[str] = field(default_factory=list)
    error: str | None = None
    #: what was left unfixed and why (printed, not an error)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.text != self.original


def plan_edits(text: str, kind: str, config: LintConfig, *, path: str | None = None,
               unsafe: bool = False) -> list[Edit]:
    """The edits that fix the findings of ``text`` (one round; edits address ``text``)."""
    from ..lint import lint_text

    if kind == "notebook":
        from .notebook import plan_notebook_edits

        return plan_notebook_edits(text, config, path=path, unsafe=unsafe)
    result = lint_text(text, kind, config, path=path)
    if result.error:
        return []
    reported = {(f.span, f.code) for f in result.findings}
    planner = _Planner(text, kind, unsafe=unsafe)
    seen: set[tuple[int, int, int, int]] = set()
    groups: set[int] = set()
    for verdict in result.verdicts:
        findings = [f for f in verdict.findings if (f.span, f.code) in reported]
        key = _key(verdict.launch.anchor)
        if key in seen and verdict.launch.form == "argv":  # the same command reached twice
            continue
        if verdict.launch.group is not None:  # one written launch read with each of its values
            if verdict.launch.group in groups:
                continue
            groups.add(verdict.launch.group)
        seen.add(key)
        planner.plan(verdict, findings)
    edits: list[Edit] = []
    for edit in planner.edits:  # keep the first of two colliding fixes
        try:
            apply_edits(text, edits + [edit])
        except OverlapError:
            continue
        edits.append(edit)
    return edits


#: codes that mean "vLLM (or SGLang) refuses to start"; a fix must never add one
FAILING_CODES = frozenset({"RSM001", "RSM002", "RSM003", "RSM004", "RSM005", "RSM006", "RSM007",
                           "RSM008", "RSM009", "RSM104", "RSM106", "RSM301", "RSM302", "RSM303",
                           "RSM304", "RSM305", "RSM306", "RSM307"})


def _refusals(text: str, kind: str, config: LintConfig, path: str | None) -> list[frozenset[str]]:
    """Per launch, in the order found: the codes that make vLLM refuse to start it."""
    from ..lint import lint_text

    result = lint_text(text, kind, config, path=path)  # must not raise
    reported = {(f.span, f.code) for f in result.findings}
    out = []
    seen: set[tuple[Any, ...]] = set()
    for verdict in result.verdicts:
        anchor = verdict.launch.anchor
        key = (anchor.cell, anchor.source, _key(anchor), verdict.launch.form)
        if key in seen:
            continue
        seen.add(key)
        out.append(frozenset(f.code for f in verdict.findings
                             if f.code in FAILING_CODES and (f.span, f.code) in reported))
    return out


def _new_refusals(base: list[frozenset[str]], now: list[frozenset[str]]) -> set[str]:
    """Codes of launches vLLM accepted before and refuses now (launches matched in order)."""
    if len(base) != len(now):
        return set().union(*now) if sum(map(bool, now)) > sum(map(bool, base)) else set()
    return set().union(*(n for b, n in zip(base, now) if n and not b))


def fix_text(text: str, kind: str, config: LintConfig, *, path: str | None = None,
             unsafe: bool = False, rounds: int = 4) -> FixOutcome:
    """``text`` with its fixable findings fixed; never a text that does not parse.

    Rounds repeat until no edit is left (a fix can make the next one visible).
    When a round's result does not parse, that round is dropped and
    :attr:`FixOutcome.error` says why.  The result is the last round whose
    launches vLLM refuses to start are all launches it refused before (a fix may
    uncover a problem that the next round fixes; if none does, those rounds are
    left out and :attr:`FixOutcome.notes` says so).
    """
    outcome = FixOutcome(text, text)
    base = _refusals(text, kind, config, path)
    current = text
    accepted: tuple[str, int] = (text, 0)
    fixed: list[str] = []
    added: set[str] = set()
    for _ in range(rounds):
        edits = plan_edits(current, kind, config, path=path, unsafe=unsafe)
        if not edits:
            break
        candidate = apply_edits(current, edits)
        if candidate == current:
            break
        problem = parse_error(candidate, kind)
        if problem is not None:
            outcome.error = f"fix not applied: the result would not parse ({problem})"
            break
        fixed += [code for e in edits for code in e.code.split(",") if code]
        current = candidate
        added = _new_refusals(base, _refusals(candidate, kind, config, path))
        if not added:
            accepted = (current, len(fixed))
    if current != accepted[0]:
        outcome.notes.append("some fixes were left out: vLLM would then refuse to start a launch "
                             f"({', '.join(sorted(added))})")
    outcome.text, outcome.fixed = accepted[0], fixed[:accepted[1]]
    return outcome


# ---------------------------------------------------------------------------
# libcst codemod
# ---------------------------------------------------------------------------

try:
    import libcst as _cst
    from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
except ImportError:  # pragma: no cover - libcst is a dependency
    VisitorBasedCodemodCommand = object  # type: ignore[assignment,misc]


class ReplaySSMFixCommand(VisitorBasedCodemodCommand):  # type: ignore[misc,valid-type]
    """Fix rejected ReplaySSM launches in a Python module (the ``replayssm-lint fix`` planner).

    The edits are computed on the module's exact code and spliced in, so
    comments, blank lines and layout outside them stay byte for byte.
    """

    DESCRIPTION = "Rewrite vLLM --use-replayssm launches into ones the target vLLM release accepts."

    def __init__(self, context: "CodemodContext", vllm_version: str | None = None,
                 unsafe: bool = False) -> None:
        super().__init__(context)
        self.vllm_version = vllm_version
        self.unsafe = unsafe

    @staticmethod
    def add_args(arg_parser: Any) -> None:
        arg_parser.add_argument("--vllm-version", dest="vllm_version", default=None,
                                help="vLLM release to fix for (default: pins, installed, newest)")
        arg_parser.add_argument("--unsafe", dest="unsafe", action="store_true",
                                help="also apply unsafe fixes")

    def transform_module_impl(self, tree: "_cst.Module") -> "_cst.Module":
        from ..config import project_config

        path = self.context.filename
        base = LintConfig()
        try:
            import os
            from pathlib import Path

            base = project_config(Path(os.path.dirname(os.path.abspath(path)) if path else "."))
        except Exception:
            pass
        config = base.merged(vllm_version=self.vllm_version)
        code = tree.code
        outcome = fix_text(code, "python", config, path=path, unsafe=self.unsafe)
        if outcome.error is not None:
            self.warn(outcome.error)
        if not outcome.changed:
            return tree
        return _cst.parse_module(outcome.text)
