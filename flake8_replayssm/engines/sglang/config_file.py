"""Whether a YAML file is an SGLang ``--config`` file: a flat mapping with keys only SGLang has.

Such a file is judged as ``sglang serve --config FILE`` on its own (the model usually
comes from the command line).
"""

from __future__ import annotations

from typing import Any

from ... import config_files
from ...model import Launch
from ...yaml_nodes import is_map, is_scalar, loader
from .knowledge import knowledge

#: keys only an SGLang server config has (a vLLM serve config never does)
_SGLANG_CONFIG_KEYS = ("enable-linear-replayssm", "linear-replayssm-cache-len", "enable-linear-replayssm-spec",
                       "enable-gdn-replayssm-spec", "enable-gdn-replayssm", "mamba-radix-cache-strategy",
                       "mamba-scheduler-strategy", "model-path")


def is_serve_config(text: str) -> bool:
    """Whether ``text`` is an SGLang ``--config`` YAML: a flat mapping with SGLang-only keys."""
    if not any(key in text or key.replace("-", "_") in text for key in _SGLANG_CONFIG_KEYS):
        return False
    config = config_files.config_args_from_text(text)
    if config is None:
        return False
    keys = [w.text[2:].replace("_", "-") for w in config.words if w.text and w.text.startswith("--")]
    keys += [s.spelling.replace("_", "-") for s in config.false_keys]
    return _sglang_options(keys) and is_serve_config_node(_root(text))


def _root(text: str) -> Any:
    try:
        import yaml

        return yaml.compose(text, Loader=loader())
    except Exception:
        return None


def is_serve_config_node(root: Any) -> bool:
    """The same test on a YAML document's root node (a document of a larger YAML file)."""
    if not is_map(root) or not all(is_scalar(key) for key, _ in root.value):
        return False
    keys = [str(key.value).replace("_", "-") for key, _ in root.value]
    nested = [key for key, (_, value) in zip(keys, root.value) if is_map(value)]
    return _sglang_options(keys) and all(_is_option(key) for key in nested)


def _is_option(key: str) -> bool:
    return f"--{key}" in set(knowledge().long_options) or key in _SGLANG_CONFIG_KEYS


def _sglang_options(keys: list[str]) -> bool:
    """Keys of an SGLang ``--config`` file: one only SGLang has, and mostly SGLang's options (a
    Hydra or a framework's config with a ``model_path:`` key is not one: PipelineRL's, whose
    other keys hold mappings of their own)."""
    if not any(key in _SGLANG_CONFIG_KEYS for key in keys) or any(
            key in ("apiVersion", "kind", "services", "spec") for key in keys):
        return False
    return 2 * sum(_is_option(key) for key in keys) >= len(keys)


def is_config_document(root: Any) -> bool:
    return is_serve_config_node(root)


def config_launch(text: str, base_dir: str | None) -> Launch | None:
    """An SGLang ``--config`` file judged on its own, as ``sglang serve --config FILE``."""
    from .argv import launch_from_serve_config

    return launch_from_serve_config(text, base_dir=base_dir) if is_serve_config(text) else None
