"""Engine options written under a framework's own names, read as the engine's (data/frameworks.toml).

An RL trainer, an eval harness or a container entrypoint starts vLLM or SGLang itself, with
options the user wrote in the framework's places: a Hydra override on its command line
(``actor_rollout_ref.rollout.engine_kwargs.vllm.use_replayssm=True``), a prefix on its own
options (``--sglang-enable-linear-replayssm``), ``--model vllm --model_args k=v,...``, an
environment variable (``SM_VLLM_USE_REPLAYSSM=true``), a block of its config file (read by
:mod:`flake8_replayssm.frontends.structured.forwarded`).  Each form is data: which framework,
which engine, how it hands the options over, and the framework's source that shows it.

The recogniser (:func:`flake8_replayssm.recognise.launch_from_command`) asks here when a
command starts no engine itself.  A form that the engine reads as a command line comes back as
a :class:`~flake8_replayssm.model.Command` that starts the engine the way the framework does
(the words keep the places they are written at); a keyword form as a keyword
:class:`~flake8_replayssm.model.Launch`.  Either way the launch is marked as written in the
framework's names (``Launch.forwarded_by``): its fixes are the framework's spelling, not the
engine's, and are left to the user where the linter cannot write them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Sequence

from . import engines
from .data_files import read_data
from .model import UNKNOWN, Command, Launch, Setting, Span, Word


@dataclass(frozen=True)
class Forward:
    """A block of a framework's config whose keys are the engine's options (see the data file)."""

    #: the framework, the engine it forwards to, how ("keywords", "options", "argv"), and the
    #: framework's source that does it
    framework: str
    engine: str
    form: str
    source: str
    #: the keys that lead to the block, and how many at their end identify it (0: all)
    block: tuple[str, ...] = ()
    anchor: int = 0
    #: the key beside the anchor's first key that picks the engine, the values that pick this
    #: entry's, and the engine picked when it is not written
    choose_key: str | None = None
    choose_values: frozenset[str] = frozenset()
    choose_default: str | None = None
    #: paths of the model; options the framework sets itself, each from one of its own keys
    model: tuple[tuple[str, ...], ...] = ()
    sets: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: keys may be written with dashes; files that are such a block as a whole
    dashes: bool = False
    files: frozenset[str] = frozenset()
    #: the command the framework starts, and its option that gives the model ("options", "argv")
    runs: tuple[str, ...] = ()
    model_option: str = ""

    @property
    def anchor_keys(self) -> tuple[str, ...]:
        return self.block[len(self.block) - self.anchor:] if self.anchor else self.block

    def label(self) -> str:
        return f"{self.framework} {'.'.join(self.anchor_keys) or 'engine arguments'}"


@dataclass(frozen=True)
class EnvPrefix:
    """A container entrypoint that turns ``PREFIX<NAME>=value`` into ``--name value``."""

    framework: str
    engine: str
    prefix: str
    source: str
    #: the command the framework starts, and its option for the model
    runs: tuple[str, ...] = ()
    model_option: str = ""


@dataclass(frozen=True)
class Prefix(EnvPrefix):
    """Options of a framework's command line forwarded to the engine without a prefix."""

    #: the framework's own option that holds the model, and its own options under the same
    #: prefix (not the engine's)
    model: str = ""
    own: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ModelArgs:
    """An eval harness's ``--model NAME --model_args k=v,...``."""

    framework: str
    programs: frozenset[str]
    names: dict[str, str]
    model_keys: tuple[str, ...]
    source: str
    #: the form is read under any program too (a harness built on this one: evalchemy's eval.eval)
    by_content: bool = False


@dataclass(frozen=True)
class ArgsString:
    """A framework's option (``--server_args``) or config key (``server_args:``) holding a string of
    the engine's own command-line words, beside the option or key that picks the engine."""

    framework: str
    key: str
    choose: str
    #: the value of ``choose`` -> the engine; the command the framework starts for each engine,
    #: and its option that gives the model (read from the ``model`` option or key beside them)
    engines: dict[str, str]
    runs: dict[str, tuple[str, ...]]
    model_option: dict[str, str]
    model: str
    source: str
    #: the stored form (``[[stored_args]]``): ``PROGRAM ENGINE SUBCOMMAND WORDS...`` keeps the words
    #: for the engine's next launch (Harbor's ``harbor vllm args '--x 1'``)
    program: str = ""
    subcommand: str = ""


@dataclass(frozen=True)
class Tables:
    forwards: tuple[Forward, ...]
    prefixes: tuple[Prefix, ...]
    model_args: tuple[ModelArgs, ...]
    env: tuple[EnvPrefix, ...]
    args_strings: tuple[ArgsString, ...] = ()
    #: the keyword class each engine's keyword blocks are read as
    keyword_class: dict[str, str] = field(default_factory=dict)


def _path(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.split(".") if part)


@lru_cache(maxsize=1)
def tables() -> Tables:
    raw = read_data("data/frameworks.toml")
    forwards = []
    for item in raw.get("forward", []):
        block = _path(item.get("block", ""))
        choose = item.get("choose") or {}
        forwards.append(Forward(
            item["framework"], item["engine"], item["form"], item["source"], block=block,
            anchor=int(item.get("anchor", len(block))), choose_key=choose.get("key"),
            choose_values=frozenset(choose.get("values", ())), choose_default=item.get("choose_default"),
            model=tuple(_path(p) for p in item.get("model", ())),
            sets=tuple((name, _path(where)) for name, where in (item.get("sets") or {}).items()),
            dashes=bool(item.get("dashes", False)), files=frozenset(item.get("files", ())),
            runs=tuple(item.get("runs", "").split()), model_option=item.get("model_option", "")))
    prefixes = tuple(Prefix(p["framework"], p["engine"], p["prefix"], p["source"], tuple(p["runs"].split()),
                            p["model_option"], p.get("model", ""), frozenset(p.get("own", ())))
                     for p in raw.get("prefix", []))
    model_args = tuple(ModelArgs(m["framework"], frozenset(m["programs"]), dict(m["names"]), tuple(m["model_keys"]),
                                 m["source"], bool(m.get("by_content", False))) for m in raw.get("model_args", []))
    env = tuple(EnvPrefix(e["framework"], e["engine"], e["prefix"], e["source"], tuple(e["runs"].split()),
                          e["model_option"]) for e in raw.get("env", []))
    args_strings = tuple(ArgsString(a.get("framework", ""), a.get("key", ""), a.get("choose", ""), dict(a["engines"]),
                                    {k: tuple(v.split()) for k, v in a["runs"].items()}, dict(a["model_option"]),
                                    a.get("model", ""), a["source"], a.get("program", ""), a.get("subcommand", ""))
                         for a in raw.get("args_string", []) + raw.get("stored_args", []))
    return Tables(tuple(forwards), prefixes, model_args, env, args_strings, dict(raw.get("keyword_class", {})))


def keyword_class(engine: str) -> str:
    """The class whose keywords an engine's keyword block is read as (``EngineArgs``)."""
    return tables().keyword_class[engine]


def engine_options(engine: str) -> frozenset[str]:
    """The option names (field names) the engine's keyword launches read."""
    return engines.get(engine).keyword_options()


def forwards_an_option(engine: str, name: str) -> bool:
    """Whether ``name`` (a field name) is one the engine reads, or looks like a ReplaySSM option
    (a misspelt one is still the user's ReplaySSM option, reported as such)."""
    return name in engine_options(engine) or "replay" in name.lower()


def word_setting(name: str, word: Word) -> Setting:
    return Setting(name, word.text if word.text is not None else UNKNOWN, word.span, name, word.span)


def scalar_value(text: str) -> Any:
    """A value written on a command line (``True``, ``0``, ``0.9``, ``[1,2]``, ``{a: 1}``, ``x``)
    as the framework's parser types it (Hydra's grammar is YAML's for these)."""
    if text == "":
        return ""
    try:
        import yaml

        value = yaml.safe_load(text)
    except Exception:
        return text
    return text if value is None and text.lower() not in ("null", "none", "~") else value


def keyword_launch(engine: str, *, label: str, anchor: Span, model: Setting | None,
                   keywords: dict[str, Setting], env: dict[str, Setting], base_dir: str | None,
                   unseen: Sequence[str] = (), forwarded_by: str) -> Launch | None:
    """A keyword launch of ``engine`` read from a framework's names; without a model written, the
    model is the framework's (unknown here), never the engine's default."""
    if model is None and not {"model", "model_path"} & set(keywords):
        model = Setting("model", UNKNOWN, anchor, "")
    launch = engines.get(engine).launch_from_keywords(
        keyword_class(engine), label=label, anchor=anchor, model=model, keywords=keywords,
        unseen=list(unseen), env=env, base_dir=base_dir)
    if launch is not None:
        launch.forwarded_by = forwarded_by
    return launch


def block_score(forward: Forward, keys: Sequence[str]) -> int:
    """How many keys of ``forward``'s block end ``keys`` (the path to a block): 0 when its anchor
    does not; the entry that names more of the path is the one meant (PipelineRL's
    ``vllm_config.vllm_kwargs`` over NeMo-RL's ``...generation.vllm_kwargs``)."""
    anchor = forward.anchor_keys
    if not anchor or tuple(keys[len(keys) - len(anchor):]) != anchor:
        return 0
    score = 0
    while score < min(len(keys), len(forward.block)) and keys[len(keys) - 1 - score] == forward.block[-1 - score]:
        score += 1
    return score


def best_forwards(keys: Sequence[str], forms: Iterable[str] | None = None) -> list[Forward]:
    """The entries whose block ``keys`` (a path) ends in, the most specific ones."""
    allowed = set(forms) if forms is not None else None
    scored = [(block_score(f, keys), f) for f in tables().forwards if allowed is None or f.form in allowed]
    best = max((score for score, _ in scored), default=0)
    return [f for score, f in scored if score and score == best]


def chosen(forward: Forward, value: str | None) -> bool:
    """Whether the block is used, given the value written for its ``choose`` key (None: not written)."""
    if forward.choose_key is None:
        return True
    if value is None:
        return (forward.choose_default or forward.engine) == forward.engine
    return value.strip().strip("'\"").lower() in forward.choose_values


def engine_words(runs: Sequence[str], where: Span) -> list[Word]:
    return [Word(text, where) for text in runs]


def args_string_command(entry: ArgsString, engine_name: str, model: Word | None, args: Word,
                        args_chars: Callable[[int], Span | None], *, base_dir: str | None,
                        env: dict[str, Word] | None = None) -> Command | None:
    """The command ``entry``'s framework starts for the engine ``engine_name`` picks: its own
    words, the model (unknown when not written: the framework's), then the words of the string
    (``args``), each placed by ``args_chars`` (the span of its characters in the string) where
    the reader can, else at the string."""
    if args.text is None:
        return None
    return stored_args_command(entry, engine_name, model, split_placed(args, args_chars), args.span,
                               base_dir=base_dir, env=env)


def stored_args_command(entry: ArgsString, engine_name: str, model: Word | None, args: list[Word], anchor: Span,
                        *, base_dir: str | None, env: dict[str, Word] | None = None) -> Command | None:
    """The command ``entry``'s framework starts for the engine ``engine_name`` picks, with the
    engine's words ``args`` at its end (None: not an engine of the framework)."""
    engine = entry.engines.get(engine_name.strip().strip("'\"").lower())
    if engine is None:
        return None
    model = model if model is not None else Word(None, anchor)
    words = engine_words(entry.runs[engine], anchor) + [Word(entry.model_option[engine], model.span), model]
    return Command(words=words + args, env=dict(env or {}), base_dir=base_dir, forwarded_by=entry.framework)


def split_placed(word: Word, chars_at: Callable[[int], Span | None]) -> list[Word]:
    """The words of a string of command-line words, each placed by ``chars_at`` (the span of a
    character of the string) where it can be, else at the string."""
    from .frontends._common import split_words

    out = []
    for text, chars, _, _ in split_words(word.text or ""):
        where = None
        if chars:
            first, last = chars_at(chars[0]), chars_at(chars[-1])
            if first is not None and last is not None:
                where = Span(first.line, first.col, last.end_line, last.end_col)
        out.append(Word(text, where or word.span))
    return out


# ---------------------------------------------------------------------------------------------
# environments
# ---------------------------------------------------------------------------------------------

def command_from_env(env: dict[str, Word], where: Span, *, base_dir: str | None = None,
                     image: str | None = None) -> Command | None:
    """The command a container entrypoint builds from ``PREFIX<NAME>`` variables, or None."""
    for entry in tables().env:
        names = [name for name in env if name.startswith(entry.prefix) and len(name) > len(entry.prefix)]
        if not names:
            continue
        words = engine_words(entry.runs, where)
        rest = {k: v for k, v in env.items() if not k.startswith(entry.prefix)}
        for name in names:
            word = env[name]
            flag = "--" + name[len(entry.prefix):].lower().replace("_", "-")
            value = word.text.strip().lower() if word.text is not None else None
            if value == "false":  # a switch left off
                continue
            words.append(Word(flag, word.span))
            if value not in ("true", ""):  # `true` and an empty value: the switch alone
                words.append(word)
        return Command(words=words, env=rest, base_dir=base_dir, image=image, forwarded_by=entry.framework)
    return None


def env_forwarding(names: Iterable[str]) -> bool:
    """Whether some of ``names`` are variables a container entrypoint turns into engine options."""
    prefixes = tuple(e.prefix for e in tables().env)
    return any(name.startswith(prefixes) for name in names)
