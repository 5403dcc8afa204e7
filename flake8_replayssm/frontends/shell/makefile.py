"""Makefiles: the recipe lines of a Makefile, read as shell with make's variables expanded.

Make is not shell: a recipe line is expanded by make first (``$(VAR)``, ``$$``), then each
line runs in its own shell, with the exported make variables in its environment.  So this
module reads the Makefile's structure (assignments, rules, ``define``, conditionals,
``include``) well enough to know which variables have one value everywhere, expands each
recipe line into located shell text, and hands it to :func:`.script.read_text`.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ...model import Command
from . import script
from .commands import mentions_an_engine
from .context import ReadContext
from .located import EMPTY, UNKNOWN_MARK, FileMap, Located, Placer
from .scope import Scope
from .values import NAME, Var, caller_value, caller_vars

_MAKE_ASSIGN = re.compile(
    r"^(?P<prefix>(?:(?:override|export|private)\s+)*)(?P<name>[^\s:#=?+!$()]+)\s*"
    r"(?P<op>:::=|::=|:=|\?=|\+=|!=|=)(?P<value>.*)$")
_MAKE_RULE = re.compile(r"^(?P<targets>[^\t#=:][^=:]*?)\s*::?(?!=)(?P<rest>.*)$")
_MAKE_NAME = re.compile(r"[A-Za-z0-9_.\-]+\Z")
_MAKE_AUTOMATIC = re.compile(r"[@<^+*?%|][DF]?\Z")
_PLAIN_OPS = frozenset({"=", ":=", "::=", ":::="})


class _MakeVariable:
    """What the Makefile says about one variable: its assignments, in order."""

    __slots__ = ("values", "unknown", "exported")

    def __init__(self) -> None:
        self.values: list[tuple[str, Located, int]] = []  # (operator or "cond", value, includes before)
        self.unknown = False
        self.exported = False


class _MakefileReader:
    """The parts of a Makefile that matter here: simple variables and recipe lines."""

    def __init__(self, text: str, variables: Mapping[str, Any] | None) -> None:
        self.text = text
        self.vars: dict[str, _MakeVariable] = {}
        self.env: dict[str, str | None] = {}
        for name, value in (variables or {}).items():
            self.env[name] = caller_value(value)[0]
        self.export_all = False
        self.includes = 0      # `include` lines seen so far: an included file may set anything
        self.recipes: list[Located] = []
        self.resolved: dict[str, Located | None] = {}
        self.counter = 0

    # -- reading -------------------------------------------------------------
    def read(self) -> None:
        lines: list[tuple[int, str]] = []   # (file offset, physical line without "\n")
        off = 0
        for line in self.text.split("\n"):
            lines.append((off, line))
            off += len(line) + 1
        k, n = 0, len(lines)
        in_rule = False
        cond_depth = 0
        while k < n:
            start, line = lines[k]
            if line.startswith("\t") and in_rule:
                k = self.recipe(lines, k)
                continue
            logical = Located.exact(line, start)
            while logical.text.endswith("\\") and k + 1 < n:
                k += 1
                nstart, nline = lines[k]
                head = logical.text[:-1].rstrip()
                rest = nline.lstrip()
                logical = (logical.slice(0, len(head)) + Located.fallback(" ", nstart - 1, nstart - 1)
                           + Located.exact(rest, nstart + len(nline) - len(rest)))
            k += 1
            body = logical.text
            stripped = body.strip()
            if not stripped or stripped.startswith("#"):
                continue  # comments and blank lines do not end a recipe
            word = stripped.split(None, 1)[0]
            if word == "define":
                parts = stripped.split(None, 1)
                head = parts[1].strip() if len(parts) > 1 else ""
                name = re.split(r"\s|:?:?=|\?=|\+=|!=", head, maxsplit=1)[0]
                if name:
                    self._var(name).unknown = True
                while k < n and lines[k][1].strip() != "endef":
                    k += 1
                k += 1
                in_rule = False
                continue
            if word in ("ifeq", "ifneq", "ifdef", "ifndef"):
                cond_depth += 1
                continue
            if word == "else":
                continue
            if word == "endif":
                cond_depth = max(0, cond_depth - 1)
                continue
            if word in ("include", "-include", "sinclude"):
                self.includes += 1
                continue
            if word in ("unexport", "vpath"):
                continue
            lead = len(body) - len(body.lstrip())
            m = _MAKE_ASSIGN.match(body, lead)
            if word == "export" and m is None:
                names = stripped.split()[1:]
                if not names:
                    self.export_all = True
                for name in names:
                    self._var(name).exported = True
                continue
            if m is not None:
                self.assignment(m, logical, cond_depth > 0)
                in_rule = False
                continue
            r = _MAKE_RULE.match(body, lead)
            if r is None:
                in_rule = False
                continue
            in_rule = True
            if r.group("targets").strip() == ".EXPORT_ALL_VARIABLES":
                self.export_all = True
            rest = r.group("rest")
            target_var = _MAKE_ASSIGN.match(rest.strip())
            if target_var is not None:  # target-specific variable: not the same everywhere
                self._var(target_var.group("name")).unknown = True
                continue
            semi = rest.find(";")
            if semi >= 0:
                inline_start = r.start("rest") + semi + 1
                inline = logical.slice(inline_start, len(body))
                lead2 = len(inline.text) - len(inline.text.lstrip("@-+ \t"))
                self.add_recipe(inline.slice(lead2, len(inline.text)))

    def _var(self, name: str) -> _MakeVariable:
        v = self.vars.get(name)
        if v is None:
            v = self.vars[name] = _MakeVariable()
        return v

    def assignment(self, m: re.Match[str], logical: Located, conditional: bool) -> None:
        v = self._var(m.group("name"))
        op = m.group("op")
        if "export" in m.group("prefix").split():
            v.exported = True
        raw = m.group("value")
        lead = len(raw) - len(raw.lstrip())
        body = raw[lead:]
        hash_at = re.search(r"(?<!\\)#", body)
        if hash_at:
            body = body[:hash_at.start()]
        body = body.rstrip()
        start = m.start("value") + lead
        value = logical.slice(start, start + len(body))
        if op in ("+=", "!="):
            v.unknown = True
            return
        v.values.append(("cond" if conditional else op, value, self.includes))

    def recipe(self, lines: list[tuple[int, str]], k: int) -> int:
        """One recipe command (a tab line and its backslash continuations) -> shell text.

        Make hands backslash-newline to the shell as written, minus the next
        line's leading tab; ``@``, ``-`` and ``+`` in front are make's own."""
        start, line = lines[k]
        content = line[1:]
        lead = len(content) - len(content.lstrip("@-+ \t"))
        text = Located.exact(content[lead:], start + 1 + lead)
        k += 1
        while content.endswith("\\") and k < len(lines):
            nstart, nline = lines[k]
            cut = 1 if nline.startswith("\t") else 0
            content = nline[cut:]
            text = text + Located.exact("\n", nstart - 1) + Located.exact(content, nstart + cut)
            k += 1
        self.add_recipe(text)
        return k

    def add_recipe(self, text: Located) -> None:
        if text.text.strip():
            self.recipes.append(text)

    # -- values --------------------------------------------------------------
    def _env_value(self, name: str) -> Located | None:
        env = self.env.get(name)
        if env is None:
            return None
        return Located.unplaced(env)

    def value(self, name: str, depth: int = 0) -> Located | None:
        """The value a recipe sees for ``$(name)``; None when it is not the same everywhere."""
        if name in self.resolved:
            return self.resolved[name]
        self.resolved[name] = None  # cycle guard
        v = self.vars.get(name)
        result: Located | None = None
        if v is None or (not v.values and not v.unknown):
            result = self._env_value(name) if not self.includes else None
        elif not v.unknown:
            plain = [val for op, val, _ in v.values if op in _PLAIN_OPS]
            weak = [val for op, val, _ in v.values if op == "?="]
            cond = [val for op, val, _ in v.values if op == "cond"]
            # an included file may set the variable too, unless a plain assignment follows it
            last_plain_after_includes = any(op in _PLAIN_OPS and seen == self.includes
                                            for op, _, seen in v.values)
            chosen: Located | None = None
            if self.includes and not last_plain_after_includes:
                chosen = None
            elif cond:
                everything = [val for _, val, _ in v.values]
                if (plain or weak) and len({val.text for val in everything}) == 1:
                    chosen = everything[-1]
            elif plain:
                chosen = plain[-1]        # the last assignment wins (recipes expand late)
            elif name in self.env:
                chosen = self._env_value(name)
            elif weak:
                chosen = weak[0]          # a later ?= does nothing
            if chosen is not None:
                result = self.expand(chosen, depth + 1)
                if result is not None and UNKNOWN_MARK in result.text:
                    result = None
        self.resolved[name] = result
        return result

    def expand(self, src: Located, depth: int = 0) -> Located | None:
        """Make's expansion of ``src`` (``$$`` -> ``$``).  Unknown references become shell
        expansions that nothing assigns, so the shell side reads them as unknown."""
        text = src.text
        if "$" not in text:
            return src
        if depth > 20:
            return None
        out = EMPTY
        pos = 0
        i = text.find("$")
        while i >= 0:
            out = out + src.slice(pos, i)
            if i + 1 >= len(text):
                pos = i
                break
            c = text[i + 1]
            if c == "$":
                where = src.locate(i, i + 2)
                out = out + (Located.fallback("$", *where) if where is not None else src.slice(i + 1, i + 2))
                pos = i + 2
            elif c in "({":
                close = ")" if c == "(" else "}"
                j, level = i + 2, 1
                while j < len(text) and level:
                    if text[j] == c:
                        level += 1
                    elif text[j] == close:
                        level -= 1
                    j += 1
                if level:
                    pos = i
                    break
                out = out + self.reference(text[i + 2:j - 1], src.locate(i, j), depth)
                pos = j
            else:
                out = out + self.reference(c, src.locate(i, i + 2), depth)
                pos = i + 2
            i = text.find("$", pos)
        return out + src.slice(pos, len(text))

    def reference(self, inner: str, where: tuple[int, int] | None, depth: int) -> Located:
        fs, fe = where if where is not None else (-1, -1)
        value: Located | None = None
        if _MAKE_NAME.match(inner) and not _MAKE_AUTOMATIC.match(inner):
            value = self.value(inner, depth)
        if value is None:
            self.counter += 1
            return Located.fallback(f"${{{UNKNOWN_MARK}{self.counter}}}", fs, fe)
        if re.search(r"\s", value.text):
            return value.relocate(fs, fe)   # several words: each stays where it is written
        return Located.fallback(value.text, fs, fe) if value.text else EMPTY

    def exported(self) -> dict[str, Located | None]:
        out: dict[str, Located | None] = {}
        for name, v in self.vars.items():
            if v.exported or (self.export_all and NAME.match(name)):
                out[name] = self.value(name)
        return out


def commands_in_makefile(text: str, *, place: Placer | None = None,
                         variables: Mapping[str, Any] | None = None,
                         base_dir: str | None = None) -> list[Command]:
    """Every recipe command of a Makefile that mentions vLLM (see :func:`commands_in_shell`).

    Recipe lines (tab-indented after a ``target:`` line, or after ``target: ;``)
    are joined on trailing backslashes, ``@``/``-``/``+`` prefixes dropped, and
    ``$(VAR)``/``${VAR}`` replaced by the values of simple ``VAR = value`` /
    ``:=`` / ``?=`` assignments (unknown when conditional-only, appended,
    computed, target-specific or a function); ``$$`` is ``$``.  Each recipe line
    is its own shell, whose environment holds the exported make variables and
    ``variables``.  Words are placed where they are written in the Makefile (a
    substituted one-word value on its ``$(VAR)``).  Never raises.
    """
    ctx: ReadContext | None = None
    try:
        if not isinstance(text, str) or not script.worth_reading(text, variables):
            return []
        make = _MakefileReader(text, variables)
        make.read()
        ctx = ReadContext(FileMap(text, place), base_dir)
        exported = make.exported()
        for recipe in make.recipes:
            shell_text = make.expand(recipe)
            if shell_text is None or not mentions_an_engine(shell_text.text):
                continue
            base = caller_vars(variables)
            for name, value in exported.items():
                if value is None:
                    base[name] = Var("unknown", None, None, exported=True, env=True)
                else:
                    where = value.locate(0, len(value.text)) if value.text else None
                    base[name] = Var("scalar", value, where, exported=True, env=True)
            script.read_text(ctx, shell_text, Scope(base, False))
        return ctx.commands
    except Exception:  # a frontend never breaks a lint run
        if script.STRICT:
            raise
        return ctx.commands if ctx is not None else []
