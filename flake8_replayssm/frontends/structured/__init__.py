"""Structured documents: YAML manifests, compose files, workflows, task files and values.

Kubernetes / KServe / Helm-rendered manifests, docker-compose, GitHub Actions (and
SkyPilot, GitLab CI, Tekton ``script``), Helm values, Ray Serve configs.  Each module has
one job: :mod:`.nodes` reads a text into placed nodes, :mod:`.walk` finds the commands of a
document (:mod:`.containers`, :mod:`.compose`, :mod:`.scripts`, :mod:`.values` by place),
:mod:`.ray_serve` the keyword launches of Ray Serve LLM configs, :mod:`.embedded` the
documents written inside strings.
"""

from __future__ import annotations

from .embedded import embedded_documents
from .ray_serve import ray_launches_in_yaml
from .walk import commands_in_yaml

__all__ = ["commands_in_yaml", "embedded_documents", "ray_launches_in_yaml"]
