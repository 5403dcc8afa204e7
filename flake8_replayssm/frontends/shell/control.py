"""Control flow: the walk over one parsed text's statements, in file order.

Lists, pipelines and subshells, ``&&``/``||``, ``if``/``case`` (each branch in its own frame,
merged after: a variable the branches set differently is the set of their values), loops
(``for m in a b c`` read once per listed word, else once with ``$m`` unknown), function
definitions and calls (a body read again at each call with its arguments), redirected
statements.  Simple commands (and what a here-document redirected into one is read as) go to
:class:`~.commands.CommandReader`, assignments to :class:`~.assignments.Assignments`.

Nothing here raises on a broken script: parts tree-sitter could not read (``ERROR``) are
skipped, the rest is still read, and nesting past :data:`~.context.MAX_DEPTH` is reported
as not followed.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from .assignments import Assignments
from .choices import MAX_CHOICES, MAX_COMBINATIONS
from .commands import CommandReader
from .context import MAX_DEPTH, Nesting, ReadContext
from .located import Located
from .parsing import ParsedSource
from .scope import Scope
from .values import Field, Var
from .words import WordExpander, word_groups

_LOOPS = ("for_statement", "c_style_for_statement", "select_statement", "while_statement")
_ASSIGNING = ("++", "--")
_COMPARING = ("==", "!=", "<=", ">=")


class ControlFlow:
    """Walks the statements of one parsed text."""

    def __init__(self, commands: CommandReader, nesting: Nesting) -> None:
        # the walk reads the text its command reader reads: the same source, variables and
        # context, the same word expander and assignments
        self.commands = commands
        self.source: ParsedSource = commands.source
        self.scope: Scope = commands.scope
        self.ctx: ReadContext = commands.ctx
        self.words: WordExpander = commands.words
        self.assignments: Assignments = commands.assignments
        self.nesting = nesting

    def block(self, children: Sequence[Any]) -> None:
        """Statements run one after the other in the current frame.

        A part tree-sitter could not read (``ERROR``) is skipped, and so is a
        statement on the same logical line as one (it may be cut short); the
        complete statements tree-sitter recovered inside it are kept."""
        n = len(children)
        for k, child in enumerate(children):
            if not child.is_named or child.type == "comment":
                continue
            if child.type != "ERROR":
                if k + 1 < n and children[k + 1].type == "ERROR" and self._glued(child, children[k + 1]):
                    continue
                if k > 0 and children[k - 1].type == "ERROR" and self._glued(children[k - 1], child):
                    continue
            self.stmt(child)

    def _glued(self, a: Any, b: Any) -> bool:
        c = self.source.c
        between = self.source.text[c(a.end_byte):c(b.start_byte)]
        return "\n" not in between.replace("\\\n", "") and not re.search(r"[;&|]", between)

    def stmt(self, n: Any) -> None:
        nesting = self.nesting
        if nesting.level > MAX_DEPTH:
            nesting.too_deep(n)
            return
        nesting.level += 1
        try:
            self._stmt(n)
        finally:
            nesting.level -= 1

    def _stmt(self, n: Any) -> None:
        t = n.type
        scope = self.scope
        raw = self.source.raw
        if t == "command":
            name = n.child_by_field_name("name")
            if name is not None and raw(name) in ("exit", "return"):
                scope.exited = True
            self.commands.command(n)
        elif t in ("program", "compound_statement", "do_group", "negated_command"):
            if n.children and n.children[0].type == "((":
                self.arithmetic(n)
            else:
                self.block(n.children)
        elif t == "redirected_statement":
            self.redirected(n)
        elif t == "variable_assignment":
            if not n.has_error:
                self.assignments.assign(n)
        elif t == "variable_assignments":
            for c in n.named_children:
                if c.type == "variable_assignment" and not c.has_error:
                    self.assignments.assign(c)
        elif t == "declaration_command":
            if not n.has_error:
                self.assignments.declaration(n)
        elif t == "unset_command":
            self.assignments.unset([raw(c) for c in n.named_children if c.type in ("variable_name", "word")])
        elif t == "list":
            self.and_or(n)
        elif t == "pipeline":
            for c in n.named_children:
                if c.type != "comment":
                    scope.push("sub")
                    self.stmt(c)
                    scope.pop()
        elif t == "subshell":
            scope.push("sub")
            self.block(n.children)
            scope.pop()
        elif t == "if_statement":
            self.if_statement(n)
        elif t == "case_statement":
            self.case_statement(n)
        elif t in _LOOPS:
            self.loop(n)
        elif t == "function_definition":
            self.function_definition(n)
        elif t == "ERROR":
            self.block(n.children)
        elif t in ("test_command", "heredoc_body", "comment"):
            return
        else:
            self.block(n.children)

    def arithmetic(self, n: Any) -> None:
        """``(( N = ... ))``: the variables it assigns become unknown."""
        raw = self.source.raw
        stack = list(n.named_children)
        while stack:
            c = stack.pop()
            if c.type in ("binary_expression", "postfix_expression", "unary_expression"):
                ops = [raw(x) for x in c.children if not x.is_named]
                if any(op in _ASSIGNING or (op.endswith("=") and op not in _COMPARING) for op in ops):
                    for x in c.named_children:
                        if x.type == "variable_name":
                            self.assignments.set_unknown(raw(x), x)
            stack.extend(c.named_children)

    def subshell(self, n: Any) -> None:
        """Commands inside ``$(...)`` / ``<(...)`` run in a subshell: find them."""
        self.scope.push("sub")
        try:
            self.block(n.children)
        finally:
            self.scope.pop()

    # -- conditionals --------------------------------------------------------
    def and_or(self, n: Any) -> None:
        chain: list[tuple[str, Any]] = []
        node = n
        while node.type == "list" and node.child_count >= 3:
            kids = node.children
            op = next((k for k in kids if not k.is_named), None)
            named = [k for k in kids if k.is_named and k.type != "comment"]
            if op is None or len(named) < 2:
                break
            chain.append((op.type, named[-1]))
            node = named[0]
        chain.append(("", node))
        chain.reverse()
        self.stmt(chain[0][1])
        scope = self.scope
        defaulted = _test_z(self.source.raw(chain[0][1])) if len(chain) == 2 and chain[1][0] == "&&" else None
        before = scope.lookup(defaulted) if defaulted else None
        saved: list[dict[str, Var]] = []
        scope.push("branch")
        for op, part in chain[1:]:
            if op == "||":
                saved.append(scope.pop())
                scope.push("branch")
            self.stmt(part)
        saved.append(scope.pop())
        scope.merge(saved, exhaustive=False)
        if defaulted and before is None and defaulted in saved[0]:
            scope.set(defaulted, saved[0][defaulted].with_())  # `[ -z "$M" ] && M=x`: a default

    def if_statement(self, n: Any) -> None:
        scope = self.scope
        branches: list[dict[str, Var]] = []
        exhaustive = False
        seen_then = False
        body: list[Any] = []
        for c in n.children:
            if not c.is_named:
                if c.type == "then":
                    seen_then = True
                continue
            if c.type in ("elif_clause", "else_clause"):
                continue
            if not seen_then:
                self.stmt(c)
            else:
                body.append(c)
        condition = n.child_by_field_name("condition")
        # X in `if [ -z "$X" ]; then X=...` (a default being set)
        defaulted = _test_z(self.source.raw(condition)) if condition is not None else None
        before = scope.lookup(defaulted) if defaulted else None
        branches += self.branch(body)
        for c in n.named_children:
            if c.type == "elif_clause":
                branches += self.branch(c.children)
            elif c.type == "else_clause":
                exhaustive = True
                branches += self.branch(c.children)
        scope.merge(branches, exhaustive)
        if defaulted and before is None and branches and defaulted in branches[0] and not exhaustive:
            # `if [ -z "$MODEL" ]; then MODEL=x; fi` is `MODEL=${MODEL:-x}`: the script's own default
            scope.set(defaulted, branches[0][defaulted].with_())

    def branch(self, nodes: Sequence[Any]) -> list[dict[str, Var]]:
        """Read one branch of an ``if``/``case``: its frame, or nothing if it ends the script
        (``exit``, ``return``): then nothing it sets is seen after the statement."""
        scope = self.scope
        scope.exited = False
        scope.push("branch")
        self.block(nodes)
        frame = scope.pop()
        exited, scope.exited = scope.exited, False
        return [] if exited else [frame]

    def case_statement(self, n: Any) -> None:
        branches: list[dict[str, Var]] = []
        exhaustive = False
        for item in n.named_children:
            if item.type != "case_item":
                continue
            body = []
            for k, c in enumerate(item.children):
                if item.field_name_for_child(k) == "value":
                    if self.source.raw(c) == "*":
                        exhaustive = True
                    continue
                if c.is_named:
                    body.append(c)
            branches += self.branch(body)
        self.scope.merge(branches, exhaustive)

    # -- loops ---------------------------------------------------------------
    def loop(self, n: Any) -> None:
        """A loop's body, read once per value of ``for m in a b c`` (each value is launched:
        its own launch, the way a function called twice is read twice), else once with the
        loop variable unknown.  What the body sets is unknown after the loop (it repeats)."""
        scope = self.scope
        var = n.child_by_field_name("variable")
        values = self.loop_values(n) if var is not None else None
        frames: list[dict[str, Var]] = []
        outer = self.ctx.loop_readings
        self.ctx.loop_readings = outer * len(values or [None])
        try:
            for value in values or [None]:
                scope.push("branch")
                if var is not None:
                    self.set_loop_variable(var, value)
                self.loop_body(n)
                frames.append(scope.pop())
        finally:
            self.ctx.loop_readings = outer
        scope.merge(frames, exhaustive=False, choices=False)

    def loop_body(self, n: Any) -> None:
        for k, c in enumerate(n.children):
            if not c.is_named or n.field_name_for_child(k) in ("variable", "value"):
                continue
            if n.type == "c_style_for_statement" and c.type != "do_group" and c.type != "compound_statement":
                continue
            self.stmt(c)

    def loop_values(self, n: Any) -> list[Located] | None:
        """The words of ``for m in a b c`` when they are few and all known (and reading the body
        once per word keeps nested loops within MAX_COMBINATIONS readings); else None."""
        words = [c for k, c in enumerate(n.children) if n.field_name_for_child(k) == "value"]
        fields = [f for group in word_groups(words) for f in self.words.expand(group)] if words else []
        if not fields or len(fields) > MAX_CHOICES or any(f.l is None or f.splat for f in fields):
            return None
        if self.ctx.loop_readings * len(fields) > MAX_COMBINATIONS:
            return None
        return [f.l for f in fields if f.l is not None]

    def set_loop_variable(self, var: Any, value: Located | None) -> None:
        """``$m`` in one reading of the body: the listed word, or unknown."""
        name = self.source.raw(var)
        if value is None:
            self.assignments.set_unknown(name, var)
            return
        self.scope.set_scalar(name, value, self.source.node_loc(var))

    # -- functions -----------------------------------------------------------
    def function_definition(self, n: Any) -> None:
        """Read the body once where it is defined (its arguments unknown), and keep it to be
        read again at each call."""
        body = n.child_by_field_name("body")
        name = n.child_by_field_name("name")
        if body is None:
            return
        scope = self.scope
        mark = len(self.ctx.commands)
        scope.push("func")
        self.stmt(body)
        func = self.source.raw(name) if name is not None else ""
        scope.end_function(func, scope.pop())
        if func:  # read again at each call, with its arguments
            scope.bodies[func] = (self, body, self.ctx.commands[mark:])

    def call(self, name: str, args: list[Field]) -> None:
        """A call of a function defined above: its body read again with these arguments ($1,
        "$@"), in place of the reading at its definition (where they were unknown).

        The body is read by the walk of the text that holds it (its positions, wrappers
        and image); that walk shares this scope (functions are kept per scope)."""
        scope = self.scope
        walk, body, at_definition = scope.bodies[name]
        done = {id(c) for c in at_definition}
        self.ctx.commands[:] = [c for c in self.ctx.commands if id(c) not in done]
        scope.bodies[name] = (walk, body, [])
        scope.args.append(args)
        scope.push("func")
        try:
            walk.stmt(body)
        finally:
            frame = scope.pop()
            scope.args.pop()
        for var_name, var in frame.items():  # its globals are set now
            if not var.local:
                scope.set(var_name, var.with_())

    # -- redirections and here-documents -------------------------------------
    def redirected(self, n: Any) -> None:
        body = n.child_by_field_name("body")
        heredocs = [c for c in n.named_children if c.type == "heredoc_redirect"]
        if body is not None:
            if body.type == "command" and heredocs:
                self.commands.command_with_heredoc(n, body, heredocs[0])
            else:
                self.stmt(body)
        # tree-sitter keeps the rest of a here-document's first line inside the redirect
        # (`cat <<EOF && vllm serve ...`, `cat <<'EOF' | bash`)
        for heredoc in heredocs:
            for c in heredoc.named_children:
                if self.commands.heredoc_piped(body, heredoc, c):
                    continue
                if c.type in ("command", "pipeline", "list", "subshell", "compound_statement",
                              "redirected_statement", "negated_command"):
                    self.stmt(c)


def _test_z(text: str) -> str | None:
    """X in ``[ -z "$X" ]`` / ``[[ -z $X ]]`` / ``test -z "$X"``."""
    text = text.strip().rstrip(";").strip()
    m = re.fullmatch(r'(?:\[\[?|test)\s+-z\s+"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?\s*(?:\]\]?)?', text)
    return m.group(1) if m else None
