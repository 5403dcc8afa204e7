"""One structured document read once: its commands, its keyword launches, the documents in its strings.

A YAML, TOML or JSON text is parsed into placed nodes once (:mod:`.nodes`), and each reader
takes what is its own, in this order: the blocks a framework forwards to an engine
(:mod:`.forwarded`), the places the readers know and then every string by its content
(:mod:`.walk`, :mod:`.content`), Ray Serve LLM configs (:mod:`.ray_serve`), and the documents
written inside strings (:mod:`.embedded`), which the caller lints as their own kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ...model import Command, Launch, Span
from ...unchecked import frontend_failed
from .embedded import embedded_documents
from .forwarded import forwarded_in_document
from .nodes import Doc, documents, node_line
from .ray_serve import ray_launches_in_document
from .walk import commands_in_document


@dataclass
class Reading:
    """What one structured text holds."""

    #: commands, for the recogniser to read (:func:`flake8_replayssm.recognise.launch_from_command`)
    commands: list[Command] = field(default_factory=list)
    #: keyword launches (Ray Serve ``engine_kwargs``, a framework's keywords block)
    launches: list[Launch] = field(default_factory=list)
    #: ``(kind, text, place)`` of the documents written in its strings
    embedded: list[tuple[str, str, Callable[[Span], Span], str]] = field(default_factory=list)


def read_document(text: str, kind: str = "yaml", *, path: str | None = None,
                  base_dir: str | None = None) -> Reading:
    """Everything a YAML, TOML or JSON text says to launch (nothing when it does not parse:
    lint.py reports why)."""
    reading = Reading()
    parsed = documents(text, kind)
    if parsed is None:
        return reading
    masked, docs = parsed
    doc = Doc(masked, base_dir, text)
    for root in docs:
        try:
            _read_root(root, doc, path, reading, "engine_kwargs" in masked)
        except Exception as exc:  # this document is not checked; the others are
            frontend_failed(node_line(root), kind.upper(), exc)
    reading.embedded = embedded_documents(docs, doc)
    return reading


def _read_root(root: Any, doc: Doc, path: str | None, reading: Reading, ray: bool) -> None:
    if root is None:
        return
    launches, commands = forwarded_in_document(root, doc, path)
    reading.launches += launches
    reading.commands += commands + commands_in_document(root, doc)
    if ray:
        reading.launches += ray_launches_in_document(root, doc)


def commands_in_yaml(text: str, *, path: str | None = None, base_dir: str | None = None) -> list[Command]:
    """The commands a YAML text starts (a manifest written in a shell here-document, say)."""
    return read_document(text, "yaml", path=path, base_dir=base_dir).commands
