"""Ray Serve LLM configs (a Serve config's ``llm_configs``, a RayService's ``serveConfigV2``):
``engine_kwargs`` are vLLM's EngineArgs fields, judged as a keyword launch.
"""

from __future__ import annotations

from typing import Any, Callable

from ... import engines
from ...config_files import MAX_EXPANDED_NODES, expanded_size
from ...frameworks import RAY_SERVE_LLM
from ...model import UNKNOWN, Launch, Setting, Span
from ...unchecked import frontend_failed
from ...yaml_nodes import loader
from .nodes import Doc, documents, get, is_map, is_scalar, is_seq, items, node_line, text_of

_NESTED_CONFIG_KEYS = frozenset({"serveconfigv2", "serveconfig"})


def ray_launches_in_yaml(text: str, *, base_dir: str | None = None) -> list[Launch]:
    """Ray Serve LLM configs: any mapping with ``engine_kwargs`` (vLLM's EngineArgs fields),
    served model ``model_loading_config.model_source`` (else ``model_id``); also inside a
    KubeRay RayService's ``serveConfigV2`` string."""
    if "engine_kwargs" not in text:
        return []
    parsed = documents(text)
    if parsed is None:
        return []
    text, docs = parsed
    doc = Doc(text, base_dir)
    out: list[Launch] = []
    for root in docs:
        try:
            out += _ray_configs(root, doc, doc.span)
        except Exception as exc:
            frontend_failed(node_line(root), "Ray Serve YAML", exc)
    return out


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
            if engine_kwargs is not None:
                out.append(_ray_launch(node, engine_kwargs, span, launch_from_kwargs))
            for key, _, value in items(node):
                if key.lower() in _NESTED_CONFIG_KEYS and is_scalar(value) and "engine_kwargs" in str(value.value):
                    out += _nested_ray_configs(value, doc, span)
                else:
                    stack.append(value)
        elif is_seq(node):
            stack.extend(node.value)
    return out


def _ray_launch(node: Any, engine_kwargs: Any, span: Callable[[Any], Span], make: Any) -> Launch:
    import yaml

    constructor = yaml.SafeLoader("")
    model: Setting | None = None
    loading = get(node, "model_loading_config")
    source = (get(loading, "model_source") or get(loading, "model_id")) if is_map(loading) else None
    if source is not None:
        model = Setting("model", text_of(source) if is_scalar(source) else UNKNOWN, span(source), "",
                        span(source))
    keywords: dict[str, Setting] = {}
    unseen: list[str] = []
    if is_map(engine_kwargs):
        sizes: dict[int, int] = {}
        for key, key_node, value in items(engine_kwargs):
            if expanded_size(value, sizes) > MAX_EXPANDED_NODES:
                converted: Any = UNKNOWN  # aliases that expand past any real value
            else:
                try:
                    converted = constructor.construct_object(value, deep=True)
                except (MemoryError, RecursionError) as exc:
                    frontend_failed(span(value), "Ray Serve YAML", exc)
                    converted = UNKNOWN
                except Exception:
                    converted = UNKNOWN
            if isinstance(converted, str) and "__RSMTPL" in converted:
                converted = UNKNOWN
            keywords[key] = Setting(key, converted, span(key_node), key, span(value))
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
