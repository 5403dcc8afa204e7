"""Structured documents: YAML, TOML and JSON, whatever they configure.

Kubernetes / KServe / Helm-rendered manifests, docker-compose, GitHub Actions (and
SkyPilot, GitLab CI, Tekton ``script``), Helm values, Ray Serve configs, serving platforms'
and frameworks' own configs.  Each module has one job: :mod:`.nodes` reads a text into
placed nodes (:mod:`.toml_nodes` for TOML), :mod:`.document` reads one text with every
reader, :mod:`.walk` finds the commands of a document by place (:mod:`.containers`,
:mod:`.compose`, :mod:`.scripts`, :mod:`.values`) and then by content (:mod:`.content`),
:mod:`.forwarded` the blocks a framework forwards to an engine, :mod:`.ray_serve` the
keyword launches of Ray Serve LLM configs, :mod:`.embedded` the documents written inside
strings.
"""

from __future__ import annotations

from .document import Reading, commands_in_yaml, read_document

__all__ = ["Reading", "commands_in_yaml", "read_document"]
