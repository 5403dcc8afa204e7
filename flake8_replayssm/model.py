"""The data every part of the linter shares: spans, words, launches and findings.

A *frontend* (Python, shell, YAML, ...) only finds launches and hands over what a
launch says, as argv words (``vllm serve ...``) or as keyword arguments
(``LLM(...)``).  :mod:`flake8_replayssm.argv` and :mod:`flake8_replayssm.kwargs`
turn that into one :class:`Launch`; the rules judge a :class:`Launch` and
return :class:`Finding` objects.  Nothing here knows about a file format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Final


class _Unknown:
    """A value that cannot be known statically (a variable, ``"$@"``, ``**kwargs``...).

    It is a singleton so that ``value is UNKNOWN`` reads naturally.  Rules never
    report a finding that depends on an unknown value.
    """

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:  # an unknown is never silently truthy
        raise TypeError("UNKNOWN has no truth value; compare with `is UNKNOWN`")


UNKNOWN: Final = _Unknown()

#: stands for an unknown part inside a word's text (``CUDA_VISIBLE_DEVICES={gpu}``
#: from an f-string); a word holding it is treated as not static
UNKNOWN_PART: Final = "\x00"


#: what frontends write in place of a part they cannot know, when a text is read again: an
#: unknown shell expansion (``${__rsm_unknown_3}``), a Helm/Go template action (``__RSMTPL___``)
_STAND_INS = re.compile(r"\$\{__rsm_unknown_\d+\}|__RSMTPL_+")


def readable(text: str) -> str:
    """``text`` as a user wrote it, the frontends' stand-ins (and unknown parts) shown as ``…``."""
    return _STAND_INS.sub("…", text).replace(UNKNOWN_PART, "…")


@dataclass(frozen=True)
class Span:
    """A place in a source text: 1-based lines, 0-based character columns.

    ``cell`` is set for notebooks (0-based index into ``cells``); the lines are
    then lines of that cell.  ``source`` is set when the place is in another
    file than the one being linted (a ``--config`` YAML the launch reads).
    """

    line: int
    col: int
    end_line: int
    end_col: int
    cell: int | None = None
    source: str | None = None

    @classmethod
    def point(cls, line: int, col: int, length: int = 0) -> Span:
        return cls(line, col, line, col + length)


@dataclass(frozen=True)
class Word:
    """One argv element as written in the source.

    ``text`` is the word after quote removal, or ``None`` when the word is not
    static (an unresolved ``$VAR`` or an f-string hole).  ``span`` points at the
    word in the source; frontends that cannot place a word use the span of the
    nearest thing they can (the whole command string, say).  ``splat`` marks a
    word that may expand to any number of arguments (``"$@"``, ``${ARGS[@]}``,
    ``*extra``): a launch with such a word may contain any option.
    """

    text: str | None
    span: Span
    splat: bool = False
    #: how an unseen word is written (``"$@"``, ``$EXTRA_ARGS``, ``**kwargs``), for messages
    label: str | None = None


@dataclass(frozen=True)
class Setting:
    """One vLLM option or environment variable as a launch sets it.

    ``value`` is already converted (bool, int, float, str, dict, list) or
    :data:`UNKNOWN`.  ``span`` covers the flag or keyword; ``value_span`` the
    value when it is a separate token.  ``spelling`` is the text the user wrote
    (``--mamba_backend``, ``mamba_backend=``), for messages and fixes.
    """

    name: str
    value: Any
    span: Span
    spelling: str = ""
    value_span: Span | None = None


@dataclass
class Launch:
    """Everything one vLLM start says, whatever file it was written in.

    ``entry`` is how vLLM is started: ``"serve"`` (``vllm serve`` or the
    ``vllm/vllm-openai`` image), ``"api_server"`` (``python -m
    vllm.entrypoints.openai.api_server``), or ``"python"`` (``LLM``,
    ``EngineArgs``, ``AsyncEngineArgs``); SGLang's are ``"serve"``, ``"launch_server"``,
    ``"router"`` (``python -m sglang_router.launch_server``) and ``"python"``.  ``options`` maps vLLM's destination
    names (``use_replayssm``, ``mamba_backend``...) to the last setting of each.
    ``open_ended`` is true when part of the launch cannot be seen in a way no
    convention covers (a ``--config`` file that cannot be read): an option
    missing from ``options`` is then unknown rather than default.  ``unseen``
    lists the extra arguments the linter cannot see (``"$@"``, ``$EXTRA_ARGS``,
    ``**kwargs`` from elsewhere); DESIGN.md's "judge what is written" assumes
    they add nothing that changes the verdict, unless the ``extra-args =
    "open"`` setting asks for the strict reading (then they make the launch
    open-ended).
    """

    entry: str
    anchor: Span
    model: Setting | None = None
    options: dict[str, Setting] = field(default_factory=dict)
    env: dict[str, Setting] = field(default_factory=dict)
    open_ended: bool = False
    env_open_ended: bool = False
    #: how each unseen extra argument is written, in order (see above)
    unseen: list[str] = field(default_factory=list)
    #: where more of the environment may come from than ``env`` shows (``--env-file .env``,
    #: ``envFrom``, ``ssh``), for messages; set whenever ``env_open_ended`` is
    env_unseen: list[str] = field(default_factory=list)
    #: launches that are one written launch read with different values of a variable
    #: (``if``/``else``, ``case``, ``a if c else b``) share a group; a code is reported
    #: only if every member of the group has it
    group: int | None = None
    #: findings the interpreter itself makes (RSM101, RSM103, RSM106): how the
    #: launch is written, whatever the release
    form_findings: list[Finding] = field(default_factory=list)
    #: every setting in the order written, overridden ones included (a spelling
    #: argparse rejects fails the launch even when a later flag overrides it)
    history: list[Setting] = field(default_factory=list)
    #: `key: false` entries of a --config YAML file, which vLLM may drop (RSM102)
    yaml_false: list[Setting] = field(default_factory=list)
    #: a vLLM release pinned next to the launch (a ``vllm/vllm-openai:vX.Y.Z`` image): a version,
    #: ``latest``, or ``all`` for a tag the file leaves to a build argument (:mod:`.release_sets`)
    release_hint: str | None = None
    #: per distribution (``vllm``), the releases the same file installs: (spec, where) pairs
    #: (:func:`flake8_replayssm.install_pins.install_pins`)
    file_pins: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: the platform the launch's image runs on (``vllm/vllm-openai-rocm``), if it says
    platform_hint: str | None = None
    #: where the launch was written, for messages (``"vllm serve"``, ``"LLM(...)"``)
    label: str = ""
    #: the path that relative model paths and ``--config`` files are resolved against
    base_dir: str | None = None
    #: form: "argv" (flags) or "kwargs" (Python keywords); messages speak the user's form
    form: str = "argv"
    #: the whole call that performs the launch (a Python ``subprocess.run([...])`` or
    #: ``LLM(...)`` over several lines), when the frontend knows it: a ``# noqa`` on any of
    #: its lines applies to the launch
    written: Span | None = None
    #: the serving engine: "vllm", or "sglang" (option names are then ServerArgs fields)
    engine: str = "vllm"
    #: the framework whose own names the launch is written in (its options forwarded to the
    #: engine: data/frameworks.toml), "" for the engine's own; fixes write the engine's names
    forwarded_by: str = ""

    def add_unseen(self, label: str | None) -> None:
        """Record an extra argument the linter cannot see (once per spelling)."""
        text = readable(label) if label else "an argument the linter cannot see"
        if text not in self.unseen:
            self.unseen.append(text)

    @property
    def replayssm_span(self) -> Span:
        """Where RSM001-RSM009 are reported: the ``--use-replayssm`` token."""
        setting = self.options.get("use_replayssm")
        return setting.span if setting is not None else self.anchor


@dataclass(frozen=True)
class Finding:
    """One lint result.  ``code`` is ``RSMxxx``; ``message`` has no code prefix."""

    span: Span
    code: str
    message: str
    path: str = ""

    #: the vLLM release the verdict is for, and why that release (set by the engine)
    release: str = ""
    release_reason: str = ""
    #: whose release ``release`` is: "vllm" or "sglang"
    engine: str = "vllm"
    #: every release of the judged set the finding holds on, oldest first (``release`` is the
    #: one whose message it carries: the newest of them at its place)
    releases: tuple[str, ...] = ()

    def with_path(self, path: str) -> Finding:
        return replace(self, path=path)

    @property
    def sort_key(self) -> tuple[str, int, int, int, str]:
        cell = -1 if self.span.cell is None else self.span.cell
        return (self.path, cell, self.span.line, self.span.col, self.code)


@dataclass
class Entry:
    """Where an engine's own argv starts in a command, and how the engine was started.

    ``engine`` is the engine that reads ``args`` (its name in :mod:`flake8_replayssm.engines`);
    ``kind`` is that engine's own word for the entry point (vLLM's ``serve``, ``api_server``...).
    ``image`` is the container image the command runs in, when that pins the release.
    """

    engine: str
    kind: str
    args: list[Word]
    anchor: Span
    env: dict[str, Word]
    image: str | None = None
    label: str = ""
    #: more of the environment may be set than ``env`` shows (a wrapper's env file, ``ssh``)
    env_open_ended: bool = False
    #: how those unseen sources are written, for messages (``--env-file .env``, ``ssh``)
    env_unseen: list[str] = field(default_factory=list)

    def unseen_env(self, label: str) -> None:
        """Record a source of environment variables the file does not show."""
        self.env_open_ended = True
        if label not in self.env_unseen:
            self.env_unseen.append(label)


@dataclass
class Command:
    """A command line as a frontend found it, before any vLLM meaning is given to it.

    ``words`` is the argv, program first (``vllm serve ...``, ``python3 -m
    vllm.entrypoints.openai.api_server ...``, ``env A=1 vllm ...``, ``docker run
    ... vllm/vllm-openai:v0.33.0 --model ...``).  When ``image`` is set, ``words``
    are only the arguments given to that image's entrypoint (``vllm serve``), as
    in a Dockerfile ``CMD`` or a compose/Kubernetes ``args`` list.  ``env`` holds
    the variables the command runs with (prefix assignments, ``export``, ``ENV``,
    container ``env:``, ``subprocess`` ``env=``); ``env_open_ended`` says that
    more may be set than ``env`` shows (an ``--env-file``, ``env=some_dict``).
    ``base_dir`` is where relative model paths and ``--config`` files are found.
    """

    words: list[Word]
    env: dict[str, Word] = field(default_factory=dict)
    env_open_ended: bool = False
    image: str | None = None
    base_dir: str | None = None
    #: the :attr:`Launch.group` of the launch this command performs (variants of one command)
    group: int | None = None
    #: files the same script writes before the command (a here-document): path -> (text, a
    #: function moving a span of that text to where it is written), for ``--config PATH``
    files: dict[str, tuple[str, Any]] = field(default_factory=dict)
    #: how the unseen environment sources are written, when the frontend knows (``envFrom``)
    env_unseen: list[str] = field(default_factory=list)
    #: the framework whose own names these words are read from (:attr:`Launch.forwarded_by`)
    forwarded_by: str = ""
    #: the words replace the image's entrypoint (a Dockerfile ``ENTRYPOINT``, a container's
    #: ``command:``): ``image`` then only says which release, never that the words are its arguments
    replaces_entrypoint: bool = False
