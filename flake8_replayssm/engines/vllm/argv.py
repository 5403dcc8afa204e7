"""vLLM's command line, read the way vLLM reads it.

This is the one place that knows vLLM's argv semantics (FlexibleArgumentParser
in ``vllm/utils/argparse_utils.py`` and the serve sub-command):

- how vLLM is started: ``vllm serve``, ``python -m
  vllm.entrypoints.openai.api_server``, the ``vllm/vllm-openai`` image (the wrappers
  around them are :mod:`flake8_replayssm.recognise`'s);
- the model: positional after ``serve`` or ``--model``; the api_server module
  reads only ``--model`` (RSM103);
- ``--x=y`` and ``--x y``; ``_`` in flag names as ``-``; ``--no-x``;
  ``--disable-x``; JSON values and dotted keys (``--speculative-config.k v``);
- ``--config FILE`` expansion, and ``--config=FILE`` being ignored (RSM101).

:mod:`flake8_replayssm.recognise` finds the entry point in a command and hands over
its arguments; the result is a :class:`~flake8_replayssm.model.Launch`.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any, Sequence

from ... import config_files
from ...argv import ArgvWalk, image_tag_releases, is_number, placeholder, splice_config_files
from ...model import UNKNOWN, UNKNOWN_PART, Entry, Launch, Setting, Span, Word
from ..base import ConfigReader
from .knowledge import Knowledge, knowledge

#: a release tag, with the build variants vLLM publishes (``v0.11.0-cu130``, ``v0.10.1.1``);
#: release candidates and dev builds are not that release, so they pin nothing
_RELEASE_TAG = re.compile(r"v?(\d+\.\d+(?:\.\d+)?)(?:\.\d+)?(?:[-_][A-Za-z][0-9A-Za-z._-]*)?")


def image_release(image: str | None) -> str | None:
    """``vllm/vllm-openai:v0.33.0`` (or ``:v0.33.0-cu130``) -> ``0.33.0``; ``:latest`` -> ``latest``;
    a tag the file leaves unknown (``:v${VLLM_VERSION}`` from an ``ARG`` without a default) ->
    ``all``, every release (:mod:`flake8_replayssm.release_sets`); None for nightly, digests and
    release candidates, which name no release."""
    if not image or ":" not in image.rsplit("/", 1)[-1]:
        return None
    tag = image.rsplit(":", 1)[1]
    return image_tag_releases(tag) or (m.group(1) if (m := _RELEASE_TAG.fullmatch(tag)) else None)


def image_platform(image: str | None, know: Knowledge) -> str | None:
    """``vllm/vllm-openai-rocm:v0.31.0`` -> ``rocm`` (None: the image does not say)."""
    if not image:
        return None
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return know.image_platforms.get(name)


def program_entry(words: Sequence[Word], i: int, env: dict[str, Word]) -> Entry | None:
    """``vllm SUBCOMMAND ...`` with ``words[i]`` the vllm program."""
    return _program_entry(words, i, env, knowledge())


def _program_entry(words: Sequence[Word], i: int, env: dict[str, Word], know: Knowledge,
                   label: str = "vllm") -> Entry | None:
    """``vllm SUBCOMMAND ...`` (also ``python -m vllm.entrypoints.cli.main SUBCOMMAND``)."""
    first = words[i + 1].text if i + 1 < len(words) else None
    second = words[i + 2].text if i + 2 < len(words) else None
    for command, kind in know.entry_commands.items():
        parts = command.split()
        if parts == [first] or parts == [first, second]:
            return Entry("vllm", kind, list(words[i + 1 + len(parts):]), words[i].span, env,
                         label=f"{label} {command}")
    return None


def module_entry(module: str, words: Sequence[Word], i: int, rest: int, env: dict[str, Word]) -> Entry | None:
    """``python -m MODULE ...`` at ``words[i]``: one of vLLM's entry-point modules, or the
    console script's module (``vllm.entrypoints.cli.main SUBCOMMAND``)."""
    know = knowledge()
    if module == know.cli_module:
        return _program_entry(words, rest - 1, env, know, label=f"python -m {module}")
    kind = know.entry_modules.get(module)
    if kind is None:
        model_options = know.foreign_modules.get(module)
        if model_options is None:
            return None
        return Entry("vllm", "module", _foreign_args(words[rest:], model_options, words[i].span), words[i].span,
                     env, label=f"python -m {module}")
    return Entry("vllm", kind, list(words[rest:]), words[i].span, env, label=f"python -m {module}")


def _foreign_args(args: Sequence[Word], model_options: Sequence[str], anchor: Span) -> list[Word]:
    """The words of another package's module as vLLM's parser reads them: its model option is
    ``--model`` (written where it is); without one the model is the package's, unknown here."""
    out = [Word("--model", anchor), Word(None, anchor, label="the package's default model")]
    for word in args:
        flag, eq, value = (word.text or "").partition("=")
        if flag in model_options:
            word = Word("--model" + eq + value, word.span)
        out.append(word)
    return out


def names_a_value(flag: str, value: str) -> bool:
    """``--mamba-backend BACKEND`` in documentation: a vLLM option whose value is not one of its
    known values names the value to fill in."""
    know = knowledge()
    return flag.replace("_", "-") in know.long_option_set and value.lower() not in know.valid_backends


def launch_from_entry(entry: Entry, base_dir: str | None, read_config: ConfigReader) -> Launch:
    """The vLLM launch of ``entry`` (found by :func:`flake8_replayssm.recognise.find_entry`)."""
    return _Parser(entry, knowledge(), base_dir, read_config).run(entry.args)


def _flag_name(text: str) -> str:
    """``--mamba_backend.x`` -> ``mamba-backend.x`` (vLLM normalises only up to the first dot)."""
    body = text[2:]
    head, dot, tail = body.partition(".")
    return head.replace("_", "-") + dot + tail


def _parse_json(text: str) -> Any:
    value = json.loads(text)
    if isinstance(value, dict):
        return _dashless(value)
    return value


def _dashless(value: dict[str, Any]) -> dict[str, Any]:
    """vLLM's JSON options: dashes in top-level keys become underscores."""
    return {str(k).replace("-", "_"): v for k, v in value.items()}


def _dotted_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


_JSON_HOLE = "__rsm_hole__"
_JSON_PLACEHOLDER = re.compile(r"<[A-Za-z_][^<>\"]*>|(?<=[:\[,])\s*\{[A-Za-z_][\w.\-/ ]*\}")


def _json_with_holes(text: str) -> Any:
    """A JSON value part of which is unknown (``{"num_speculative_tokens": $N}``, a
    ``<draft-model>`` placeholder): the known keys, the unknown parts as UNKNOWN.
    Raises ValueError when the text is not JSON even then."""
    marked = _JSON_PLACEHOLDER.sub(f'"{_JSON_HOLE}"', text.replace(UNKNOWN_PART, _JSON_HOLE))
    try:
        value = json.loads(marked)
    except ValueError:  # a hole outside a string: `"k": $N`
        value = json.loads(re.sub(rf'(?<!["\w]){_JSON_HOLE}(?!["\w])', f'"{_JSON_HOLE}"', marked))

    def unhole(v: Any) -> Any:
        if isinstance(v, str):
            return UNKNOWN if _JSON_HOLE in v else v
        if isinstance(v, list):
            return [unhole(x) for x in v]
        if isinstance(v, dict):
            return {k: unhole(x) for k, x in v.items() if _JSON_HOLE not in k}
        return v

    return unhole(value)


def _convert(kind: str, word: Word) -> tuple[Any, str | None]:
    """The value of ``word`` for an option of ``kind``, and an error text if argparse rejects it."""
    text = word.text
    if text is not None and kind == "json" and (UNKNOWN_PART in text or "<" in text or "{" in text[1:]):
        try:
            value = _parse_json(text)
        except ValueError:
            try:
                value = _json_with_holes(text)
            except ValueError:
                value = None
        if value is not None:
            return (_dashless(value) if isinstance(value, dict) else value), None
    if text is None or UNKNOWN_PART in text:
        return UNKNOWN, None
    if kind == "json" and ("${" in text or "{{" in text):
        return UNKNOWN, None  # a template's JSON, completed before it runs
    if kind == "int":
        try:
            return int(text), None
        except ValueError:
            return UNKNOWN, f"invalid int value: {text!r}"
    if kind == "float":
        try:
            return float(text), None
        except ValueError:
            return UNKNOWN, f"invalid float value: {text!r}"
    if kind == "json":
        try:
            return _parse_json(text), None
        except ValueError:
            return UNKNOWN, f"invalid JSON value: {text!r}"
    return text, None


class _Parser(ArgvWalk):
    """State of one argv walk; mirrors argparse closely enough for the options we read."""

    def __init__(self, entry: Entry, know: Knowledge, base_dir: str | None,
                 read_config: ConfigReader) -> None:
        self.entry, self.know, self.base_dir, self.read_config = entry, know, base_dir, read_config
        self.launch = Launch(entry=entry.kind, anchor=entry.anchor, label=entry.label,
                             base_dir=base_dir, form="argv")
        self.positional: Setting | None = None
        self.model_flag: Setting | None = None
        self.model_maybe_consumed = False
        self.by_cli_name = {name.replace("_", "-"): spec for name, spec in know.options.items()}
        self.short = {s: spec for spec in know.options.values() for s in spec.short}

    # -- the walk -------------------------------------------------------------
    def expand_config(self, args: list[Word]) -> list[Word]:
        """Splice ``--config FILE`` in; ``--config=FILE`` is ignored by vLLM (RSM101)."""
        def words_of(flag: Word, path: Word) -> list[Word] | None:
            config = self.read_config(path.text, self.base_dir) if path.text is not None else None
            if config is None:
                return None
            self.launch.yaml_false.extend(config.false_keys)
            return list(config.words)

        return splice_config_files(args, self.launch, "vLLM", "expanded", words_of)

    def step(self, args: list[Word], i: int) -> int:
        word = args[i]
        if word.text is not None and UNKNOWN_PART in word.text:
            # `/models/$NAME`: a word with a written part is one word, whatever the unknown part is
            word = args[i] = Word(None, word.span, False, word.label)
        elif placeholder(word.text) is not None:
            word = args[i] = Word(None, word.span, placeholder(word.text) == "arguments", word.text)
        text = word.text
        if text is None:
            if not word.splat and self.positional is None and self.entry.kind == "serve":
                self.positional = Setting("model", UNKNOWN, word.span, "", word.span)
            else:
                self.launch.add_unseen(word.label)
            return i + 1
        if text == "--":
            return i + 1
        if text.startswith("--"):
            return self.long_option(args, i)
        if text.startswith("-") and len(text) > 1 and not is_number(text):
            return self.short_option(args, i)
        if self.lookalike(word, text.partition("=")[0], self.know.long_options, (), "vLLM"):
            return i + 1  # `—use-replayssm`: dashes that only look like dashes
        self.positional_word(word)
        return i + 1

    def positional_word(self, word: Word) -> None:
        if self.entry.kind == "api_server":
            self.finding(word.span, "RSM103", (
                f"{word.text!r} is ignored: python -m vllm.entrypoints.openai.api_server reads the "
                f"model only from --model, so it serves its default ({self.know.default_model}); "
                f"fix: write --model {word.text}"))
            return
        if self.positional is None:
            self.positional = Setting("model", word.text, word.span, "", word.span)

    def short_option(self, args: list[Word], i: int) -> int:
        word = args[i]
        text = word.text or ""
        flag, eq, inline = text.partition("=")
        spec = self.short.get(flag)
        if spec is None:
            return self.unknown_option(args, i, flag, bool(eq))
        return self.known_option(args, i, spec.name, spec.kind, flag, inline if eq else None)

    def long_option(self, args: list[Word], i: int) -> int:
        word = args[i]
        text = word.text or ""
        raw, eq, inline = text.partition("=")
        name = _flag_name(raw)
        head, dot, key = name.partition(".")
        spec = self.by_cli_name.get(head)
        if spec is not None and dot:
            return self.dotted_option(args, i, spec.name, key, raw, inline if eq else None)
        if spec is not None:
            return self.known_option(args, i, spec.name, spec.kind, raw, inline if eq else None)
        if spec is None and head != head.lower() and head.lower() in self.by_cli_name:
            self.finding(word.span, "RSM106", (
                f"{raw} is rejected by vLLM's argument parser (unrecognized arguments): flag names "
                f"are case-sensitive; fix: write --{head.lower()}"))
            return self.unknown_option(args, i, raw, bool(eq))
        if spec is None and not dot:
            spec = self.abbreviation(head)
            if spec is not None:
                return self.known_option(args, i, spec.name, spec.kind, raw, inline if eq else None)
        if head.startswith("no-disable-") and self.by_cli_name.get("enable-" + head[len("no-disable-"):]):
            self.finding(word.span, "RSM104", (
                f"{raw} does not exist in any vLLM release (argparse rejects it: unrecognized "
                f"arguments); fix: write --enable-{head[len('no-disable-'):]}"))
            return i + 1
        for prefix, value in (("no-", False), ("disable-", False)):
            if head.startswith(prefix):
                base = head[len(prefix):]
                target = self.by_cli_name.get(base if prefix == "no-" else "enable-" + base)
                if target is not None and target.kind == "bool":
                    self.set(Setting(target.name, value, word.span, raw))
                    return i + 1
        self.lookalike(word, raw, self.know.long_options, self.know.replayssm_options, "vLLM")
        return self.unknown_option(args, i, raw, bool(eq))

    def abbreviation(self, head: str) -> Any:
        """argparse's allow_abbrev: a unique prefix of one long option stands for it."""
        name = _abbreviated(self.know, head)
        return self.by_cli_name.get(name) if name is not None else None

    def known_option(self, args: list[Word], i: int, name: str, kind: str, spelling: str,
                     inline: str | None) -> int:
        word = args[i]
        if kind == "bool":
            return self.switch(args, i, name, spelling, inline, engine="vLLM", off=f" or --no-{spelling[2:]}",
                               hint_inline=False)
        if inline is not None:
            value_word = Word(inline, word.span)
            nxt_index = i + 1
        elif i + 1 < len(args):
            value_word = args[i + 1]
            nxt_index = i + 2
            if value_word.splat:  # `--model $MODEL`: the value, whatever it is
                value = UNKNOWN
                if kind == "model":
                    self.model_flag = Setting("model", value, word.span, spelling, value_word.span)
                else:
                    self.set(Setting(name, value, word.span, spelling, value_word.span))
                return nxt_index
        else:
            self.finding(word.span, "RSM106", f"{spelling} expects one argument; fix: give it a value")
            return i + 1
        if value_word.text is not None and (UNKNOWN_PART in value_word.text or placeholder(value_word.text)):
            value_word = Word(None, value_word.span)
        if kind == "model":
            self.model_flag = Setting("model", value_word.text if value_word.text is not None else UNKNOWN,
                                      word.span, spelling, value_word.span)
            return nxt_index
        value, error = _convert(kind, value_word)
        if error:
            self.finding(value_word.span, "RSM106", f"argument {spelling}: {error}; fix: give a valid value")
        self.set(Setting(name, value, word.span, spelling, value_word.span))
        return nxt_index

    def dotted_option(self, args: list[Word], i: int, name: str, key: str, spelling: str,
                      inline: str | None) -> int:
        word = args[i]
        if inline is not None:
            value_word, nxt = Word(inline, word.span), i + 1
        elif i + 1 < len(args):
            value_word, nxt = args[i + 1], i + 2
        else:
            return i + 1
        current = self.launch.options.get(name)
        base = dict(current.value) if current is not None and isinstance(current.value, dict) else {}
        value = UNKNOWN if value_word.text is None else _dotted_value(value_word.text)
        node = base
        parts = key.replace("-", "_").split(".") if "." in key else [key.replace("-", "_")]
        for part in parts[:-1]:
            node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
        node[parts[-1]] = value
        span = current.span if current is not None else word.span
        self.set(Setting(name, base, span, spelling, value_word.span))
        return nxt

    def unknown_option(self, args: list[Word], i: int, spelling: str, has_inline: bool) -> int:
        """A flag the linter does not model: skip it and, if it takes one, its value; an option
        vLLM does not have (a fork's, a plugin's) takes the words up to the next option, since
        its arity is unknown (:meth:`ArgvWalk.past_unknown_option`)."""
        if has_inline:
            return i + 1
        name = spelling.lstrip("-").replace("-", "_")
        valueless = (name in self.know.flags_without_value
                     or name.startswith(("enable_", "disable_", "no_")))
        if valueless or i + 1 >= len(args):
            return i + 1
        nxt = args[i + 1]
        if nxt.text is not None and nxt.text.startswith("-") and not is_number(nxt.text):
            return i + 1
        self.model_maybe_consumed = True
        known = spelling.startswith("--") and (spelling in self.know.long_options
                                               or _abbreviated(self.know, spelling[2:]) is not None)
        return i + 2 if known else self.past_unknown_option(args, i)

    def set(self, setting: Setting) -> None:
        self.launch.options[setting.name] = setting
        self.launch.history.append(setting)

    def finish(self) -> None:
        launch = self.launch
        launch.env = {
            key: Setting(key, word.text if word.text is not None else UNKNOWN, word.span, key, word.span)
            for key, word in self.entry.env.items()
        }
        if self.model_flag is not None:
            launch.model = self.model_flag
        elif self.positional is not None and self.entry.kind == "serve":
            launch.model = self.positional
        elif (self.model_maybe_consumed or launch.unseen) and self.entry.kind == "serve":
            # `vllm serve --some-flag X` where X may be the model, or `vllm serve "$@"`
            # (the caller's arguments usually hold it): do not guess
            launch.model = Setting("model", UNKNOWN, launch.anchor, "")
        elif launch.unseen and self.entry.kind == "api_server":
            launch.model = Setting("model", UNKNOWN, launch.anchor, "")
        launch.release_hint = image_release(self.entry.image)
        launch.platform_hint = image_platform(self.entry.image, self.know)


#: per Knowledge (by id, the object kept alive with it): its long option names sorted, and
#: the abbreviations already looked up (a hostile command repeats one unknown flag 500,000 times)
_ABBREVIATIONS: dict[int, tuple[Knowledge, list[str], dict[str, str | None]]] = {}


def _abbreviated(know: Knowledge, head: str) -> str | None:
    """The one long option name (without ``--``) that ``head`` is a prefix of, else None."""
    entry = _ABBREVIATIONS.get(id(know))
    if entry is None or entry[0] is not know:
        entry = _ABBREVIATIONS[id(know)] = (know, sorted(o[2:] for o in know.long_options), {})
    _, names, seen = entry
    if head in seen:
        return seen[head]
    at = bisect.bisect_left(names, head)
    unique = at < len(names) and names[at].startswith(head) \
        and not (at + 1 < len(names) and names[at + 1].startswith(head))
    found = names[at] if unique else None
    if len(seen) < 4096:
        seen[head] = found
    return found


def launch_from_serve_config(text: str, *, base_dir: str | None = None,
                             know: Knowledge | None = None) -> Launch | None:
    """A ``vllm serve --config`` YAML file judged on its own, as ``vllm serve --config FILE``."""
    config = config_files.config_args_from_text(text)
    if config is None or not (config.words or config.false_keys):
        return None
    know = know or knowledge()
    anchor = config.words[0].span if config.words else config.false_keys[0].span
    entry = Entry("vllm", "serve", [], anchor, {}, label="vllm serve --config")
    parser = _Parser(entry, know, base_dir, config_files.read_config_file)
    parser.launch.yaml_false.extend(config.false_keys)
    launch = parser.run(list(config.words))
    if launch.model is None:
        # such a file is used as `vllm serve MODEL --config FILE`: the model is elsewhere
        launch.model = Setting("model", UNKNOWN, anchor, "")
    return launch
