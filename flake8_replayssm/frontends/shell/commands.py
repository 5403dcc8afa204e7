"""Simple commands: their words, their environment, and what they launch where.

:class:`CommandReader` turns one ``command`` node into argv :class:`~flake8_replayssm.model.Word`
objects (prefix assignments go to the command's environment, not its words), applies what
the shell's own builtins do (``source``, ``eval``, ``unset``, ``set -a``, ``read``...),
and keeps the commands that mention an engine.  :class:`NestedShells` finds the strings a
command runs as shell (``bash -c STRING``, ``eval STRING``, ``ssh HOST CMD``, a
here-document fed to ``bash``) and has them read as new texts, with the environment the
new process sees there (``docker run -e``, ``srun --export``:
:func:`~flake8_replayssm.recognise.elsewhere`).  ``#SBATCH --export`` lines are here too:
they set the environment the whole batch script runs with.

This is the one module of the shell frontend that asks anything outside it about launches
(the engines' program names, wrappers, container runtimes, where a command runs).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from ... import engines
from ...containers import CONTAINER_RUNTIMES, read_container
from ...model import Command, Word
from ...recognise import Elsewhere, elsewhere
from ...wrappers import wrappers
from .assignments import Assignments
from .context import ReadContext
from .heredocs import HereDocuments
from .located import Located, join
from .parsing import ParsedSource
from .scope import Scope
from .values import MAX_VALUE_ITEMS, Field, Var
from .words import WordExpander, word_groups

#: only commands whose words mention one of these are returned
INTERESTING = ("replayssm", *sorted(engines.programs()))
#: programs that print, search or manage: their arguments are never a launch
_NON_LAUNCH = frozenset({
    "echo", "printf", "cat", "tee", "grep", "egrep", "fgrep", "rg", "sed", "awk", "gawk",
    "logger", "test", "[", "[[", "true", "false", ":", "pip", "pip3", "pipx", "git", "curl",
    "wget", "kill", "pkill", "pgrep", "killall", "ps", "ls", "mkdir", "rm", "cp", "mv", "ln",
    "chmod", "chown", "touch", "sleep", "cd", "pushd", "popd", "tail", "head", "less", "more",
    "which", "type", "hash", "whereis", "wc", "sort", "uniq", "cut", "tr", "jq", "yq", "read",
    "alias", "trap", "local", "return", "exit", "shift", "wait", "huggingface-cli", "hf",
    "nvidia-smi", "find", "du", "df", "tar", "unzip", "basename", "dirname", "realpath",
    "readlink", "date", "apt", "apt-get", "yum", "dnf", "brew", "npm", "scancel", "squeue",
    "scontrol", "sinfo", "lsof", "netstat", "ss", "nc", "cmp", "diff", "log", "info", "warn",
    "die", "fail", "error", "debug", "msg", "say", "banner",
})
#: builtins that change what the shell knows about its variables
_STATE_BUILTINS = frozenset({"source", ".", "eval", "unset", "read", "mapfile", "readarray",
                             "getopts", "let", "printf", "set"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "busybox"})
#: programs that run the rest of their argv (so `X bash -c STRING` runs STRING), besides the
#: wrappers of data/launchers.toml and the container runtimes of containers.py
_PASS_THROUGH = frozenset({
    "screen", "script", "systemd-run", "ray", "sbatch", "su", "nerdctl",
})
#: `source FILE` that only sets up tools (never the launch's variables)
_BENIGN_SOURCE = re.compile(
    r"activate|bashrc|bash_profile|(^|/)\.?profile|conda\.sh|mamba\.sh|setvars|modules?\.sh|"
    r"lmod|spack|cargo/env|nvm\.sh|/etc/profile|init\.sh|setup_env\.sh$", re.IGNORECASE)
#: `eval "$(...)"` that only sets up tools
_BENIGN_EVAL = re.compile(r"conda|mamba|pyenv|rbenv|direnv|ssh-agent|brew|module|lmod|spack|"
                          r"hook|starship|zoxide|keychain", re.IGNORECASE)
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
#: function calls read inside function calls, at most
_MAX_CALL_DEPTH = 3
#: how the words of a command past MAX_VALUE_ITEMS are named (in the assumption note)
_CUT_WORDS = "the rest of the command"
#: `kubectl apply -f -`: a manifest read from stdin
_APPLIES_STDIN = re.compile(r"\b(?:kubectl|oc)\s+(?:apply|create|replace)\b.*-f\s+-")
_SBATCH_EXPORT = re.compile(r"#SBATCH[ \t]+--export(?:=|[ \t]+)(\S+)")
_DIRECTIVE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Wrapping:
    """What surrounds every command of one text: the words in front of each (``nohup``,
    ``srun ...`` in front of a ``bash -c``), the vLLM image they run in (its tag is the
    release), and how many texts deep it was read (``bash -c "bash -c '...'"``)."""

    prefix: tuple[Word, ...] = ()
    image: str | None = None
    nested: int = 0


#: reads a text as shell: (context, text, scope, wrapping) -> None (:func:`.script.read_text`)
TextReader = Callable[[ReadContext, Located, Scope, Wrapping], None]
#: reads a function's body again for one call with these arguments (the walk's)
FunctionCaller = Callable[[str, list[Field]], None]


def mentions_an_engine(text: str) -> bool:
    lower = text.lower()
    return any(s in lower for s in INTERESTING)


def sbatch_exports(text: str) -> dict[str, Var]:
    """``#SBATCH --export=ALL,V=0``: variables the whole batch script runs with.

    sbatch reads its ``#SBATCH`` lines up to the first command and does not expand
    them; ``NAME`` alone (or a value with ``$``) is the submitter's value, unknown here."""
    found: dict[str, Var] = {}
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        m = _SBATCH_EXPORT.match(stripped)
        if m is not None:
            at = offset + line.index(m.group(1))
            pos = 0
            for item in m.group(1).split(","):
                name, eq, value = item.partition("=")
                if _DIRECTIVE_NAME.fullmatch(name) and name not in ("ALL", "NONE", "NIL"):
                    start = at + pos + len(name) + 1
                    loc = (start, start + len(value)) if eq else (at + pos, at + pos + len(name))
                    known = eq and "$" not in value
                    found[name] = Var("scalar" if known else "unknown", Located.exact(value, start) if known else None,
                                      loc, exported=True, env=True)
                pos += len(item) + 1
        offset += len(line)
    return found


def _passes_through(program: str) -> bool:
    """Whether ``program ... bash -c STRING`` runs STRING (a wrapper or a container runtime)."""
    return program in _PASS_THROUGH or program in CONTAINER_RUNTIMES or program in wrappers()


class NestedShells:
    """The strings the commands of one text run as shell, and the new texts they are read as."""

    def __init__(self, raw: Callable[[Any], str], scope: Scope, ctx: ReadContext, wrapping: Wrapping,
                 read_text: TextReader) -> None:
        self.raw = raw
        self.scope = scope
        self.ctx = ctx
        self.wrapping = wrapping
        self.read_text = read_text

    def shell_string(self, words: list[Word], fields: list[Field]) -> tuple[int, Located] | None:
        """``[wrappers] bash [-opts] -c STRING``: (index of the shell, STRING)."""
        texts = [w.text for w in words]
        first = posixpath.basename(texts[0] or "")
        passes = _passes_through(first)
        if first in CONTAINER_RUNTIMES:  # `docker run --entrypoint bash IMAGE -c STRING`
            box = read_container(words, 0, {})
            if box is not None and box.entrypoint is not None \
                    and posixpath.basename(box.entrypoint.text or "") in _SHELLS:
                at = len(words) - len(box.args)
                for j in range(at, len(texts) - 1):
                    o = texts[j] or ""
                    if not o.startswith("-"):
                        break
                    if not o.startswith("--") and "c" in o[1:] and fields[j + 1].shadow is not None:
                        return at, fields[j + 1].shadow
                return None
        for i, t in enumerate(texts):
            if t is None:
                return None
            base = posixpath.basename(t)
            if base in _SHELLS and (i == 0 or passes):
                j = i + 1
                if base == "busybox" and j < len(texts) and texts[j] in ("sh", "ash"):
                    j += 1
                while j < len(texts):
                    o = texts[j]
                    if o is None or not o[:1] in ("-", "+") or o in ("-", "--"):
                        return None
                    if o in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                        j += 2
                        continue
                    if not o.startswith("--") and "c" in o[1:]:
                        if j + 1 < len(fields) and fields[j + 1].shadow is not None:
                            return i, fields[j + 1].shadow
                        return None
                    j += 1
                return None
            if i > 0 and not passes:
                return None
        return None

    def remote_string(self, words: list[Word], fields: list[Field]) -> tuple[int, Located] | None:
        """``ssh [options] HOST COMMAND...``: the remote shell runs the words joined by blanks."""
        if posixpath.basename(words[0].text or "") != "ssh":
            return None
        values = wrappers()["ssh"].values
        j = 1
        while j < len(words) and (words[j].text or "").startswith("-"):
            j += 2 if words[j].text in values else 1
        rest = fields[j + 1:]
        if not rest or any(f.shadow is None or f.splat for f in rest):
            return None
        return j + 1, join([f.shadow for f in rest if f.shadow is not None])

    def reads_stdin(self, pipeline: Any) -> bool:
        """``| bash`` / ``| sh -s``: a shell that runs what it reads."""
        cmds = [c for c in pipeline.named_children if c.type == "command"]
        if len(cmds) != 1:
            return False
        words = self.raw(cmds[0]).split()
        return bool(words) and posixpath.basename(words[0]) in _SHELLS and \
            all(w.startswith("-") and "c" not in w for w in words[1:])

    def run(self, string: Located, prefix: Sequence[Word], away: Elsewhere | None) -> None:
        """A new shell process reads ``string``: it sees the exported variables only.

        ``away``: it runs in a container or on another host, with only the
        environment given there (``docker run -e``) or one the file does not show, or
        behind a wrapper that changed the environment (``srun --export=ALL,V=0``).
        """
        base: dict[str, Var] = {} if away is not None and not away.inherits else self.exported_variables()
        if away is not None and away.inherits:  # a wrapper changed some variables (`env -u V`, `-x V=0`)
            for name in [k for k, v in base.items() if (v.env or engines.launch_variable(k)) and k not in away.env]:
                del base[name]
        if away is not None:
            for name, word in away.env.items():
                value = Located.unplaced(word.text) if word.text is not None else None
                base[name] = Var("scalar" if word.text is not None else "unknown", value, None,
                                 exported=True, env=True, span=word.span)
        open_ended = self.scope.open_ended if away is None else \
            away.open_ended or (away.inherits and self.scope.open_ended)
        scope = Scope(base, open_ended)
        scope.env_names = {k for k, v in base.items() if v.env}
        wrapping = self.wrapping
        image = away.image if away is not None and not away.inherits else wrapping.image
        self.read_text(self.ctx, string, scope,
                       Wrapping((*wrapping.prefix, *prefix) if away is None else (), image, wrapping.nested + 1))

    def exported_variables(self) -> dict[str, Var]:
        """What a new shell process started here sees: the exported variables."""
        base: dict[str, Var] = {}
        for name, v in self.scope.visible().items():
            if v.kind == "unset":
                continue
            in_env = v.env or name in self.scope.env_names
            if in_env or v.exported is True:
                base[name] = v.with_(env=in_env, exported=True, local=False, gen=0)
            elif v.exported is None:
                base[name] = v.with_(kind="unknown", value=None, env=in_env, exported=None,
                                     local=False, gen=0)
        return base

    def evaluate(self, string: Located) -> None:
        """``eval STRING``: the same shell reads ``string``."""
        wrapping = self.wrapping
        self.read_text(self.ctx, string, self.scope, replace(wrapping, nested=wrapping.nested + 1))


class CommandReader:
    """Reads the simple commands of one parsed text."""

    def __init__(self, source: ParsedSource, scope: Scope, ctx: ReadContext, *, words: WordExpander,
                 assignments: Assignments, wrapping: Wrapping, read_text: TextReader) -> None:
        self.source = source
        self.scope = scope
        self.ctx = ctx
        self.words = words
        self.assignments = assignments
        self.heredocs = HereDocuments(source, ctx, words)
        self.shells = NestedShells(source.raw, scope, ctx, wrapping, read_text)
        #: reads a function's body again for one call (the walk's; set when the walk is wired)
        self.call_function: FunctionCaller = _no_call

    def command(self, n: Any, heredoc: Any = None) -> None:
        """A ``command`` node (``heredoc``: the here-document redirected into it)."""
        if n.has_error or not self._worth_reading(n, heredoc):
            return
        ctx = self.ctx
        mark = len(ctx.commands)

        def read() -> list[Command]:
            del ctx.commands[mark:]
            self._command(n, heredoc)
            return ctx.commands[mark:]

        runs = ctx.choices.each(read)
        del ctx.commands[mark:]
        if len(runs) == 1:
            ctx.commands.extend(runs[0])
            return
        # one written command read with each combination of values: the commands at the same
        # place of each reading are one launch (a code is reported only if all of them fail)
        group = next(ctx.groups)
        for found in runs:
            ctx.commands.extend(replace(c, group=group * 1000 + k) for k, c in enumerate(found))

    def command_with_heredoc(self, n: Any, body: Any, heredoc: Any) -> None:
        """``body`` (a command) of the redirected statement ``n`` reads ``heredoc``: the command,
        then the file it may write (``cat > cfg.yaml <<EOF``)."""
        self.command(body, heredoc=heredoc)
        self.heredocs.written_file(n, body, heredoc)

    def heredoc_piped(self, body: Any, heredoc: Any, pipeline: Any) -> bool:
        """``cat <<EOF | bash`` (a script) / ``cat <<EOF | kubectl apply -f -`` (a manifest):
        read the here-document as what the pipeline after it reads; False if it is neither."""
        raw = self.source.raw
        if pipeline.type != "pipeline" or body is None or raw(body).strip() != "cat":
            return False
        if body.type == "command" and self.shells.reads_stdin(pipeline):
            text = self.heredocs.text(heredoc)
            if text is not None:
                self.shells.run(text, [], None)
            return True
        if _APPLIES_STDIN.search(raw(pipeline)):
            text = self.heredocs.text(heredoc)
            if text is not None:
                self.ctx.commands += self.heredocs.located_documents(text, "yaml")
            return True
        return False

    def _command(self, n: Any, heredoc: Any = None) -> None:
        prefix_nodes: list[Any] = []
        arg_nodes: list[Any] = []
        name_seen = False
        for k, c in enumerate(n.children):
            field = n.field_name_for_child(k)
            if c.type == "comment" and not name_seen:
                # `A=1 \` / `# B=2 \` / `vllm ...`: bash ends the command at the comment, so
                # the assignments before it only set shell variables (tree-sitter glues them)
                for a in prefix_nodes:
                    self.assignments.assign(a)
                prefix_nodes = []
                continue
            if c.type in _REDIRECTS or c.type == "comment":
                continue
            if field == "name" or c.type == "command_name":
                name_seen = True
                arg_nodes.extend(x for x in c.children if x.type != "comment")
                continue
            if not name_seen:
                if c.type == "variable_assignment":
                    prefix_nodes.append(c)
                continue
            if field == "argument" or c.is_named or c.type == "$":
                arg_nodes.append(c)
        if not name_seen:
            for c in prefix_nodes:
                self.assignments.assign(c)
            return
        fields: list[Field] = []
        groups, cut = self._bounded_words(word_groups(arg_nodes))
        for group in groups:
            fields.extend(self.words.expand(group))
        if cut is not None:
            fields.append(Field(None, True, cut, label=_CUT_WORDS))
        words = [self.word(f) for f in fields]
        # prefix assignments: in the command's environment (each sees the ones before it),
        # not in its words and not in the shell after it
        scope = self.scope
        prefix_env: dict[str, Word] = {}
        scope.push("prefix")
        try:
            for c in prefix_nodes:
                name_node = c.child_by_field_name("name")
                if name_node is None or name_node.type != "variable_name":
                    continue
                name = self.source.raw(name_node)
                before = scope.lookup(name)
                kind, value, loc, _ = self.assignments.value_of(c)
                scope.set(name, Var(kind, value, loc, exported=True, env=bool(before and before.env)))
                if engines.launch_variable(name) or name in scope.env_names or (before is not None and before.env):
                    prefix_env[name] = Word(value.text if kind == "scalar" else None, self.ctx.fmap.span(*loc))
        finally:
            prefix_frame = scope.pop()
        self.after_words(n, words, fields, prefix_env, prefix_frame, heredoc)

    def _bounded_words(self, groups: list[list[Any]]) -> tuple[list[list[Any]], tuple[int, int] | None]:
        """A command's words up to the bound a variable's value has (a hostile one-line command
        of 500,000 words), and where the rest is: it is reported not followed and read as one
        unseen word, like extra arguments."""
        if len(groups) <= MAX_VALUE_ITEMS:
            return groups, None
        rest = groups[MAX_VALUE_ITEMS:]
        c = self.source.c
        cut = self.source.loc(c(rest[0][0].start_byte), c(rest[-1][-1].end_byte))
        self.ctx.bounded(cut, f"a command of more than {MAX_VALUE_ITEMS} words")
        return groups[:MAX_VALUE_ITEMS], cut

    def _worth_reading(self, n: Any, heredoc: Any) -> bool:
        """Cheap test: can this command be a launch or change what we know?"""
        raw = self.source.raw(n)
        if mentions_an_engine(raw):
            return True
        if heredoc is not None and mentions_an_engine(self.source.raw(heredoc)):
            return True
        name = n.child_by_field_name("name")
        first = self.source.raw(name) if name is not None else ""
        if first in _STATE_BUILTINS or first == "export" or first in self.scope.functions \
                or first in self.scope.aliases:
            return True
        if "$" not in raw and "`" not in raw:
            return not first  # bare assignments
        return first not in _NON_LAUNCH

    def word(self, f: Field) -> Word:
        span = self.ctx.fmap.span(*(f.loc if f.loc is not None else self.source.loc(0, 0)))
        if f.l is not None:
            return Word(f.l.text, span, False)
        return Word(f.partial, span, f.splat, f.label)

    def after_words(self, n: Any, words: list[Word], fields: list[Field], prefix_env: dict[str, Word],
                    prefix_frame: dict[str, Var], heredoc: Any) -> None:
        """What a command whose words are known does: a builtin changes the variables, a shell
        string is read as a new text, and a command that mentions an engine is kept."""
        if not words:
            return
        program = words[0].text
        base = posixpath.basename(program) if program else ""
        scope = self.scope
        texts = [w.text for w in words]
        if base in ("source", ".") and len(words) > 1:
            target = texts[1]
            if target is None or not _BENIGN_SOURCE.search(target):
                scope.mark_barrier()
            return
        if base == "eval":
            args = fields[1:]
            if args and all(f.shadow is not None for f in args):
                self.shells.evaluate(join([f.shadow for f in args if f.shadow is not None]))
            if any(f.l is None for f in args) and not _BENIGN_EVAL.search(self.source.raw(n)):
                scope.mark_barrier()   # an unknown string may assign anything
            return
        if base == "unset":
            self.assignments.unset([t for t in texts[1:] if t is not None])
            return
        if base == "alias":
            self.define_aliases(fields[1:])
            return
        if program in scope.aliases and fields[0].shadow is not None:
            # an alias is replaced by its text, then read again with the command's own words after it
            rest = [f.shadow for f in fields[1:] if f.shadow is not None]
            if len(rest) == len(fields) - 1:
                self.shells.evaluate(join([scope.aliases[program], *rest]))
                return
        if program in scope.bodies and len(scope.args) < _MAX_CALL_DEPTH:
            self.call_function(program, fields[1:])
            return
        if program in scope.functions:
            # a call of a function defined above: what its body assigns is now set
            for name, var in scope.functions[program].items():
                scope.set(name, var.with_())
        if base in ("read", "mapfile", "readarray", "getopts", "let", "printf"):
            self.assignments.builtin_assigns(base, texts, n)
            return
        if base == "set":
            for t in texts[1:]:
                if t and t[0] in "-+" and not t.startswith("--") and "a" in t[1:]:
                    scope.allexport = t[0] == "-"
            for k, t in enumerate(texts[:-1]):
                if t in ("-o", "+o") and texts[k + 1] == "allexport":
                    scope.allexport = t == "-o"
            return
        inner = self.shells.shell_string(words, fields)
        if inner is None and heredoc is not None and base in _SHELLS \
                and all((t or "-").startswith("-") for t in texts[1:]):
            body = self.heredocs.text(heredoc)
            if body is not None:
                inner = (0, body)
        if inner is None:
            inner = self.shells.remote_string(words, fields)
        if inner is not None:
            k, string = inner
            scope.frames.append(("prefix", prefix_frame))
            try:
                host_env = self.environment(n)
                host_env.update(prefix_env)
                away = elsewhere(words[:k], host_env)
                self.shells.run(string, words[:k] if away is None else [], away)
            finally:
                scope.frames.pop()
            return
        if base in _NON_LAUNCH or (base == "command" and len(texts) > 1 and texts[1] in ("-v", "-V")):
            return
        if program is not None and program.startswith("-"):
            return  # flags cut off from their command (`# --flag \` inside a continuation)
        if not any(t is not None and mentions_an_engine(t) for t in texts):
            return
        scope.frames.append(("prefix", prefix_frame))
        try:
            env = self.environment(n)
        finally:
            scope.frames.pop()
        env.update(prefix_env)
        ctx = self.ctx
        files = {path: (text.text, self.heredocs.placer_for(text)) for path, text in ctx.files.items()}
        wrapping = self.shells.wrapping
        ctx.commands.append(Command([*wrapping.prefix, *words], env, scope.open_ended, wrapping.image,
                                    ctx.base_dir, files=files))

    def define_aliases(self, fields: list[Field]) -> None:
        """``alias NAME='TEXT' ...``: what a later command named NAME runs (read wherever it is used:
        bash expands aliases in scripts only with ``shopt -s expand_aliases``, other shells always,
        and a README's commands are typed into an interactive shell)."""
        for f in fields:
            shadow = f.shadow
            name, eq, _ = (shadow.text if shadow is not None else "").partition("=")
            if shadow is not None and eq and name and not name.startswith("-"):
                self.scope.aliases[name] = shadow.slice(len(name) + 1, len(shadow.text))

    def environment(self, n: Any) -> dict[str, Word]:
        """The variables a command runs with that matter to a launch (an engine's, ``VLLM_*``, and the
        caller's), as words placed where their values are written."""
        env: dict[str, Word] = {}
        scope = self.scope
        span = self.ctx.fmap.span
        command_loc = self.source.node_loc(n)
        for name, v in scope.visible().items():
            if not (v.env or name in scope.env_names or engines.launch_variable(name)):
                continue
            v = self.ctx.choices.resolve(v)  # type: ignore[assignment]
            if v.kind == "unset":
                continue
            in_env = v.env or name in scope.env_names
            if not in_env and v.exported is False and v.kind == "unknown" and v.loc is None:
                continue
            if v.loc is not None:
                where = span(*v.loc)
            else:
                where = v.span if v.span is not None else span(*command_loc)
            exported = True if in_env else v.exported
            if v.kind == "scalar" and exported is True:
                env[name] = Word(v.value.text, where)
            else:
                env[name] = Word(None, where)
        return env


def _no_call(name: str, args: list[Field]) -> None:
    raise AssertionError("the command reader was not wired to a walk")
