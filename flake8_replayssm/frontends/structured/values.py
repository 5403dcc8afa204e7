"""Helm values and operators' specs that hold an engine's arguments: a list of vLLM
arguments under an argument key (``extraArgs: [--use-replayssm, ...]``), and
vllm-project/production-stack's ``servingEngineSpec.modelSpec[]``.
"""

from __future__ import annotations

import posixpath
from typing import Any

from ...model import Command, Word
from .._common import image_for_command, is_vllm_image, split_words
from .containers import REPLAYSSM_FLAG, env_list, image_of, seq_toks
from .nodes import STR_TAG, Doc, get, is_map, is_scalar, is_seq, items, text_of

ARG_KEYS = frozenset({
    "args", "extraargs", "extra_args", "extra-args", "arguments", "extraarguments",
    "serverargs", "server_args", "vllmargs", "vllm_args", "engineargs", "cmdargs",
    "containerargs", "additionalargs", "additional_args", "command", "cmd",
})


def helm_args(key: str, value: Any, owner: Any, doc: Doc, chain: list[Any]) -> Command | None:
    """A Helm-values list of vLLM arguments (``extraArgs: [--use-replayssm, ...]``)."""
    if is_seq(value):
        if not value.value or not all(is_scalar(i) for i in value.value):
            return None
        texts = [text_of(i) or "" for i in value.value]
    elif is_scalar(value) and value.tag == STR_TAG and key.lower() in ARG_KEYS:
        texts = [w[0] for w in split_words(str(value.value))]
    else:
        return None
    if not texts:
        return None
    full_argv = posixpath.basename(texts[0]) == "vllm" and texts[1:2] == ["serve"]
    if not full_argv:
        if key.lower() not in ARG_KEYS:
            return None
        if not (any(REPLAYSSM_FLAG.match(t) for t in texts) or texts[0].startswith("--model")):
            return None
    toks = seq_toks(value, doc)
    image = None
    for ancestor in [owner] + list(reversed(chain)):
        found = image_of(ancestor) if is_map(ancestor) else None
        if found:
            image = found
            break
    if full_argv:
        return Command(words=[t.word() for t in toks], base_dir=doc.base_dir,
                       image=image_for_command(image) if image and is_vllm_image(image) else None)
    vllm = image_for_command(image) if image and is_vllm_image(image) else "vllm/vllm-openai"
    words = [t.word() for t in toks]
    model_url = None
    for ancestor in [owner] + list(reversed(chain)):
        if is_map(ancestor) and text_of(get(ancestor, "modelURL")):
            model_url = get(ancestor, "modelURL")
            break
    if model_url is not None and not any((w.text or "").startswith("--model") for w in words):
        words.insert(0, Word(text_of(model_url), doc.span(model_url)))
    return Command(words=words, image=vllm, base_dir=doc.base_dir)


def production_stack(spec: Any, doc: Doc) -> list[Command]:
    """vllm-project/production-stack ``servingEngineSpec.modelSpec[]`` (chart template rules)."""
    url = get(spec, "modelURL")
    words = [Word(text_of(url), doc.span(url))]
    config = get(spec, "vllmConfig")
    if is_map(config):
        for key, key_node, value in items(config):
            flag = _PS_FLAGS.get(key)
            text = text_of(value)
            if key in ("enableChunkedPrefill", "enablePrefixCaching"):
                base = "--enable-chunked-prefill" if key == "enableChunkedPrefill" \
                    else "--enable-prefix-caching"
                on = (text or "").lower() in ("true", "yes", "on", "1")
                words.append(Word(base if on else "--no-" + base[2:], doc.span(key_node)))
            elif flag and text is not None:
                words += [Word(flag, doc.span(key_node)), Word(text, doc.span(value))]
        if get(config, "enablePrefixCaching") is None:
            words.append(Word("--no-enable-prefix-caching", doc.span(config)))
        extra = get(config, "extraArgs")
        if is_seq(extra):
            doc.consumed.add(id(extra))
            words += [t.word() for t in seq_toks(extra, doc)]
    lmcache = get(spec, "lmcacheConfig")
    if is_map(lmcache) and (text_of(get(lmcache, "enabled")) or "").lower() == "true":
        where = doc.span(get(lmcache, "enabled"))
        words += [Word("--kv-transfer-config", where),
                  Word('{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}', where)]
    env, _ = env_list(get(spec, "env"), doc)
    image = image_of(spec)
    vllm = image_for_command(image) if image and is_vllm_image(image) else "vllm/vllm-openai"
    return [Command(words=words, env=env, image=vllm, base_dir=doc.base_dir)]


_PS_FLAGS = {
    "maxModelLen": "--max-model-len", "dtype": "--dtype",
    "tensorParallelSize": "--tensor-parallel-size", "maxNumSeqs": "--max-num-seqs",
    "gpuMemoryUtilization": "--gpu-memory-utilization", "maxLoras": "--max-loras",
}


#: KubeAI's ``url:`` schemes and what its controller gives vLLM as ``--model`` for each
#: (substratusai/kubeai internal/modelcontroller/engine_vllm.go, vLLMPodForModel): the reference
#: of ``hf://org/model``, the URL itself for ``s3://`` (streamed), ``/model`` for a PVC; other
#: sources are downloaded to a cache folder first (unknown here)
_KUBEAI_MODEL = {"hf://": "ref", "s3://": "url", "pvc://": "/model"}


def kubeai_model(spec: Any, doc: Doc) -> Command | None:
    """A KubeAI ``Model`` (``engine: VLLM``, ``url:``, ``args:``, ``env:``; also a catalog entry of its
    Helm values): the controller runs ``python3 -m vllm.entrypoints.openai.api_server
    --model=MODEL --served-model-name=NAME ARGS`` with the model's ``env``."""
    url_node, args = get(spec, "url"), get(spec, "args")
    if (text_of(get(spec, "engine")) or "").lower() != "vllm" or not is_scalar(url_node):
        return None
    url = text_of(url_node) or ""
    scheme = next((s for s in _KUBEAI_MODEL if url.startswith(s)), None)
    how = _KUBEAI_MODEL.get(scheme or "")
    model = url[len(scheme):] if how == "ref" and scheme else url if how == "url" else how
    if get(spec, "cacheProfile") is not None or "__RSMTPL" in url:
        model = None
    where = doc.span(url_node)
    words = [Word(w, where) for w in ("python3", "-m", "vllm.entrypoints.openai.api_server")]
    words.append(Word(None if model is None else f"--model={model}", where, label=None if model else url))
    if model is None:
        words[-1:] = [Word("--model", where), Word(None, where, label=url)]
    if is_seq(args):
        doc.consumed.add(id(args))
        words += [t.word() for t in seq_toks(args, doc)]
    env_node = get(spec, "env")
    env = env_list(env_node, doc)[0] if is_seq(env_node) else {
        key: Word(text_of(value), doc.span(value)) for key, _, value in items(env_node)}
    return Command(words=words, env=env, base_dir=doc.base_dir)
