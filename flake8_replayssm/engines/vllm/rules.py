"""vLLM's codes (RSM001-RSM009, RSM101-RSM107, RSM201), in ruff's rule-doc shape, with tested examples.

The conditions behind RSM001-RSM009 are vLLM's own checks, kept as data per
release in ``data/releases.toml``; this module is the user-facing side of each
code: its documentation (printed by ``replayssm-lint explain``) and examples
that the test suite runs through the linter (each ``invalid`` example must give
the code, each ``valid`` one must not).  The form codes RSM101 and RSM104-RSM106
are SGLang's too; SGLang adds its own sentences to them (``rule_addenda``).
"""

from __future__ import annotations

from ...rulebase import Example, Rule

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
V1 = "VLLM_USE_V2_MODEL_RUNNER=0 "


def _example(code: str, kind: str = "shell", release: str = "0.33.0") -> Example:
    return Example(code, kind=kind, release=release, engine="vllm")


RULES: tuple[Rule, ...] = (
    Rule(
        "RSM001", "replayssm-unsupported-architecture",
        "Checks for `--use-replayssm` / `use_replayssm=True` on a model whose architecture the "
        "target vLLM release does not support (Nemotron-H everywhere; Kimi Linear / Kimi-K3 from "
        "0.29 on CUDA). Names lie: `nvidia/Llama-3.1-Nemotron-*` is Llama, Nemotron-H VL/Omni are "
        "not supported; the model table and `--hf-overrides` decide, not the name.",
        "vLLM refuses to start: `--use-replayssm is not supported for architecture ...` (0.29+) or "
        "`... only supported for Nemotron-H models` (0.27-0.28), after the model has been fetched.",
        "Drop the flag for this model, or serve a Nemotron-H model.",
        "Removing the flag is **unsafe**: it changes the decode kernel the launch asked for.",
        (_example("vllm serve tiiuae/Falcon-H1-1.5B-Instruct --use-replayssm\n", release="0.28.0"),),
        (_example(f"vllm serve {NANO} --use-replayssm\n", release="0.28.0"),),
    ),
    Rule(
        "RSM002", "replayssm-prefix-caching-conflict",
        "Checks for prefix caching or a Mamba cache mode that ReplaySSM rejects: mode `all` "
        "(0.27-0.31; 0.27 derives `all` from plain `--enable-prefix-caching` on Nemotron-H), "
        "FlashInfer ReplaySSM with prefix caching on (0.30+), Mamba2 speculative decoding with "
        "prefix caching on (0.32+). Prefix caching is on by default for hybrid models from 0.28.",
        "vLLM stops in `validate_mamba_cached_kernel`. `--mamba-cache-mode none` does not help: the "
        "mode follows `--enable-prefix-caching`.",
        "Pass `--mamba-cache-mode align` (0.27-0.31), or turn prefix caching off "
        "(`--no-enable-prefix-caching`; `--disable-prefix-caching` on 0.33) for FlashInfer.",
        "Safe: `all` -> `align` keeps prefix caching; turning prefix caching off for FlashInfer is "
        "what vLLM requires.",
        (_example(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n"),),
        (_example(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --disable-prefix-caching\n"),),
    ),
    Rule(
        "RSM003", "replayssm-speculative-decoding",
        "Checks for speculative decoding where ReplaySSM does not allow it: never on 0.27-0.28, only "
        "Kimi (RecoverSSM) on 0.29-0.31, Nemotron-H only with FlashInfer on 0.32+; also RecoverSSM's "
        "limits (pipeline parallelism, stochastic rounding).",
        "vLLM stops at startup (`RecoverSSM is only supported for Kimi-K3 KDA`, `Mamba2 ReplaySSM "
        "speculative decoding requires --mamba-backend flashinfer`, ...).",
        "Drop speculative decoding, or on 0.32+ use `--mamba-backend flashinfer` with prefix caching "
        "off and a buffer of at least 1 + k.",
        "No automatic fix: speculative decoding cannot stay as it is.",
        (_example(f"vllm serve {NANO} --use-replayssm --speculative-config "
                  "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'\n", release="0.30.0"),),
        (_example(f"{V1}vllm serve {NANO} --use-replayssm\n", release="0.30.0"),),
    ),
    Rule(
        "RSM004", "replayssm-backend-not-allowed",
        "Checks `--mamba-backend` against the backends ReplaySSM allows in the target release: "
        "triton only up to 0.29, triton or flashinfer from 0.30, triton for Kimi RecoverSSM.",
        "vLLM stops at startup: `--use-replayssm requires --mamba-backend triton` (or `... triton or "
        "flashinfer`).",
        "Use `--mamba-backend triton` (or flashinfer where allowed).",
        "Switching the backend is **unsafe**: it changes kernels and performance.",
        (_example(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n", release="0.28.0"),),
        (_example(f"vllm serve {NANO} --use-replayssm --mamba-backend triton\n", release="0.28.0"),),
    ),
    Rule(
        "RSM005", "replayssm-kv-connector",
        "Checks for a KV connector with ReplaySSM: `--kv-transfer-config` with a connector and a "
        "role, or `--kv-offloading-size` (which creates one). 0.33 exempts Kimi with speculative "
        "decoding.",
        "vLLM stops at startup: `--use-replayssm is incompatible with KV connectors (P/D "
        "disaggregation, KV cache offload)`.",
        "Drop the KV connector or ReplaySSM on this replica.",
        "No automatic fix: either choice changes the deployment.",
        (_example(f"{V1}vllm serve {NANO} --use-replayssm --kv-offloading-size 8\n"),),
        (_example(f"{V1}vllm serve {NANO} --use-replayssm\n"),),
    ),
    Rule(
        "RSM006", "mamba-block-size-without-prefix-caching",
        "Checks for `--mamba-block-size` while prefix caching is effectively off (explicitly, or by "
        "default: off for hybrid models on 0.27.x). Applies with or without ReplaySSM.",
        "vLLM stops at startup: `--mamba-block-size can only be set with --enable-prefix-caching`.",
        "Add `--enable-prefix-caching` or drop `--mamba-block-size`.",
        "Adding `--enable-prefix-caching` is safe when the block size was meant to take effect.",
        (_example(f"vllm serve {NANO} --mamba-block-size 256\n", release="0.27.0"),),
        (_example(f"vllm serve {NANO} --mamba-block-size 256 --enable-prefix-caching "
                  "--mamba-cache-mode align\n", release="0.27.0"),),
    ),
    Rule(
        "RSM007", "replayssm-buffer-length",
        "Checks `--replayssm-buffer-len`: greater than 0; at most 16 on FlashInfer (0.32+); at "
        "least 1 + num_speculative_tokens for Nemotron-H speculative decoding (0.32+).",
        "vLLM stops at startup with `FlashInfer ReplaySSM requires --replayssm-buffer-len <= 16` or "
        "the speculative-decoding length message.",
        "Choose a length between 1 + k and 16.",
        "No automatic fix.",
        (_example(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer "
                  "--disable-prefix-caching --replayssm-buffer-len 32\n"),),
        (_example(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer "
                  "--disable-prefix-caching --replayssm-buffer-len 16\n"),),
    ),
    Rule(
        "RSM008", "replayssm-model-runner",
        "Checks the model runner: Triton ReplaySSM needs Model Runner V1 from 0.30, while V2 is the "
        "CUDA default when `VLLM_USE_V2_MODEL_RUNNER` is unset (so the plain launch fails); Kimi "
        "RecoverSSM with prefix caching needs V2 (0.29+).",
        "vLLM stops at startup: `Triton ReplaySSM requires Model Runner V1; use --mamba-backend "
        "flashinfer or Model Runner V1`.",
        "Set `VLLM_USE_V2_MODEL_RUNNER=0` in the launch's environment (or use FlashInfer with "
        "prefix caching off).",
        "Adding `VLLM_USE_V2_MODEL_RUNNER=0` is safe for Triton ReplaySSM launches.",
        (_example(f"vllm serve {NANO} --use-replayssm\n"),),
        (_example(f"{V1}vllm serve {NANO} --use-replayssm\n"),),
    ),
    Rule(
        "RSM009", "kimi-replayssm-without-speculative-decoding",
        "Checks Kimi Linear / Kimi-K3 launches with ReplaySSM but no speculative decoding (0.29+).",
        "vLLM passes its config checks and then fails while building the model: `Kimi-K3 supports "
        "--use-replayssm only with speculative decoding`.",
        "Add speculative decoding (`--speculative-config`) or drop `--use-replayssm`.",
        "No automatic fix.",
        (_example("vllm serve moonshotai/Kimi-K3 --use-replayssm\n"),),
        (_example("vllm serve moonshotai/Kimi-K3 --use-replayssm --speculative-config "
                  "'{\"method\": \"ngram\", \"num_speculative_tokens\": 2}'\n"),),
    ),
    Rule(
        "RSM101", "config-equals-ignored",
        "Checks for `--config=FILE`: vLLM (and SGLang) expand only `--config FILE` (two words).",
        "The file is silently ignored: none of its options take effect and nothing warns.",
        "Write `--config FILE`.",
        "Safe: it makes vLLM read the file the launch names.",
        (_example("vllm serve --config=serve.yaml --port 8000\n"),),
        (_example("vllm serve --port 8000\n"),),
        severity="warning",
    ),
    Rule(
        "RSM102", "serve-yaml-false-dropped",
        "Checks `key: false` in a `vllm serve --config` YAML file: vLLM drops it (always on 0.27; "
        "from 0.28 a false key becomes `--no-key` only for parsers that have that option, and the "
        "file of `vllm serve` is loaded by the top-level parser).",
        "The option keeps its default: `enable-prefix-caching: false` leaves prefix caching on.",
        "Write `disable-prefix-caching: true` (0.33) or `no-enable-prefix-caching: true` (any release).",
        "Safe: the file then does what the `false` meant; `fix` rewrites the key.",
        (_example(f"model: {NANO}\nuse-replayssm: true\nmamba-backend: flashinfer\n"
                  "enable-prefix-caching: false\n", kind="yaml"),),
        (_example(f"model: {NANO}\nuse-replayssm: true\nmamba-backend: flashinfer\n"
                  "disable-prefix-caching: true\n", kind="yaml"),),
        severity="warning",
    ),
    Rule(
        "RSM103", "api-server-positional-model",
        "Checks for a positional model given to `python -m vllm.entrypoints.openai.api_server`, which "
        "reads the model only from `--model`.",
        "The positional model is ignored and vLLM serves its default model (`Qwen/Qwen3-0.6B`); the "
        "launch is judged for that model.",
        "Write `--model MODEL`.",
        "Safe.",
        (_example(f"python -m vllm.entrypoints.openai.api_server {NANO} --port 8000\n"),),
        (_example(f"python -m vllm.entrypoints.openai.api_server --model {NANO} --port 8000\n"),),
        severity="warning",
    ),
    Rule(
        "RSM104", "option-not-in-release",
        "Checks for a flag or value the target release does not have: `--disable-prefix-caching` "
        "before 0.33, `--mamba-cache-mode all` from 0.32.",
        "vLLM's argument parser rejects the launch (`unrecognized arguments`, `invalid choice`).",
        "Use the spelling of the target release (`--no-enable-prefix-caching`, `align`).",
        "Safe.",
        (_example(f"{V1}vllm serve {NANO} --use-replayssm --disable-prefix-caching\n", release="0.32.0"),),
        (_example(f"{V1}vllm serve {NANO} --use-replayssm --no-enable-prefix-caching\n", release="0.32.0"),),
    ),
    Rule(
        "RSM105", "deprecated-mamba-cache-mode",
        "Checks for `--mamba-cache-mode` on 0.33, where it is deprecated and has no effect.",
        "Mamba prefix caching follows `--enable-prefix-caching`; a launch relying on the mode does "
        "not get what it asked for.",
        "Drop it; use `--disable-prefix-caching` to turn prefix caching off.",
        "Safe: the flag does nothing on 0.33.",
        (_example(f"{V1}vllm serve {NANO} --use-replayssm --mamba-cache-mode align\n"),),
        (_example(f"{V1}vllm serve {NANO} --use-replayssm\n"),),
        severity="warning",
    ),
    Rule(
        "RSM106", "invalid-option-form",
        "Checks for values and forms vLLM rejects before validation: `--use-replayssm=true` or "
        "`--use-replayssm true` (the flag takes no value), an unknown `--mamba-backend`, "
        "`VLLM_USE_V2_MODEL_RUNNER` other than 0/1, a KV connector without a role, bad JSON.",
        "vLLM fails to start (`Unknown Mamba SSU backend`, argparse errors).",
        "Write the flag alone (`--use-replayssm`), use a valid backend (triton, flashinfer).",
        "Normalising `--use-replayssm=true` to `--use-replayssm` is safe.",
        (_example(f"{V1}vllm serve {NANO} --use-replayssm=true\n"),),
        (_example(f"{V1}vllm serve {NANO} --use-replayssm\n"),),
    ),
    Rule(
        "RSM107", "mamba-cache-mode-overridden",
        "Checks for an explicit Mamba cache mode (`--mamba-cache-mode align|all`, "
        "`mamba_cache_mode=`, a `mamba-cache-mode:` key) on a hybrid or Mamba model while prefix "
        "caching is effectively off: explicitly (`--no-enable-prefix-caching`, "
        "`enable_prefix_caching=False`) or by the release's default (off for hybrid models on "
        "0.27.x, off for pure Mamba models in every release). Applies with or without ReplaySSM, "
        "0.27-0.32; on 0.33 the option itself has no effect (RSM105), and `all` on 0.32+ is "
        "RSM104.",
        "vLLM starts, but not as written: the hybrid config update sets the mode to `none` and "
        "logs a single warning (`Mamba cache mode is set to 'none' when prefix caching is "
        "disabled`), while the engine's non-default-args line still shows the mode that was "
        "passed. A run meant to keep `align` silently runs without Mamba prefix caching.",
        "Drop the mode, or turn prefix caching on (`--enable-prefix-caching`) if that mode is what "
        "the launch is for.",
        "Dropping the mode is safe: vLLM runs with `none` either way, and the conformance records "
        "show the same configuration with and without it. Turning prefix caching on changes what "
        "the launch does (memory, and on 0.27-0.31 mode `all` with ReplaySSM is RSM002), so it is "
        "only named in the message.",
        (_example(f"vllm serve {NANO} --mamba-cache-mode align\n", release="0.27.0"),
         _example(f"from vllm import LLM\nllm = LLM(\"{NANO}\", enable_prefix_caching=False,\n"
                  "          mamba_cache_mode=\"align\")\n", kind="python", release="0.31.0"),
         _example(f"model: {NANO}\nno-enable-prefix-caching: true\nmamba-cache-mode: align\n",
                  kind="yaml", release="0.32.0")),
        (_example(f"vllm serve {NANO} --enable-prefix-caching --mamba-cache-mode align\n", release="0.27.0"),
         _example(f"vllm serve {NANO} --mamba-cache-mode align\n", release="0.28.0"),
         _example(f"vllm serve {NANO} --no-enable-prefix-caching --mamba-cache-mode none\n", release="0.31.0"),
         _example("vllm serve meta-llama/Llama-3.1-8B-Instruct --no-enable-prefix-caching "
                  "--mamba-cache-mode align\n", release="0.31.0")),
        known_problems="The model decides: a model the linter cannot resolve gets RSM107 only if every "
        "architecture it could be is overridden, which an ordinary transformer never is. A checkpoint "
        "with a hybrid architecture but only attention layers (`ibm-granite/granite-4.0-micro`) is "
        "not hybrid for vLLM, which keeps the mode; the linter judges it by its architecture.",
        severity="warning",
    ),
    Rule(
        "RSM201", "replayssm-unresolved-model",
        "Reports ReplaySSM launches whose model cannot be resolved statically (a variable, `$1`, a "
        "local path without `config.json`).",
        "Whether vLLM accepts the launch depends on the architecture, which the linter cannot see.",
        "Use a literal model id, or map the name in `[tool.flake8-replayssm] extra-models`.",
        "No automatic fix.",
        (_example(f"{V1}vllm serve \"$MODEL\" --use-replayssm\n"),),
        (_example(f"{V1}vllm serve {NANO} --use-replayssm\n"),),
        default_enabled=False,
        severity="note",
    ),
)
