"""SGLang's command line, read the way SGLang reads it.

The shared :mod:`flake8_replayssm.argv` strips wrappers (``env``, ``nohup``, ``srun``,
``docker run IMAGE``...) and hands over the words after ``sglang serve`` or
``python -m sglang.launch_server``.  SGLang's parser differs from vLLM's in ways
that decide verdicts (``sglang/srt/server_args.py: prepare_server_args``,
``sglang/cli/serve.py``), all mirrored here:

- plain ``argparse``: ``store_true`` flags take no value and have no ``--no-``
  form, ``_`` in a flag name is *not* a ``-`` (``--enable_linear_replayssm`` is
  an unrecognized argument), and ``allow_abbrev`` accepts a unique prefix;
- the model is ``--model-path`` / ``--model``; ``sglang serve`` (0.5.16+) also
  takes it as the first word, after dropping ``--model-type X``; any other
  positional word is an argparse error;
- ``--config FILE`` (the exact word) inserts the YAML file's keys *before* the
  command line, keys spelled as written (``true`` keeps a flag, ``false`` drops
  it); ``--config=FILE`` is accepted and ignored.

Whether a spelling exists depends on the release; the parser records every
spelling it read (``Launch.history``) and :mod:`.form` judges them per release.
"""

from __future__ import annotations

from typing import Any, Sequence

from ... import config_files
from ...argv import ArgvWalk, is_number, placeholder, splice_config_files
from ...model import UNKNOWN, UNKNOWN_PART, Entry, Launch, Setting, Word
from ..base import ConfigReader
from .knowledge import Knowledge, Option, knowledge
from .target import sglang_image_cuda, sglang_image_release

#: ``python -m MODULE`` entry points that start SGLang's server with ServerArgs' parser
#: (``sglang_router.launch_server`` starts the router and its workers from the same
#: ServerArgs, plus the router's own options: the walk takes their words as the router's
#: parser does, and checks their choices)
MODULES = ("sglang.launch_server", "sglang_router.launch_server")
#: the router's launcher builds ServerArgs from its own parser (sglang-router 0.3.x
#: launch_server.main): no prepare_server_args, so a --config file is parsed and ignored
ROUTER = "sglang_router.launch_server"


def program_entry(words: Sequence[Word], i: int, env: dict[str, Word]) -> Entry | None:
    """``sglang serve ...`` with ``words[i]`` the ``sglang`` program."""
    if i + 1 < len(words) and words[i + 1].text == "serve":
        return Entry("sglang", "sglang-serve", list(words[i + 2:]), words[i].span, env, label="sglang serve")
    return None


def module_entry(module: str, words: Sequence[Word], i: int, rest: int, env: dict[str, Word]) -> Entry | None:
    """``python -m sglang.launch_server ...`` at ``words[i]``, its arguments from ``rest``."""
    if module in MODULES:
        kind = "sglang-router" if module == ROUTER else "sglang-module"
        return Entry("sglang", kind, list(words[rest:]), words[i].span, env, label=f"python -m {module}")
    return None


class _Parser(ArgvWalk):
    """One walk over SGLang's argv; mirrors argparse for the options the linter reads."""

    def __init__(self, entry: Entry, know: Knowledge, base_dir: str | None, read_config: ConfigReader,
                 label: str | None = None) -> None:
        self.entry, self.know, self.base_dir, self.read_config = entry, know, base_dir, read_config
        kind = {"sglang-serve": "serve", "sglang-router": "router"}.get(entry.kind, "launch_server")
        self.launch = Launch(entry=kind, anchor=entry.anchor, label=label or entry.label, base_dir=base_dir,
                             form="argv", engine="sglang")
        self.long_options = frozenset(know.long_options)
        #: the router launcher's own options, for ``python -m sglang_router.launch_server``
        self.router = know.router if entry.kind == "sglang-router" else None

    # -- the walk ---------------------------------------------------------------
    def prepare(self, args: list[Word]) -> list[Word]:
        if self.entry.kind == "sglang-serve":
            args = self.strip_model_type(args)
            args = self.positional_model(args)
        return args

    @staticmethod
    def strip_model_type(args: list[Word]) -> list[Word]:
        """``sglang serve`` drops ``--model-type X`` before anything else (cli/serve.py)."""
        out: list[Word] = []
        i = 0
        while i < len(args):
            text = args[i].text or ""
            if text == "--model-type":
                i += 2
                continue
            if not text.startswith("--model-type="):
                out.append(args[i])
            i += 1
        return out

    def positional_model(self, args: list[Word]) -> list[Word]:
        """``sglang serve MODEL ...``: the first word, when it is not a flag (0.5.16+)."""
        if not args or args[0].splat or placeholder(args[0].text) == "arguments":
            return args
        first = args[0]
        if first.text is not None and first.text.startswith("-"):
            return args
        unknown = first.text is None or UNKNOWN_PART in first.text or placeholder(first.text) is not None
        value = UNKNOWN if unknown else first.text
        self.set(Setting("model", value, first.span, "", first.span))  # spelling "": positional
        return args[1:]

    def expand_config(self, args: list[Word]) -> list[Word]:
        """Put the words of ``--config FILE`` first, as ConfigArgumentMerger does (not for the
        router's launcher, which never merges the file: its keys do not apply)."""
        if self.entry.kind == "sglang-router":
            return args
        configs: list[Word] = []

        def words_of(flag: Word, path: Word) -> list[Word] | None:
            configs.append(flag)
            if len(configs) > 1:
                self.finding(flag.span, "RSM106", "Multiple config files specified! Only one allowed. "
                             "(SGLang refuses a second --config); fix: merge the files into one")
            config = self.read_config(path.text, self.base_dir) if path.text else None
            return self.config_words(config) if config is not None else None

        return splice_config_files(args, self.launch, "SGLang", "read", words_of)

    def config_words(self, config: config_files.ConfigArgs) -> list[Word]:
        """The words SGLang makes of a YAML file: ``false`` drops a flag, else ``--key false``."""
        words = list(config.words)
        for setting in config.false_keys:
            dashed = "--" + setting.spelling.replace("_", "-")
            option = self.know.by_cli.get(dashed)
            if dashed in self.know.valueless or (option is not None and option.kind == "bool"):
                continue  # a store_true key given false: SGLang leaves the flag out
            words += [Word("--" + setting.spelling, setting.span), Word("false", setting.span)]
        return words

    def step(self, args: list[Word], i: int) -> int:
        word = args[i]
        text = word.text
        if text is None or UNKNOWN_PART in text or placeholder(text) is not None:
            # "$@", $EXTRA_ARGS, `...`: extra arguments the linter cannot see (DESIGN.md,
            # "judge what is written"); a placeholder label says how they are written
            self.launch.add_unseen(word.label or (text if placeholder(text) else None))
            return i + 1
        if text.startswith("--") and len(text) > 2:
            return self.long_option(args, i)
        if text.startswith("-") and len(text) > 1 and not is_number(text):
            return self.unknown_option(args, i, text, "=" in text)
        if self.lookalike(word, text.partition("=")[0], self.long_options, (), "SGLang"):
            return i + 1  # `—enable-linear-replayssm`: dashes that only look like dashes
        why = "only the first word after 'sglang serve' can be the model" if self.entry.kind == "sglang-serve" \
            else "it takes no positional arguments"
        fix = "drop it, or give it to the option it belongs to" if self.model_given(args) \
            else f"write --model-path {text}"
        self.finding(word.span, "RSM106", f"{text!r} is rejected by SGLang's argument parser (unrecognized "
                                          f"arguments: {text}): {why}; fix: {fix}")
        return i + 1

    def model_given(self, args: list[Word]) -> bool:
        """Whether the model is given otherwise (a positional model, ``--model-path``, ``--model``):
        a stray word is then no model to move into a flag."""
        if self.launch.model is not None:
            return True
        return any((w.text or "").partition("=")[0] in ("--model-path", "--model") for w in args)

    def long_option(self, args: list[Word], i: int) -> int:
        word = args[i]
        raw, eq, inline = (word.text or "").partition("=")
        value = inline if eq else None
        option = self.know.by_cli.get(raw)
        if option is not None:
            return self.known_option(args, i, option, raw, value)
        if raw in self.long_options:
            return self.unknown_option(args, i, raw, bool(eq))
        routed = self.router_option(raw)
        if routed is not None:
            return self.router_words(args, i, routed, raw, value)
        dashed = raw.replace("_", "-")
        if dashed != raw and dashed in self.know.by_cli:
            option = self.know.by_cli[dashed]
            self.finding(word.span, "RSM106", (
                f"{raw} is rejected by SGLang's argument parser (unrecognized arguments): SGLang does "
                f"not read '_' as '-' in flag names; fix: write {dashed}"))
            return self.skip_value(args, i, option, value)
        if raw.startswith("--no-") and self.know.by_cli.get("--" + raw[5:]) is not None \
                and self.know.by_cli["--" + raw[5:]].kind == "bool":
            self.finding(word.span, "RSM106", (
                f"{raw} is rejected by SGLang's argument parser (unrecognized arguments): "
                f"--{raw[5:]} is a plain switch with no --no- form; fix: drop {raw}"))
            return i + 1
        owner = self.abbreviated(raw)
        if owner is not None:
            return self.known_option(args, i, owner, raw, value)
        meant = self.know.proposal_names.get(raw)
        if meant is not None and meant in self.know.by_cli:
            # the RFC's name: no release has it (judged per release with "did you mean")
            option = self.know.by_cli[meant]
            self.launch.history.append(Setting(option.name, UNKNOWN, word.span, raw))
            return self.skip_value(args, i, option, value)
        self.lookalike(word, raw, self.long_options, self.know.replayssm_options, "SGLang")
        return self.unknown_option(args, i, raw, bool(eq))

    def router_option(self, raw: str) -> str | None:
        """The router launcher's option ``raw`` names: itself, or the one it is a unique prefix
        of where no server option starts so (argparse matches prefixes over both)."""
        if self.router is None:
            return None
        if raw in self.router.long_options:
            return raw
        owners = [o for o in self.router.long_options if o.startswith(raw)]
        if len(owners) != 1 or len(raw) < 4 or any(o.startswith(raw) for o in self.long_options):
            return None
        return owners[0]

    def router_words(self, args: list[Word], i: int, option: str, spelling: str, inline: str | None) -> int:
        """Skip a router option and the words its parser gives it; a value outside its choices is
        refused as argparse refuses it (``--router-policy fastest``)."""
        router = self.router
        assert router is not None
        if option in router.valueless or inline is not None:
            words = [Word(inline, args[i].span)] if inline is not None else []
            end = i + 1
        else:
            nargs = router.nargs.get(option, 1)
            words = self.list_words(args, i + 1, nargs)
            least = {"+": 1, "*": 0, "?": 0}.get(nargs, nargs)  # type: ignore[call-overload]
            if len(words) < int(least) and not self.unseen_at(args, i + 1 + len(words)):
                wanted = "one argument" if nargs == 1 else "at least one argument" if nargs == "+" \
                    else f"{nargs} arguments"
                self.finding(args[i].span, "RSM106", f"argument {spelling}: expected {wanted} (sglang-router "
                             f"{router.release}); fix: give it a value")
            end = i + 1 + len(words)
        choices = router.choices.get(option, ())
        for word in words if choices else ():
            if word.text is not None and UNKNOWN_PART not in word.text and placeholder(word.text) is None \
                    and word.text not in choices:
                shown = ", ".join(repr(c) for c in choices)
                self.finding(word.span, "RSM106", f"argument {spelling}: invalid choice: {word.text!r} (choose "
                             f"from {shown}) (sglang-router {router.release}); fix: use one of those")
        return end

    def abbreviated(self, raw: str) -> Option | None:
        """argparse's allow_abbrev: the option a prefix may stand for, if it is one of ours.

        Whether the prefix is unique depends on the release; :mod:`.form` decides that
        from the spelling kept in the history.
        """
        if len(raw) < 4:
            return None
        flags = sorted((o for o in self.know.by_cli if o.startswith(raw)), key=len)
        # several of ours (``--enable-linear-replay``): the release decides whether the prefix
        # is ambiguous; until then it stands for the shortest, which every release has
        return self.know.by_cli[flags[0]] if flags else None

    def known_option(self, args: list[Word], i: int, option: Option, spelling: str,
                     inline: str | None) -> int:
        word = args[i]
        if option.kind == "bool":
            return self.switch(args, i, option.name, spelling, inline, engine="SGLang", off=" or drop it",
                               hint_inline=True)
        if inline is not None:
            value_word, nxt_index = Word(inline, word.span), i + 1
        elif i + 1 < len(args):
            value_word, nxt_index = args[i + 1], i + 2
        else:
            self.finding(word.span, "RSM106", f"argument {spelling}: expected one argument; fix: give it a value")
            return i + 1
        value = self.convert(option, value_word, spelling)
        name = "model" if option.kind == "model" else option.name
        self.set(Setting(name, value, word.span, spelling, value_word.span))
        return nxt_index

    def convert(self, option: Option, word: Word, spelling: str) -> Any:
        text = word.text
        if text is None or UNKNOWN_PART in text or placeholder(text) is not None:
            return UNKNOWN  # `--page-size $P`, `<size>`: the value, whatever it is
        if option.kind == "int":
            try:
                return int(text)
            except ValueError:
                self.finding(word.span, "RSM106", f"argument {spelling}: invalid int value: {text!r}; "
                                                  "fix: give a whole number")
                return UNKNOWN
        if option.choices and text not in option.choices:
            shown = ", ".join(repr(c) for c in option.choices)
            self.finding(word.span, "RSM106", f"argument {spelling}: invalid choice: {text!r} (choose from "
                                              f"{shown}); fix: use one of those")
            return UNKNOWN
        return text

    def skip_value(self, args: list[Word], i: int, option: Option, inline: str | None) -> int:
        if option.kind == "bool" or inline is not None or i + 1 >= len(args):
            return i + 1
        nxt = args[i + 1].text
        return i + 1 if nxt is not None and nxt.startswith("-") and not is_number(nxt) else i + 2

    def unknown_option(self, args: list[Word], i: int, spelling: str, has_inline: bool) -> int:
        """A flag the linter does not interpret: skip it and the words it takes (argparse's nargs).

        A long option of some release (or a prefix of one) is kept in the history, so that
        :mod:`.form` judges it per release: ``--cuda-graph-bs`` is an option up to 0.5.19 and
        an ambiguous prefix of ``--cuda-graph-bs-decode``/``-prefill`` from 0.5.20.
        """
        option = self.standing_for(spelling)
        if option is not None:
            self.launch.history.append(Setting(option, UNKNOWN, args[i].span, spelling))
        name = option or spelling
        if has_inline or name in self.know.valueless:
            return i + 1
        if option is None and not any(o.startswith(spelling) for o in self.know.router.long_options):
            # no parser of SGLang has it (a fork's option): its arity is unknown; the router
            # launcher's own options on another entry point keep their one word (a stray after it)
            return self.past_unknown_option(args, i)
        nargs = self.know.nargs.get(name, 1)
        if nargs == 1:  # the next word, unless it is a flag (an unseen word is its value)
            if i + 1 >= len(args):
                return i + 1
            nxt = args[i + 1]
            return i + 1 if nxt.text is not None and nxt.text.startswith("-") and not is_number(nxt.text) \
                else i + 2
        taken = self.list_words(args, i + 1, nargs)
        least = {"+": 1, "*": 0, "?": 0}.get(nargs, nargs)  # type: ignore[call-overload]
        if len(taken) < int(least) and not self.unseen_at(args, i + 1 + len(taken)):
            wanted = "at least one argument" if nargs == "+" else f"{nargs} arguments"
            self.finding(args[i].span, "RSM106", f"argument {spelling}: expected {wanted}; fix: give it a value")
        self.check_list_values(name, spelling, taken)
        return i + 1 + len(taken)

    def standing_for(self, spelling: str) -> str | None:
        """The long option a ``--word`` names: itself, or the one it is a unique prefix of
        (among every release's options; :mod:`.form` judges the prefix per release)."""
        if not spelling.startswith("--"):
            return None
        if spelling in self.long_options:
            return spelling
        owners = [o for o in self.know.long_options if o.startswith(spelling)]
        return (owners[0] if len(owners) == 1 else spelling) if owners else None

    def list_words(self, args: list[Word], start: int, nargs: str | int) -> list[Word]:
        """The words after an option that argparse gives it: up to the next word that looks
        like an option (or an unseen one, which :meth:`step` reads); at most ``nargs``."""
        most = {"+": len(args), "*": len(args), "?": 1}.get(nargs, nargs)  # type: ignore[call-overload]
        taken: list[Word] = []
        j = start
        while j < len(args) and len(taken) < int(most):
            text = args[j].text
            if text is None or text.startswith("-") and not is_number(text) or self.unseen_at(args, j):
                break
            taken.append(args[j])
            j += 1
        return taken

    @staticmethod
    def unseen_at(args: list[Word], j: int) -> bool:
        """Whether ``args[j]`` is a word the linter cannot read ("$@", ``$BS``, ``<sizes>``)."""
        if j >= len(args):
            return False
        text = args[j].text
        return args[j].splat or text is None or UNKNOWN_PART in text or placeholder(text) is not None

    def check_list_values(self, option: str, spelling: str, words: list[Word]) -> None:
        """argparse converts each word of an int/float list option: ``--cuda-graph-bs 1 two``."""
        kind = self.know.list_types.get(option)
        convert = {"int": int, "float": float}.get(kind or "")
        for word in words if convert is not None else ():
            try:
                convert(word.text)  # type: ignore[misc]
            except ValueError:
                self.finding(word.span, "RSM106", f"argument {spelling}: invalid {kind} value: {word.text!r}; "
                                                  f"fix: give {kind} values (a list option takes every word "
                                                  "up to the next flag)")

    def set(self, setting: Setting) -> None:
        if setting.name == "model":
            self.launch.model = setting
        else:
            self.launch.options[setting.name] = setting
        self.launch.history.append(setting)

    def finish(self) -> None:
        self.launch.env = {
            key: Setting(key, word.text if word.text is not None else UNKNOWN, word.span, key, word.span)
            for key, word in self.entry.env.items()
        }
        if self.launch.model is None and self.launch.unseen:
            # `sglang serve "$@"`: the caller's arguments usually hold the model; do not guess
            self.launch.model = Setting("model", UNKNOWN, self.launch.anchor, "")
        self.launch.release_hint = sglang_image_release(self.entry.image, self.know)
        self.launch.platform_hint = sglang_image_cuda(self.entry.image)  # the CUDA build: a check reads it


def names_a_value(flag: str, value: str) -> bool:
    """SGLang's documentation writes values to fill in as placeholders, never as ALL-CAPS words."""
    return False


def launch_from_entry(entry: Entry, base_dir: str | None, read_config: ConfigReader | None = None) -> Launch:
    """The SGLang launch of ``entry`` (found by the shared :func:`~flake8_replayssm.argv.find_entry`)."""
    parser = _Parser(entry, knowledge(), base_dir, read_config or config_files.read_config_file)
    return parser.run(entry.args)


def launch_from_serve_config(text: str, *, base_dir: str | None = None) -> Launch | None:
    """An SGLang ``--config`` YAML judged on its own, as ``sglang serve --config FILE``."""
    config = config_files.config_args_from_text(text)
    if config is None or not (config.words or config.false_keys):
        return None
    know = knowledge()
    anchor = config.words[0].span if config.words else config.false_keys[0].span
    entry = Entry("sglang", "sglang-serve", [], anchor, {}, label="sglang serve --config")
    parser = _Parser(entry, know, base_dir, config_files.read_config_file)
    launch = parser.run(parser.config_words(config))
    if launch.model is None:
        # such a file is used as `sglang serve MODEL --config FILE`: the model is elsewhere
        launch.model = Setting("model", UNKNOWN, anchor, "")
    return launch
