"""vLLM's command line, read the way vLLM reads it.

This is the one place that knows vLLM's argv semantics (FlexibleArgumentParser
in ``vllm/utils/argparse_utils.py`` and the serve sub-command):

- how vLLM is started: ``vllm serve``, ``python -m
  vllm.entrypoints.openai.api_server``, the ``vllm/vllm-openai`` image, behind
  wrappers such as ``env``, ``nohup``, ``srun`` or ``uv run``;
- the model: positional after ``serve`` or ``--model``; the api_server module
  reads only ``--model`` (RSM103);
- ``--x=y`` and ``--x y``; ``_`` in flag names as ``-``; ``--no-x``;
  ``--disable-x``; JSON values and dotted keys (``--speculative-config.k v``);
- ``--config FILE`` expansion, and ``--config=FILE`` being ignored (RSM101).

Frontends hand over :class:`~flake8_replayssm.model.Command` objects; the result
is a :class:`~flake8_replayssm.model.Launch` or ``None`` when the command does
not start vLLM.
"""

from __future__ import annotations

import bisect
import json
import posixpath
import re
from typing import Any, Callable, Sequence

from . import config_files
from .knowledge import Knowledge, Wrapper, knowledge
from .model import UNKNOWN, UNKNOWN_PART, Command, Finding, Launch, Setting, Span, Word

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_BOOL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: vLLM images whose entrypoint is `vllm serve` (also the ROCm, CPU and locally built variants:
#: vllm/vllm-openai-rocm, vllm/vllm-openai-cpu, vllm-openai-nonroot from vLLM's docker docs)
IMAGE_PATTERN = re.compile(r"(^|/)vllm-openai(-[a-z0-9]+)*(:|@|$)")
#: SGLang's images: their tag is SGLang's release, and the command follows the image
SGLANG_IMAGE_PATTERN = re.compile(r"(^|/)lmsysorg/sglang(:|@|$)")


ConfigReader = Callable[[str, "str | None"], "config_files.ConfigArgs | None"]


def _basename(text: str | None) -> str:
    return posixpath.basename(text) if text else ""


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


#: a release tag, with the build variants vLLM publishes (``v0.11.0-cu130``, ``v0.10.1.1``);
#: release candidates and dev builds are not that release, so they pin nothing
_RELEASE_TAG = re.compile(r"v?(\d+\.\d+(?:\.\d+)?)(?:\.\d+)?(?:[-_][A-Za-z][0-9A-Za-z._-]*)?")


def image_release(image: str | None) -> str | None:
    """``vllm/vllm-openai:v0.33.0`` (or ``:v0.33.0-cu130``) -> ``0.33.0`` (None for
    latest/nightly/digests and release candidates)."""
    if not image or ":" not in image.rsplit("/", 1)[-1]:
        return None
    tag = image.rsplit(":", 1)[1]
    match = _RELEASE_TAG.fullmatch(tag)
    return match.group(1) if match else None


def image_platform(image: str | None, know: Knowledge) -> str | None:
    """``vllm/vllm-openai-rocm:v0.31.0`` -> ``rocm`` (None: the image does not say)."""
    if not image:
        return None
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return know.image_platforms.get(name)


class _Entry:
    """Where vLLM's own argv starts in a command, and how vLLM was started."""

    def __init__(self, kind: str, args: list[Word], anchor: Span, env: dict[str, Word],
                 image: str | None = None, label: str = "") -> None:
        self.kind, self.args, self.anchor, self.env, self.image = kind, args, anchor, env, image
        self.label = label
        self.env_open_ended = False


def find_entry(words: Sequence[Word], env: dict[str, Word], know: Knowledge) -> _Entry | None:
    """Strip wrappers and find the vLLM entry point the command starts, or None.

    Wrappers (``nohup``, ``srun ...``, ``nsys profile ...``, ``conda run -n ENV``,
    data/launchers.toml) are skipped with their own arguments, applying what
    they do to the environment (``srun --export=ALL,V=0``, ``env -i``, ``sudo``);
    ``VAR=value`` words set the environment; ``docker``/``podman run`` starts an image.
    """
    env = dict(env)
    env_open = False
    i = 0
    while i < len(words):
        text = words[i].text
        if _unknown_vllm(words, i):
            text = "vllm"
        elif text is None and words[i].splat and i + 1 < len(words):
            i += 1  # `$PROFILER vllm serve ...`: an unseen wrapper, judged as written
            continue
        if text is None or UNKNOWN_PART in text and not _ENV_ASSIGNMENT.match(text):
            return None
        if _ENV_ASSIGNMENT.match(text):
            key, _, value = text.partition("=")
            env[key] = Word(None if UNKNOWN_PART in value else value, words[i].span)
            i += 1
            continue
        name = _basename(text)
        entry: _Entry | None = None
        if name == "vllm":
            entry = _vllm_entry(words, i, env, know)
        elif name == "sglang":
            from .sglang.argv import serve_entry

            entry = serve_entry(words, i, env)
        elif _PYTHON.match(name):
            entry = _python_entry(words, i, env, know)
        elif name in CONTAINER_RUNTIMES:
            entry = _container_entry(words, i, env, know)
        else:
            wrapper = know.wrappers.get(name)
            if wrapper is None:
                return None
            change = WrapperEnv(wrapper, env)
            i = _after_wrapper(words, i, wrapper, know, change)
            env, env_open = change.env, env_open or change.open
            continue
        if entry is not None and env_open:
            entry.env_open_ended = True
        return entry
    return None


def _unknown_vllm(words: Sequence[Word], i: int) -> bool:
    """``"$VLLM" serve`` with ``VLLM=$(command -v vllm)``: an unknown word named for vLLM
    followed by ``serve`` is the vllm program."""
    return words[i].text is None and "vllm" in (words[i].label or "").lower() \
        and i + 1 < len(words) and words[i + 1].text == "serve"


def _starts_program(text: str | None, know: Knowledge) -> bool:
    """Whether ``text`` is a program find_entry knows (where a wrapper's own words end)."""
    name = _basename(text)
    return name in ("vllm", "sglang") or bool(_PYTHON.match(name)) or name in CONTAINER_RUNTIMES \
        or name in know.wrappers


#: env_options kinds (data/launchers.toml) whose option takes a value (inline or the next word)
_ENV_VALUE_KINDS = frozenset({"assignment", "assignments", "slurm-export", "unknown", "unset"})


class WrapperEnv:
    """The environment a wrapper gives the command it runs: the caller's (``env`` of the
    wrapper in data/launchers.toml), changed by its ``env_options`` in the order written.

    ``open`` is True when some variable may be set that the file does not show;
    ``changed`` when it differs from the caller's in any way (then a ``bash -c`` string
    behind it is read with this environment, not the caller's).
    """

    def __init__(self, wrapper: Wrapper, caller: dict[str, Word]) -> None:
        self.caller = caller
        self.env: dict[str, Word] = {} if wrapper.env in ("reset", "unknown") else dict(caller)
        self.open = wrapper.env == "unknown"
        self.changed = wrapper.env != "inherit"
        self.cleaned = wrapper.env != "inherit"

    def option(self, kind: str, value: Word | None, at: Word) -> None:
        """Apply one environment option (``value``: its value word, None for a flag)."""
        self.changed = True
        text = value.text if value is not None else None
        if kind == "clean":
            self.env, self.cleaned = {}, True
        elif kind == "keep":
            self.keep(text, at)
        elif kind in _ENV_VALUE_KINDS and (text is None or kind == "unknown"):
            self.open = True  # `--env-file F`, `--export=$X`: anything may be set
        elif kind == "unset" and UNKNOWN_PART in (text or ""):
            self.open = True
        elif kind == "unset":
            self.env.pop(text or "", None)
        elif kind == "slurm-export":
            self.slurm_export(text or "", value or at)
        else:
            for item in (text or "").split(",") if kind == "assignments" else [text or ""]:
                self.assign(item, value or at)

    def assign(self, item: str, where: Word) -> None:
        """``NAME=VALUE`` sets NAME; ``NAME`` alone passes the caller's NAME."""
        name, eq, val = item.partition("=")
        if not _NAME.fullmatch(name):
            self.open = self.open or UNKNOWN_PART in name  # `-x $NAME=1`: some variable
            return
        if eq:
            self.env[name] = Word(None if UNKNOWN_PART in val else val, where.span)
        elif name in self.caller:
            self.env[name] = self.caller[name]
        else:
            self.env.pop(name, None)

    def slurm_export(self, text: str, where: Word) -> None:
        items = [item for item in text.split(",") if item]
        if "ALL" not in items:
            self.env, self.cleaned = {}, True  # NONE/NIL, or only the listed variables
        for item in items:
            if item not in ("ALL", "NONE", "NIL"):
                self.assign(item, where)

    def keep(self, names: str | None, at: Word) -> None:
        """``sudo -E``: the caller's environment after all; ``--preserve-env=A,B``: those names."""
        if names is None:
            self.env = {**self.caller, **self.env}
            self.cleaned = False
            return
        for name in names.split(","):
            if name in self.caller:
                self.env[name] = self.caller[name]

    def unseen_word(self) -> None:
        """A word the file does not show where the wrapper reads assignments (``env $VARS``)."""
        self.changed = self.open = True


def _after_wrapper(words: Sequence[Word], i: int, wrapper: Wrapper, know: Knowledge,
                   change: WrapperEnv | None = None) -> int:
    """The index of the command a wrapper at ``i`` runs (len(words) when there is none);
    its environment options are applied to ``change``."""
    change = change or WrapperEnv(wrapper, {})
    j = i + 1
    if wrapper.sub:
        if j >= len(words) or words[j].text not in wrapper.sub:
            return len(words)
        j += 1
    while j < len(words):
        text = words[j].text
        if _unknown_vllm(words, j):
            return j
        if text is None and wrapper.env_words:
            change.unseen_word()
        if text is None or text == "--":
            j += 1
            continue
        if text in wrapper.env_options or text.partition("=")[0] in wrapper.env_options:
            j = _env_option(words, j, wrapper, change)
            continue
        if text.startswith("-") and len(text) > 1:
            flag, eq, _ = text.partition("=")
            j += 2 if not eq and flag in wrapper.values else 1
            continue
        if _ENV_ASSIGNMENT.match(text) or _starts_program(text, know):
            return j
        j += 1  # the wrapper's own word: a CPU list, a duration, an image, a host, a pod
    return j


def _env_option(words: Sequence[Word], j: int, wrapper: Wrapper, change: WrapperEnv) -> int:
    """Apply the environment option at ``j`` (``--export=ALL,V=0``, ``-x V=0``, ``-i``);
    the index after it."""
    word = words[j]
    text = word.text or ""
    flag, eq, inline = text.partition("=")
    kind = wrapper.env_options.get(text) or wrapper.env_options[flag]
    if kind in _ENV_VALUE_KINDS and not eq:
        change.option(kind, words[j + 1] if j + 1 < len(words) else None, word)
        return j + 2
    change.option(kind, Word(inline, word.span) if eq else None, word)
    return j + 1


def _vllm_entry(words: Sequence[Word], i: int, env: dict[str, Word], know: Knowledge,
                label: str = "vllm") -> _Entry | None:
    """``vllm SUBCOMMAND ...`` (also ``python -m vllm.entrypoints.cli.main SUBCOMMAND``)."""
    first = words[i + 1].text if i + 1 < len(words) else None
    second = words[i + 2].text if i + 2 < len(words) else None
    for command, kind in know.entry_commands.items():
        parts = command.split()
        if parts == [first] or parts == [first, second]:
            return _Entry(kind, list(words[i + 1 + len(parts):]), words[i].span, env,
                          label=f"{label} {command}")
    return None


def _python_entry(words: Sequence[Word], i: int, env: dict[str, Word], know: Knowledge) -> _Entry | None:
    j = i + 1
    while j < len(words):
        text = words[j].text
        if text is None:
            return None
        module: str | None = None
        if text == "-m" and j + 1 < len(words):
            module, rest = words[j + 1].text, j + 2
        elif text.startswith("-m") and len(text) > 2:
            module, rest = text[2:], j + 1
        elif text in ("-X", "-W", "-Q"):
            j += 2
            continue
        elif text.startswith("-") and text not in ("-c", "-"):
            j += 1
            continue
        else:
            return None  # a script, `-c CODE` or stdin: not an entry point we read
        if module == know.cli_module:
            return _vllm_entry(words, rest - 1, env, know, label=f"python -m {module}")
        if module is not None and module.startswith("sglang."):
            from .sglang.argv import module_entry

            return module_entry(module, words[rest:], words[i].span, env)
        kind = know.entry_modules.get(module or "")
        if kind is None:
            return None
        return _Entry(kind, list(words[rest:]), words[i].span, env, label=f"python -m {module}")
    return None


#: programs that start containers: `run IMAGE ...` or `exec CONTAINER ...`
CONTAINER_RUNTIMES = frozenset({"docker", "podman", "nerdctl"})
_DOCKER_VALUE_OPTIONS = frozenset({
    "-p", "--publish", "-v", "--volume", "--name", "--gpus", "--ipc", "--network", "--net",
    "-w", "--workdir", "--shm-size", "--runtime", "--mount", "--device", "-u", "--user",
    "--entrypoint", "--label", "-l", "--add-host", "--ulimit", "--cpus", "-m", "--memory",
    "--platform", "--pull", "--restart", "--hostname", "-h", "--cap-add", "--security-opt",
    "--env-file", "-e", "--env", "--group-add", "--pid", "--uts", "--tmpfs", "--log-driver",
    "--detach-keys", "--cidfile", "--cgroup-parent", "--dns", "--expose", "--health-cmd",
    "--memory-swap", "--userns", "--stop-signal", "--stop-timeout", "--device-cgroup-rule",
})


class _Container:
    """What ``docker run [OPTIONS] IMAGE`` / ``docker exec [OPTIONS] CONTAINER`` says.

    A container has its own environment: the ``-e`` options (``-e NAME`` takes
    the caller's value); an ``--env-file`` or ``-e "$VAR"`` may set anything,
    and a running container's environment is not shown at all.
    """

    def __init__(self, action: str, env: dict[str, Word], env_open: bool, entrypoint: Word | None,
                 image: Word | None, args: list[Word]) -> None:
        self.action, self.env, self.env_open = action, env, env_open
        self.entrypoint, self.image, self.args = entrypoint, image, args


def read_container(words: Sequence[Word], i: int, env: dict[str, Word]) -> _Container | None:
    action = words[i + 1].text if i + 1 < len(words) else None
    if action not in ("run", "create", "exec"):
        return None
    j = i + 2
    box_env: dict[str, Word] = {}
    env_open = action == "exec"
    entrypoint: Word | None = None
    while j < len(words):
        text = words[j].text
        if text is None:
            j += 1
            continue
        if not text.startswith("-"):
            break
        flag, eq, inline = text.partition("=")
        value_word = None
        if flag in _DOCKER_VALUE_OPTIONS and not eq and j + 1 < len(words):
            value_word = words[j + 1]
            j += 1
        value = inline if eq else (value_word.text if value_word else None)
        if flag in ("-e", "--env") and value and "=" in value:
            key, _, val = value.partition("=")
            box_env[key] = Word(None if UNKNOWN_PART in val else val, (value_word or words[j]).span)
        elif flag in ("-e", "--env") and value and UNKNOWN_PART not in value:
            # `-e NAME`: the caller's value of NAME
            box_env[value] = env.get(value) or Word(None, (value_word or words[j]).span)
        elif flag in ("-e", "--env") and value_word is not None:
            env_open = True  # `-e "$VAR"`: some variable, unknown which
        elif flag == "--env-file":
            env_open = True
        elif flag == "--entrypoint" and value is not None:
            entrypoint = Word(value, (value_word or words[j]).span)
        j += 1
    image = words[j] if j < len(words) else None
    return _Container(action, box_env, env_open, entrypoint, image, list(words[j + 1:]))


def _container_entry(words: Sequence[Word], i: int, env: dict[str, Word], know: Knowledge) -> _Entry | None:
    """``docker run [OPTIONS] IMAGE [ARGS]`` and ``docker exec [OPTIONS] CONTAINER COMMAND``.

    The arguments of a vLLM image go to its ``vllm serve`` entrypoint, unless
    they start a program of their own or ``--entrypoint`` replaces it.
    """
    box = read_container(words, i, env)
    if box is None or box.image is None:
        return None
    image, args = box.image, box.args
    if box.entrypoint is not None:
        args = [box.entrypoint, *args]
    vllm_image = box.action != "exec" and image.text is not None and IMAGE_PATTERN.search(image.text)
    sglang_image = box.action != "exec" and image.text is not None and SGLANG_IMAGE_PATTERN.search(image.text)
    if vllm_image and box.entrypoint is None and not (args and _starts_program(args[0].text, know)):
        entry = _Entry("serve", args, image.span, box.env, image=image.text,
                       label=f"{_basename(words[i].text)} run {image.text}")
    else:
        entry = find_entry(args, box.env, know)
        if entry is None:
            return None
        if vllm_image or sglang_image:
            entry.image = image.text
    entry.env_open_ended = entry.env_open_ended or box.env_open
    return entry


class Elsewhere:
    """The environment a command gets when a prefix hands it to another place or changes it.

    ``inherits``: the caller's environment is part of it (a wrapper that only changes some
    variables), so what the caller's file does not show is still open.
    """

    def __init__(self, env: dict[str, Word], open_ended: bool, image: str | None = None,
                 inherits: bool = False) -> None:
        self.env, self.open_ended, self.image, self.inherits = env, open_ended, image, inherits


def elsewhere(words: Sequence[Word], env: dict[str, Word], know: Knowledge | None = None) -> Elsewhere | None:
    """Where the command after the prefix ``words`` runs, if not in the caller's environment.

    ``docker run -e X=1 IMAGE`` (a new container: its ``-e`` options, and the
    image's release when it is a vLLM image), ``ssh host`` or ``kubectl exec
    POD --`` (an environment this file does not show), a wrapper that changes the
    environment (``srun --export=ALL,V=0``, ``env -i``, ``sudo``); None for wrappers
    that keep the caller's environment as it is (``nohup``, ``srun``, ``apptainer exec``).
    """
    know = know or knowledge()
    env = dict(env)
    env_open = changed = cleaned = False
    i = 0
    while i < len(words):
        text = words[i].text
        name = _basename(text)
        if name in CONTAINER_RUNTIMES:
            box = read_container(words, i, env)
            if box is None:
                return Elsewhere({}, True)
            image = box.image.text if box.image is not None and box.action != "exec" else None
            vllm_image = image if image and (IMAGE_PATTERN.search(image) or SGLANG_IMAGE_PATTERN.search(image)) \
                else None
            return Elsewhere(box.env, box.env_open, vllm_image)
        wrapper = know.wrappers.get(name)
        if wrapper is not None and wrapper.env == "unknown":
            return Elsewhere({}, True)
        if wrapper is not None:
            change = WrapperEnv(wrapper, env)
            i = _after_wrapper(words, i, wrapper, know, change)
            env, env_open = change.env, env_open or change.open
            changed, cleaned = changed or change.changed, cleaned or change.cleaned
            continue
        if changed and text is not None and _ENV_ASSIGNMENT.match(text):  # `env -i A=1 bash -c ...`
            key, _, value = text.partition("=")
            env[key] = Word(None if UNKNOWN_PART in value else value, words[i].span)
        i += 1
    return Elsewhere(env, env_open, inherits=not cleaned) if changed else None


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


class _Parser:
    """State of one argv walk; mirrors argparse closely enough for the options we read."""

    def __init__(self, entry: _Entry, know: Knowledge, base_dir: str | None,
                 read_config: ConfigReader) -> None:
        self.entry, self.know, self.base_dir, self.read_config = entry, know, base_dir, read_config
        self.launch = Launch(entry=entry.kind, anchor=entry.anchor, label=entry.label,
                             base_dir=base_dir, form="argv")
        self.positional: Setting | None = None
        self.model_flag: Setting | None = None
        self.model_maybe_consumed = False
        self.by_cli_name = {name.replace("_", "-"): spec for name, spec in know.options.items()}
        self.short = {s: spec for spec in know.options.values() for s in spec.short}

    # -- findings -------------------------------------------------------------
    def finding(self, span: Span, code: str, message: str) -> None:
        self.launch.form_findings.append(Finding(span, code, message))

    # -- the walk -------------------------------------------------------------
    def run(self, args: list[Word]) -> Launch:
        args = self.expand_config(args)
        i = 0
        while i < len(args):
            i = self.step(args, i)
        self.finish()
        return self.launch

    def expand_config(self, args: list[Word]) -> list[Word]:
        """Splice ``--config FILE`` in; ``--config=FILE`` is ignored by vLLM (RSM101)."""
        def ignored(word: Word) -> None:
            text = word.text or ""
            self.finding(word.span, "RSM101", (
                f"{text} is silently ignored by vLLM: only '--config FILE' (a separate word) "
                "is expanded, so no option in that file takes effect; fix: write --config "
                f"{text.split('=', 1)[1]}"))

        def words_of(flag: Word, path: Word) -> list[Word] | None:
            config = self.read_config(path.text, self.base_dir) if path.text is not None else None
            if config is None:
                return None
            self.launch.yaml_false.extend(config.false_keys)
            return list(config.words)

        words, unread = splice_config_files(args, ignored, words_of)
        if unread:
            self.launch.open_ended = True
        return words

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
        if text.startswith("-") and len(text) > 1 and not _is_number(text):
            return self.short_option(args, i)
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
        return self.unknown_option(args, i, raw, bool(eq))

    def abbreviation(self, head: str) -> Any:
        """argparse's allow_abbrev: a unique prefix of one long option stands for it."""
        name = _abbreviated(self.know, head)
        return self.by_cli_name.get(name) if name is not None else None

    def known_option(self, args: list[Word], i: int, name: str, kind: str, spelling: str,
                     inline: str | None) -> int:
        word = args[i]
        if kind == "bool":
            if inline is not None:
                self.finding(word.span, "RSM106", (
                    f"{word.text} is rejected by vLLM's argument parser: {spelling} takes no value "
                    f"(argument {spelling}: ignored explicit argument {inline!r}); fix: write {spelling}"))
                self.set(Setting(name, True, word.span, spelling))
                return i + 1
            nxt = args[i + 1] if i + 1 < len(args) else None
            if nxt is not None and nxt.text is not None and nxt.text.lower() in _BOOL_WORDS:
                self.finding(nxt.span, "RSM106", (
                    f"{spelling} takes no value, so {nxt.text!r} is a stray argument that vLLM "
                    f"rejects (unrecognized arguments: {nxt.text}); fix: write {spelling} alone"
                    + (f" or --no-{spelling[2:]}" if nxt.text.lower() in ('false', 'no', 'off', '0') else "")))
                self.set(Setting(name, True, word.span, spelling))
                return i + 2
            self.set(Setting(name, True, word.span, spelling))
            return i + 1
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
        """A flag the linter does not model: skip it and, if it takes one, its value."""
        if has_inline:
            return i + 1
        name = spelling.lstrip("-").replace("-", "_")
        valueless = (name in self.know.flags_without_value
                     or name.startswith(("enable_", "disable_", "no_")))
        if valueless or i + 1 >= len(args):
            return i + 1
        nxt = args[i + 1]
        if nxt.text is not None and nxt.text.startswith("-") and not _is_number(nxt.text):
            return i + 1
        self.model_maybe_consumed = True
        return i + 2

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


def splice_config_files(args: Sequence[Word], ignored: Callable[[Word], None],
                        words_of: Callable[[Word, Word], list[Word] | None]) -> tuple[list[Word], bool]:
    """``args`` with the words of each ``--config FILE`` put first, as vLLM's and SGLang's
    parsers both read the file before the command line, and whether a file was not read.

    ``--config=FILE`` is dropped (both ignore it; ``ignored`` reports it); ``words_of(flag,
    path)`` reads one file, None when it cannot be read (the launch then has unseen options).
    """
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
    return inserted + out, unread


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


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def launch_from_command(command: Command, *, read_config: ConfigReader | None = None,
                        know: Knowledge | None = None) -> Launch | None:
    """The vLLM launch ``command`` performs, or ``None`` if it does not start vLLM."""
    know = know or knowledge()
    if command.image is not None and SGLANG_IMAGE_PATTERN.search(command.image.lower()) \
            and command.words and not _image_command(command.words, know):
        return None  # SGLang's image has no server entrypoint for bare arguments
    if command.image is not None and command.words and not _image_command(command.words, know):
        entry = _Entry("serve", list(command.words), command.words[0].span, dict(command.env),
                       image=command.image, label=f"{command.image} entrypoint")
    elif command.image is not None and not command.words:
        return None
    else:
        entry = find_entry(command.words, command.env, know)
        if entry is None:
            return None
        if entry.image is None and command.image is not None:
            entry.image = command.image
    if _exits_before_launch(entry.args):
        return None
    reader = read_config or (config_files.reader_with_files(command.files) if command.files
                             else config_files.read_config_file)
    if entry.kind.startswith("sglang"):
        from .sglang.argv import launch_from_entry

        launch = launch_from_entry(entry, command.base_dir, reader)
        launch.env_open_ended = command.env_open_ended or entry.env_open_ended
        return launch
    parser = _Parser(entry, know, command.base_dir, reader)
    launch = parser.run(entry.args)
    launch.env_open_ended = command.env_open_ended or entry.env_open_ended
    launch.group = command.group
    return launch


#: words after which argparse exits before vLLM validates anything: ``-h``/``--help`` print the
#: help (``--help=KEYWORD`` searches it), ``--version`` prints the version on the top-level ``vllm``
#: parser and is an unrecognized argument (exit 2) anywhere else
_HELP_WORDS = frozenset({"-h", "--help", "--version"})


def _exits_before_launch(args: Sequence[Word]) -> bool:
    """Whether ``args`` ask for help or the version: such a command starts no engine."""
    for word in args:
        text = word.text
        if text == "--":
            return False
        if text is not None and (text in _HELP_WORDS or text.startswith("--help=")):
            return True
    return False


def _image_command(words: Sequence[Word], know: Knowledge) -> bool:
    """Whether an image's words replace its entrypoint (``vllm serve ...``, ``python -m ...``)."""
    return _starts_program(words[0].text, know) or _basename(words[0].text) in ("sh", "bash")


def launch_from_serve_config(text: str, *, base_dir: str | None = None,
                             know: Knowledge | None = None) -> Launch | None:
    """A ``vllm serve --config`` YAML file judged on its own, as ``vllm serve --config FILE``."""
    config = config_files.config_args_from_text(text)
    if config is None or not (config.words or config.false_keys):
        return None
    know = know or knowledge()
    anchor = config.words[0].span if config.words else config.false_keys[0].span
    entry = _Entry("serve", [], anchor, {}, label="vllm serve --config")
    parser = _Parser(entry, know, base_dir, config_files.read_config_file)
    parser.launch.yaml_false.extend(config.false_keys)
    launch = parser.run(list(config.words))
    if launch.model is None:
        # such a file is used as `vllm serve MODEL --config FILE`: the model is elsewhere
        launch.model = Setting("model", UNKNOWN, anchor, "")
    return launch
