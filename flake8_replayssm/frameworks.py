"""Frameworks that launch an engine with options under their own names.

Ray Serve LLM's ``LLMConfig(engine_kwargs=...)`` (Python, and the same keys in a
Serve YAML or a RayService) hands ``engine_kwargs`` to vLLM's ``AsyncEngineArgs``
(ray.llm's vLLM engine), so those keys are judged as vLLM's keyword options.
"""

from __future__ import annotations

#: the engine, and its keyword class, that Ray Serve LLM's ``engine_kwargs`` are read as
RAY_SERVE_LLM = ("vllm", "EngineArgs")
