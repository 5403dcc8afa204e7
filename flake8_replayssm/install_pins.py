"""The release a file installs before it launches: ``pip install 'vllm>=0.28,<0.34'``.

A Dockerfile ``RUN pip install vllm==${VLLM_VERSION}``, a setup script's ``uv pip install
"vllm>=0.30"``, a README's or notebook's ``pip install vllm==0.31.0`` say which release the
launches of the same file meet, more closely than the project's requirements do
(:func:`flake8_replayssm.target.candidates` puts them after an image tag and before the
project's pins).  They are read from the text, whatever its kind, and turned into the spec
forms of :mod:`.release_sets`:

- a pin or a range is itself (``==0.31.0``, ``>=0.28,<0.34``);
- ``vllm`` without a version is the newest release (``latest``): pip installs that;
- a version left to a variable is the variable's value when the file gives it one
  (``ARG VLLM_VERSION=0.31.0``, ``VLLM_VERSION=0.31.0``, ``${VLLM_VERSION:-0.31.0}``),
  and every known release (``all``) when it does not (``ARG VLLM_VERSION`` with no
  default, a variable from the environment): the build may pass any of them.

Installs from a URL, a path or a git repository name no release and are left out, as are
commented-out lines (``# pip install vllm==0.28.0``).
"""

from __future__ import annotations

import re

from .versions import is_version

#: an install command and the rest of its (logical) line
_INSTALL = re.compile(r"(?:^|[\s;&|(`'\"!])(?:uv\s+)?(?:pip3?|python3?\s+-m\s+pip)\s+install\b(?P<rest>[^\n]*)",
                      re.I)
_CONTINUED = re.compile(r"\\\r?\n")
_OPERATOR = r"(?:===|==|~=|!=|<=|>=|<|>)"
#: a variable in a version: $V, ${V}, ${V:-default}, ${V-default}, $(V) (make)
_VARIABLE = re.compile(r"\$\{(?P<braced>[A-Za-z_]\w*)(?::?-(?P<default>[^}]*))?\}|\$\((?P<make>[A-Za-z_]\w*)\)"
                       r"|\$(?P<bare>[A-Za-z_]\w*)")
#: how many install lines of one text are read (a hostile file repeats one a million times)
MAX_INSTALLS = 64


def _requirement(package: str) -> re.Pattern[str]:
    """``package``, its extras, and its version specifiers (possibly quoted, possibly a variable)."""
    return re.compile(
        rf"(?<![\w./@+-]){re.escape(package)}(?:\[[^\]\s]*\])?(?![\w.-])"
        rf"(?P<spec>\s*{_OPERATOR}\s*[^\s'\";&|\\,]+(?:\s*,\s*{_OPERATOR}\s*[^\s'\";&|\\,]+)*)?", re.I)


def _assigned(text: str, name: str) -> list[str]:
    """The values the text gives variable ``name`` (shell and make assignments, Dockerfile
    ``ARG``/``ENV``), a ``${name:-default}`` value read as its default; "" for ``ARG NAME``."""
    shell = re.compile(rf"(?m)^[ \t]*(?:(?:export|readonly|declare(?:[ \t]+-\w+)?)[ \t]+)?{re.escape(name)}"
                       r"[ \t]*(?::=|\?=|\+=|=)[ \t]*(?P<value>[^\s#;]*)")
    docker = re.compile(rf"(?im)^[ \t]*(?:ARG|ENV)[ \t]+{re.escape(name)}(?:[ \t]*=[ \t]*|[ \t]+|$)(?P<value>[^\s#;]*)")
    values = []
    for match in sorted([*shell.finditer(text), *docker.finditer(text)], key=lambda m: m.start()):
        value = match.group("value").strip("'\"")
        inner = _VARIABLE.fullmatch(value)
        if inner is not None and inner.group("default") is not None:
            value = inner.group("default").strip("'\"")
        values.append(value)
    return values


def _resolved(spec: str, text: str) -> list[str] | None:
    """``spec`` with its variables replaced by each value the text gives them; None when one
    of them is left to the environment or a build argument without a default."""
    found = _VARIABLE.search(spec)
    if found is None:
        return [spec]
    if found.group("default") is not None:
        values = [found.group("default").strip("'\"")]
    else:
        name = found.group("braced") or found.group("make") or found.group("bare")
        values = [v for v in _assigned(text, name) if v and "$" not in v]
        if not values or len(values) != len(_assigned(text, name)):
            return None
    out: list[str] = []
    for value in dict.fromkeys(values):
        rest = _resolved(spec[:found.start()] + value + spec[found.end():], text)
        if rest is None:
            return None
        out += rest
    return out


def install_pins(text: str, package: str) -> list[tuple[str, str]]:
    """(spec, where) for every install of ``package`` in ``text`` that names a release."""
    if "install" not in text or package not in text.lower():
        return []
    joined = _CONTINUED.sub(lambda m: " " * len(m.group()), text)  # one logical line, same offsets
    requirement = _requirement(package)
    out: list[tuple[str, str]] = []
    for k, match in enumerate(_INSTALL.finditer(joined)):
        if k >= MAX_INSTALLS:
            break
        line = text.count("\n", 0, match.start("rest")) + 1
        start = joined.rfind("\n", 0, match.start("rest")) + 1
        if joined[start:match.start("rest")].lstrip().startswith("#"):
            continue  # a comment (`# pip install vllm==0.28.0`, the old way) installs nothing
        for req in requirement.finditer(match.group("rest")):
            spec = re.sub(r"\s+", "", req.group("spec") or "")
            written = f"pip install {package}{spec} on line {line}"
            if not spec:
                out.append(("latest", written))
                continue
            values = _resolved(spec, text)
            if values is None:
                out.append(("all", written))
                continue
            out += [(usable, written) for value in values if (usable := _as_spec(value)) is not None]
    return list(dict.fromkeys(out))


def _as_spec(spec: str) -> str | None:
    """A requirement's specifiers in :mod:`.release_sets`' forms (``==0.31.0`` -> ``0.31.0``)."""
    from .release_sets import is_spec

    body = spec[2:] if spec.startswith("==") and not spec.startswith("===") else spec
    if is_version(body) and "*" not in body:
        return body
    return spec if is_spec(spec) else None
