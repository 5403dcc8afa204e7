"""What a command string or an argv list written in Python evaluates to, word by word.

A command line in Python is a string (``"vllm serve " + MODEL``, an f-string,
``" ".join(argv)``, ``shlex.join(argv)``) or a list of words (``["vllm", "serve", *extra]``,
``shlex.split(cmd)``, ``cmd.split()``), built up by ``+``, ``+=``, ``.append``,
``.insert``, slices.  :class:`CommandText` reads strings into :class:`PlacedText`
(each character where it is written, unknown parts as placeholders) and lists into
words (:class:`Word`), following names through :mod:`.scopes` and scalar elements through
:mod:`.values`.  Both are remembered per node within a reading, and bounded: a string
past ``MAX_TEXT`` characters or a list past ``MAX_WORDS`` words is not followed, and
said so (RSM900).
"""

from __future__ import annotations

import ast
import re
import shlex

from ...model import UNKNOWN, UNKNOWN_PART, Word
from .collect import Mutation, Scope, dotted, literal_str
from .readings import Reading
from .scopes import Bindings
from .source import PLACEHOLDER, PlacedText, Source, advance, fstring_pieces, shlex_words, string_literals, \
    unmasked_word
from .values import Values

#: a command string or argv list past this is not followed (`a2 = a1 + a1` doubling)
MAX_TEXT = 65_536
MAX_WORDS = 4_096

#: a separator the shell reads as a blank between words: blanks, and a backslash that continues
#: the line (``" \\\n    ".join(parts)`` writes one command over several lines)
_BLANK_SEPARATOR = re.compile(r"(?:[ \t]|\\\n)+")


class CommandText:
    """Command strings as placed text, argv lists as words, in the reading under way."""

    def __init__(self, source: Source, values: Values, bindings: Bindings, reading: Reading) -> None:
        self.source = source
        self.values = values
        self.imports = values.imports
        self.bindings = bindings
        self.reading = reading

    def not_followed(self, node: ast.AST, why: str) -> None:
        self.reading.not_followed(self.source.where(node), why)

    def unseen_words(self, node: ast.AST) -> Word:
        """Extra arguments the linter cannot see, written at ``node``."""
        return Word(None, self.source.where(node), splat=True, label=self.source.code(node))

    # strings ----------------------------------------------------------------
    def text_of(self, node: ast.expr, scope: Scope, holes: list[int]) -> PlacedText | None:
        """The characters of a (possibly concatenated, possibly f-) string, with positions
        (remembered per node within a reading; None past MAX_TEXT characters)."""
        memo = self.reading.memo
        key = ("text", id(node), id(scope))
        if key in memo:
            return memo[key]  # type: ignore[no-any-return]
        memo[key] = None
        found = None
        too_long = self.written_too_long(node, scope)
        if not too_long:
            found = self._text_of(node, scope, holes)
            too_long = found is not None and len(found.text) > MAX_TEXT
        if too_long:
            self.not_followed(node, f"a command string longer than {MAX_TEXT} characters")
            found = None
        memo[key] = found
        return found

    def written_too_long(self, node: ast.expr, scope: Scope) -> bool:
        """A string literal (or f-string) written longer than MAX_TEXT characters: the bound
        is applied before its characters are placed, not after."""
        target = self.bindings.resolve(node, scope)
        if isinstance(target, ast.Constant):
            return isinstance(target.value, str) and len(target.value) > MAX_TEXT
        if isinstance(target, ast.JoinedStr) and hasattr(target, "lineno"):
            span = self.source.span(target)
            return self.source.offset(span.end_line, span.end_col) - self.source.offset(span.line, span.col) > MAX_TEXT
        return False

    def _text_of(self, node: ast.expr, scope: Scope, holes: list[int]) -> PlacedText | None:
        if isinstance(node, ast.Name):  # the value it was given, then `+=` since
            bound = self.bindings.binding(node, scope)
            if bound is None:
                return None
            with self.reading.at(bound[0].line):
                text = self.text_of(bound[0].value, scope, holes)
            if bound is None or text is None:
                return None
            changes = self.bindings.changes(node.id, scope, bound[1], bound[0].line)
            return self.changed_text(text, changes, scope, holes)
        target = self.bindings.resolve(node, scope)
        if target is None:
            return None
        if isinstance(target, ast.BinOp) and isinstance(target.op, ast.Add):
            left = self.text_of(target.left, scope, holes)
            right = self.text_of(target.right, scope, holes)
            if left is None or right is None:
                return None
            return PlacedText(left.text + right.text, left.positions + right.positions)
        if isinstance(target, ast.Call) and len(target.args) == 1 and not target.keywords:
            if isinstance(target.func, ast.Attribute) and target.func.attr == "join" \
                    and _BLANK_SEPARATOR.fullmatch(literal_str(target.func.value) or "") is not None:
                return self.joined_text(target.args[0], scope, holes)  # " ".join(parts)
            if self.imports.process_name(target.func) == "shlex.join":
                return self.joined_words(target.args[0], scope, holes)  # shlex.join(argv)
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            return self.literal_text(target)
        if isinstance(target, ast.JoinedStr):
            return self.fstring_text(target, scope, holes)
        return None

    def changed_text(self, text: PlacedText, changes: list[tuple[Mutation, bool]], scope: Scope,
                     holes: list[int]) -> PlacedText:
        """A command string after ``cmd += " --flag"``; what a change adds that is not known
        (or not known to run) is an unseen part of the command.

        The parts are joined once at the end (copying the command so far at every step was
        quadratic in the steps), and the steps stop past MAX_TEXT characters: the caller
        (:meth:`text_of`) does not follow such a string."""
        parts, positions = [text.text], list(text.positions)
        for change, known in changes:
            if len(positions) > MAX_TEXT:
                break
            added = self.text_of(change.args[0], scope, holes) if known and change.op == "extend" else None
            if added is None:
                span = self.source.where(change.node)
                holes.append(len(holes))
                added = PlacedText()
                added.add(f" {PLACEHOLDER}{len(holes)}", span.line, span.col, exact=False)
            parts.append(added.text)
            positions.extend(added.positions)
        return PlacedText("".join(parts), positions)

    def literal_text(self, node: ast.Constant) -> PlacedText:
        """A string constant, each character where it is written (a character written with an
        escape, or in a literal that cannot be read back, stands on its literal)."""
        out = PlacedText()
        literals = string_literals(self.source, node) if hasattr(node, "lineno") else None
        value = node.value
        if literals is None or any("f" in lit.prefix.lower() for lit in literals):
            span = self.source.where(node)
            out.add(value, span.line, span.col, exact=False)
            return out
        for lit in literals:
            try:
                part = ast.literal_eval(lit.prefix + lit.quote + lit.body + lit.quote)
            except (ValueError, SyntaxError):
                part = lit.body
            out.add(part, lit.line, lit.col, exact=part == lit.body)
        if out.text != value:  # not what Python read: place the whole value on the node
            out = PlacedText()
            span = self.source.where(node)
            out.add(value, span.line, span.col, exact=False)
        return out

    def fstring_text(self, node: ast.JoinedStr, scope: Scope, holes: list[int]) -> PlacedText | None:
        """An f-string (or a concatenation with one): literal parts placed where they are
        written, a ``{field}`` is its value when it is a same-file constant, else a hole."""
        literals = string_literals(self.source, node) if hasattr(node, "lineno") else None
        fields = iter([v for v in node.values if isinstance(v, ast.FormattedValue)])
        out = PlacedText()
        if literals is None:
            return None
        for lit in literals:
            if "f" not in lit.prefix.lower():
                try:
                    part = ast.literal_eval(lit.prefix + lit.quote + lit.body + lit.quote)
                except (ValueError, SyntaxError):
                    return None
                out.add(part, lit.line, lit.col, exact=part == lit.body)
                continue
            pieces = fstring_pieces(lit.body)
            if pieces is None:
                return None
            for kind, start, end in pieces:
                line, col = advance(lit.line, lit.col, lit.body[:start])
                raw = lit.body[start:end]
                if kind == "text":
                    try:
                        value = ast.literal_eval(lit.prefix.lower().replace("f", "") + '"""'
                                                 + raw.replace('"', '\\"') + '"""') if "\\" in raw else raw
                    except (ValueError, SyntaxError):
                        value = raw
                    value = value.replace("{{", "{").replace("}}", "}")
                    out.add(value, line, col, exact=value == raw)
                    continue
                piece = next(fields, None)
                if piece is None:
                    return None
                known = self.values.value(piece.value, scope) \
                    if piece.format_spec is None and piece.conversion == -1 else UNKNOWN
                if isinstance(known, str):  # f"{MODEL}" with MODEL a same-file constant
                    out.add(known, line, col, exact=False)
                    continue
                holes.append(len(holes))
                out.add(f"{PLACEHOLDER}{len(holes)}", line, col, exact=False)
        return out

    def joined_text(self, node: ast.expr, scope: Scope, holes: list[int]) -> PlacedText | None:
        """``" ".join(parts)``: the parts as written, blank-separated (a part may hold several
        words, ``"--model-path " + model``); an argv list read as words when its parts are not
        all strings the file shows."""
        target = self.bindings.resolve(node, scope)
        if isinstance(node, ast.Name) and isinstance(target, (ast.List, ast.Tuple)):
            bound = self.bindings.binding(node, scope)
            if bound is not None and self.bindings.changes(node.id, scope, bound[1], bound[0].line):
                target = None  # changed in place since: its words, as the changes leave them
        if isinstance(target, (ast.List, ast.Tuple)) and target.elts \
                and not any(isinstance(e, ast.Starred) for e in target.elts):
            parts = [self.text_of(element, scope, holes) for element in target.elts]
            if all(part is not None for part in parts):
                out = PlacedText()
                for part in parts:
                    assert part is not None
                    if out.text:  # the blank between two parts stands where the second is
                        out.add(" ", *(part.positions[0] if part.positions else (1, 0)), exact=False)
                    out = PlacedText(out.text + part.text, out.positions + part.positions)
                return out
        return self.joined_words(node, scope, holes, quote=False)

    def joined_words(self, node: ast.expr, scope: Scope, holes: list[int], quote: bool = True) -> PlacedText | None:
        """``shlex.join(argv)`` (``quote``) or ``" ".join(argv)`` as a command string; words keep
        their own positions."""
        words = self.sequence_words(node, scope, set())
        if not words or any(w.splat for w in words):
            return None
        out = PlacedText()
        for index, word in enumerate(words):
            if index:
                out.add(" ", word.span.line, word.span.col, exact=False)
            if word.text is None:
                holes.append(len(holes))
                out.add(f"{PLACEHOLDER}{len(holes)}", word.span.line, word.span.col, exact=False)
            else:
                text = word.text
                while UNKNOWN_PART in text:  # each unknown part its own numbered hole
                    holes.append(len(holes))
                    text = text.replace(UNKNOWN_PART, f"{PLACEHOLDER}{len(holes)}", 1)
                out.add(shlex.quote(text) if quote else text, word.span.line, word.span.col, exact=False)
        return out

    # argv lists -------------------------------------------------------------
    def is_sequence(self, node: ast.expr, scope: Scope) -> bool:
        """Whether ``node`` evaluates to a list of words rather than one string: a list or tuple,
        a sum with one, ``shlex.split(...)``, ``text.split()``."""
        target = self.bindings.resolve(node, scope)
        if isinstance(target, (ast.List, ast.Tuple, ast.Starred)):
            return True
        if isinstance(target, ast.BinOp) and isinstance(target.op, ast.Add):
            return self.is_sequence(target.left, scope) or self.is_sequence(target.right, scope)
        if isinstance(target, ast.Call):
            if self.imports.process_name(target.func) == "shlex.split":
                return True
            return isinstance(target.func, ast.Attribute) and target.func.attr == "split" and not target.args
        return False

    def split_words(self, node: ast.expr, scope: Scope) -> list[Word]:
        """``shlex.split(node)``: the words of a command string."""
        text = self.text_of(node, scope, [])
        return shlex_words(text) if text is not None else []

    def sequence_words(self, node: ast.expr, scope: Scope, consumed: set[int]) -> list[Word]:
        """The words of an argv list (remembered per node within a reading; past MAX_WORDS
        words the list is not followed).  A ``shlex.split(...)`` call read as part of it is
        added to ``consumed``: it is not read again as a launch of its own."""
        memo = self.reading.memo
        key = ("words", id(node), id(scope))
        if key in memo:
            return list(memo[key])  # type: ignore[arg-type]
        memo[key] = [self.unseen_words(node)]
        words = self._sequence_words(node, scope, consumed)
        if len(words) > MAX_WORDS:
            self.not_followed(node, f"an argv list longer than {MAX_WORDS} words")
            words = [self.unseen_words(node)]
        memo[key] = words
        return list(words)

    def _sequence_words(self, node: ast.expr, scope: Scope, consumed: set[int]) -> list[Word]:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.sequence_words(node.left, scope, consumed) + \
                self.sequence_words(node.right, scope, consumed)
        target = self.bindings.resolve(node, scope)
        if isinstance(node, ast.Name) and isinstance(target, (ast.List, ast.Tuple, ast.BinOp, ast.Call)):
            bound = self.bindings.binding(node, scope)  # the value it was given, changed in place since
            if bound is not None:
                with self.reading.at(bound[0].line):
                    words = self.sequence_words(bound[0].value, scope, consumed)
                changes = self.bindings.changes(node.id, scope, bound[1], bound[0].line)
                return self.changed_words(words, changes, scope, consumed)
        if isinstance(target, ast.Call):
            func = self.imports.process_name(target.func)
            if func == "shlex.split" and target.args:
                consumed.add(id(target))
                return self.split_words(target.args[0], scope)
            if isinstance(target.func, ast.Attribute) and target.func.attr == "split" \
                    and not target.args and not target.keywords:
                return self.split_words(target.func.value, scope)
        if isinstance(target, ast.BinOp):
            return self.sequence_words(target, scope, consumed)
        if not isinstance(target, (ast.List, ast.Tuple)):
            return [self.unseen_words(node)]
        return self.element_words([(e.value if isinstance(e, ast.Starred) else e, isinstance(e, ast.Starred))
                                   for e in target.elts], scope, consumed)

    def changed_words(self, words: list[Word], changes: list[tuple[Mutation, bool]], scope: Scope,
                      consumed: set[int]) -> list[Word]:
        """An argv list after ``+=``, ``.append``, ``.extend``, ``.insert``, ``cmd[i:j] = ...``,
        ``del cmd[i]``, ``.pop()``.  A change not known to run, or not understood (an index
        into a list with unseen parts, ``.sort()``...), leaves extra arguments unseen: it is
        never dropped silently.

        The list is changed in place (a copy per step was quadratic in the steps), and the
        steps stop past MAX_WORDS words: the caller (:meth:`sequence_words`) does not follow
        such a list."""
        words = list(words)
        splat = any(w.splat for w in words)  # kept up to date as words are added
        for change, known in changes:
            if len(words) > MAX_WORDS:
                break
            added = self.change_list(words, change, scope, consumed, splat) if known else None
            if added is None:
                added = [self.unseen_words(change.node)]
                words.extend(added)
            splat = splat or any(w.splat for w in added)
        return words

    def change_list(self, words: list[Word], change: Mutation, scope: Scope, consumed: set[int],
                    splat: bool) -> list[Word] | None:
        """Make one change known to run to ``words`` (in place) and return the words it added;
        None when it is not understood (``words`` is then as it was: every index and value is
        read before the list is touched).  ``splat``: ``words`` has unseen parts."""
        op, args = change.op, change.args
        if op == "extend" or op == "append" and len(args) == 1:
            added = self.sequence_words(args[0], scope, consumed) if op == "extend" \
                else self.element_words([(args[0], False)], scope, consumed)
            words.extend(added)
            return added
        if splat:
            return None  # positions in a list with unseen parts are not known
        added = []
        try:
            if op == "insert" and len(args) == 2:
                at = self.index(args[0], scope)
                added = self.element_words([(args[1], False)], scope, consumed)[:1]
                words.insert(at, added[0])
            elif op == "pop" and len(args) <= 1:
                words.pop(self.index(args[0], scope) if args else -1)
            elif op in ("set", "del") and isinstance(args[0], ast.Slice):
                part = slice(*(self.index(e, scope) if e is not None else None
                               for e in (args[0].lower, args[0].upper, args[0].step)))
                if op == "del":
                    del words[part]
                elif args[1] is None:
                    return None
                else:
                    added = self.sequence_words(args[1], scope, consumed)
                    words[part] = added
            elif op == "del":
                del words[self.index(args[0], scope)]
            elif op == "set" and args[1] is not None:
                added = self.element_words([(args[1], False)], scope, consumed)[:1]
                words[self.index(args[0], scope)] = added[0]
            else:
                return None
        except (IndexError, ValueError, TypeError):
            return None
        return added

    def index(self, node: ast.expr, scope: Scope) -> int:
        """A list index written as a literal (or a same-file constant); ValueError otherwise."""
        value = self.values.value(node, scope)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(self.source.code(node))
        return value

    def element_words(self, elements: list[tuple[ast.expr, bool]], scope: Scope,
                      consumed: set[int]) -> list[Word]:
        """The words of argv elements, each ``(node, starred)``: a starred one is a list."""
        words: list[Word] = []
        for value, starred in elements:
            if starred:
                words += self.sequence_words(value, scope, consumed)
                continue
            if dotted(value) == "sys.executable":
                words.append(Word("python", self.source.where(value)))
                continue
            text = self.text_of(value, scope, [])
            if text is not None:
                words.append(unmasked_word(text.text, self.source.where(value)))
            else:  # a number, or a value such as os.environ.get("M", "default")
                literal = self.values.value(value, scope)
                known = isinstance(literal, (str, int, float)) and not isinstance(literal, bool)
                words.append(Word(str(literal) if known else None, self.source.where(value),
                                  label=None if known else self.source.code(value)))
        return words
