"""The flake8 plugin: ``RSM`` codes for vLLM launches in Python files.

flake8 gives the file's lines; the plugin checks them for a trigger token
first, so files without one cost a regular-expression search and never import
libcst.  Options are registered with a ``--replayssm-`` prefix and can live in
flake8's config; ``[tool.flake8-replayssm]`` in pyproject.toml fills in what
flake8's options leave unset.  No exception escapes ``run()``: a file libcst
cannot parse has no findings.  flake8 applies ``# noqa`` itself.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any, ClassVar, Iterator, Sequence

from . import __version__
from .config import EXTRA_ARGS_MODES, GPUS, PLATFORMS, ConfigError, LintConfig, project_config, split_codes


class Plugin:
    name = "flake8-replayssm"
    version = __version__

    _options: ClassVar[dict[str, Any]] = {}

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, manager: Any) -> None:
        manager.add_option("--replayssm-vllm-version", parse_from_config=True, default=None,
                           help="vLLM release to judge launches for (default: pinned or newest)")
        manager.add_option("--replayssm-platform", parse_from_config=True, default=None,
                           choices=PLATFORMS, help="platform vLLM runs on (default: cuda)")
        manager.add_option("--replayssm-sglang-version", parse_from_config=True, default=None,
                           help="SGLang release to judge SGLang launches for (default: pinned or newest)")
        manager.add_option("--replayssm-gpu", parse_from_config=True, default=None, choices=GPUS,
                           help="GPU generation SGLang launches run on (default: both)")
        manager.add_option("--replayssm-enable", parse_from_config=True, default=None,
                           comma_separated_list=True,
                           help="off-by-default codes to turn on, e.g. RSM201")
        manager.add_option("--replayssm-extra-args", parse_from_config=True, default=None,
                           choices=EXTRA_ARGS_MODES,
                           help="unseen extra arguments: 'closed' (default) assumes they add no "
                                "ReplaySSM option; 'open' reports nothing that depends on them")
        manager.add_option("--replayssm-extra-models", parse_from_config=True, default=None,
                           comma_separated_list=True,
                           help="extra model=Architecture pairs, e.g. org/my-nano=NemotronHForCausalLM")

    @classmethod
    def parse_options(cls, options: Any) -> None:
        version = getattr(options, "replayssm_vllm_version", None)
        if version:
            from .knowledge import knowledge
            from .target import closest_release

            release, problem = closest_release(version, knowledge())
            if release is None and problem:
                raise ValueError(f"--replayssm-vllm-version {version}: {problem}")
        cls._options = {
            "vllm_version": getattr(options, "replayssm_vllm_version", None),
            "platform": getattr(options, "replayssm_platform", None),
            "enable": getattr(options, "replayssm_enable", None),
            "extra_models": getattr(options, "replayssm_extra_models", None),
            "extra_args": getattr(options, "replayssm_extra_args", None),
            "sglang_version": getattr(options, "replayssm_sglang_version", None),
            "gpu": getattr(options, "replayssm_gpu", None),
        }

    def config(self) -> LintConfig:
        start = Path(os.path.dirname(os.path.abspath(self.filename)) if self.filename not in ("stdin", "-")
                     else os.getcwd())
        try:
            base = project_config(start)
        except ConfigError:
            base = LintConfig()
        opts = self._options
        extra = dict(base.extra_models)
        for pair in opts.get("extra_models") or ():
            model, _, arch = pair.partition("=")
            if model and arch:
                extra[model.strip()] = arch.strip()
        return base.merged(
            vllm_version=opts.get("vllm_version"),
            vllm_version_source="--replayssm-vllm-version" if opts.get("vllm_version") else None,
            platform=opts.get("platform"),
            extra_args=opts.get("extra_args"),
            sglang_version=opts.get("sglang_version"),
            sglang_version_source="--replayssm-sglang-version" if opts.get("sglang_version") else None,
            gpu=opts.get("gpu"),
            enable=(base.enable + split_codes(opts.get("enable"))) or None,
            extra_models=extra,
            # flake8 does its own selection; report every code we compute
            select=("RSM",),
            ignore=(),
        )

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from .lint import has_trigger  # a regular expression; libcst stays unimported

        text = "".join(self.lines)
        if not has_trigger(text, "python"):
            return
        try:
            from .engine import judge
            from .lint import launches_in

            config = self.config()
            findings = []
            for launch in launches_in(text, "python", path=self.filename):
                findings.extend(judge(launch, config).findings)
        except Exception:  # never break a flake8 run; the CLI reports real errors
            return
        for finding in sorted(findings, key=lambda f: f.sort_key):
            if finding.span.source is not None:
                continue
            yield finding.span.line, finding.span.col, f"{finding.code} {finding.message}", type(self)
