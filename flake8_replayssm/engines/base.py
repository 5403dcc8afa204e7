"""The one shape every serving engine has: what the core may ask an engine, and nothing else.

Modelled on pre-commit's ``languages/``: each engine is a package of the same shape
(``engines/vllm/``, ``engines/sglang/``) whose ``engine`` module satisfies
:class:`Engine`, registered by name in :mod:`flake8_replayssm.engines`.  The core
(recognition, frontends, reports, fixes, the language server, the flake8 plugin) calls
only this interface and never asks which engine it holds; an engine imports only the
core's low layer (model, argv, versions, wrappers, verdicts, scenarios, rulebase, ...)
and its own modules, never another engine.

An engine's ``engine`` module stays cheap to import: its tables are read (and its heavier
modules imported) only when a launch of that engine is met.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

if TYPE_CHECKING:
    from ..config import LintConfig
    from ..config_files import ConfigArgs
    from ..model import Entry, Finding, Launch, Setting, Span, Word
    from ..rulebase import Rule
    from ..verdicts import Verdict

ConfigReader = Callable[[str, "str | None"], "ConfigArgs | None"]


@dataclass(frozen=True)
class Words:
    """The words by which an engine's launches are recognised in text, before any parse.

    They are cheap substring and regular-expression screens: a file none of them matches
    is never parsed for this engine's launches.
    """

    #: programs whose basename starts the engine (``vllm``)
    programs: frozenset[str]
    #: text whose presence makes a Python string a possible command line (``vllm serve``)
    launch_strings: tuple[str, ...]
    #: a regular expression a Python string constant must match to be part of a command line
    launch_word: str
    #: text that marks a keyword launch call in Python (``LLM(``, ``EngineArgs``)
    call_words: tuple[str, ...]
    #: classes whose keyword arguments are the engine's options (``LLM``, ``EngineArgs``)
    keyword_classes: frozenset[str]
    #: names whose call in a code block says it is Python using the engine (a fence without a language)
    python_names: frozenset[str]
    #: a regular expression for a line that looks like this engine's launch (``--show-launches``)
    launch_looking: str
    #: a regular expression for its image's name on a line (``\S*vllm/vllm-openai\S*``)
    image_name: str


@dataclass(frozen=True)
class ImageRole:
    """What a container image of an engine does with the words after it.

    ``entry`` is the entry kind its default command starts (vLLM's ``vllm/vllm-openai`` runs
    ``vllm serve`` with the arguments), or None when the image has no serving entrypoint and
    only pins the engine's release (SGLang's ``lmsysorg/sglang`` runs what it is given).
    """

    engine: str
    entry: str | None
    label: str = ""


class Engine(Protocol):
    """What an engine's ``engine`` module provides (:mod:`flake8_replayssm.engines.vllm.engine` is one)."""

    NAME: str  # "vllm": Launch.engine, Finding.engine, settings and outputs use it
    TITLE: str  # "vLLM": how messages and reports name it
    PACKAGE: str  # the distribution whose pins and installed version name its release
    WORDS: Words
    #: how its ``--config`` files are told apart: 0 by keys only this engine has (tried first),
    #: 1 by a majority of its option names
    CONFIG_EVIDENCE: int

    # -- recognising a launch in a command's words (flake8_replayssm.recognise) ----------------
    def program_entry(self, words: Sequence[Word], i: int, env: dict[str, Word]) -> Entry | None:
        """The entry point ``words[i]`` (one of WORDS.programs) starts, or None (``vllm --version``)."""

    def module_entry(self, module: str, words: Sequence[Word], i: int, rest: int,
                     env: dict[str, Word]) -> Entry | None:
        """``python -m MODULE`` at ``words[i]`` with the module's arguments from ``rest``."""

    def image_role(self, image: str) -> ImageRole | None:
        """The role of a container image of this engine (None: not its image)."""

    def command_image(self, image: str) -> str:
        """The reference a frontend hands over in ``Command.image`` for one of its images."""

    def unseen_program(self, word: Word, following: Word | None) -> bool:
        """Whether an unseen word (``"$VLLM"``) followed by ``following`` is this engine's program."""

    def names_a_value(self, flag: str, value: str) -> bool:
        """Whether an ALL-CAPS ``value`` after ``flag`` in documentation names a value to fill in."""

    # -- reading a launch ---------------------------------------------------------------------
    def launch_from_entry(self, entry: Entry, base_dir: str | None, read_config: ConfigReader) -> Launch:
        """The launch an entry point's arguments perform (the engine's own argv semantics)."""

    def launch_from_keywords(self, cls: str, *, label: str, anchor: Span, model: Setting | None,
                             keywords: Mapping[str, Setting], unseen: Sequence[str],
                             env: Mapping[str, Setting], env_open_ended: bool = False,
                             base_dir: str | None = None) -> Launch | None:
        """The launch a keyword call of ``cls`` (one of WORDS.keyword_classes) performs."""

    def keyword_class(self, module: str, name: str) -> bool:
        """Whether ``name`` imported from ``module`` is one of the engine's keyword classes."""

    def keyword_options(self) -> frozenset[str]:
        """The option names a keyword launch may set (for the Python screen)."""

    def config_launch(self, text: str, base_dir: str | None) -> Launch | None:
        """``text`` judged as this engine's ``--config`` YAML on its own, or None if it is not one."""

    def is_config_document(self, root: Any) -> bool:
        """Whether a YAML document (its root node) is one of this engine's ``--config`` files."""

    # -- judging ------------------------------------------------------------------------------
    def judge(self, launch: Launch, config: LintConfig) -> Verdict:
        """The verdict of one launch: target release, checks, form findings, one per code."""

    def check_settings(self, config: LintConfig) -> None:
        """Raise ConfigError for an explicit target release this engine cannot judge."""

    def release_note(self, config: LintConfig) -> str:
        """A line for the summary about the explicit target release ("" for none)."""

    def model_note(self, verdict: Verdict, config: LintConfig) -> str:
        """The model and what it resolved to, for ``--verbose``."""

    def rules(self) -> Sequence[Rule]:
        """The codes this engine reports, documented (a code shared with an engine listed
        earlier in the registry is documented there; see :meth:`rule_addenda`)."""

    def rule_addenda(self) -> Mapping[str, str]:
        """Sentences this engine adds to the summary of a code an earlier engine documents."""

    # -- fixing -------------------------------------------------------------------------------
    def plan_fixes(self, planner: Any, verdict: Verdict, findings: Sequence[Finding]) -> None:
        """Edits for one launch's findings, made with the shared planner's word/keyword edits."""
