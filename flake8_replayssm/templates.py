"""Template files, read as the kind they render to, their template syntax masked in place.

A ``values.yaml.j2``, a ``user_data.sh.tftpl`` or a ``deploy.yaml.template`` renders to YAML or
shell: it is read as that kind (:func:`template_base` names it), with the template's own
syntax masked so that the kind's reader can parse it and every position stays where it was
written (one character for one, so findings, ``# noqa`` and fixes land on the file as it is):

- a line that is only control (``{% if spec %}``, ``{%- endfor %}``, ``%{ if x ~}``,
  ``{{- if .Values.x }}``, ``{# a comment #}``) renders to nothing and becomes blank; after a
  line that a backslash continues (a shell command written over several lines with an
  option under a condition) it becomes a continuation itself, so the command goes on as
  the rendered one does;
- control inside a line becomes spaces (``--flag {% if x %}--other{% endif %}``: both are read);
- an expression (``{{ model }}``, ``{{ .Values.tag }}``) becomes one word of the same length
  that :mod:`flake8_replayssm.argv` reads as a placeholder: an unknown value (DESIGN.md);
  Terraform's ``${var}`` is left alone: every kind it renders to reads it as an unknown variable.

Both branches of a condition are read, as Helm templates are (``yaml_nodes.mask_templates``).
"""

from __future__ import annotations

import posixpath
import re

from .yaml_templates import closed_spans, silent_line, stand_in

#: suffixes of template files, each read as the kind of the name without it
TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2", ".tftpl", ".tpl", ".tmpl", ".template")

#: what opens and closes the template syntax that writes nothing itself: Jinja statements and
#: comments, Terraform directives; a ``{{ }}`` action is an expression unless it is Go's control
_CONTROL = (("{%", "%}"), ("{#", "#}"), ("%{", "}"))
_GO_CONTROL = re.compile(r"{{-?\s*(?:if|else|end|with|range|define|block|break|continue|/\*|\$\w+\s*:?=)\b")


def template_base(path: str) -> str | None:
    """``path`` without its template suffix (``deploy.yaml.j2`` -> ``deploy.yaml``), or None for
    a path that is no template."""
    if not path.lower().endswith(TEMPLATE_SUFFIXES):
        return None  # most paths: one test
    name = posixpath.basename(path.replace("\\", "/"))
    lower = name.lower()
    for suffix in TEMPLATE_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            return path[: len(path) - len(suffix)]
    return None


def _masked_line(line: str) -> tuple[str, bool]:
    """One line with its template syntax masked, and whether it was only control."""
    spans = [(a, b, True) for opener, closer in _CONTROL for a, b in closed_spans(line, opener, closer, one_line=False)]
    spans += [(a, b, bool(_GO_CONTROL.match(line, a))) for a, b in closed_spans(line, "{{", one_line=False)]
    if not spans:
        return line, False
    parts, at, written = [], 0, False
    for start, end, control in sorted(spans):
        if start < at:  # inside one taken already
            continue
        parts += [line[at:start], " " * (end - start) if control else stand_in(end - start)
                  if end - start >= 8 else line[start:end]]
        written = written or not control
        at = end
    rest = line[at:]
    return "".join(parts) + rest, not written and not "".join(parts[::2]).strip() and not rest.strip()


def mask_template_syntax(text: str) -> str:
    """``text`` with its template syntax masked as the module docstring says."""
    if "{" not in text:
        return text
    out: list[str] = []
    continued = False
    for line in text.split("\n"):
        masked, only_control = _masked_line(line)
        if only_control and line.strip():
            masked = silent_line(line, continued)
        out.append(masked)
        body = masked.rstrip()
        continued = body.endswith("\\") or (continued and not body)
    return "\n".join(out)
