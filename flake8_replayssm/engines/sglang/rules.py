"""RSM301-RSM308: the SGLang codes, documented in ruff's rule-doc shape with tested examples.

The conditions are SGLang's own checks, kept as data per release in ``data/sglang.toml``;
this is the user-facing side of each code (``replayssm-lint explain RSM302``), and the
examples run through the linter in the test suite like the vLLM codes' examples.
"""

from __future__ import annotations

from ...rulebase import Example, Rule

QWEN_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
SERVE = f"sglang serve --model-path {QWEN_NEXT} --enable-linear-replayssm"
OFF = "--disable-overlap-schedule"


def _example(code: str, release: str = "0.5.23", kind: str = "shell") -> Example:
    return Example(code, kind=kind, release=release, engine="sglang")


SGLANG_RULES: tuple[Rule, ...] = (
    Rule(
        "RSM301", "sglang-replayssm-decode-backend",
        "Checks the linear-attention decode backend of an `--enable-linear-replayssm` launch: "
        "SGLang accepts only Triton (and, from 0.5.18, Helion for KDA models). The backend is "
        "`--linear-attn-decode-backend`, else `--linear-attn-backend`, after SGLang's own "
        "rewrites: on Blackwell (SM100) with `--mamba-ssm-dtype bfloat16` an unset decode backend "
        "silently becomes FlashInfer (Kimi models keep Triton from 0.5.17). With `gpu` unset the "
        "launch is judged for Hopper and Blackwell and reported only if both refuse it.",
        "SGLang refuses to start: `--enable-linear-replayssm requires the Triton linear-attn decode "
        "backend, got --linear-attn-decode-backend='flashinfer'`, only once the server boots on the "
        "GPU node.",
        "Pass `--linear-attn-decode-backend triton` (it also keeps SGLang from switching to "
        "FlashInfer on Blackwell).",
        "Pinning `--linear-attn-decode-backend triton` where SGLang would switch it is safe: it is "
        "the backend ReplaySSM needs; replacing a backend the user chose is **unsafe**.",
        (_example(f"{SERVE} {OFF} --linear-attn-decode-backend flashinfer\n"),),
        (_example(f"{SERVE} {OFF} --linear-attn-decode-backend triton\n"),),
    ),
    Rule(
        "RSM302", "sglang-replayssm-extra-buffer",
        "Checks the mamba radix-cache strategy SGLang resolves: ReplaySSM needs `no_buffer`, but "
        "the default `auto` resolves to `extra_buffer` while the overlap scheduler is on (the "
        "default) for every model that supports it: Qwen3-Next, Qwen3.5, Nemotron-H, Falcon-H1, "
        "and Kimi Linear from 0.5.16. An explicit `extra_buffer*` is refused too.",
        "SGLang refuses to start, and its message (like the flag's help) calls `no_buffer` \"the "
        "default\", which it is not. On 0.5.15 the message itself fails with an `AttributeError`.",
        f"Add `{OFF}` (then `auto` resolves to `no_buffer`), or `--disable-radix-cache`. Do not "
        "follow the message literally: an explicit `no_buffer` keeps the overlap scheduler on "
        "(RSM305).",
        f"Adding `{OFF}` is safe (it is what `auto` does itself when it picks `no_buffer`); replacing "
        "an explicit `extra_buffer` is **unsafe** (it changes prefix caching).",
        (_example(f"{SERVE}\n"),),
        (_example(f"{SERVE} {OFF}\n"),),
    ),
    Rule(
        "RSM303", "sglang-replayssm-disaggregation",
        "Checks for ReplaySSM on a PD-disaggregated server (`--disaggregation-mode prefill` or "
        "`decode`).",
        "SGLang refuses to start: `--enable-linear-replayssm is not supported under PD "
        "disaggregation yet`.",
        "Drop `--enable-linear-replayssm` on prefill and decode servers.",
        "No automatic fix: the deployment decides.",
        (_example(f"{SERVE} {OFF} --disaggregation-mode decode\n"),),
        (_example(f"{SERVE} {OFF}\n"),),
    ),
    Rule(
        "RSM304", "sglang-replayssm-cache-length",
        "Checks `--linear-replayssm-cache-len`: at least 1 (the default is 16).",
        "SGLang refuses to start: `--linear-replayssm-cache-len must be >= 1`.",
        "Use a length of at least 1, or drop the flag.",
        "No automatic fix.",
        (_example(f"{SERVE} {OFF} --linear-replayssm-cache-len 0\n"),),
        (_example(f"{SERVE} {OFF} --linear-replayssm-cache-len 16\n"),),
    ),
    Rule(
        "RSM305", "sglang-no-buffer-assertion",
        "Checks the assertions of the `no_buffer` strategy that a ReplaySSM launch on a mamba "
        "radix-cache model must pass: page size 1, the overlap scheduler off, no `trtllm_mha` "
        "attention backend. An explicit `--mamba-radix-cache-strategy no_buffer` does not turn "
        "the overlap scheduler off (only `auto` does).",
        "SGLang stops with an `AssertionError` (`no_buffer do not support overlap schedule`) "
        "before any ReplaySSM check runs; it is the error users meet after following RSM302's "
        "message.",
        f"Add `{OFF}`; use page size 1 and another attention backend.",
        f"Adding `{OFF}` is safe (ReplaySSM with `no_buffer` needs it); the page size and the "
        "attention backend are left to you.",
        (_example(f"{SERVE} --mamba-radix-cache-strategy no_buffer\n"),),
        (_example(f"{SERVE} --mamba-radix-cache-strategy no_buffer {OFF}\n"),),
    ),
    Rule(
        "RSM306", "sglang-replayssm-spec-verify",
        "Checks the spec-verify variant (`--enable-linear-replayssm-spec`, `--enable-gdn-replayssm-"
        "spec` in 0.5.16): it excludes `--enable-linear-replayssm`, needs a linear draft chain "
        "(`--speculative-eagle-topk` 1), a Triton (or FlashInfer, 0.5.17+) decode backend, no PD "
        "prefill server, and in 0.5.16 a power-of-two cache length and float32 SSM state.",
        "SGLang refuses to start with the spec variant's own message.",
        "Keep one of the two ReplaySSM flags; follow the message for the others.",
        "No automatic fix.",
        (_example(f"{SERVE} {OFF} --enable-linear-replayssm-spec\n"),),
        (_example(f"sglang serve --model-path {QWEN_NEXT} {OFF} --enable-linear-replayssm-spec\n"),),
    ),
    Rule(
        "RSM307", "sglang-extra-buffer-without-mamba-state",
        "Checks for an explicit `--mamba-radix-cache-strategy extra_buffer*` on a model without "
        "mamba state (a dense model; SGLang 0.5.21+; before, RSM302 refuses it).",
        "SGLang refuses to start: `--mamba-radix-cache-strategy extra_buffer needs mamba state`.",
        "Drop `--mamba-radix-cache-strategy` for this model.",
        "No automatic fix.",
        (_example("sglang serve --model-path meta-llama/Llama-3.1-8B-Instruct --enable-linear-replayssm "
                  "--mamba-radix-cache-strategy extra_buffer\n"),),
        (_example(f"{SERVE} {OFF}\n"),),
    ),
    Rule(
        "RSM308", "sglang-replayssm-without-effect",
        "Checks for `--enable-linear-replayssm` where SGLang accepts it but ReplaySSM does not run: "
        "a dense model, a Mamba-2 / short-conv hybrid (Nemotron-H, Falcon-H1, Granite, LFM2: only "
        "the GDN and KDA decode kernels read the ring), `--enable-unified-memory`, `--device cpu` "
        "or `npu`.",
        "The launch starts, but not as written: no speedup, and on Mamba-2 hybrids the ring still "
        "costs memory. Nothing in SGLang's log says so.",
        "Drop the flag, or serve a GDN model (Qwen3-Next, Qwen3.5) or a KDA model (Kimi Linear).",
        "Removing the flag is **unsafe** (it changes what the launch asks for); no automatic fix.",
        (_example("sglang serve --model-path meta-llama/Llama-3.1-8B-Instruct --enable-linear-replayssm\n"),),
        (_example(f"{SERVE} {OFF}\n"),),
        severity="warning",
    ),
)

#: SGLang's side of the form codes vLLM's rules document (appended to their summaries)
RULE_ADDENDA: dict[str, str] = {
    "RSM104": " For SGLang: `--enable-linear-replayssm` before 0.5.15, `--enable-linear-replayssm-spec` before "
              "0.5.17, the aliases removed in 0.5.20 (`--mamba-scheduler-strategy`, `--enable-gdn-replayssm-"
              "spec`), the RFC's names (`--enable-gdn-replayssm`, `--gdn-replayssm-cache-len`, with a \"did "
              "you mean\"), `sglang serve MODEL` before 0.5.16.",
    "RSM105": " For SGLang: a deprecated alias that still works (`--mamba-scheduler-strategy` up to 0.5.19, "
              "`--enable-gdn-replayssm-spec` in 0.5.17-0.5.19) and `--enable-gdn-replayssm`, which argparse "
              "reads as the spec-verify flag in 0.5.16-0.5.19.",
    "RSM106": " For SGLang: `_` in a flag name (`--enable_linear_replayssm`), `--no-` forms and values of "
              "switches, ambiguous abbreviations, invalid choices and integers, positional words.",
}
