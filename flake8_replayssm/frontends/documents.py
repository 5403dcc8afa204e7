"""Readers of documents written inside other documents, looked up by kind when one is met.

A shell here-document may hold a Kubernetes manifest (``cat <<EOF | kubectl apply -f -``), and
a manifest holds shell command strings: the shell and YAML readers need each other at run
time. Neither imports the other: the shell reader asks here for the reader of the kind it
found, and the reader's module is imported then (as a plug-in named by an entry point is),
so the import graph of the frontends stays a tree and a run that meets no embedded document
never loads another reader.
"""

from __future__ import annotations

import importlib
from typing import Callable

from ..model import Command

#: kind -> (module, function): ``function(text, base_dir=...)`` returns the document's commands,
#: each placed in the document's own text (the caller moves them to where it is written)
_READERS: dict[str, tuple[str, str]] = {
    "yaml": ("flake8_replayssm.frontends.structured", "commands_in_yaml"),
    "systemd": ("flake8_replayssm.frontends.systemd", "commands_in_unit"),
}
#: files a script may write whose commands run elsewhere (a unit a service manager starts)
_WRITTEN_KINDS = {".service": "systemd"}


def kind_of_written_file(path: str) -> str | None:
    """The kind of a file a script writes (``cat > /etc/systemd/system/llm.service <<EOF``) whose
    commands are launches of their own, or None."""
    return next((kind for suffix, kind in _WRITTEN_KINDS.items() if path.lower().endswith(suffix)), None)


def reader(kind: str) -> Callable[..., list[Command]] | None:
    """The reader of documents of ``kind``, or None for a kind no frontend reads."""
    where = _READERS.get(kind)
    if where is None:
        return None
    module, function = where
    found: Callable[..., list[Command]] = getattr(importlib.import_module(module), function)
    return found


#: kinds whose commands are read as shell: an unknown part of a here-document (``${model_id}``
#: expanded by the script) is an unknown variable there, not a reason to leave the text unread
_SHELL_READ = frozenset({"systemd"})


def reads_unknown_parts(kind: str) -> bool:
    return kind in _SHELL_READ
