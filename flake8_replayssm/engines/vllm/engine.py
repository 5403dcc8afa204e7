"""vLLM as the core sees it: the answers of :class:`~flake8_replayssm.engines.base.Engine`.

Each answer imports what it needs from this engine's modules when it is asked, so that
registering the engine costs nothing until one of its launches is met.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..base import ConfigReader, ImageRole, Words

if TYPE_CHECKING:
    from ...config import LintConfig
    from ...model import Entry, Finding, Launch, Word
    from ...rulebase import Rule
    from ...verdicts import Verdict

NAME = "vllm"
TITLE = "vLLM"
PACKAGE = "vllm"
WORDS = Words(
    programs=frozenset({"vllm"}),
    launch_strings=("'vllm'", '"vllm"', "vllm serve", "api_server", "vllm-openai"),
    launch_word=r"^\s*vllm\s*$|\bvllm\b[^\n]*\bserve\b|api_server|vllm-openai",
    call_words=("LLM(", "LLM as", "EngineArgs", "engine_kwargs"),
    keyword_classes=frozenset({"LLM", "EngineArgs", "AsyncEngineArgs"}),
    python_names=frozenset({"LLM", "EngineArgs", "AsyncEngineArgs", "AsyncLLMEngine", "LLMEngine"}),
    launch_looking=r"\bvllm\s+(?:serve|run-batch|bench\s+(?:latency|throughput))\b|vllm\.entrypoints\.|\bapi_server\b"
                   r"|use[_-]replayssm|\b(?:LLM|EngineArgs|AsyncEngineArgs|LLMConfig)\s*\(|\bengine_kwargs\b"
                   r"|vllm/vllm-openai",
    image_name=r"\S*vllm/vllm-openai\S*",
)
#: vLLM's file detection is by a majority of its option names, weaker evidence than an engine's
#: own keys: other engines' config files are recognised first (see engines.config_launch)
CONFIG_EVIDENCE = 1
#: vLLM images whose entrypoint is `vllm serve` (also the ROCm, CPU and locally built variants:
#: vllm/vllm-openai-rocm, vllm/vllm-openai-cpu, vllm-openai-nonroot from vLLM's docker docs)
IMAGE_PATTERN = re.compile(r"(^|/)vllm-openai(-[a-z0-9]+)*(:|@|$)")
#: the image path whose tag is vLLM's own release (other owners' `*/vllm-openai` version their own)
_RELEASE_IMAGE = re.compile(r"(^|/)(vllm|library)/vllm-openai(-rocm|-cpu)?$")


def program_entry(words: Sequence[Word], i: int, env: dict[str, Word]) -> Entry | None:
    from .argv import program_entry as entry
    from .knowledge import knowledge

    return entry(words, i, env, knowledge())


def module_entry(module: str, words: Sequence[Word], i: int, rest: int, env: dict[str, Word]) -> Entry | None:
    from .argv import module_entry as entry
    from .knowledge import knowledge

    return entry(module, words, i, rest, env, knowledge())


def image_role(image: str) -> ImageRole | None:
    return ImageRole(NAME, "serve") if IMAGE_PATTERN.search(image.lower()) else None


def command_image(image: str) -> str:
    """The tag is vLLM's release only on ``vllm/vllm-openai`` (and mirrors of it); other
    owners' ``*/vllm-openai`` images (``lmcache/vllm-openai``) have their own versioning,
    so their tag is dropped."""
    name = re.split(r"[:@]", image.rsplit("/", 1)[-1], maxsplit=1)[0]
    path = image[: len(image) - len(image.rsplit("/", 1)[-1])] + name
    return image if _RELEASE_IMAGE.search(path.lower()) else "vllm/vllm-openai"


def unseen_program(word: Word, following: Word | None) -> bool:
    """``"$VLLM" serve`` with ``VLLM=$(command -v vllm)``: an unknown word named for vLLM
    followed by ``serve`` is the vllm program."""
    return word.text is None and "vllm" in (word.label or "").lower() \
        and following is not None and following.text == "serve"


def names_a_value(flag: str, value: str) -> bool:
    """``--mamba-backend BACKEND``: a vLLM option whose value is not one of its known values."""
    from .knowledge import knowledge

    know = knowledge()
    return flag.replace("_", "-") in know.long_option_set and value.lower() not in know.valid_backends


def launch_from_entry(entry: Entry, base_dir: str | None, read_config: ConfigReader) -> Launch:
    from .argv import launch_from_entry as read

    return read(entry, base_dir, read_config)


def keyword_class(module: str, name: str) -> bool:
    return module.startswith("vllm") and name in WORDS.keyword_classes


def launch_from_keywords(cls: str, **keywords: Any) -> Launch:
    from .kwargs import launch_from_kwargs

    return launch_from_kwargs(**keywords)


def keyword_options() -> frozenset[str]:
    from .knowledge import knowledge

    return frozenset(knowledge().options) - {"model"}


def is_config_document(root: Any) -> bool:
    from .serve_config import is_serve_config_node

    return is_serve_config_node(root)


def config_launch(text: str, base_dir: str | None) -> Launch | None:
    from .argv import launch_from_serve_config
    from .serve_config import is_serve_config

    return launch_from_serve_config(text, base_dir=base_dir) if is_serve_config(text) else None


def judge(launch: Launch, config: LintConfig) -> Verdict:
    from .judge import judge as run

    return run(launch, config)


def model_note(verdict: Verdict, config: LintConfig) -> str:
    from .judge import model_note as note

    return note(verdict, config)


def rules() -> Sequence[Rule]:
    from .rules import RULES

    return RULES


def rule_addenda() -> Mapping[str, str]:
    return {}


def plan_fixes(planner: Any, verdict: Verdict, findings: Sequence[Finding]) -> None:
    planner.plan_vllm(verdict, findings)


def check_settings(config: LintConfig) -> None:
    """An explicit ``vllm-version`` this linter cannot judge is a configuration error."""
    if config.vllm_version:
        from .knowledge import knowledge
        from .target import explicit_release

        explicit_release(config, knowledge())


def release_note(config: LintConfig) -> str:
    """What the summary says about an explicit release newer than every release known."""
    if not config.vllm_version:
        return ""
    from ...versions import normalize_version, version_key
    from .knowledge import knowledge
    from .target import closest_release

    know = knowledge()
    release, _ = closest_release(config.vllm_version, know)
    wanted = normalize_version(config.vllm_version)
    if release is None or version_key(wanted) <= know.newest.key:
        return ""
    return (f"note: vLLM {wanted} is newer than the newest release this linter knows "
            f"({know.newest.version}); its launches were judged by {release.version}'s rules")
