"""Engine options written on a framework's command line, read as the engine's launch.

What the recogniser (:func:`flake8_replayssm.recognise.launch_from_command`) asks when a command
starts no engine itself: does the framework it runs hand options to one (data/frameworks.toml,
:mod:`.passthrough`)?  Three ways a command line says so:

- configuration written on it: Hydra overrides (``+a.rollout.engine_kwargs.vllm.x=True``),
  ``key=value`` words (``vllm_config='{"x": true}'``) and JSON objects given as a value: read
  into one tree, in which a framework's block is found as in a config file;
- options under a prefix (``--sglang-mem-fraction-static 0.8``): the engine's option without it;
- an eval harness's ``--model vllm --model_args k=v,...``;
- a string of the engine's own words (NeMo-Skills' ``--server_type=vllm --server_args="..."``).

A form the engine reads as a command line comes back as a :class:`~.model.Command` that starts
the engine as the framework does (the words keep the places they are written at), a keyword
form as a keyword :class:`~.model.Launch`; both marked as written in the framework's names.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Sequence

from .model import UNKNOWN, UNKNOWN_PART, Command, Launch, Setting, Span, Word
from .passthrough import (
    Forward,
    ModelArgs,
    args_string_command,
    best_forwards,
    chosen,
    engine_words,
    forwards_an_option,
    keyword_launch,
    scalar_value,
    split_placed,
    stored_args_command,
    tables,
    word_setting,
)

#: ``key.path=value`` (a Hydra override, ``+``/``++`` to add), ``key=value``
_KEY_VALUE = re.compile(r"^(?:\+\+|\+)?([A-Za-z_][\w-]*(?:\.[\w-]+)*)=(.*)$", re.S)


def forwarded_by_command(command: Command) -> Command | Launch | None:
    """What ``command`` (a framework's command line, no engine's own) hands to an engine: a
    command the engine reads, a keyword launch, or None."""
    if not any(w.text and ("=" in w.text or w.text.startswith(("--", "{"))) for w in command.words):
        return None
    for read in (_configuration, _prefixed, _model_args, _args_string):
        found = read(command)
        if found is not None:
            return found
    return None


def _env_settings(command: Command) -> dict[str, Setting]:
    return {name: word_setting(name, word) for name, word in command.env.items()}


@dataclass
class _Leaf:
    """A value of the command line's configuration, and the word it is written in."""

    value: Any
    word: Word


def _tree(value: Any, word: Word) -> Any:
    if isinstance(value, dict):
        return {str(k): _tree(v, word) for k, v in value.items()}
    return _Leaf(value, word)


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    return node.value


def _first_word(node: Any) -> Word:
    return node.word if isinstance(node, _Leaf) else _first_word(next(iter(node.values())))


def _configuration_trees(command: Command) -> list[dict[str, Any]]:
    """The configuration a command line writes: its ``key=value`` words in one tree (dotted keys
    nested), and each JSON object given as a value as a tree of its own."""
    flat: dict[str, Any] = {}
    trees = [flat]
    for word in command.words:
        text = word.text
        if text is None:
            continue
        match = _KEY_VALUE.match(text)
        if match is not None:
            keys = [k for k in match.group(1).split(".") if k]
            holder = flat
            for key in keys[:-1]:
                nxt = holder.get(key)
                holder[key] = nxt = nxt if isinstance(nxt, dict) else {}
                holder = nxt
            holder[keys[-1]] = _tree(_value(match.group(2)), word)
        elif text.lstrip().startswith("{"):
            value = _value(text)
            if isinstance(value, dict):
                trees.append(_tree(value, word))
    return [t for t in trees if t]


def _value(text: str) -> Any:
    """A value written on a command line: JSON, else as Hydra/YAML types it; unknown where part
    of it is (``backend=$BACKEND``)."""
    if UNKNOWN_PART in text:
        return UNKNOWN
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return scalar_value(text)


def _lookup(tree: dict[str, Any], path: Sequence[str]) -> Any:
    node: Any = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _configuration(command: Command) -> Launch | None:
    """A framework's block written in the command line's configuration."""
    for tree in _configuration_trees(command):
        stack: list[tuple[dict[str, Any], tuple[str, ...]]] = [(tree, ())]
        while stack:
            node, keys = stack.pop()
            for key, value in node.items():
                if not isinstance(value, dict):
                    continue
                here = keys + (key,)
                for forward in best_forwards(here, ("keywords", "options")):
                    if forward.files:
                        continue  # a block of one file's, never written on a command line
                    launch = _block_launch(forward, tree, here, value, command)
                    if launch is not None:
                        return launch
                stack.append((value, here))
    return None


def _block_launch(forward: Forward, tree: dict[str, Any], here: tuple[str, ...], block: dict[str, Any],
                  command: Command) -> Launch | None:
    holder_path = here[:len(here) - len(forward.anchor_keys)]
    choice = _lookup(tree, holder_path + ((forward.choose_key,) if forward.choose_key else ()))
    if isinstance(choice, _Leaf) and choice.value is UNKNOWN:
        return None  # the engine is picked by a value the file does not show: maybe another one
    if not chosen(forward, str(choice.value) if isinstance(choice, _Leaf) and forward.choose_key else None):
        return None
    keywords: dict[str, Setting] = {}
    for key, value in block.items():  # every key: the framework forwards them all
        name = key.replace("-", "_") if forward.dashes or forward.form == "options" else key
        word = _first_word(value)
        keywords[name] = Setting(name, _plain(value), word.span, key, word.span)
    if not keywords:
        return None
    anchor = next(iter(keywords.values())).span
    model = None
    for path in forward.model:
        found = _lookup(tree, path)
        if isinstance(found, _Leaf):
            model = Setting("model", found.value if found.value not in (None, "") else UNKNOWN, found.word.span, "",
                            found.word.span)
    for name, where in forward.sets:
        if name not in keywords:
            found = _lookup(tree, holder_path + where)
            keywords[name] = Setting(name, found.value if isinstance(found, _Leaf) else UNKNOWN,
                                     found.word.span if isinstance(found, _Leaf) else anchor, name)
    return keyword_launch(forward.engine, label=f"{forward.label()} (on the command line)", anchor=anchor,
                          model=model, keywords=keywords, env=_env_settings(command), base_dir=command.base_dir,
                          forwarded_by=forward.framework)


def _prefixed(command: Command) -> Command | None:
    """``--sglang-mem-fraction-static 0.8`` on a framework's command line: the engine's option."""
    words = command.words
    for prefix in tables().prefixes:
        if not any(w.text and w.text.startswith(prefix.prefix) for w in words):
            continue
        out: list[Word] = []
        model: Word | None = None
        k = 0
        while k < len(words):
            text = words[k].text or ""
            if prefix.model and (text == prefix.model or text.startswith(prefix.model + "=")):
                model = _option_value(words, k)
            if not text.startswith(prefix.prefix):
                k += 1
                continue
            name, eq, value = text[len(prefix.prefix):].partition("=")
            k += 1
            if name in prefix.own or not forwards_an_option(prefix.engine, name.replace("-", "_")):
                continue
            out.append(replace(words[k - 1], text="--" + name + (eq + value if eq else "")))
            while not eq and k < len(words) and not (words[k].text or "-").startswith("-"):
                out.append(words[k])  # the option's values
                k += 1
        if not out:
            continue
        head = engine_words(prefix.runs, out[0].span)
        if model is not None and prefix.model_option:
            head += [Word(prefix.model_option, model.span), model]
        return replace(command, words=head + out, forwarded_by=prefix.framework)
    return None


def _option_value(words: Sequence[Word], k: int) -> Word | None:
    text = words[k].text or ""
    if "=" in text:
        name, _, value = text.partition("=")
        return Word(value, words[k].span)
    return words[k + 1] if k + 1 < len(words) else None


def _model_args(command: Command) -> Launch | None:
    """``lm_eval --model vllm --model_args pretrained=M,use_replayssm=True``; the same form under
    another program (evalchemy's ``python -m eval.eval``, built on lm-evaluation-harness) is read
    by content, as the harness whose ``--model`` names the engine (``by_content`` in the data)."""
    words = command.words
    texts = [w.text or "" for w in words]
    harnesses = tables().model_args
    for harness in harnesses:
        at = next((k for k, t in enumerate(texts) if _names_program(t, texts[k - 1] if k else "", harness)), None)
        if at is not None:
            found = _harness_launch(command, harness, at, harness.framework)
            if found is not None:
                return found
    for harness in harnesses:
        if harness.by_content:
            found = _harness_launch(command, harness, 0, f"{harness.framework}'s --model_args form")
            if found is not None:
                return found
    return None


def _harness_launch(command: Command, harness: ModelArgs, at: int, framework: str) -> Launch | None:
    """The launch of ``--model NAME --model_args k=v,...`` after ``words[at]``, as ``harness``
    reads it; None when the command does not say both or NAME is not an engine of the harness."""
    words = command.words
    texts = [w.text or "" for w in words]
    engine_word = model_args = None
    for k in range(at + 1, len(words)):
        if texts[k] == "--model" or texts[k].startswith("--model="):
            engine_word = _option_value(words, k)
        elif texts[k].partition("=")[0] in ("--model_args", "--model-args"):
            model_args = _option_value(words, k)
    if engine_word is None or model_args is None or engine_word.text not in harness.names:
        return None
    engine = harness.names[engine_word.text]
    if model_args.text is None:
        return None  # `--model_args "$ARGS"`: nothing to read
    keywords: dict[str, Setting] = {}
    model = None
    for pair in _split_pairs(model_args.text):
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq:
            continue
        typed = _harness_value(value.strip())
        setting = Setting(key, UNKNOWN if _placeholder(value) else typed, model_args.span, key, model_args.span)
        if key in harness.model_keys:
            model = replace(setting, name="model")
        elif forwards_an_option(engine, key):
            keywords[key] = setting
    return keyword_launch(engine, label=f"{framework} --model {engine_word.text} --model_args",
                          anchor=engine_word.span, model=model, keywords=keywords, env=_env_settings(command),
                          base_dir=command.base_dir, forwarded_by=framework)


def _names_program(text: str, before: str, harness: ModelArgs) -> bool:
    name = text.rsplit("/", 1)[-1]
    return name in harness.programs or (before == "-m" and text in harness.programs)


def _split_pairs(text: str) -> list[str]:
    """``k=v,k=v`` split at the commas outside brackets and quotes (a JSON value may hold commas)."""
    out, depth, quote, current = [], 0, "", []
    for c in text:
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        elif c == "," and depth <= 0:
            out.append("".join(current))
            current = []
            continue
        current.append(c)
    out.append("".join(current))
    return [p for p in out if p.strip()]


def _harness_value(text: str) -> Any:
    """The harness's own typing of a ``--model_args`` value: true/false, numbers, else the string."""
    unquoted = text.strip("'\"")
    if unquoted.lower() in ("true", "false"):
        return unquoted.lower() == "true"
    for kind in (int, float):
        try:
            return kind(unquoted)
        except ValueError:
            pass
    if unquoted.startswith(("{", "[")):
        return scalar_value(unquoted)
    return unquoted


def _placeholder(value: str) -> bool:
    return bool(re.search(r"\{[^}]*\}|\$|<[^>]+>", value))


def _args_string(command: Command) -> Command | None:
    """``ns eval --model=M --server_type=vllm --server_args="--x 1"``: the engine's command the
    framework starts, with the string's words placed where they are written."""
    words = command.words
    for entry in tables().args_strings:
        if entry.program:
            stored = _stored_args(command, entry)
            if stored is not None:
                return stored
            continue
        found: dict[str, tuple[Word, int] | None] = {entry.key: None, entry.choose: None, entry.model: None}
        for k, word in enumerate(words):
            name = (word.text or "").partition("=")[0]
            if name.startswith("--") and name[2:] in found:
                value = _option_value(words, k)
                if value is not None:
                    found[name[2:]] = (value, len(name) + 1 if "=" in (word.text or "") else 0)
        args, choice = found[entry.key], found[entry.choose]
        if args is None or choice is None or choice[0].text is None:
            continue
        model = found[entry.model][0] if entry.model and found[entry.model] else None
        return args_string_command(entry, choice[0].text, model, args[0], _char_spans(args[0], args[1]),
                                   base_dir=command.base_dir, env=command.env)
    return None


def _char_spans(value: Word, prefix: int):  # type: ignore[no-untyped-def]
    """Where character ``k`` of an option's value is: the word is ``--name=VALUE`` (``prefix``
    characters before it) or ``VALUE``, quoted or not, on one line; None when it cannot say."""
    span, text = value.span, value.text or ""
    extra = span.end_col - span.col - prefix - len(text) if span.line == span.end_line else -1
    if extra not in (0, 2):
        return lambda k: None
    start = span.col + prefix + extra // 2
    return lambda k: Span(span.line, start + k, span.line, start + k + 1)


def _stored_args(command: Command, entry: Any) -> Command | None:
    """``harbor vllm args '--x 1 --y'``: words a tool keeps for the engine's next launch, read as
    that launch (the model the tool keeps apart: unknown)."""
    words = command.words
    for i, word in enumerate(words[:-3]):
        if (word.text or "").rsplit("/", 1)[-1] != entry.program or words[i + 2].text != entry.subcommand:
            continue
        rest = words[i + 3:]
        if any(w.text is None for w in rest):
            return None  # `harbor vllm args "$ARGS"`: nothing to read
        args = [w for value in rest for w in split_placed(value, _char_spans(value, 0))]
        return stored_args_command(entry, words[i + 1].text or "", None, args, words[i + 1].span,
                                   base_dir=command.base_dir, env=command.env)
    return None
