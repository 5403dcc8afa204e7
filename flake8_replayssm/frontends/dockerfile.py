"""Dockerfiles: the launches a ``Dockerfile`` / ``Containerfile`` starts.

Docker's own rules, followed here:

- parser directives (``# escape=``) at the top; ``\\`` (or the escape character)
  at the end of a line continues the instruction; comment lines and empty lines
  inside a continued instruction are dropped, and the pieces are joined with
  nothing in between;
- stages (``FROM image[:tag] [AS name]``): a stage ``FROM`` an earlier stage
  inherits its ``ENV``, ``ENTRYPOINT`` and ``CMD``; ``ARG`` before the first
  ``FROM`` is substituted in ``FROM``;
- ``CMD`` / ``ENTRYPOINT`` in exec form (a JSON array of strings) or shell form
  (anything else, run by ``/bin/sh -c``); a stage's own ``ENTRYPOINT`` resets
  an inherited ``CMD``; CMD is appended to an exec-form ENTRYPOINT and ignored
  by a shell-form one.  The ``vllm/vllm-openai`` image's entrypoint is
  ``vllm serve``, so a bare exec-form ``CMD`` on it is vLLM's argv.
- ``RUN`` is shell (a ``RUN vllm serve ...`` is a launch too).
"""

from __future__ import annotations

import posixpath
import re
from collections import ChainMap
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

from ..model import Command, Span, Word
from ..unchecked import frontend_failed
from ._common import (
    LineIndex,
    SHELLS,
    Tok,
    clean_image,
    image_for_command,
    is_vllm_image,
    json_string_array,
    merge_context,
    placer,
    split_words,
)
from .shell_snippets import commands_from_argv, shell_commands

_DIRECTIVE = re.compile(r"^#\s*([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(.*?)\s*$")
_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)(?=\s|$)")
_HEREDOC = re.compile(r"<<(-?)\s*([\"']?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
_DOCKER_VAR = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-+])(?P<arg>[^}]*))?\}"
    r"|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))")

#: init wrappers that run the rest of their argv (``tini --``, ``dumb-init``)
_INIT_WRAPPERS = frozenset({"tini", "tini-static", "dumb-init", "catatonit", "gosu", "su-exec"})


@dataclass
class _Instruction:
    keyword: str
    text: str  # the arguments after the keyword, continuation lines joined
    chars: list[int]  # file offset of every character of ``text``
    line: int  # 1-based line of the keyword
    keyword_span: Span
    heredocs: list[tuple[str, list[int]]] = field(default_factory=list)
    markers: list[tuple[str, list[int]]] = field(default_factory=list)


@dataclass
class _Form:
    """A CMD or ENTRYPOINT: exec form (``items``) or shell form (``script``)."""

    items: list[Tok] | None
    script: str | None
    chars: list[int] | None
    span: Span


@dataclass
class _Stage:
    image: str  # the FROM reference, ARGs substituted
    name: str | None
    vllm_image: str | None  # the vllm/vllm-openai image this stage derives from
    base_image: str | None  # the external image at the root of the chain
    env: dict[str, Word] = field(default_factory=dict)
    args: dict[str, Word] = field(default_factory=dict)
    entrypoint: _Form | None = None
    cmd: _Form | None = None
    cmd_set_here: bool = False
    posix_shell: bool = True
    #: ``env`` is still the parent stage's own dict (copied on the first ENV of this stage, so a
    #: long chain of stages does not copy every variable once per stage)
    env_shared: bool = False

    def own_env(self) -> dict[str, Word]:
        if self.env_shared:
            self.env, self.env_shared = dict(self.env), False
        return self.env


def commands_in_dockerfile(text: str, *, path: str | None = None,
                           base_dir: str | None = None) -> list[Command]:
    """The commands a Dockerfile starts (CMD/ENTRYPOINT per stage, and RUN lines)."""
    try:
        return _DockerfileReader(text, base_dir).run()
    except Exception as exc:  # never raise on any input, never stay silent
        frontend_failed(Span(1, 0, 1, 0), "Dockerfile", exc)
        return []


class _DockerfileReader:
    def __init__(self, text: str, base_dir: str | None) -> None:
        self.text = text
        self.base_dir = base_dir
        self.lines = LineIndex(text)
        self.raw_lines = text.split("\n")
        self.escape = "\\"
        self.global_args: dict[str, Word] = {}
        self.stages: list[_Stage] = []
        #: the last stage of each name (a FROM looks its parent up here, not in every stage before)
        self.named: dict[str, _Stage] = {}
        self.out: list[Command] = []

    # -- reading instructions -------------------------------------------------

    def instructions(self) -> Iterable[_Instruction]:
        lines = self.raw_lines
        starts = self.lines.starts
        i = 0
        # parser directives: only at the very top, before any other line
        while i < len(lines):
            m = _DIRECTIVE.match(lines[i].strip("\r"))
            if not m:
                break
            if m.group(1).lower() == "escape" and m.group(2) in ("`", "\\"):
                self.escape = m.group(2)
            i += 1
        esc = self.escape
        cont = re.compile(re.escape(esc) + r"[ \t]*\r?$")
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                i += 1
                continue
            m = _INSTRUCTION.match(line)
            if not m:
                i += 1
                continue
            keyword = m.group(1).upper()
            kw_line = i + 1
            kw_span = Span(kw_line, m.start(1), kw_line, m.end(1))
            text_parts: list[str] = []
            chars: list[int] = []
            first = True
            while i < len(lines):
                line = lines[i]
                base = starts[i] if i < len(starts) else self.lines.length
                if not first and (not line.strip() or line.lstrip().startswith("#")):
                    i += 1
                    continue
                begin = m.end(1) if first else 0
                c = cont.search(line)
                end = c.start() if c else len(line.rstrip("\r"))
                piece = line[begin:end]
                text_parts.append(piece)
                chars.extend(range(base + begin, base + end))
                first = False
                i += 1
                if not c:
                    break
            joined = "".join(text_parts)
            # leading whitespace after the keyword is not part of the arguments
            lead = len(joined) - len(joined.lstrip())
            instr = _Instruction(keyword, joined[lead:], chars[lead:], kw_line, kw_span)
            # BuildKit heredocs (RUN, COPY, ADD): the body lines belong to this instruction
            heredocs = _HEREDOC.finditer(instr.text) if keyword in ("RUN", "COPY", "ADD") else ()
            for hd in heredocs:
                strip_tabs, marker = hd.group(1) == "-", hd.group(3)
                body: list[str] = []
                body_chars: list[int] = []
                end_marker: tuple[str, list[int]] = ("", [])
                while i < len(lines):
                    line = lines[i].rstrip("\r")
                    check = line.lstrip("\t") if strip_tabs else line
                    base = starts[i]
                    i += 1
                    if check == marker:
                        end_marker = (line + "\n", list(range(base, base + len(line) + 1)))
                        break
                    body.append(line + "\n")
                    body_chars.extend(range(base, base + len(line) + 1))
                instr.heredocs.append(("".join(body), body_chars))
                instr.markers.append(end_marker)
            yield instr

    # -- substitution ---------------------------------------------------------

    @staticmethod
    def substitute(value: str, variables: Mapping[str, Word]) -> str | None:
        """Docker's build-time ``$VAR`` / ``${VAR:-x}`` substitution; None if unknown."""
        unknown = False

        def repl(m: re.Match[str]) -> str:
            nonlocal unknown
            name = m.group("braced") or m.group("bare")
            op, arg = m.group("op"), m.group("arg") or ""
            word = variables.get(name)
            known = word is not None and word.text is not None
            is_set = word is not None
            if op in (":-", "-"):
                if known and (word.text or op == "-"):  # type: ignore[union-attr]
                    return word.text  # type: ignore[union-attr,return-value]
                if is_set and not known:
                    unknown = True
                    return ""
                return arg
            if op in (":+", "+"):
                if known:
                    return arg if (word.text or op == "+") else ""  # type: ignore[union-attr]
                if is_set:
                    unknown = True
                return ""
            if known:
                return word.text  # type: ignore[union-attr,return-value]
            unknown = True
            return ""

        out = _DOCKER_VAR.sub(repl, value.replace("\\$", "\0"))
        if unknown:
            return None
        return out.replace("\0", "$")

    # -- instructions ---------------------------------------------------------

    def run(self) -> list[Command]:
        stage: _Stage | None = None
        for instr in self.instructions():
            kw = instr.keyword
            if kw == "FROM":
                stage = self.start_stage(instr)
                continue
            if kw == "ARG":
                self.do_arg(instr, stage)
                continue
            if stage is None:
                continue
            if kw == "ENV":
                self.do_env(instr, stage)
            elif kw == "SHELL":
                items = json_string_array(instr.text)
                if items:
                    stage.posix_shell = posixpath.basename(items[0][0]).lower() in SHELLS
            elif kw in ("CMD", "ENTRYPOINT"):
                form = self.read_form(instr)
                if kw == "CMD":
                    stage.cmd = form
                    stage.cmd_set_here = True
                else:
                    stage.entrypoint = form
                    if not stage.cmd_set_here:
                        stage.cmd = None
            elif kw == "RUN":
                self.do_run(instr, stage)
        self.emit_stage_launches()
        return self.out

    def start_stage(self, instr: _Instruction) -> _Stage:
        words = split_words(instr.text)
        texts = [w[0] for w in words if not w[0].startswith("--")]
        ref = texts[0] if texts else ""
        name = texts[2] if len(texts) >= 3 and texts[1].lower() == "as" else None
        image = self.substitute(ref, self.global_args)
        image = clean_image(ref if image is None else image)
        parent = self.named.get(image.lower())
        if parent is not None:
            stage = _Stage(image=image, name=name.lower() if name else None,
                           vllm_image=parent.vllm_image, base_image=parent.base_image,
                           env=parent.env, env_shared=True, entrypoint=parent.entrypoint, cmd=parent.cmd,
                           posix_shell=parent.posix_shell)
        else:
            vllm = image_for_command(image) if is_vllm_image(image) else None
            stage = _Stage(image=image, name=name.lower() if name else None, vllm_image=vllm,
                           base_image=image)
        self.stages.append(stage)
        if stage.name is not None:
            self.named[stage.name] = stage
        return stage

    def arg_pairs(self, instr: _Instruction) -> list[tuple[str, str | None, Span]]:
        pairs = []
        for text, idx, start, end in split_words(instr.text):
            key, eq, value = text.partition("=")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                continue
            span = self._span_of(instr.chars, start, end)
            if eq:
                # the value's own span: the characters after '='
                vstart = idx[len(key) + 1] if len(idx) > len(key) + 1 else None
                if vstart is not None:
                    span = self.lines.span(instr.chars[vstart], instr.chars[end - 1] + 1)
            pairs.append((key, value if eq else None, span))
        return pairs

    def do_arg(self, instr: _Instruction, stage: _Stage | None) -> None:
        for key, value, span in self.arg_pairs(instr):
            scope = self.global_args if stage is None else stage.args
            if value is None:
                if stage is not None and key in self.global_args:
                    scope[key] = self.global_args[key]
                elif key not in scope:
                    scope[key] = Word(None, span)  # given with --build-arg, or empty
                continue
            known = ChainMap(stage.env, stage.args) if stage else self.global_args  # a view: no copy per ARG
            # `ARG NAME=`: an empty default the builder fills in (DESIGN.md: unknown for a value)
            scope[key] = Word(self.substitute(value, known) if value else None, span)

    def do_env(self, instr: _Instruction, stage: _Stage) -> None:
        words = split_words(instr.text)
        known = ChainMap(stage.own_env(), stage.args)  # a view, updated as ENV sets: no copy per ENV
        if words and "=" not in words[0][0]:
            # legacy ``ENV KEY value with spaces``: one pair, the value is the rest
            key = words[0][0]
            rest_start = words[1][2] if len(words) > 1 else len(instr.text)
            raw_value = instr.text[rest_start:].strip()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", key):
                return
            if raw_value:
                span = self._span_of(instr.chars, rest_start, rest_start + len(raw_value))
            else:
                span = self._span_of(instr.chars, words[0][2], words[0][3])
            value = " ".join(w[0] for w in words[1:])
            stage.env[key] = Word(self.substitute(value, known), span)
            return
        for text, idx, start, end in words:
            key, eq, value = text.partition("=")
            if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", key):
                continue
            if len(idx) > len(key) + 1:
                span = self.lines.span(instr.chars[idx[len(key) + 1]], instr.chars[end - 1] + 1)
            else:
                span = self._span_of(instr.chars, start, end)
            raw = instr.text[start:end]
            # Docker substitutes unless the value was single-quoted
            sub = value if "'" in raw.partition("=")[2][:1] else self.substitute(value, known)
            # `ENV NAME=`: left for `docker run -e` to fill in, like an empty ARG default
            stage.env[key] = Word(sub if sub != "" else None, span)

    def _span_of(self, chars: list[int], start: int, end: int) -> Span:
        if not chars:
            return Span(1, 0, 1, 0)
        start = max(0, min(start, len(chars) - 1))
        end = max(start + 1, min(end, len(chars)))
        return self.lines.span(chars[start], chars[end - 1] + 1)

    def read_form(self, instr: _Instruction) -> _Form:
        span = self._span_of(instr.chars, 0, len(instr.text)) if instr.text else instr.keyword_span
        items = json_string_array(instr.text) if instr.text.lstrip().startswith("[") else None
        if items is not None:
            toks = [Tok(text, self._span_of(instr.chars, start, end),
                        [instr.chars[k] for k in idx])
                    for text, idx, start, end in items]
            return _Form(toks, None, None, span)
        script, chars = self.with_heredocs(instr)
        return _Form(None, script, chars, span)

    @staticmethod
    def with_heredocs(instr: _Instruction) -> tuple[str, list[int]]:
        if not instr.heredocs:
            return instr.text, instr.chars
        # ``RUN <<EOF`` alone: the body is the script
        if re.fullmatch(r"\s*<<-?\s*[\"']?[A-Za-z_][A-Za-z0-9_.-]*[\"']?\s*", instr.text):
            body, chars = instr.heredocs[0]
            return body, chars
        # otherwise the heredoc feeds the command: the shell reads it as a heredoc
        script = instr.text + "\n"
        chars = list(instr.chars) + [instr.chars[-1] + 1 if instr.chars else 0]
        for (body, body_chars), marker in zip(instr.heredocs, instr.markers):
            script += body + marker[0]
            chars += body_chars + marker[1]
        return script, chars

    def do_run(self, instr: _Instruction, stage: _Stage) -> None:
        text, chars = instr.text, instr.chars
        flags = _buildkit_flags_end(text)  # RUN --mount=... --network=none cmd
        if flags:
            instr = _Instruction(instr.keyword, text[flags:], chars[flags:], instr.line,
                                 instr.keyword_span, instr.heredocs, instr.markers)
        form = self.read_form(instr)
        variables = ChainMap(stage.env, stage.args)  # a RUN's shell sees ARGs and ENVs alike
        image = stage.vllm_image
        if form.items is not None:
            self.out += commands_from_argv(form.items, self.lines, env=dict(stage.env), image=image,
                                           variables=dict(variables), base_dir=self.base_dir)
            return
        if not stage.posix_shell or form.script is None:
            return
        place = placer(form.script, form.chars, self.lines, form.span)
        found = shell_commands(form.script, place, _expandable(form.script, variables), self.base_dir)
        if found:  # every variable of the stage is the commands' environment, named or not
            env = {**stage.env, **{k: v for k, v in stage.args.items() if k not in stage.env}}
            self.out += [merge_context(c, env=env, image=image, base_dir=self.base_dir) for c in found]

    # -- the launch of each stage ---------------------------------------------

    def emit_stage_launches(self) -> None:
        groups: dict[tuple[int, int], _Stage] = {}
        for stage in self.stages:
            if stage.entrypoint is None and stage.cmd is None:
                continue
            groups[(id(stage.entrypoint), id(stage.cmd))] = stage  # the last stage wins
        for stage in groups.values():
            self.out += self.stage_launch(stage)

    def stage_launch(self, stage: _Stage) -> list[Command]:
        env = dict(stage.env)
        image = stage.vllm_image
        entry, cmd = stage.entrypoint, stage.cmd
        variables = dict(stage.env)
        if entry is not None and entry.items is None:
            return self.shell_form(entry, stage, env, image)  # shell-form ENTRYPOINT ignores CMD
        if entry is None:
            if cmd is None:
                return []
            if cmd.items is None:
                return self.shell_form(cmd, stage, env, image)
            items = cmd.items
            if image is None and items and (items[0].text or "").startswith("-") \
                    and "vllm" in (stage.base_image or "").lower():
                image = "vllm/vllm-openai"  # a custom image built on vLLM's; tag unknown
            return commands_from_argv(items, self.lines, env=env, image=image,
                                      variables=variables, base_dir=self.base_dir)
        items = list(entry.items or [])
        if cmd is not None:
            if cmd.items is not None:
                items += cmd.items
            else:
                items += [Tok("/bin/sh", cmd.span), Tok("-c", cmd.span),
                          Tok(cmd.script, cmd.span, cmd.chars)]
        items = _strip_init(items, entry_len=len(entry.items or []))
        # an ENTRYPOINT replaces the image's own (`vllm serve`): the image says only which release
        return [replace(c, replaces_entrypoint=True)
                for c in commands_from_argv(items, self.lines, env=env, image=image, variables=variables,
                                            base_dir=self.base_dir)]

    def shell_form(self, form: _Form, stage: _Stage, env: dict[str, Word],
                   image: str | None) -> list[Command]:
        if form.script is None or not stage.posix_shell:
            return []
        place = placer(form.script, form.chars, self.lines, form.span)
        found = shell_commands(form.script, place, _expandable(form.script, stage.env), self.base_dir)
        return [merge_context(c, env=env, image=image, base_dir=self.base_dir) for c in found]


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: what can reach a variable its name is not written for: ``eval``, ``${!prefix*}``
_INDIRECT = re.compile(r"\beval\b|\$\{!")


def _expandable(script: str, variables: Mapping[str, Word]) -> dict[str, Word]:
    """The variables a shell ``script`` can use: those whose names it writes (expanded, assigned,
    exported, in arithmetic), and those their values name in turn; all of them when it can
    reach one indirectly (``eval``).  A RUN's shell is handed these, not every ENV and ARG of
    the stage: that made a Dockerfile of many ENVs and many RUNs quadratic."""
    if _INDIRECT.search(script):
        return dict(variables)
    found: dict[str, Word] = {}
    todo = list(dict.fromkeys(_NAME.findall(script)))  # in the order written: the same every run
    k = 0
    while k < len(todo):
        name = todo[k]
        k += 1
        if name in found or name not in variables:
            continue
        word = found[name] = variables[name]
        if word.text is not None and "$" in word.text:
            todo += _NAME.findall(word.text)
    return found


_FLAG_NAME = re.compile(r"--[A-Za-z-]+")


def _buildkit_flags_end(text: str) -> int:
    """Where the command of a ``RUN --mount=type=cache,target=/x --network=none cmd`` starts (0:
    no flags).  Each flag is ``--name`` with an optional ``=value`` (quoted, or up to the next
    blank), followed by blanks (or, after a quoted value, by the next flag).  A scan, not
    ``(\\s*--[A-Za-z-]+(=...)?)+\\s+``: ``--a--a--a...`` splits into flags in exponentially
    many ways, which that pattern tried one by one when no blank followed."""
    i, end, n = 0, 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        name = _FLAG_NAME.match(text, i)
        if name is None:
            return end
        i = name.end()
        if i < n and text[i] == "=":
            i += 1
            blank = i
            while blank < n and not text[blank].isspace():
                blank += 1
            close = text.find(text[i], i + 1) + 1 if i < n and text[i] in "\"'" else 0
            if close and (close < n and text[close].isspace() or _FLAG_NAME.match(text, close)):
                i = close  # a quoted value (it may hold blanks)
            else:
                i = blank
        if i < n and not text[i].isspace():
            continue  # the next flag right after a quoted value
        if i >= n:
            return end
        while i < n and text[i].isspace():
            i += 1
        end = i


def _strip_init(items: list[Tok], entry_len: int) -> list[Tok]:
    """Drop ``tini --`` / ``dumb-init`` / an ``entrypoint.sh`` that execs ``"$@"``."""
    if not items or items[0].text is None:
        return items
    first = posixpath.basename(items[0].text)
    if first in _INIT_WRAPPERS:
        j = 1
        while j < len(items) and (items[j].text or "").startswith("-"):
            j += 1
            if items[j - 1].text == "--":
                break
        return items[j:]
    if entry_len == 1 and len(items) > 1 and first.endswith(".sh"):
        nxt = posixpath.basename(items[1].text or "")
        if nxt == "vllm" or re.match(r"^python(\d+(\.\d+)?)?$", nxt):
            return items[1:]  # the usual ``exec "$@"`` entrypoint script
    return items
