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

import json
import posixpath
import re
from typing import Any, Callable, Sequence

from . import config_files
from .knowledge import Knowledge, knowledge
from .model import UNKNOWN, UNKNOWN_PART, Command, Finding, Launch, Setting, Span, Word

#: programs that run the rest of their argv as a command
WRAPPERS = frozenset({
    "env", "exec", "nohup", "time", "nice", "ionice", "sudo", "stdbuf", "taskset", "numactl",
    "timeout", "srun", "mpirun", "setsid", "command", "builtin", "chrt", "caffeinate",
})
#: programs whose sub-command ``run`` runs the rest (``uv run vllm serve``)
RUNNERS = frozenset({"uv", "poetry", "pipenv", "conda", "pixi", "hatch", "rye", "pdm", "micromamba"})
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_BOOL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: vLLM images whose entrypoint is `vllm serve`
IMAGE_PATTERN = re.compile(r"(^|/)vllm-openai(:|@|$)")
#: SGLang's images: their tag is SGLang's release, and the command follows the image
SGLANG_IMAGE_PATTERN = re.compile(r"(^|/)lmsysorg/sglang(:|@|$)")

ConfigReader = Callable[[str, "str | None"], "config_files.ConfigArgs | None"]


def _basename(text: str | None) -> str:
    return posixpath.basename(text) if text else ""


def image_release(image: str | None) -> str | None:
    """``vllm/vllm-openai:v0.33.0`` -> ``0.33.0`` (None for latest/nightly/digests)."""
    if not image or ":" not in image.rsplit("/", 1)[-1]:
        return None
    tag = image.rsplit(":", 1)[1]
    match = re.fullmatch(r"v?(\d+\.\d+(?:\.\d+)?)", tag)
    return match.group(1) if match else None


class _Entry:
    """Where vLLM's own argv starts in a command, and how vLLM was started."""

    def __init__(self, kind: str, args: list[Word], anchor: Span, env: dict[str, Word],
                 image: str | None = None, label: str = "") -> None:
        self.kind, self.args, self.anchor, self.env, self.image = kind, args, anchor, env, image
        self.label = label
        self.env_open_ended = False


def find_entry(words: Sequence[Word], env: dict[str, Word], know: Knowledge) -> _Entry | None:
    """Strip wrappers and find ``vllm serve`` / the api_server module / a vLLM image."""
    env = dict(env)
    i = 0
    after_wrapper = False
    while i < len(words):
        word = words[i]
        text = word.text
        name = _basename(text)
        if text is None:
            if after_wrapper:
                i += 1
                continue
            return None
        if _ENV_ASSIGNMENT.match(text):
            key, _, value = text.partition("=")
            env[key] = Word(None if UNKNOWN_PART in value else value, word.span)
            i += 1
            continue
        if UNKNOWN_PART in text:
            return None
        if name == "sglang":
            from .sglang.argv import serve_entry

            return serve_entry(words, i, env)
        if name == "vllm":
            if i + 1 < len(words) and words[i + 1].text == "serve":
                return _Entry("serve", list(words[i + 2:]), word.span, env, label="vllm serve")
            return None
        if _PYTHON.match(name):
            return _python_entry(words, i, env, know)
        if name == "docker" or name == "podman":
            return _docker_entry(words, i, env)
        if name in WRAPPERS:
            after_wrapper = True
            i += 1
            continue
        if name in RUNNERS and i + 1 < len(words) and words[i + 1].text == "run":
            after_wrapper = True
            i += 2
            continue
        if after_wrapper and (text.startswith("-") or text[:1].isdigit()):
            i += 1  # a wrapper's own option (srun -n 2, timeout 600)
            continue
        if after_wrapper and i > 0 and (words[i - 1].text or "").startswith("-"):
            i += 1  # the value of a wrapper's option (numactl --cpunodebind 0, env -u X)
            continue
        return None
    return None


def _python_entry(words: Sequence[Word], i: int, env: dict[str, Word], know: Knowledge) -> _Entry | None:
    j = i + 1
    while j < len(words):
        text = words[j].text
        if text is None:
            return None
        if text == "-m" and j + 1 < len(words):
            module = words[j + 1].text
            if module is not None and module.startswith("sglang."):
                from .sglang.argv import module_entry

                return module_entry(module, words[j + 2:], words[i].span, env)
            if module in know.api_server_modules:
                return _Entry("api_server", list(words[j + 2:]), words[i].span, env,
                              label=f"python -m {module}")
            if module == "vllm.entrypoints.cli.main" and j + 2 < len(words) and words[j + 2].text == "serve":
                return _Entry("serve", list(words[j + 3:]), words[i].span, env, label="vllm serve")
            return None
        if text.startswith("-m") and len(text) > 2:
            module = text[2:]
            if module in know.api_server_modules:
                return _Entry("api_server", list(words[j + 1:]), words[i].span, env,
                              label=f"python -m {module}")
            return None
        if text in ("-X", "-W"):
            j += 2
            continue
        if text.startswith("-"):
            j += 1
            continue
        return None
    return None


_DOCKER_VALUE_OPTIONS = frozenset({
    "-p", "--publish", "-v", "--volume", "--name", "--gpus", "--ipc", "--network", "--net",
    "-w", "--workdir", "--shm-size", "--runtime", "--mount", "--device", "-u", "--user",
    "--entrypoint", "--label", "-l", "--add-host", "--ulimit", "--cpus", "-m", "--memory",
    "--platform", "--pull", "--restart", "--hostname", "-h", "--cap-add", "--security-opt",
    "--env-file", "-e", "--env", "--group-add", "--pid", "--uts", "--tmpfs", "--log-driver",
})


def _docker_entry(words: Sequence[Word], i: int, env: dict[str, Word]) -> _Entry | None:
    if i + 1 >= len(words) or words[i + 1].text not in ("run", "create"):
        return None
    j = i + 2
    env = dict(env)
    env_open = False
    entrypoint: str | None = None
    while j < len(words):
        text = words[j].text
        if text is None:
            j += 1
            continue
        if text.startswith("-"):
            flag, eq, inline = text.partition("=")
            takes_value = flag in _DOCKER_VALUE_OPTIONS
            value_word = None
            if takes_value and not eq and j + 1 < len(words):
                value_word = words[j + 1]
                j += 1
            value = inline if eq else (value_word.text if value_word else None)
            if flag in ("-e", "--env") and value and "=" in value:
                key, _, val = value.partition("=")
                env[key] = Word(None if UNKNOWN_PART in val else val, (value_word or words[j]).span)
            elif flag in ("-e", "--env") and value is None and value_word is not None:
                env_open = True  # `-e "$VAR"`: some variable, unknown which
            if flag == "--env-file":
                env_open = True
            if flag == "--entrypoint":
                entrypoint = value
            j += 1
            continue
        if SGLANG_IMAGE_PATTERN.search(text) and entrypoint is None:
            # SGLang's image has no server entrypoint: the words after it are the command
            entry = find_entry(words[j + 1:], env, knowledge())
            if entry is not None:
                entry.image = entry.image or text
                entry.env_open_ended = entry.env_open_ended or env_open
            return entry
        if IMAGE_PATTERN.search(text) and entrypoint is None:
            entry = _Entry("serve", list(words[j + 1:]), words[j].span, env, image=text,
                           label=f"docker run {text}")
            entry.env_open_ended = env_open
            return entry
        return None
    return None


def _flag_name(text: str) -> str:
    """``--mamba_backend.x`` -> ``mamba-backend.x`` (vLLM normalises only up to the first dot)."""
    body = text[2:]
    head, dot, tail = body.partition(".")
    return head.replace("_", "-") + dot + tail


def _parse_json(text: str) -> Any:
    value = json.loads(text)
    if isinstance(value, dict):
        return {str(k).replace("-", "_"): v for k, v in value.items()}
    return value


def _dotted_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _convert(kind: str, word: Word) -> tuple[Any, str | None]:
    """The value of ``word`` for an option of ``kind``, and an error text if argparse rejects it."""
    text = word.text
    if text is None or UNKNOWN_PART in text:
        return UNKNOWN, None
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
        out: list[Word] = []
        inserted: list[Word] = []
        i = 0
        while i < len(args):
            word = args[i]
            text = word.text or ""
            if text.startswith("--config="):
                self.finding(word.span, "RSM101", (
                    f"{text} is silently ignored by vLLM: only '--config FILE' (a separate word) "
                    "is expanded, so no option in that file takes effect; fix: write --config "
                    f"{text.split('=', 1)[1]}"))
                i += 1
                continue
            if text == "--config" and i + 1 < len(args):
                path_word = args[i + 1]
                config = None
                if path_word.text is not None:
                    config = self.read_config(path_word.text, self.base_dir)
                if config is None:
                    self.launch.open_ended = True
                else:
                    inserted.extend(config.words)
                    self.launch.yaml_false.extend(config.false_keys)
                i += 2
                continue
            out.append(word)
            i += 1
        return inserted + out

    def step(self, args: list[Word], i: int) -> int:
        word = args[i]
        if word.text is not None and UNKNOWN_PART in word.text:
            word = args[i] = Word(None, word.span, word.splat)
        text = word.text
        if text is None:
            if word.splat:
                self.launch.open_ended = True
            elif self.positional is None and self.entry.kind == "serve":
                self.positional = Setting("model", UNKNOWN, word.span, "", word.span)
            else:
                self.launch.open_ended = True
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
        matches = [o for o in self.know.long_options if o[2:].startswith(head)]
        if len(matches) != 1:
            return None
        return self.by_cli_name.get(matches[0][2:])

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
            if value_word.splat:
                self.set(Setting(name, UNKNOWN, word.span, spelling, value_word.span))
                self.launch.open_ended = True
                return nxt_index
        else:
            self.finding(word.span, "RSM106", f"{spelling} expects one argument; fix: give it a value")
            return i + 1
        if value_word.text is not None and UNKNOWN_PART in value_word.text:
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
        if nxt.splat:
            self.launch.open_ended = True
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
        elif self.model_maybe_consumed and self.entry.kind == "serve":
            # `vllm serve --some-flag X` where X may be the model: do not guess
            launch.model = Setting("model", UNKNOWN, launch.anchor, "")
        launch.release_hint = image_release(self.entry.image)


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
    if command.image is not None and SGLANG_IMAGE_PATTERN.search(command.image.lower()):
        entry = find_entry(command.words, command.env, know)  # no entrypoint: the words are the command
        if entry is None:
            return None
        entry.image = entry.image or command.image
    elif command.image is not None and command.words and not _starts_program(command.words):
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
    if entry.kind.startswith("sglang"):
        from .sglang.argv import launch_from_entry

        launch = launch_from_entry(entry, command.base_dir, read_config)
        launch.env_open_ended = command.env_open_ended or entry.env_open_ended
        return launch
    parser = _Parser(entry, know, command.base_dir, read_config or config_files.read_config_file)
    launch = parser.run(entry.args)
    launch.env_open_ended = command.env_open_ended or entry.env_open_ended
    return launch


def _starts_program(words: Sequence[Word]) -> bool:
    """Whether an image's words replace its entrypoint (``vllm serve ...``, ``python -m ...``)."""
    first = _basename(words[0].text)
    return first in ("vllm", "sglang") or bool(_PYTHON.match(first)) or first in WRAPPERS or first in ("sh", "bash")


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
