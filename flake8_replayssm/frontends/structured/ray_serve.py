"""Ray Serve LLM configs (a Serve config's ``llm_configs``, a RayService's ``serveConfigV2``):
``engine_kwargs`` are vLLM's EngineArgs fields, judged as a keyword launch.
"""

from __future__ import annotations

from typing import Any, Callable

from ... import engines
from ...frameworks import RAY_SERVE_LLM
from ...model import UNKNOWN, Launch, Setting, Span
from ...yaml_nodes import loader
from .nodes import Doc, get, is_map, is_scalar, is_seq, items, node_value, text_of

_NESTED_CONFIG_KEYS = frozenset({"serveconfigv2", "serveconfig"})


def ray_launches_in_document(root: Any, doc: Doc) -> list[Launch]:
    """Ray Serve LLM configs: any Ray LLM config mapping with ``engine_kwargs`` (vLLM's EngineArgs
    fields), served model ``model_loading_config.model_source`` (else ``model_id``); also inside
    a KubeRay RayService's ``serveConfigV2`` string."""
    return _ray_configs(root, doc, doc.span)


def _ray_configs(root: Any, doc: Doc, span: Callable[[Any], Span]) -> list[Launch]:
    name, cls = RAY_SERVE_LLM
    engine = engines.get(name)

    def launch_from_kwargs(**keywords: Any) -> Launch:
        return engine.launch_from_keywords(cls, **keywords)

    out: list[Launch] = []
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if is_map(node):
            engine_kwargs = get(node, "engine_kwargs")
            if engine_kwargs is not None and _is_ray_llm_config(node, engine_kwargs):
                out.append(_ray_launch(node, engine_kwargs, span, launch_from_kwargs))
            for key, _, value in items(node):
                if key.lower() in _NESTED_CONFIG_KEYS and is_scalar(value) and "engine_kwargs" in str(value.value):
                    out += _nested_ray_configs(value, doc, span)
                else:
                    stack.append(value)
        elif is_seq(node):
            stack.extend(node.value)
    return out


#: keys of a Ray Serve LLM config (LLMConfig's fields) or of a RayLLM ``engine_config`` beside
#: ``engine_kwargs``: a mapping with one of them is a Ray Serve LLM config, not another
#: framework's ``engine_kwargs`` (verl's ``engine_kwargs: {vllm: {...}}``: frameworks.toml)
_RAY_LLM_KEYS = frozenset({"model_loading_config", "llm_engine", "accelerator_type", "deployment_config",
                           "lora_config", "runtime_env", "placement_group_config", "experimental_configs",
                           "log_engine_metrics", "model_id", "hf_model_id"})


def _is_ray_llm_config(node: Any, engine_kwargs: Any) -> bool:
    """``node`` (the mapping holding ``engine_kwargs``) is a Ray Serve LLM config, and its
    ``engine_kwargs`` are vLLM's fields (not one block per engine name)."""
    if is_map(engine_kwargs) and any(key in engines.NAMES for key, _, _ in items(engine_kwargs)):
        return False
    return any(key in _RAY_LLM_KEYS for key, _, _ in items(node)) \
        or (text_of(get(node, "type")) or "").lower() == "vllmengine"


def _ray_launch(node: Any, engine_kwargs: Any, span: Callable[[Any], Span], make: Any) -> Launch:
    model: Setting | None = None
    loading = get(node, "model_loading_config")
    source = (get(loading, "model_source") or get(loading, "model_id")) if is_map(loading) else None
    if source is None:  # a RayLLM engine_config: model_id (hf_model_id: where it is downloaded from)
        source = get(node, "hf_model_id") or get(node, "model_id")
    if source is not None:
        model = Setting("model", text_of(source) if is_scalar(source) else UNKNOWN, span(source), "",
                        span(source))
    keywords: dict[str, Setting] = {}
    unseen: list[str] = []
    if is_map(engine_kwargs):
        sizes: dict[int, int] = {}
        for key, key_node, value in items(engine_kwargs):
            keywords[key] = Setting(key, node_value(value, sizes, where=span(value), reader="Ray Serve YAML"),
                                    span(key_node), key, span(value))
    else:
        unseen.append("engine_kwargs")
    keywords.pop("model", None)
    anchor = span(loading if loading is not None else engine_kwargs)
    if model is None:
        model = Setting("model", UNKNOWN, anchor, "")
    return make(label="Ray Serve LLM config", anchor=anchor, model=model, keywords=keywords,
                unseen=unseen, env={})


def _nested_ray_configs(value: Any, doc: Doc, span: Callable[[Any], Span]) -> list[Launch]:
    """A YAML document written as a string (``serveConfigV2: |``), placed in the file."""
    import yaml

    inner = str(value.value)
    chars = doc.chars(value)
    if chars is None or len(chars) != len(inner):
        return []

    def inner_span(node: Any) -> Span:
        a = chars[min(node.start_mark.index, len(chars) - 1)]
        b = chars[min(max(node.end_mark.index - 1, node.start_mark.index), len(chars) - 1)] + 1
        return doc.lines.span(a, b)

    try:
        roots = list(yaml.compose_all(inner, Loader=loader()))
    except (MemoryError, RecursionError):  # too large or deep: reported, never dropped
        raise
    except Exception:
        return []
    return [launch for root in roots for launch in _ray_configs(root, doc, inner_span)]
