"""Colour for text output, by the conventions terminal tools share.

``--color auto`` (the default) colours only a terminal: never a pipe, a file or a
CI log that is not a TTY.  ``NO_COLOR`` (any non-empty value, https://no-color.org)
turns ``auto`` off; ``FORCE_COLOR`` (non-empty, not ``0``) turns it on where the
output is not a terminal (a CI log that shows colours); ``NO_COLOR`` wins over
``FORCE_COLOR``.  ``--color always`` and ``--color never`` decide alone.

Colour is added around the parts of a rendered line (location, code, severity),
never inside them: the text itself is what the plain output says, already escaped,
so a file name cannot carry a terminal sequence of its own into the colours.
"""

from __future__ import annotations

import os
import re
from typing import Mapping, TextIO

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
_SEVERITY = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "note": "\x1b[1;36m"}
#: ``path:line:col: CODE severity: message`` (a notebook's location has ``cell N:`` in it)
_FINDING = re.compile(r"(?P<where>.*?:\d+:\d+): (?P<code>RSM\d{3}) (?P<severity>error|warning|note): ")


def wanted(choice: str, stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to colour what goes to ``stream`` for ``--color choice``."""
    if choice in ("always", "never"):
        return choice == "always"
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def paint(rendered: str) -> str:
    """Text output with its finding lines coloured (the location bold, the code and severity
    in the severity's colour) and the count line bold."""
    out = []
    for line in rendered.splitlines(keepends=True):
        match = _FINDING.match(line)
        if match is not None:
            tint = _SEVERITY[match["severity"]]
            line = (f"{BOLD}{match['where']}{RESET}: {tint}{match['code']}{RESET} "
                    f"{tint}{match['severity']}{RESET}: {line[match.end():]}")
        elif line.startswith(("Found ", "No findings")):
            body = line.rstrip("\n")
            line = f"{BOLD}{body}{RESET}" + line[len(body):]
        out.append(line)
    return "".join(out)
