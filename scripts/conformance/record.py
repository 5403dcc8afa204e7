"""Record what one vLLM release does with every generated ReplaySSM launch.

Run with the Python of the oracle venv made by ``setup_env.sh``::

    /tmp/vllm-oracle/venv/bin/python scripts/conformance/record.py \
        --release 0.33.0 --vllm-dir /tmp/vllm-oracle/vllm-0.33.0 \
        --out tests/conformance/0.33.0.jsonl

What it does (one process per release, every launch in it):

* puts ``--vllm-dir`` (a ``pip install --no-deps --target`` folder holding the
  release's ``vllm/`` package) first on ``sys.path`` and on ``PYTHONPATH`` (vLLM
  inspects model classes in a subprocess), works offline (``HF_HUB_OFFLINE=1``)
  in a temporary cwd holding the tiny model directories (``config.json`` only)
  and the ``--config`` YAML files of the launches;
* forces the CPU platform, but with ``check_and_update_config`` made a no-op,
  as CUDA's is for these settings (the CPU one turns prefix caching off for MLA
  models such as Kimi and rewrites the SSM cache dtype, which CUDA never does);
* marks Triton present so an unset ``VLLM_USE_V2_MODEL_RUNNER`` resolves as on
  CUDA;
* rebuilds the real ``vllm serve`` parser as ``vllm/entrypoints/cli/main.py``
  does, parses the argv, runs ``ServeSubcommand.validate`` and copies the
  positional ``model_tag`` into ``model`` as ``ServeSubcommand.cmd`` does;
* runs ``EngineArgs.from_cli_args(ns)`` (with ``skip_tokenizer_init=True``) and
  ``create_engine_config()``, which runs ``VllmConfig.__post_init__`` and every
  ``model_validator``;
* keeps the warnings that the model-specific config update
  (``vllm/model_executor/models/config.py``, e.g. "Mamba cache mode is set to
  'none' when prefix caching is disabled") logs while the config is built;
* writes one JSON line per launch (sorted keys); see tests/conformance/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import re
import sys
import tempfile
import time
import traceback
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generate  # noqa: E402


def _first_line(text: str) -> str:
    text = re.sub(r" at 0x[0-9a-fA-F]+>", ">", str(text))  # run-dependent addresses
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


def error_text(exc: BaseException) -> str:
    """vLLM's own message.  For pydantic errors, the text after 'Value error, '
    (value errors raised by vLLM's validators), else '<loc>: <msg>'."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and type(exc).__name__ == "ValidationError":
        try:
            errs = exc.errors()
        except Exception:  # pragma: no cover
            errs = []
        if errs:
            e = errs[0]
            msg = e.get("msg", "")
            if e.get("type") == "value_error":
                msg = msg.removeprefix("Value error, ")
                return _first_line(msg)
            loc = ".".join(str(x) for x in e.get("loc", ()) if x != "__root__")
            return _first_line(f"{loc}: {msg}" if loc else msg)
    return _first_line(str(exc)) or type(exc).__name__


def argparse_error_text(stderr: str, code: Any) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        m = re.search(r"error: (.*)$", ln)
        if m:
            return _first_line(m.group(1))
    return lines[-1].strip() if lines else f"SystemExit({code})"


# A stand-in for torchvision.  PyPI has only CUDA builds of torchvision (their
# C ops fail to load over the CPU torch), and vLLM's nano_nemotron_vl module
# (NemotronH_Nano_VL_V2) imports it at class-inspection time.  Nothing from it
# is called while building the config, so any attribute is a harmless dummy.
TORCHVISION_STUB = """
import importlib.abc, importlib.machinery, sys, types

__version__ = "0.0.0+oracle-stub"


class _Dummy:
    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return _Dummy()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Dummy()

    def __mro_entries__(self, bases):
        return (object,)

    def __iter__(self):
        return iter(())

    def __getitem__(self, k):
        return _Dummy()

    def __or__(self, other):
        return _Dummy()

    __ror__ = __or__


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Dummy()


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = types.ModuleType(spec.name)
        mod.__path__ = []
        mod.__getattr__ = __getattr__
        return mod

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())
"""


def maybe_stub_torchvision(work: str) -> str | None:
    try:
        import torchvision  # noqa: F401
        return None
    except Exception:
        pass
    for k in [k for k in sys.modules if k == "torchvision" or k.startswith("torchvision.")]:
        del sys.modules[k]
    d = os.path.join(work, "_stubs")
    os.makedirs(os.path.join(d, "torchvision"), exist_ok=True)
    with open(os.path.join(d, "torchvision", "__init__.py"), "w") as f:
        f.write(TORCHVISION_STUB)
    return d


# ---------------------------------------------------------------------------


def setup_workdir(launches: list[dict[str, Any]]) -> str:
    work = tempfile.mkdtemp(prefix="replayssm-oracle-")
    for d, text in generate.model_config_texts().items():
        os.makedirs(os.path.join(work, d), exist_ok=True)
        with open(os.path.join(work, d, "config.json"), "w") as f:
            f.write(text)
    for launch in launches:
        for path, text in launch["files"].items():
            full = os.path.join(work, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
    return work


def model_arch_map(launch: dict[str, Any]) -> dict[str, str]:
    """{model dir as written: architectures[0] of its config.json} for every
    tiny model dir the launch mentions (argv tokens, JSON values, YAML text)."""
    blobs = list(launch["argv"]) + list(launch["files"].values())
    out = {}
    for d in generate.MODEL_CONFIGS:
        pat = re.compile(r"(?<![\w./-])" + re.escape(d) + r"(?![\w./-])")
        if any(pat.search(b) for b in blobs):
            out[d] = generate.arch_of(d)
    return out


#: the logger of the model-specific config updates (MambaModelConfig and friends)
CONFIG_UPDATE_LOGGER = "vllm.model_executor.models.config"


class WarningLog:
    """Keeps the first line of every warning one vLLM module logs (the record's
    ``config_warnings``); they reach no handler.

    The module's logger gets its own ``warning`` method: some releases re-run
    ``logging.config.dictConfig`` while building the engine config, which resets
    the level, handlers and propagation of every ``vllm.*`` logger, so a handler
    installed once would be gone by then.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []

    def warning(self, msg: object, *args: Any, **kwargs: Any) -> None:
        text = str(msg) % args if args else str(msg)
        self.lines.append(_first_line(text))

    def install(self, module_name: str) -> None:
        import importlib

        importlib.import_module(module_name).logger.warning = self.warning


class Oracle:
    def __init__(self, release: str, cpu_hook: bool = False) -> None:
        self.release = release
        import vllm  # noqa: F401
        import vllm.platforms as platforms

        try:
            from vllm.platforms.cpu import CpuPlatform
        except Exception:  # pragma: no cover
            from vllm.platforms.cpu import CpuPlatform  # type: ignore

        class OraclePlatform(CpuPlatform):  # type: ignore[misc,valid-type]
            """CPU platform whose config hook is a no-op, like CUDA's here."""

            @classmethod
            def check_and_update_config(cls, vllm_config):  # noqa: D401
                return None

        platforms.current_platform = CpuPlatform() if cpu_hook else OraclePlatform()
        self.platform_cls = type(platforms.current_platform)

        # Triton present -> unset VLLM_USE_V2_MODEL_RUNNER resolves as on CUDA
        self.triton_patched = []
        import importlib
        for modname in ("vllm.config.vllm", "vllm.config", "vllm.triton_utils",
                        "vllm.triton_utils.importing", "vllm.engine.arg_utils"):
            try:
                mod = importlib.import_module(modname)
            except Exception:
                continue
            if hasattr(mod, "HAS_TRITON"):
                setattr(mod, "HAS_TRITON", True)
                self.triton_patched.append(modname)

        from vllm.config import VllmConfig

        self.VllmConfig = VllmConfig
        self.stash: list[Any] = []
        orig_post_init = VllmConfig.__post_init__
        stash = self.stash

        def post_init(cfg, *a, **kw):
            stash.append(cfg)
            return orig_post_init(cfg, *a, **kw)

        VllmConfig.__post_init__ = post_init  # type: ignore[method-assign]

        import vllm.entrypoints.cli.serve as serve_mod
        from vllm.engine.arg_utils import EngineArgs

        self.serve_mod = serve_mod
        self.EngineArgs = EngineArgs
        try:
            from vllm.utils.argparse_utils import FlexibleArgumentParser
        except ImportError:  # older layouts
            from vllm.utils import FlexibleArgumentParser  # type: ignore
        self.FlexibleArgumentParser = FlexibleArgumentParser
        import vllm.envs as envs

        self.envs = envs
        self.warnings = WarningLog()
        self.warnings.install(CONFIG_UPDATE_LOGGER)

    def build_parser(self):
        parser = self.FlexibleArgumentParser(description="vLLM CLI")
        subparsers = parser.add_subparsers(required=False, dest="subparser")
        cmd = self.serve_mod.ServeSubcommand()
        cmd.subparser_init(subparsers).set_defaults(dispatch_function=cmd.cmd)
        return parser, cmd

    def set_env(self, env: dict[str, str]) -> None:
        for k in [k for k in os.environ if k.startswith("VLLM_") and k not in KEEP_ENV]:
            del os.environ[k]
        os.environ.update(env)
        ga = getattr(self.envs, "__getattr__", None)
        if ga is not None and hasattr(ga, "cache_clear"):
            ga.cache_clear()

    def run(self, launch: dict[str, Any]) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "release": self.release,
            "id": launch["id"],
            "argv": launch["argv"],
            "env": launch["env"],
            "files": launch["files"],
            "model_arch": model_arch_map(launch),
        }
        self.set_env(launch["env"])
        del self.stash[:]
        del self.warnings.lines[:]
        rec.update(self.parse_and_build(launch))
        rec["config_warnings"] = list(self.warnings.lines)
        return rec

    def parse_and_build(self, launch: dict[str, Any]) -> dict[str, Any]:
        """{"parsed", "outcome"}: parse the argv and build the engine config."""
        rec: dict[str, Any] = {}
        parsed: dict[str, Any] | None = None
        outcome: Any = "ok"
        ns = None
        parser, cmd = self.build_parser()
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                ns = parser.parse_args(list(launch["argv"]))
            if getattr(ns, "subparser", None) == "serve":
                cmd.validate(ns)
            if getattr(ns, "model_tag", None) is not None:
                ns.model = ns.model_tag
        except SystemExit as e:
            outcome = {"stage": "argparse", "error": argparse_error_text(err.getvalue(), e.code)}
            ns = None
        except Exception as e:  # ValueError from FlexibleArgumentParser etc.
            outcome = {"stage": "argparse", "error": error_text(e),
                       "exc": type(e).__name__}
            ns = None
        if ns is None:
            rec["parsed"] = None
            rec["outcome"] = outcome
            return rec

        parsed = parsed_from_ns(ns)
        ea = None
        try:
            ns.skip_tokenizer_init = True
            ea = self.EngineArgs.from_cli_args(ns)
            ea.skip_tokenizer_init = True
        except Exception as e:
            outcome = {"stage": "engine_args", "error": error_text(e), "exc": type(e).__name__}
        if ea is not None:
            try:
                self.EngineArgs.create_engine_config(ea)
            except Exception as e:
                outcome = {"stage": "engine_config", "error": error_text(e),
                           "exc": type(e).__name__}
                if os.environ.get("ORACLE_TRACE"):
                    traceback.print_exc()
        if self.stash:
            parsed.update(parsed_from_config(self.stash[-1]))
        rec["parsed"] = parsed
        rec["outcome"] = outcome
        return rec


KEEP_ENV = {"VLLM_LOGGING_LEVEL", "VLLM_CONFIGURE_LOGGING", "VLLM_NO_USAGE_STATS",
            "VLLM_DO_NOT_TRACK"}


def _plain(v: Any) -> Any:
    import enum

    if v is None or isinstance(v, (bool, int, float, str)) and not isinstance(v, enum.Enum):
        return v
    if isinstance(v, enum.Enum):
        return str(v.name).lower()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return str(v)


def parsed_from_ns(ns: argparse.Namespace) -> dict[str, Any]:
    hf = getattr(ns, "hf_overrides", None)
    hf_arch = None
    if isinstance(hf, dict):
        hf_arch = hf.get("architectures")
    kv = getattr(ns, "kv_transfer_config", None)
    kv_conn = None
    if isinstance(kv, dict):
        kv_conn = kv.get("kv_connector")
    elif kv is not None:
        kv_conn = getattr(kv, "kv_connector", None)
    spec = getattr(ns, "speculative_config", None)
    return {
        "model": getattr(ns, "model", None),
        "use_replayssm": getattr(ns, "use_replayssm", None),
        "mamba_backend": _plain(getattr(ns, "mamba_backend", None)),
        "enable_prefix_caching_arg": getattr(ns, "enable_prefix_caching", None),
        "enable_prefix_caching": None,
        "mamba_cache_mode_arg": getattr(ns, "mamba_cache_mode", None),
        "mamba_cache_mode": None,
        "mamba_block_size": getattr(ns, "mamba_block_size", None),
        "replayssm_buffer_len": getattr(ns, "replayssm_buffer_len", None),
        "num_speculative_tokens": None,
        "speculative_method": (spec.get("method") if isinstance(spec, dict) else None)
        or getattr(ns, "spec_method", None),
        "is_kv_transfer_instance": None,
        "kv_connector": kv_conn,
        "kv_offloading_size": getattr(ns, "kv_offloading_size", None),
        "hf_overrides_architectures": hf_arch,
        "architecture": None,
        "supports_replayssm": None,
        "supports_mamba_prefix_caching": None,
        "use_v2_model_runner": None,
    }


def parsed_from_config(cfg: Any) -> dict[str, Any]:
    """Effective values as the validators saw them (after __post_init__)."""
    out: dict[str, Any] = {}
    cache = getattr(cfg, "cache_config", None)
    if cache is not None:
        out["enable_prefix_caching"] = getattr(cache, "enable_prefix_caching", None)
        out["mamba_cache_mode"] = getattr(cache, "mamba_cache_mode", None)
        out["replayssm_buffer_len"] = getattr(cache, "replayssm_buffer_len", None)
    mc = getattr(cfg, "model_config", None)
    if mc is not None:
        try:
            out["architecture"] = mc.architecture
        except Exception:
            pass
        for attr in ("supports_replayssm", "supports_mamba_prefix_caching"):
            try:
                out[attr] = bool(getattr(mc, attr))
            except Exception:
                out[attr] = None
    mamba = getattr(cfg, "mamba_config", None)
    if mamba is not None and getattr(mamba, "backend", None) is not None:
        out["mamba_backend"] = _plain(mamba.backend)
    try:
        out["num_speculative_tokens"] = cfg.num_speculative_tokens
    except Exception:
        sc = getattr(cfg, "speculative_config", None)
        out["num_speculative_tokens"] = (
            getattr(sc, "num_speculative_tokens", None) if sc is not None else 0)
    sc = getattr(cfg, "speculative_config", None)
    out["speculative_method"] = getattr(sc, "method", None) if sc is not None else None
    kv = getattr(cfg, "kv_transfer_config", None)
    if kv is not None:
        try:
            out["is_kv_transfer_instance"] = bool(kv.is_kv_transfer_instance)
        except Exception:
            out["is_kv_transfer_instance"] = None
        out["kv_connector"] = getattr(kv, "kv_connector", None)
    else:
        out["is_kv_transfer_instance"] = False
    try:
        out["use_v2_model_runner"] = bool(cfg.use_v2_model_runner)
    except AttributeError:
        out["use_v2_model_runner"] = None
    except Exception as e:  # HiSparse etc. can raise
        out["use_v2_model_runner"] = "error: " + error_text(e)
    fn = getattr(cfg, "_get_v2_model_runner_unsupported_features", None)
    if fn is not None:
        try:
            out["v2_unsupported"] = [str(x) for x in fn()]
        except Exception as e:
            out["v2_unsupported"] = ["error: " + error_text(e)]
    return out


def prepare_oracle(vllm_dir: str, launches: list, *, verbose: bool = False) -> str:
    """Set the process up to import the vLLM at ``vllm_dir`` offline; return the work directory.

    Clears VLLM_* variables, forbids hub access, puts the release first on the path,
    makes the tiny model directories (and a torchvision stand-in when needed) and
    changes into them.  check_fixes.py uses the same set-up.
    """
    for k in [k for k in os.environ if k.startswith("VLLM_")]:
        del os.environ[k]
    os.environ["PYTHONPATH"] = vllm_dir + (
        os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    os.environ.update({
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
        "VLLM_NO_USAGE_STATS": "1", "VLLM_DO_NOT_TRACK": "1",
        "VLLM_LOGGING_LEVEL": "DEBUG" if verbose else "ERROR",
        "TOKENIZERS_PARALLELISM": "false",
    })
    sys.path.insert(0, vllm_dir)
    work = setup_workdir(launches)
    stubs = maybe_stub_torchvision(work)
    if stubs:
        os.environ["PYTHONPATH"] += os.pathsep + stubs
        sys.path.insert(1, stubs)
    os.chdir(work)
    return work


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--release", required=True)
    ap.add_argument("--vllm-dir", help="folder holding the release's vllm/ package "
                    "(default /tmp/vllm-oracle/vllm-RELEASE)")
    ap.add_argument("--out", help="output .jsonl (default tests/conformance/RELEASE.jsonl)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--only", help="regex on launch ids")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--keep-workdir", action="store_true",
                    help="keep the temporary cwd (model dirs, YAML files) for inspection")
    ap.add_argument("--cpu-hook", action="store_true",
                    help="keep the CPU platform's own check_and_update_config (to see "
                    "what a plain CPU run does; not what CUDA does)")
    ap.add_argument("--adhoc", action="append", metavar="ARGV",
                    help="record this shell-quoted argv (after `vllm`) instead of the "
                    "generated launches and print the records; VAR=VALUE words in "
                    "front set the environment, e.g. "
                    "'VLLM_USE_V2_MODEL_RUNNER=0 serve models/NemotronH --use-replayssm'")
    args = ap.parse_args()

    vllm_dir = os.path.abspath(args.vllm_dir or f"/tmp/vllm-oracle/vllm-{args.release}")
    repo = os.path.abspath(os.path.join(HERE, "..", ".."))

    launches = generate.generate()
    if args.adhoc:
        import shlex

        launches = []
        for n, text in enumerate(args.adhoc):
            words = shlex.split(text)
            env = {}
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                k, v = words.pop(0).split("=", 1)
                env[k] = v
            launches.append({"id": f"adhoc-{n:04d}", "argv": words, "env": env,
                             "files": {}})
        args.out = args.out or os.devnull
    out_path = os.path.abspath(args.out or os.path.join(
        repo, "tests", "conformance", f"{args.release}.jsonl"))
    if args.only:
        launches = [x for x in launches if re.search(args.only, x["id"])]
    if args.limit:
        launches = launches[: args.limit]

    # environment before vllm is imported
    work = prepare_oracle(vllm_dir, launches, verbose=args.verbose)
    if not args.verbose:
        logging.disable(logging.WARNING)

    t0 = time.time()
    import vllm

    vfile = os.path.abspath(vllm.__file__)
    if not vfile.startswith(vllm_dir):
        raise SystemExit(f"imported vllm from {vfile}, not from {vllm_dir}")
    oracle = Oracle(args.release, cpu_hook=args.cpu_hook)
    print(f"[{args.release}] vllm {getattr(vllm, '__version__', '?')} imported in "
          f"{time.time() - t0:.1f}s; HAS_TRITON patched in {oracle.triton_patched}; "
          f"{len(launches)} launches; cwd {work}", file=sys.stderr)

    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    counts: dict[str, int] = {}
    tmp_out = out_path + ".tmp" if out_path != os.devnull else os.devnull
    with open(tmp_out, "w") as f:
        for i, launch in enumerate(launches):
            try:
                rec = oracle.run(launch)
            except BaseException as e:  # never lose the whole batch
                if isinstance(e, KeyboardInterrupt):
                    raise
                rec = {"release": args.release, "id": launch["id"],
                       "argv": launch["argv"], "env": launch["env"],
                       "files": launch["files"], "model_arch": model_arch_map(launch),
                       "parsed": None,
                       "outcome": {"stage": "recorder", "error": error_text(e),
                                   "exc": type(e).__name__}}
            f.write(json.dumps(rec, sort_keys=True, separators=(",", ":"),
                               default=str) + "\n")
            if args.adhoc:
                print(json.dumps(rec, sort_keys=True, indent=1, default=str))
            o = rec["outcome"]
            key = "ok" if o == "ok" else o["stage"]
            counts[key] = counts.get(key, 0) + 1
            if args.verbose or (i + 1) % 100 == 0:
                print(f"[{args.release}] {i + 1}/{len(launches)} "
                      f"{time.time() - t0:.0f}s {counts}", file=sys.stderr)
    if tmp_out != os.devnull:
        os.replace(tmp_out, out_path)
    print(f"[{args.release}] wrote {len(launches)} records to {out_path} in "
          f"{time.time() - t0:.0f}s: {counts}", file=sys.stderr)
    if not args.keep_workdir:
        import shutil

        os.chdir(HERE)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
