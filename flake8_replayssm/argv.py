"""What every engine's command line shares, before any engine gives the words a meaning.

Each engine reads its own options (``engines/<name>/argv.py``), but some things are the
same whatever starts: how documentation writes a value the reader fills in, which words
make argparse exit before anything starts (``--help``), and where a ``--config FILE``
puts its options (vLLM's and SGLang's parsers both read the file first).
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

from .lookalikes import meant
from .model import UNKNOWN_PART, Finding, Launch, Setting, Span, Word

#: words a switch may be given by mistake (``--use-replayssm true``): argparse rejects them
BOOL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})
_FALSE_WORDS = frozenset({"false", "no", "off", "0"})

#: how documentation writes a value the reader fills in: ``<model>``, ``{model}``, ``{{ .Values.model }}``
#: (a Helm/Go template), ``[MODEL]`` is not one (argv may hold JSON lists); ``...`` / ``…`` stand for
#: elided arguments
_PLACEHOLDER = re.compile(r"<[A-Za-z_][^<>]*>|\{\{.*\}\}|\{[A-Za-z_][\w.\-/ ]*\}|.*__RSMTPL_+.*")
_ELLIPSES = frozenset({"...", "…", "[...]", "[…]"})


def placeholder(text: str | None) -> str | None:
    """``"value"`` when ``text`` is a placeholder for a value, ``"arguments"`` for an ellipsis
    standing for more arguments, else None (DESIGN.md: placeholders are unknown values,
    never literal words, redirections or positionals)."""
    if not text:
        return None
    if text in _ELLIPSES:
        return "arguments"
    return "value" if _PLACEHOLDER.fullmatch(text) else None


#: what stands for a part of an image tag no one can read in the file (:func:`image_tag_releases`)
_UNREAD_TAG = re.compile(r"\x00|\$|\{\{|__RSMTPL_")


def image_tag_releases(tag: str) -> str | None:
    """What an engine image's tag says of its release beyond a version: ``latest`` is the newest
    release (``latest``); a tag the file leaves to a build argument without a default, an
    unset variable or a template (``v${VLLM_VERSION}``, ``{{ .Values.tag }}``) may be any
    release (``all``, :mod:`flake8_replayssm.release_sets`); None otherwise."""
    if tag.strip().lower() == "latest":
        return "latest"
    return "all" if _UNREAD_TAG.search(tag) else None


def is_number(text: str) -> bool:
    """Whether argparse reads ``text`` as a (negative) number rather than an option."""
    try:
        float(text)
    except ValueError:
        return False
    return True


#: words after which argparse exits before an engine validates anything: ``-h``/``--help`` print the
#: help (``--help=KEYWORD`` searches it), ``--version`` prints the version on the top-level ``vllm``
#: parser and is an unrecognized argument (exit 2) anywhere else
_HELP_WORDS = frozenset({"-h", "--help", "--version"})


def exits_before_launch(args: Sequence[Word]) -> bool:
    """Whether ``args`` ask for help or the version: such a command starts no engine."""
    for word in args:
        text = word.text
        if text == "--":
            return False
        if text is not None and (text in _HELP_WORDS or text.startswith("--help=")):
            return True
    return False


def splice_config_files(args: Sequence[Word], launch: Launch, engine: str, verb: str,
                        words_of: Callable[[Word, Word], list[Word] | None]) -> list[Word]:
    """``args`` with the words of each ``--config FILE`` put first, as vLLM's and SGLang's
    parsers both read the file before the command line.

    ``--config=FILE`` is dropped: both parsers ignore it, which ``launch`` gets as RSM101
    (``engine`` names the engine, ``verb`` says what it does with a ``--config FILE``).
    ``words_of(flag, path)`` reads one file, None when it cannot be read: the launch then has
    options the linter cannot see (``launch.open_ended``).
    """
    def ignored(word: Word) -> None:
        text = word.text or ""
        launch.form_findings.append(Finding(word.span, "RSM101", (
            f"{text} is silently ignored by {engine}: only '--config FILE' (a separate word) is {verb}, "
            f"so no option in that file takes effect; fix: write --config {text.split('=', 1)[1]}")))

    out: list[Word] = []
    inserted: list[Word] = []
    unread = False
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text or ""
        if text.startswith("--config="):
            ignored(word)
            i += 1
        elif text == "--config" and i + 1 < len(args):
            words = words_of(word, args[i + 1])
            if words is None:
                unread = True
            else:
                inserted.extend(words)
            i += 2
        else:
            out.append(word)
            i += 1
    if unread:
        launch.open_ended = True
    return inserted + out


class ArgvWalk:
    """One walk over an engine's arguments, in the order argparse reads them.

    An engine's parser sets :attr:`launch` and fills in the steps: :meth:`prepare` (words
    its entry point rewrites first), :meth:`expand_config` (``--config FILE``), :meth:`step`
    (one word, returning the index of the next) and :meth:`finish`.
    """

    launch: Launch

    def finding(self, span: Span, code: str, message: str) -> None:
        self.launch.form_findings.append(Finding(span, code, message))

    def run(self, args: list[Word]) -> Launch:
        args = self.expand_config(self.prepare(args))
        i = 0
        while i < len(args):
            i = self.step(args, i)
        self.finish()
        return self.launch

    def prepare(self, args: list[Word]) -> list[Word]:
        return args

    def set(self, setting: Setting) -> None:
        raise NotImplementedError

    def lookalike(self, word: Word, raw: str, options: Iterable[str], near: Iterable[str], engine: str) -> bool:
        """RSM106 when ``raw`` only looks like one of ``options`` (Unicode look-alikes, invisible
        characters) or is a near-miss of one of ``near``: the engine rejects the launch."""
        found = meant(raw, options, near)
        if found is None:
            return False
        option, why = found
        self.finding(word.span, "RSM106", (
            f"{readable_text(raw)} is rejected by {engine}'s argument parser (unrecognized arguments): {why}; "
            f"fix: write {option}"))
        return True

    def switch(self, args: list[Word], i: int, name: str, spelling: str, inline: str | None, *,
               engine: str, off: str, hint_inline: bool) -> int:
        """A switch (argparse's ``store_true``) at ``args[i]``: on, and ``--x=VALUE`` or ``--x true``
        is rejected (RSM106); the index of the next word.

        ``engine`` names the engine in messages; ``off`` is how the fix turns the switch off when
        the value said so (vLLM's ``--no-x``, SGLang's "drop it"); ``hint_inline`` adds the same
        hint to the ``--x=VALUE`` message.
        """
        word = args[i]
        self.set(Setting(name, True, word.span, spelling))
        if inline is not None:
            hint = (off if inline.lower() in _FALSE_WORDS else " alone") if hint_inline else ""
            self.finding(word.span, "RSM106", (
                f"{word.text} is rejected by {engine}'s argument parser: {spelling} takes no value "
                f"(argument {spelling}: ignored explicit argument {inline!r}); fix: write {spelling}{hint}"))
            return i + 1
        nxt = args[i + 1] if i + 1 < len(args) else None
        if nxt is not None and nxt.text is not None and nxt.text.lower() in BOOL_WORDS:
            self.finding(nxt.span, "RSM106", (
                f"{spelling} takes no value, so {nxt.text!r} is a stray argument that {engine} rejects "
                f"(unrecognized arguments: {nxt.text}); fix: write {spelling} alone"
                + (off if nxt.text.lower() in _FALSE_WORDS else "")))
            return i + 2
        return i + 1

    @staticmethod
    def past_unknown_option(args: list[Word], i: int) -> int:
        """The index after ``args[i]``, an option no release of the engine has (a fork's, a plugin's),
        and the words it may take.

        Its arity is unknown (``--spec-capture-aux-layer-ids 7 23 51`` takes three), so every word up
        to the next one that looks like an option is its own: none is read as a positional word, a
        model or a stray argument.  The first may be a word the linter cannot read (``$IDS``); after
        it, such a word is left to the walk (extra arguments the file does not show).
        """
        j = i + 1
        while j < len(args):
            text = args[j].text
            if text is not None and text.startswith("-") and not is_number(text):
                break
            if j > i + 1 and (args[j].splat or text is None or UNKNOWN_PART in text or placeholder(text)):
                break
            j += 1
        return j

    def expand_config(self, args: list[Word]) -> list[Word]:
        return args

    def step(self, args: list[Word], i: int) -> int:
        raise NotImplementedError

    def finish(self) -> None:
        pass


def readable_text(text: str) -> str:
    """``text`` with its invisible and non-ASCII characters shown as escapes (``\\u200b``), so a
    message says what the word really holds."""
    return "".join(ch if ch.isascii() and ch.isprintable() else f"\\u{ord(ch):04x}" for ch in text)
