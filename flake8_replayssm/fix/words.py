"""Edits of the words of a command line, however it is written.

A launch's command line may be a shell line, a Dockerfile instruction, a Python argv list
(``["vllm", "serve", ...]``) or command string, a JSON array (exec form), a YAML sequence
or a YAML string a shell splits.  :meth:`WordEdits.context` tells how the word at a span is
written, and the edits here (replace a word or an option's value, insert words next to one,
delete words) write new words the same way, or refuse where they cannot be sure.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from ..model import Setting, Span
from .deletions import Deletions
from .edits import span_key
from .expect import PY_STRING, holds
from .state import STRUCTURAL_KINDS

#: a word that needs no quoting in any shell-like context
_PLAIN = re.compile(r"[^\s'\"\\`$]+")
#: the values a switch reads as "on" when written after it (``--flag=true``, ``--flag yes``)
TRUE_WORDS = frozenset({"true", "yes", "on", "1"})


class WordEdits(Deletions):
    """Replacing, inserting and deleting the words of command lines."""

    def context(self, span: Span) -> str | None:
        """How a word is written: ``element`` (a quoted list item), ``json`` (a JSON
        array item), ``plain`` (a bare word in a command line), ``quoted`` (a
        quoted word in a command line), ``yaml-item`` or None (cannot be edited)."""
        if span.cell is not None or span.source is not None:
            return None
        raw = self.raw(span)
        if not raw:
            return None
        expected = self.expected.get(span_key(span))
        if expected is not None and not holds(raw, expected):
            return None  # the span does not hold the word we think (escapes, odd positions)
        if self.kind == "yaml":
            return self.yaml_context(span, raw)
        if self.kind == "python":
            if self.py is not None and span_key(span) in self.py.elements and PY_STRING.match(raw):
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
                    json.loads(raw)
                    return "json"
                except ValueError:
                    return None
        return _shell_context(raw)

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
        return _shell_context(raw)

    def yaml_item(self, span: Span) -> tuple[Any, int, Any] | None:
        """``(sequence, index, node)`` of the YAML sequence item at ``span``."""
        if self.yaml is None:
            return None
        return self.yaml.item_at(*self.offsets(span))

    def structural(self, *spans: Span) -> bool:
        """Whether words may be inserted next to / deleted at ``spans`` (written alike, in one
        list or string)."""
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
            m = PY_STRING.match(self.raw(like))
            assert m is not None
            return f"{m['quote']}{text}{m['quote']}"
        if ctx == "json":
            return json.dumps(text)
        return text

    def _word_at(self, span: Span) -> tuple[str | None, int, int, str]:
        """How the word at ``span`` is written (:meth:`context`), where, and as what text."""
        start, end = self.offsets(span)
        return self.context(span), start, end, self.text[start:end]

    def separator(self, like: Span) -> str:
        return ", " if self.context(like) in ("element", "json") else " "

    def replace_word(self, span: Span, new: str, code: str) -> bool:
        """The word at ``span`` becomes ``new``, written the same way."""
        ctx, start, end, raw = self._word_at(span)
        if ctx == "yaml-item":
            seq, _, node = self.yaml_item(span)  # type: ignore[misc]
            assert self.yaml is not None
            self.add(start, end, self.yaml.literal(node, new, bool(seq.flow_style)), code)
        elif ctx == "element":
            m = PY_STRING.match(raw)
            assert m is not None
            self.add(start, end, f"{m['prefix']}{m['quote']}{new}{m['quote']}", code)
        elif ctx == "json":
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

    def switch_flag(self, setting: Setting, word: str, code: str) -> bool:
        """Replace a boolean flag written as one word (``--enable-prefix-caching``, ``--x=true``)."""
        if setting.value_span not in (None, setting.span):
            return False
        return self.replace_word(setting.span, word, code)

    def written_true(self, span: Span) -> bool:
        """Whether the word at ``span`` is a true value (``true``, ``yes``, ``on``, ``1``)."""
        return self.raw(span).strip("'\"").lower() in TRUE_WORDS

    def drop_true_value(self, span: Span, spelling: str, code: str) -> bool:
        """``--switch=true`` (yes, on, 1) at ``span`` -> the bare switch ``spelling``; false-ish
        values are left to the user."""
        if self.raw(span).strip("'\"").partition("=")[2].lower() not in TRUE_WORDS:
            return False
        return self.replace_word(span, spelling, code)

    def delete_true_word(self, span: Span, code: str) -> bool:
        """A stray ``true`` (yes, on, 1) after a switch: deleted; false-ish words are left."""
        return self.written_true(span) and self.delete_words([span], code)

    def insert_words_after(self, span: Span, words: Sequence[str], code: str) -> bool:
        """New words after the word at ``span``, written like it."""
        return self._insert_words(span, words, code, before=False)

    def insert_words_before(self, span: Span, words: Sequence[str], code: str) -> bool:
        """New words before the word at ``span``, written like it."""
        return self._insert_words(span, words, code, before=True)

    def _insert_words(self, span: Span, words: Sequence[str], code: str, *, before: bool) -> bool:
        if not words or not self.structural(span):
            return False
        if self.context(span) == "yaml-item":
            return self.insert_items(span, words, code, before=before)
        sep = self.separator(span)
        start, end = self.offsets(span)
        if before:
            self.add(start, start, "".join(self.literal(span, w) + sep for w in words), code)
        else:
            self.add(end, end, "".join(sep + self.literal(span, w) for w in words), code)
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

    def delete_option(self, setting: Setting, code: str) -> bool:
        """Delete an option with its value (``--x v`` or ``--x=v``)."""
        spans = [setting.span]
        if setting.value_span is not None and setting.value_span != setting.span:
            spans.append(setting.value_span)
        return self.delete_words(spans, code)

    def fix_config_equals(self, span: Span) -> None:
        """RSM101: ``--config=F`` -> ``--config F`` (two items in a list), as written."""
        ctx, start, end, raw = self._word_at(span)
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
            m = PY_STRING.match(raw)
            assert m is not None
            body = m["body"]
            if body.startswith("--config=") and len(body) > len("--config="):
                q, p = m["quote"], m["prefix"]
                self.add(start, end, f"{p}{q}--config{q}, {p}{q}{body[len('--config='):]}{q}", "RSM101")
        elif ctx == "json":
            value = json.loads(raw)
            if value.startswith("--config=") and len(value) > len("--config="):
                self.add(start, end, f'"--config", {json.dumps(value[len("--config="):])}', "RSM101")


def _shell_context(raw: str) -> str | None:
    """``plain`` (a bare word), ``quoted`` (one quoted word without specials) or None."""
    if _PLAIN.fullmatch(raw):
        return "plain"
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and _PLAIN.fullmatch(raw[1:-1]):
        return "quoted"
    return None
