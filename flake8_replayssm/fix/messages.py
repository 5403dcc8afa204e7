"""What a finding's message asks the fixer to do (vLLM's own wording, per release).

The checks in ``data/releases.toml`` carry vLLM's message; several checks share
a code but want different fixes (RSM002 is "use align mode" or "turn prefix
caching off").  These predicates read the message once, here, for every planner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from ..model import Finding

ENV_RUNNER = "VLLM_USE_V2_MODEL_RUNNER"


def backend_to_triton(message: str) -> bool:
    """RSM004 that switching to the triton backend fixes (not one that asks for flashinfer)."""
    return "requires --mamba-backend triton" in message and "requires --mamba-backend flashinfer" not in message


def wants_align_mode(message: str) -> bool:
    """RSM002 "prefix caching only in align mode": an explicit mode becomes align, or align is pinned."""
    return "only in align mode" in message


def wants_prefix_caching_off(message: str) -> bool:
    """RSM002 that only prefix caching off fixes (FlashInfer, Mamba2 speculative decoding)."""
    return "does not support --mamba-cache-mode align" in message or "does not support prefix caching" in message \
        or "requires --mamba-cache-mode none" in message


def triton_needs_v1(message: str) -> bool:
    """RSM008 "Triton ReplaySSM requires Model Runner V1": the launch must run with the V1 runner."""
    return message.startswith("Triton ReplaySSM requires Model Runner V1")


def needs_v2(message: str) -> bool:
    """RSM008 where vLLM asks for Model Runner V2 (Kimi RecoverSSM with prefix caching)."""
    return "requires VLLM_USE_V2_MODEL_RUNNER=1" in message


def replayssm_unsupported(findings: Sequence[Finding]) -> bool:
    """RSM001 among a launch's findings: vLLM refuses ReplaySSM for the model whatever else the
    launch sets, so no fix pins the runner, the backend or the cache mode for it (the launch
    would still fail); only dropping the flag (``--unsafe``) makes it start."""
    return any(f.code == "RSM001" for f in findings)
