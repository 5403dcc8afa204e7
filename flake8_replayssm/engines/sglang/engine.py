"""SGLang as the core sees it: the answers of :class:`~flake8_replayssm.engines.base.Engine`.

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

NAME = "sglang"
TITLE = "SGLang"
PACKAGE = "sglang"
WORDS = Words(
    programs=frozenset({"sglang"}),
    launch_strings=("'sglang'", '"sglang"', "sglang serve", "sglang.launch_server", "lmsysorg/sglang"),
    launch_word=r"^\s*sglang\s*$|\bsglang\b[^\n]*\bserve\b|sglang\.launch_server|lmsysorg/sglang",
    call_words=("Engine(", "Engine as", "ServerArgs"),
    keyword_classes=frozenset({"Engine", "ServerArgs"}),
    python_names=frozenset({"Engine", "ServerArgs"}),
    launch_looking=r"\bsglang\s+serve\b|sglang\.launch_server|enable[_-]linear[_-]replayssm|lmsysorg/sglang",
    image_name=r"\S*lmsysorg/sglang\S*",
)
#: an SGLang --config file is recognised by keys only SGLang has: strong evidence, tried first
CONFIG_EVIDENCE = 0
#: SGLang's images: their tag is SGLang's release, and the command follows the image
IMAGE_PATTERN = re.compile(r"(^|/)lmsysorg/sglang(:|@|$)")


def program_entry(words: Sequence[Word], i: int, env: dict[str, Word]) -> Entry | None:
    from .argv import serve_entry

    return serve_entry(words, i, env)


def module_entry(module: str, words: Sequence[Word], i: int, rest: int, env: dict[str, Word]) -> Entry | None:
    if not module.startswith("sglang."):
        return None
    from .argv import module_entry as entry

    return entry(module, words[rest:], words[i].span, env)


def image_role(image: str) -> ImageRole | None:
    """SGLang's image has no serving entrypoint: it only pins the release of what it runs."""
    return ImageRole(NAME, None) if IMAGE_PATTERN.search(image.lower()) else None


def command_image(image: str) -> str:
    return image  # its tag is SGLang's release


def unseen_program(word: Word, following: Word | None) -> bool:
    return False


def names_a_value(flag: str, value: str) -> bool:
    return False


def launch_from_entry(entry: Entry, base_dir: str | None, read_config: ConfigReader) -> Launch:
    from .argv import launch_from_entry as read

    return read(entry, base_dir, read_config)


def keyword_class(module: str, name: str) -> bool:
    return module.split(".")[0] == "sglang" and name in WORDS.keyword_classes


def launch_from_keywords(cls: str, **keywords: Any) -> Launch | None:
    from .kwargs import launch_from_keywords as read

    return read(**keywords)


def keyword_options() -> frozenset[str]:
    from .knowledge import knowledge

    know = knowledge()
    return frozenset((set(know.options) | set(know.proposal_names)) - {"model_path"})


def is_config_document(root: Any) -> bool:
    from .argv import is_serve_config_node

    return is_serve_config_node(root)


def config_launch(text: str, base_dir: str | None) -> Launch | None:
    from .argv import is_serve_config, launch_from_serve_config

    return launch_from_serve_config(text, base_dir=base_dir) if is_serve_config(text) else None


def judge(launch: Launch, config: LintConfig) -> Verdict:
    from .judge import judge as run

    return run(launch, config)


def model_note(verdict: Verdict, config: LintConfig) -> str:
    from .judge import model_note as note

    return note(verdict, config)


def rules() -> Sequence[Rule]:
    from .rules import SGLANG_RULES

    return SGLANG_RULES


def rule_addenda() -> Mapping[str, str]:
    from .rules import RULE_ADDENDA

    return RULE_ADDENDA


def plan_fixes(planner: Any, verdict: Verdict, findings: Sequence[Finding]) -> None:
    from .fixes import plan

    plan(planner, verdict, findings)


def check_settings(config: LintConfig) -> None:
    """An explicit ``sglang-version`` this linter cannot judge is a configuration error."""
    if config.sglang_version:
        from .knowledge import knowledge
        from .target import resolve_target

        resolve_target(config, None, knowledge())


def release_note(config: LintConfig) -> str:
    return ""
