"""Tiny wheel-like trees for tests/test_new_release.py, written by the tests themselves.

Each tree holds only what the extractors read, shaped the way vLLM and SGLang shape it
(the names are the engines'; the code is this project's own minimum): every extraction
path has one case here — a field and a literal option, a store_true and a
BooleanOptionalAction, a class that supports ReplaySSM directly, through a base class,
through its flag, and per platform behind an ``if current_platform...`` import, raises
under ``if``/``elif``/``else`` with an f-string and a message bound to a name, an assert.
"""

from __future__ import annotations

import os
import textwrap

VLLM = {
    "vllm-0.34.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: vllm\nVersion: 0.34.0\n",
    "vllm/engine/arg_utils.py": '''
        import argparse
        from vllm.config.mamba import MambaBackendEnum

        class EngineArgs:
            model: str = "m"
            use_replayssm: bool = False
            numa_bind: bool | None = None
            mamba_backend: MambaBackendEnum = MambaBackendEnum.TRITON
            replayssm_buffer_len: int = 16

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--use-replayssm", action=argparse.BooleanOptionalAction)
                parser.add_argument("--disable-log-stats", action="store_true")
                parser.add_argument("--mamba-cache-mode", choices=["align", "none"])
                return parser

            def create_engine_config(self):
                return CacheConfig(replayssm_buffer_len=self.replayssm_buffer_len)

            def _set_default_prefix_caching_args(self, model_config):
                default_prefix_caching = model_config.is_prefix_caching_supported

        class AsyncEngineArgs(EngineArgs):
            enable_log_requests: bool = False
    ''',
    "vllm/entrypoints/common/cli_args.py": '''
        class FrontendArgs:
            port: int = 8000
            allow_credentials: bool = False

        def make_arg_parser(parser):
            parser.add_argument("--headless", action="store_true")
            parser.add_argument("--config")
            return parser
    ''',
    "vllm/entrypoints/cli/main.py": '''
        def main(parser):
            parser.add_argument("--version", action="version")
    ''',
    "vllm/config/cache.py": '''
        from typing import Literal
        MambaCacheMode = Literal["align", "all", "none"]

        class CacheConfig:
            replayssm_buffer_len: int = Field(default=8, gt=0)
    ''',
    "vllm/config/mamba.py": '''
        from enum import Enum

        class MambaBackendEnum(Enum):
            TRITON = "triton"
            FLASHINFER = "flashinfer"
    ''',
    "vllm/config/vllm.py": '''
        class VllmConfig:
            @property
            def use_v2_model_runner(self) -> bool:
                if self.forced is not None:
                    return self.forced
                return True

            def _get_v2_model_runner_unsupported_features(self):
                unsupported = []
                if self.spec is not None and self.spec.method in ("suffix", "ngram"):
                    unsupported.append(f"speculative method {self.spec.method!r}")
                return unsupported

            def validate_mamba_block_size(self):
                if self.block_size_set and not self.prefix_caching:
                    raise ValueError("--mamba-block-size can only be set with --enable-prefix-caching")

            def validate_mamba_cached_kernel(self):
                kda_architectures = ("KimiForCausalLM",)
                if not self.supports_replayssm:
                    raise ValueError(
                        "--use-replayssm is not supported for architecture "
                        f"{self.architecture!r}"
                    )
                if self.spec > 0:
                    msg = "RecoverSSM requires --mamba-backend triton"
                    raise ValueError(msg)
                elif self.backend == "flashinfer":
                    raise ValueError("FlashInfer ReplaySSM does not support prefix caching yet")
                elif self.use_v2_model_runner:
                    raise ValueError("Triton ReplaySSM requires Model Runner V1")
    ''',
    "vllm/utils/argparse_utils.py": '''
        import argparse

        class EnableDisableAction(argparse.BooleanOptionalAction):
            pass
    ''',
    "vllm/model_executor/models/interfaces.py": '''
        class SupportsReplaySSM:
            supports_replayssm = True

        class SupportsMambaPrefixCaching:
            supports_mamba_prefix_caching = True
    ''',
    "vllm/model_executor/models/registry.py": '''
        _TEXT_GENERATION_MODELS = {
            "HybridForCausalLM": ("hybrid", "HybridForCausalLM"),
            "HybridAliasForCausalLM": ("hybrid", "HybridForCausalLM"),
            "SubForCausalLM": ("sub", "SubForCausalLM"),
            "FlagForCausalLM": ("flag", "FlagForCausalLM"),
            "PlainForCausalLM": ("plain", "PlainForCausalLM"),
            "KimiForCausalLM": ("vllm.models.kimi", "KimiForCausalLM"),
            "OddForCausalLM": ("vllm.models.odd", "OddForCausalLM"),
        }
    ''',
    "vllm/model_executor/models/hybrid.py": '''
        from torch import nn
        from .interfaces import SupportsMambaPrefixCaching, SupportsReplaySSM

        class HybridForCausalLM(nn.Module, SupportsReplaySSM, SupportsMambaPrefixCaching):
            pass
    ''',
    "vllm/model_executor/models/sub.py": '''
        from .hybrid import HybridForCausalLM

        class SubForCausalLM(HybridForCausalLM):
            pass
    ''',
    "vllm/model_executor/models/flag.py": '''
        class FlagForCausalLM:
            supports_replayssm = True
    ''',
    "vllm/model_executor/models/plain.py": '''
        class PlainForCausalLM:
            pass
    ''',
    "vllm/models/kimi/__init__.py": '''
        from typing import TYPE_CHECKING
        from vllm.platforms import current_platform

        if TYPE_CHECKING:
            from .nvidia import KimiForCausalLM
        elif current_platform.is_rocm():
            from .amd import KimiForCausalLM
        else:
            from .nvidia import KimiForCausalLM
    ''',
    "vllm/models/kimi/nvidia.py": '''
        from vllm.model_executor.models.interfaces import SupportsReplaySSM

        class KimiForCausalLM(SupportsReplaySSM):
            pass
    ''',
    "vllm/models/kimi/amd.py": '''
        class KimiForCausalLM:
            pass
    ''',
    "vllm/models/odd/__init__.py": '''
        if some_setting():
            from .impl import OddForCausalLM
    ''',
    "vllm/model_executor/layers/mixer.py": '''
        class Mixer:
            def __init__(self, heads, tp):
                if heads % tp:
                    raise ValueError("--use-replayssm requires tensor-parallel heads to divide evenly")
                if heads < 0:
                    raise ValueError("ReplaySSM internal invariant")
    ''',
}

SGLANG = {
    "sglang-0.5.24.dist-info/METADATA": "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.24\n",
    "sglang/srt/server_args.py": '''
        import argparse
        from sglang.srt.arg_groups.arg_utils import add_cli_args_from_dataclass
        from sglang.srt.arg_groups.argparse_actions import DeprecatedStoreTrueAction
        from sglang.srt.arg_groups.fields.exec_ import ExecMamba

        class ServerArgs:
            @staticmethod
            def add_cli_args(parser):
                add_cli_args_from_dataclass(parser, ServerArgs)
                parser.add_argument("--config", type=str)
                parser.add_argument("--old-flag", action=DeprecatedStoreTrueAction)
                parser.add_argument("--old-const", action=DeprecatedStoreTrueAction, nargs=None)
                parser.add_argument("--toggle", action=argparse.BooleanOptionalAction)
                parser.add_argument("--buckets", type=float, nargs="+")

        _INPUT_NAMESPACES = [ExecMamba]
    ''',
    "sglang/srt/arg_groups/argparse_actions.py": '''
        import argparse

        class DeprecatedStoreTrueAction(argparse.Action):
            def __init__(self, option_strings, dest, nargs=0, **kwargs):
                super().__init__(option_strings, dest, nargs=nargs, **kwargs)
    ''',
    "sglang/srt/arg_groups/fields/base.py": '''
        class Common:
            page_size: A[Optional[int], "Page size."] = None
    ''',
    "sglang/srt/arg_groups/fields/exec_.py": '''
        from typing import Optional
        from sglang.srt.arg_groups.arg_utils import A, Arg
        from .base import Common

        class ExecMamba(Common):
            enable_linear_replayssm: A[bool, "Enable ReplaySSM."] = False
            linear_replayssm_cache_len: A[int, "Ring length."] = 16
            model_path: A[str, Arg(help="Model.", aliases=["--model"])] = ""
            tp_size: A[int, Arg(help="TP.", cli_name="--tensor-parallel-size")] = 1
            hidden: A[bool, Arg(help="Not on the CLI.", no_cli=True)] = False
            fast: A[Optional[bool], Arg(help="Toggle.", action=argparse.BooleanOptionalAction)] = None
            cuda_graph_bs_decode: A[Optional[List[int]], "Batch sizes."] = None
            adapters: A[Optional[List[str]], Arg(help="Paths.", action=PathsAction,
                                                  action_kwargs={"type": str, "nargs": "*"})] = None
            json_list: A[Optional[List[str]], Arg(help="One JSON word.", type_parser=json_list_type)] = None
            checksum: A[Optional[str], Arg(help="Optional value.", nargs="?", const="")] = None
            mode: A[Literal["a", "b"], "One of."] = "a"
            _private: int = 0
    ''',
    "sglang/srt/arg_groups/choices.py": '''
        LINEAR_ATTN_KERNEL_BACKEND_CHOICES = ["triton", "flashinfer"]
    ''',
    "sglang/srt/arg_groups/overrides.py": '''
        _MAMBA_RADIX_CACHE_ARCHS = frozenset({"Qwen3NextForCausalLM", "KimiLinearForCausalLM"})
        _MAMBA_EXTRA_BUFFER_ARCHS = frozenset(
            {
                "Qwen3NextForCausalLM",
            }
        )

        def _mamba_radix_cache_resolution(view):
            model_arch = view.arch
            in_branch = model_arch in _MAMBA_RADIX_CACHE_ARCHS
            if model_arch == "GraniteMoeHybridForCausalLM":
                in_branch = True
            return in_branch
    ''',
    "sglang/srt/configs/linear_attn_model_registry.py": '''
        from dataclasses import dataclass

        @dataclass
        class LinearAttnModelSpec:
            config_class: type
            arch_names: list = None
            uses_mamba_radix_cache: bool = True
            support_mamba_cache_extra_buffer: bool = False
    ''',
    "sglang/srt/configs/giga.py": '''
        from sglang.srt.configs.linear_attn_model_registry import LinearAttnModelSpec, register

        register(LinearAttnModelSpec(config_class=object, arch_names=["GigaForCausalLM"]))
        register(LinearAttnModelSpec(config_class=object, arch_names=["FastForCausalLM"],
                                     support_mamba_cache_extra_buffer=True))
        register(LinearAttnModelSpec(config_class=object, arch_names=["NoRadixForCausalLM"],
                                     uses_mamba_radix_cache=False))
    ''',
    "sglang/srt/arg_groups/attention_hook.py": '''
        def handle_linear_attn_backend(cfg):
            if cfg.enable_linear_replayssm:
                decode = cfg.decode or cfg.backend
                if decode != "triton":
                    raise ValueError(
                        "--enable-linear-replayssm requires the Triton linear-attn decode backend, "
                        f"got --linear-attn-decode-backend={decode!r}."
                    )
                if cfg.linear_replayssm_cache_len < 1:
                    raise ValueError(f"--linear-replayssm-cache-len must be >= 1, got {cfg.cache_len}.")
            if cfg.other:
                raise ValueError("unrelated")
    ''',
    "sglang/srt/arg_groups/mamba_hook.py": '''
        def validate_mamba_no_buffer(view):
            assert view.page_size in (1, None), "no_buffer only supports page_size=1."
    ''',
    "sglang/srt/mem_cache/memory_pool.py": '''
        def alloc(n):
            if n > 1:
                raise ValueError("--enable-linear-replayssm-spec ring too small")
            assert n, "ReplaySSM ring index out of range"
    ''',
}


def write_tree(root: str, files: dict[str, str], replace: dict[str, tuple[str, str]] | None = None) -> str:
    """Write ``files`` under ``root`` (dedented); ``replace``: path -> (old, new) text edits."""
    for path, text in files.items():
        body = textwrap.dedent(text).lstrip("\n")
        if replace and path in replace:
            old, new = replace[path]
            assert old in body, (path, old)
            body = body.replace(old, new)
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(body)
    return root
