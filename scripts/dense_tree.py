"""A generated, seeded tree of small launch files of every kind (scripts/benchmark.py --dense).

vLLM's own source tree has few launches, so it measures how fast files are *rejected*;
a repository of deployment recipes is the opposite: nearly every file is a launch that
is parsed and judged.  This writes such a tree: shell scripts, Python ``LLM(...)`` and
``subprocess`` drivers, Kubernetes Deployments, Dockerfiles and compose files, in equal
shares, each a few dozen lines written the way real launch files are, with models, flags
and environments drawn from a seeded generator (the same seed gives the same tree).
"""

from __future__ import annotations

import random
from pathlib import Path

MODELS = ["nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nvidia/Nemotron-H-8B-Base-8K", "tiiuae/Falcon-H1-1.5B-Instruct",
          "meta-llama/Llama-3.1-8B-Instruct", "moonshotai/Kimi-Linear-48B-A3B-Instruct", "Qwen/Qwen3-8B"]
FLAG_SETS = [[], ["--mamba-backend", "flashinfer"], ["--enable-prefix-caching"], ["--no-enable-prefix-caching"],
             ["--mamba-backend", "triton", "--mamba-cache-mode", "align"], ["--replayssm-buffer-len", "8"],
             ["--speculative-config", '{"method": "mtp", "num_speculative_tokens": 2}']]
KINDS = ("shell", "python_llm", "python_argv", "k8s", "dockerfile", "compose")


def write_tree(root: Path, files: int, seed: int = 7) -> dict[str, int]:
    """Write ``files`` launch files under ``root``; how many of each kind."""
    rng = random.Random(seed)
    counts = dict.fromkeys(KINDS, 0)
    for index in range(files):
        kind = KINDS[index % len(KINDS)]
        counts[kind] += 1
        folder = root / f"team{index % 17:02d}" / kind
        folder.mkdir(parents=True, exist_ok=True)
        name, text = _WRITERS[kind](rng, index)
        (folder / name).write_text(text, encoding="utf-8")
    return counts


def _flags(rng: random.Random) -> list[str]:
    flags = ["--use-replayssm", "--port", str(8000 + rng.randrange(8)),
             "--tensor-parallel-size", str(rng.choice([1, 2, 4]))]
    return flags + rng.choice(FLAG_SETS)


def _quote(word: str) -> str:
    return f"'{word}'" if any(c in word for c in " {}\"") else word


def _shell(rng: random.Random, index: int) -> tuple[str, str]:
    model = rng.choice(MODELS)
    lines = ["#!/usr/bin/env bash", "set -euo pipefail", f"# launch {index}: serve {model}",
             f'MODEL="${{MODEL:-{model}}}"', 'LOG_DIR="${LOG_DIR:-/tmp/logs}"', 'mkdir -p "$LOG_DIR"']
    if rng.random() < 0.4:
        lines.append("export VLLM_USE_V2_MODEL_RUNNER=0")
    lines.append('echo "starting $MODEL"')
    lines.append('vllm serve "$MODEL" \\')
    lines += [f"  {_quote(flag)} \\" for flag in _flags(rng)]
    lines.append('  "$@" 2>&1 | tee "$LOG_DIR/serve.log"')
    return f"serve_{index}.sh", "\n".join(lines) + "\n"


def _python_llm(rng: random.Random, index: int) -> tuple[str, str]:
    model = rng.choice(MODELS)
    extra = rng.choice(["", ', mamba_backend="flashinfer"', ", enable_prefix_caching=False",
                        ', speculative_config={"method": "mtp", "num_speculative_tokens": 2}'])
    text = f'''"""Offline batch {index}."""
import json
import sys

from vllm import LLM, SamplingParams

MODEL = "{model}"


def main(path: str) -> None:
    prompts = [json.loads(line)["prompt"] for line in open(path)]
    llm = LLM(model=MODEL, tensor_parallel_size={rng.choice([1, 2, 4])}, use_replayssm=True{extra},
              max_model_len=8192)
    for out in llm.generate(prompts, SamplingParams(max_tokens=64)):
        print(out.outputs[0].text)


if __name__ == "__main__":
    main(sys.argv[1])
'''
    return f"batch_{index}.py", text


def _python_argv(rng: random.Random, index: int) -> tuple[str, str]:
    model = rng.choice(MODELS)
    argv = ", ".join(repr(w) for w in ["vllm", "serve", model, *_flags(rng)])
    env = ', env={**os.environ, "VLLM_USE_V2_MODEL_RUNNER": "0"}' if rng.random() < 0.4 else ""
    text = f'''"""Start server {index} and wait for it."""
import os
import subprocess
import time
import urllib.request


def start() -> subprocess.Popen:
    cmd = [{argv}]
    return subprocess.Popen(cmd{env})


def wait(port: int = 8000) -> None:
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://localhost:{{port}}/health")
            return
        except OSError:
            time.sleep(1)


if __name__ == "__main__":
    proc = start()
    wait()
    proc.wait()
'''
    return f"server_{index}.py", text


def _k8s(rng: random.Random, index: int) -> tuple[str, str]:
    model = rng.choice(MODELS)
    args = "\n".join(f"            - {_quote(a)}" for a in ["--model", model, *_flags(rng)])
    env = '\n          env:\n            - name: VLLM_USE_V2_MODEL_RUNNER\n              value: "0"' \
        if rng.random() < 0.4 else ""
    text = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-{index}
  labels: {{app: vllm-{index}}}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: vllm-{index}}}
  template:
    metadata:
      labels: {{app: vllm-{index}}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.{rng.choice([30, 31, 32, 33])}.0
          args:
{args}{env}
          ports:
            - containerPort: 8000
          resources:
            limits: {{nvidia.com/gpu: 1}}
"""
    return f"deployment_{index}.yaml", text


def _dockerfile(rng: random.Random, index: int) -> tuple[str, str]:
    model = rng.choice(MODELS)
    items = ", ".join(f'"{w}"' if '"' not in w else repr(w) for w in ["--model", model, *_flags(rng)])
    env = "ENV VLLM_USE_V2_MODEL_RUNNER=0\n" if rng.random() < 0.4 else ""
    text = f"""# image {index}
FROM vllm/vllm-openai:v0.{rng.choice([29, 30, 32, 33])}.0
RUN pip install --no-cache-dir hf_transfer
ENV HF_HUB_ENABLE_HF_TRANSFER=1
{env}EXPOSE 8000
CMD [{items}]
"""
    return f"Dockerfile.{index}", text


def _compose(rng: random.Random, index: int) -> tuple[str, str]:
    model = rng.choice(MODELS)
    command = " ".join(_quote(a) for a in ["--model", model, *_flags(rng)])
    text = f"""services:
  vllm-{index}:
    image: vllm/vllm-openai:v0.{rng.choice([30, 31, 33])}.0
    ports: ["{8000 + index % 100}:8000"]
    environment:
      HF_TOKEN: ${{HF_TOKEN}}
    command: >
      {command}
    deploy:
      resources:
        reservations:
          devices: [{{driver: nvidia, count: 1, capabilities: [gpu]}}]
"""
    return f"compose_{index}.yml", text


_WRITERS = {"shell": _shell, "python_llm": _python_llm, "python_argv": _python_argv, "k8s": _k8s,
            "dockerfile": _dockerfile, "compose": _compose}

#: what semgrep runs as the peer: far less than the linter checks (two patterns, no rules)
SEMGREP_RULES = """rules:
  - id: replayssm-flag
    languages: [generic]
    severity: WARNING
    message: a ReplaySSM launch
    pattern-regex: --use-replayssm
  - id: replayssm-keyword
    languages: [python]
    severity: WARNING
    message: a ReplaySSM launch
    pattern: LLM(..., use_replayssm=True, ...)
"""
