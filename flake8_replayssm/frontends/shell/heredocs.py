"""Here-documents: their text, the files they write, and the documents they hold.

``cat > cfg.yaml <<EOF`` writes a file a later ``vllm serve --config cfg.yaml`` of the same
script reads (:attr:`~.context.ReadContext.files`); ``cat <<EOF | kubectl apply -f -`` is a
Kubernetes manifest (read by the YAML frontend, found through :mod:`..documents`, placed in
this file); a here-document fed to a shell is a script (the walk reads it again,
:mod:`.commands`).  A text read out of the file this way is mapped back to where its
characters are written (:meth:`placer_for`).
"""

from __future__ import annotations

import posixpath
from dataclasses import replace
from typing import Any, Callable

from ...model import Command, Span
from .. import documents
from .context import ReadContext
from .fields import FieldCollector
from .located import UNKNOWN_MARK, Located, join
from .parsing import ParsedSource
from .words import WordExpander


def placed(command: Command, place: Callable[[Span], Span]) -> Command:
    """``command`` with every span moved by ``place``."""
    return replace(command, words=[replace(w, span=place(w.span)) for w in command.words],
                   env={k: replace(w, span=place(w.span)) for k, w in command.env.items()})


class HereDocuments:
    """The here-documents of one parsed text."""

    def __init__(self, source: ParsedSource, ctx: ReadContext, words: WordExpander) -> None:
        self.source = source
        self.ctx = ctx
        self.words = words

    def text(self, heredoc: Any) -> Located | None:
        """The body of a ``heredoc_redirect`` as the command reads it (expanded unless the
        delimiter is quoted); None when it has none."""
        source = self.source
        start = next((c for c in heredoc.children if c.type == "heredoc_start"), None)
        body = next((c for c in heredoc.children if c.type == "heredoc_body"), None)
        if start is None or body is None:
            return None
        delim = source.raw(start)
        cs, ce = source.c(body.start_byte), source.c(body.end_byte)
        if any(q in delim for q in "'\"\\"):
            return source.src.slice(cs, ce)
        acc = FieldCollector(nosplit=True)
        acc.mark_quoted()
        self.words.emit_string(body, acc, mode="heredoc")
        built = acc.finish()
        return join(built[0].shadow, "") if built else None

    def written_file(self, n: Any, body: Any, heredoc: Any) -> None:
        """``cat > cfg.yaml <<EOF`` / ``cat <<EOF > cfg.yaml`` / ``tee cfg.yaml <<EOF``: the file
        a later ``vllm serve --config cfg.yaml`` of this script reads."""
        raw = self.source.raw
        words = raw(body).split()
        target = None
        if words and words[0] == "tee" and len(words) > 1:
            target = next((w for w in words[1:] if not w.startswith("-")), None)
        elif words == ["cat"]:
            for redirect in [c for c in n.named_children if c.type == "file_redirect"] + \
                    [c for c in heredoc.named_children if c.type == "file_redirect"]:
                written = raw(redirect)
                if written.startswith(">") and not written.startswith(">>"):
                    target = written.lstrip(">").strip().strip("'\"")
        text = self.text(heredoc)
        if target and text is not None and not target.startswith("/dev/"):
            self.ctx.files[posixpath.normpath(target)] = text
            kind = documents.kind_of_written_file(target)
            if kind is not None:  # a unit file: the commands it runs are launches of their own
                self.ctx.commands += self.located_documents(text, kind)

    def located_documents(self, text: Located, kind: str) -> list[Command]:
        """The commands of a document written inside the script (a here-document), placed in
        the file."""
        read = documents.reader(kind)
        if read is None or UNKNOWN_MARK in text.text and not documents.reads_unknown_parts(kind):
            return []
        place = self.placer_for(text)
        return [placed(c, place) for c in read(text.text, base_dir=self.ctx.base_dir)]

    def placer_for(self, text: Located) -> Callable[[Span], Span]:
        """Spans of ``text`` (a string read out of this file) moved to where it is written."""
        from .._common import LineIndex

        inner = LineIndex(text.text)
        fmap = self.ctx.fmap

        def place(span: Span) -> Span:
            if span.source is not None:
                return span
            a, b = inner.index(span.line, span.col), inner.index(span.end_line, span.end_col)
            found = text.locate(a, max(b, a + 1))
            if found is None:
                return span
            return fmap.span(*found)

        return place
