"""Whether a YAML file is a ``vllm serve --config`` file: top-level keys that are vLLM's options.

Such a file holds no command; it is judged as ``vllm serve --config FILE`` on its own
(the model is then usually given on the command line).  Many YAML files have a
``model:`` or ``port:`` key, so it takes a majority of vLLM option names and at least
one that is not generic to be one.
"""

from __future__ import annotations

import re
from typing import Any

from ...model import Launch
from ...yaml_nodes import is_map, is_scalar, loader
from .knowledge import knowledge

#: vLLM option names (dashes) that mark a ``vllm serve --config`` YAML
SERVE_CONFIG_KEYS = frozenset({
    "model", "use-replayssm", "replayssm-buffer-len", "mamba-backend", "mamba-cache-mode",
    "mamba-block-size", "mamba-ssm-cache-dtype", "enable-prefix-caching",
    "disable-prefix-caching", "no-enable-prefix-caching", "speculative-config",
    "kv-transfer-config", "kv-offloading-size", "tensor-parallel-size",
    "pipeline-parallel-size", "data-parallel-size", "max-model-len", "port", "host",
    "served-model-name", "trust-remote-code", "gpu-memory-utilization", "max-num-seqs",
    "max-num-batched-tokens", "dtype", "quantization", "hf-overrides", "enforce-eager",
    "enable-chunked-prefill", "tokenizer", "revision", "download-dir", "api-key",
    "chat-template", "enable-auto-tool-choice", "tool-call-parser", "reasoning-parser",
    "kv-cache-dtype", "seed", "spec-method", "spec-model", "spec-tokens", "model-impl",
    "enable-expert-parallel", "uvicorn-log-level", "max-logprobs", "limit-mm-per-prompt",
})
#: keys that also appear in many unrelated YAML files
_GENERIC_KEYS = frozenset({"model", "port", "host", "dtype", "seed", "revision", "tokenizer",
                           "quantization", "api-key"})
_OPTION_LIKE = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
#: top-level keys that say "this is not a vLLM config"
_FOREIGN_TOP = frozenset({"apiversion", "kind", "services", "jobs", "on", "steps", "stages",
                          "runs", "resources", "run", "envs", "applications", "spec",
                          "metadata", "version", "include", "workflows", "pipeline", "image",
                          "containers", "replicas", "replicacount", "name", "servingenginespec"})


def is_serve_config(text: str) -> bool:
    """Whether ``text`` is a ``vllm serve --config`` YAML (top-level vLLM option keys)."""
    try:
        if "\x00" in text:
            return False
        import yaml

        root = yaml.compose(text, Loader=loader())
    except Exception:  # unparsable, or several documents
        return False
    return is_serve_config_node(root)


def is_serve_config_node(root: Any) -> bool:
    """Whether a YAML document's root node is a ``vllm serve --config`` file."""
    if not is_map(root) or not root.value:
        return False
    keys = [str(k.value) for k, _ in root.value if is_scalar(k)]
    if len(keys) != len(root.value) or not keys:
        return False
    lowered = {k.lower() for k in keys}
    if lowered & _FOREIGN_TOP or any(k != k.lower() for k in keys):
        return False  # a manifest / values file (vLLM's option names are lower case)
    normal = [k.replace("_", "-") for k in keys]
    option_like = [k for k, norm in zip(keys, normal)
                   if _OPTION_LIKE.match(k) and (norm in SERVE_CONFIG_KEYS or "-" in k or "_" in k)]
    if 2 * len(option_like) < len(keys):
        return False
    known = {k for k in normal if k in SERVE_CONFIG_KEYS}
    if not known:
        return False
    if 2 * sum(_is_vllm_option(k) for k in normal) < len(normal):
        return False  # mostly another tool's keys (a TensorRT-LLM or SGLang options file)
    if known <= _GENERIC_KEYS:
        # `model:` / `port:` alone are in many other files: need a vLLM-only key too
        return any(k.startswith(("use-replayssm", "mamba-", "enable-", "disable-", "no-enable-"))
                   for k in normal)
    return True


def _is_vllm_option(key: str) -> bool:
    """``key`` (dashes) names a ``vllm serve`` option (0.33.0's long options, ``no-``/``disable-``
    forms included)."""
    options = knowledge().long_option_set
    base = key[3:] if key.startswith("no-") else key
    base = "enable-" + base[8:] if base.startswith("disable-") else base
    return key in SERVE_CONFIG_KEYS or f"--{base}" in options or f"--{key}" in options


def is_config_document(root: Any) -> bool:
    return is_serve_config_node(root)


def config_launch(text: str, base_dir: str | None) -> Launch | None:
    """A ``vllm serve --config`` file judged on its own, as ``vllm serve --config FILE``."""
    from .argv import launch_from_serve_config

    return launch_from_serve_config(text, base_dir=base_dir) if is_serve_config(text) else None
