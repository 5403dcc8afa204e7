"""The one shape every serving engine has: what the core may ask an engine, and nothing else.

Modelled on pre-commit's ``languages/``: each engine is a package of the same shape,
registered by name in :mod:`flake8_replayssm.engines`, and the core (recognition,
frontends, reports, fixes, the language server, the flake8 plugin) calls only
:class:`Engine`, never asking which engine it holds.  An engine imports only the core's
low layer (model, argv, versions, wrappers, verdicts, validation, rulebase, ...) and its
own modules, never another engine.

An engine package ``engines/<name>/`` provides, by module (README, "Adding an engine"):

- ``data/engine.toml``: its name, title and distribution, the words and images it is
  recognised by (:class:`Words`, :meth:`Engine.image_role`) — read without its other tables;
- ``argv.py``: ``program_entry``, ``module_entry``, ``launch_from_entry``, ``names_a_value``
  — its command line;
- ``kwargs.py``: ``launch_from_keywords``, ``keyword_options`` — its Python keyword launches;
- ``config_file.py``: ``is_config_document``, ``config_launch`` — its ``--config`` YAML files;
- ``judge.py``: ``judge``, ``model_note``, ``check_settings``, ``release_note``, ``releases`` — verdicts;
- ``fixes.py``: ``plan`` — the edits that fix its findings, made with the core planner;
- ``data/rules.toml``: its codes' documentation; its own ``data/`` tables besides.

Modules are imported when first asked: registering an engine costs its ``engine.toml`` only,
and a tree without one of its launches never reads its other tables.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..data_files import read_data

if TYPE_CHECKING:
    from ..config import LintConfig
    from ..config_files import ConfigArgs
    from ..model import Entry, Finding, Launch, Word
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
    #: what follows an unseen word named for a program when it is that program (``"$VLLM" serve``)
    unseen_program_before: frozenset[str]
    #: the first words of its sub-commands (``serve``): a string of the program alone is part of a
    #: command only where one of them is quoted too
    subcommands: tuple[str, ...]
    #: text whose presence makes a Python string a possible command line (``vllm serve``)
    launch_strings: tuple[str, ...]
    #: a regular expression a Python string constant must match to be part of a command line
    launch_word: str
    #: text that marks a keyword launch call in Python (``LLM(``, ``EngineArgs``)
    call_words: tuple[str, ...]
    #: classes whose keyword arguments are the engine's options (``LLM``, ``EngineArgs``)
    keyword_classes: frozenset[str]
    #: a regular expression the module they are imported from matches (``^vllm``)
    keyword_module: str
    #: names whose call in a code block says it is Python using the engine (a fence without a language)
    python_names: frozenset[str]
    #: classes of other packages whose keywords are the engine's own options, handed on to it
    #: (module -> class names; ``art.dev`` -> ``EngineArgs``): read as ``keyword_classes`` are
    forwarded_classes: Mapping[str, frozenset[str]]
    #: a regular expression for an entry point of the engine named in a line (``vllm serve``,
    #: ``vllm.entrypoints.openai.api_server``): a launch-looking line when no launch covers it
    launch_looking: str
    #: a regular expression for its image's name on a line (``\\S*vllm/vllm-openai\\S*``)
    image_name: str
    #: prefixes of the environment variables the engine reads that can change a verdict
    #: (``VLLM_``): a shell launch's environment keeps them even when the script does not export them
    env_prefixes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImageRole:
    """What a container image of an engine does with the words after it.

    ``entry`` is the entry kind its default command starts (vLLM's ``vllm/vllm-openai`` runs
    ``vllm serve`` with the arguments), or None when the image has no serving entrypoint and
    only pins the engine's release (SGLang's ``lmsysorg/sglang`` runs what it is given).
    """

    engine: str
    entry: str | None


class Engine:
    """One engine package as the core calls it (the module list is in this module's docstring)."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.folder = package.split(".", 1)[1].replace(".", "/")  # engines/vllm
        raw = read_data(f"{self.folder}/data/engine.toml")
        about, words, images = raw["engine"], raw["words"], raw["images"]
        self.NAME: str = about["name"]  # Launch.engine, Finding.engine, settings and outputs use it
        self.TITLE: str = about["title"]  # how messages and reports name it ("vLLM")
        self.PACKAGE: str = about["package"]  # the distribution whose pins and metadata name its release
        #: how its --config files are told apart: 0 by keys only it has (tried first), 1 by a
        #: majority of its option names
        self.CONFIG_EVIDENCE: int = about["config_evidence"]
        self.WORDS = Words(
            programs=frozenset(words["programs"]), unseen_program_before=frozenset(words["unseen_program_before"]),
            subcommands=tuple(words["subcommands"]),
            launch_strings=tuple(words["launch_strings"]), launch_word=words["launch_word"],
            call_words=tuple(words["call_words"]), keyword_classes=frozenset(words["keyword_classes"]),
            keyword_module=words["keyword_module"], python_names=frozenset(words["python_names"]),
            launch_looking=words["launch_looking"], image_name=images["name"],
            env_prefixes=tuple(words.get("env_prefixes", ())),
            forwarded_classes={module: frozenset(names) for module, names in words["forwarded_classes"].items()})
        self._image = re.compile(images["pattern"])
        self._image_entry: str | None = images["entry"] or None
        self._release_path = re.compile(images["release_path"]) if images["release_path"] else None
        self._other_owners: str = images["other_owners"]
        self._keyword_module = re.compile(words["keyword_module"])
        #: module prefixes that re-export the engine's own, longest first
        self._module_aliases = sorted(words["module_aliases"].items(), key=lambda item: -len(item[0]))

    def _module(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.package}.{name}")

    @cached_property
    def _rules(self) -> tuple[tuple[Rule, ...], dict[str, str]]:
        from ..rulebase import load_rules

        return load_rules(f"{self.folder}/data/rules.toml", self.NAME)

    # -- recognising a launch in a command's words (flake8_replayssm.recognise) ----------------
    def program_entry(self, words: Sequence[Word], i: int, env: dict[str, Word]) -> Entry | None:
        """The entry point ``words[i]`` (one of WORDS.programs) starts, or None (``vllm --version``)."""
        return self._module("argv").program_entry(words, i, env)

    def module_entry(self, module: str, words: Sequence[Word], i: int, rest: int,
                     env: dict[str, Word]) -> Entry | None:
        """``python -m MODULE`` at ``words[i]`` with the module's arguments from ``rest``."""
        return self._module("argv").module_entry(self.own_module(module), words, i, rest, env)

    def own_module(self, module: str) -> str:
        """``module`` as the engine's own when a package re-exports it (data/engine.toml)."""
        for alias, own in self._module_aliases:
            if module == alias or module.startswith(alias) and alias.endswith("."):
                return own + module[len(alias):]
        return module

    def image_role(self, image: str) -> ImageRole | None:
        """The role of a container image of this engine (None: not its image)."""
        return ImageRole(self.NAME, self._image_entry) if self._image.search(image.lower()) else None

    def command_image(self, image: str) -> str:
        """The reference a frontend hands over in ``Command.image`` for one of its images: the
        image itself when its tag is the engine's release, else the engine's own image name."""
        if self._release_path is None:
            return image
        name = re.split(r"[:@]", image.rsplit("/", 1)[-1], maxsplit=1)[0]
        path = image[: len(image) - len(image.rsplit("/", 1)[-1])] + name
        return image if self._release_path.search(path.lower()) else self._other_owners

    def unseen_program(self, word: Word, following: Word | None) -> bool:
        """Whether an unseen word (``"$VLLM"``) followed by ``following`` is this engine's program."""
        label = (word.label or "").lower()
        return word.text is None and any(program in label for program in self.WORDS.programs) \
            and following is not None and following.text in self.WORDS.unseen_program_before

    def names_a_value(self, flag: str, value: str) -> bool:
        """Whether an ALL-CAPS ``value`` after ``flag`` in documentation names a value to fill in."""
        return self._module("argv").names_a_value(flag, value)

    # -- reading a launch ---------------------------------------------------------------------
    def launch_from_entry(self, entry: Entry, base_dir: str | None, read_config: ConfigReader) -> Launch:
        """The launch an entry point's arguments perform (the engine's own argv semantics)."""
        return self._module("argv").launch_from_entry(entry, base_dir, read_config)

    def keyword_class(self, module: str, name: str) -> bool:
        """Whether ``name`` imported from ``module`` is one of the engine's keyword classes."""
        return name in self.WORDS.keyword_classes and self._keyword_module.match(module) is not None \
            or name in self.WORDS.forwarded_classes.get(module, ())

    def launch_from_keywords(self, cls: str, **keywords: Any) -> Launch | None:
        """The launch a keyword call of ``cls`` performs (``label``, ``anchor``, ``model``,
        ``keywords``, ``unseen``, ``env``, ``env_open_ended``, ``base_dir``)."""
        return self._module("kwargs").launch_from_keywords(cls, **keywords)

    def keyword_options(self) -> frozenset[str]:
        """The option names a keyword launch may set (for the Python screen)."""
        return self._module("kwargs").keyword_options()

    def config_launch(self, text: str, base_dir: str | None) -> Launch | None:
        """``text`` judged as this engine's ``--config`` YAML on its own, or None if it is not one."""
        return self._module("config_file").config_launch(text, base_dir)

    def is_config_document(self, root: Any) -> bool:
        """Whether a YAML document (its root node) is one of this engine's ``--config`` files."""
        return self._module("config_file").is_config_document(root)

    # -- judging ------------------------------------------------------------------------------
    def judge(self, launch: Launch, config: LintConfig) -> Verdict:
        """The verdict of one launch: target release, checks, form findings, one per code."""
        return self._module("judge").judge(launch, config)

    def check_settings(self, config: LintConfig) -> None:
        """Raise ConfigError for an explicit target release this engine cannot judge (its
        ``<name>_version`` setting); unset, there is nothing to check and the judging modules are
        not imported (a run over files without a launch never needs them)."""
        if self._explicit_release(config):
            self._module("judge").check_settings(config)

    def _explicit_release(self, config: LintConfig) -> str | None:
        """The ``<name>_version`` setting (``vllm_version``): the release named by the user."""
        return getattr(config, f"{self.NAME}_version", None)

    def releases(self) -> tuple[str, ...]:
        """Every release of the engine this linter knows, oldest first (what ``all`` means)."""
        return self._module("judge").releases()

    def release_note(self, config: LintConfig) -> str:
        """A line for the summary about the explicit target release ("" for none)."""
        return self._module("judge").release_note(config) if self._explicit_release(config) else ""

    def model_note(self, verdict: Verdict, config: LintConfig) -> str:
        """The model and what it resolved to, for ``--verbose``."""
        return self._module("judge").model_note(verdict, config)

    def rules(self) -> Sequence[Rule]:
        """The codes this engine reports, documented (a code shared with an engine listed
        earlier in the registry is documented there; see :meth:`rule_addenda`)."""
        return self._rules[0]

    def rule_addenda(self) -> Mapping[str, str]:
        """Sentences this engine adds to the summary of a code an earlier engine documents."""
        return self._rules[1]

    # -- fixing -------------------------------------------------------------------------------
    def plan_fixes(self, planner: Any, verdict: Verdict, findings: Sequence[Finding]) -> None:
        """Edits for one launch's findings, made with the shared planner's word/keyword edits."""
        self._module("fixes").plan(planner, verdict, findings)
