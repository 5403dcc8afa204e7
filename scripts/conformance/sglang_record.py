"""Record what one SGLang release does with every generated ReplaySSM launch, per GPU and CUDA.

    python3 scripts/conformance/sglang_record.py --release 0.5.23 \
        [--oracle-dir /work/cache/sglang-oracle] [--out tests/conformance/sglang/0.5.23.jsonl]
    python3 scripts/conformance/sglang_record.py --release all       # every release (+ 0.5.15.post1)
    python3 scripts/conformance/sglang_record.py --release 0.5.19 --only router --merge  # one category
    python3 scripts/conformance/sglang_record.py --release 0.5.23 --gpu blackwell --cuda 12.9 \
        --env SGLANG_RAGGED_VERIFY_MODE=compact \
        --adhoc "serve --model-path models/Qwen3Next --enable-linear-replayssm-spec"

For each (GPU generation, CUDA version) pair one child process runs under the oracle's
Python with the environment of ``sglang_oracle.oracle_env`` (the release first on the
path, CUDA-only modules stood in, torch reporting that GPU and CUDA), in a temporary working
directory holding the tiny model folders and the ``--config`` files.  For every launch
the child does what SGLang's entry point does:

* ``sglang serve``: ``_extract_model_type_override`` and (0.5.16+)
  ``_normalize_positional_model_path`` from ``sglang/cli/serve.py``; 0.5.15 instead
  requires ``--model-path`` (``get_model_path``);
* ``prepare_server_args(argv)`` (argparse and the ``--config`` merge), then the
  resolution: ``ServerArgs.__post_init__`` (0.5.15-0.5.19, inside
  ``prepare_server_args``) or ``ServerArgs.resolve_once()`` (0.5.20+), as
  ``launch_server.run_server`` does;
* ``router``: ``sglang_router.launch_server.main()`` itself, of the sglang-router release
  ``sglang_oracle.ROUTERS`` pairs with the release, stopped where it would look for worker
  ports (its parser, ``ServerArgs.from_cli_args``; ``resolve_once()`` after);

and writes one JSON line per launch, GPU and CUDA version (sorted keys), with ``post``
(sglang_post_resolution.py) for the launches that ask for it; see
tests/conformance/sglang/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import traceback
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import sglang_generate  # noqa: E402
import sglang_oracle  # noqa: E402
import sglang_post_resolution  # noqa: E402

GPUS = sglang_oracle.GPUS
#: (GPU, CUDA) pairs a launch is recorded for unless it names its own (``combos``): the
#: CUDA version is read by one check only (flashinfer prefill on SM100), so the other
#: launches are recorded with CUDA 12.9; ``--all-combos`` records every launch for all four
DEFAULT_COMBOS = (("hopper", "12.9"), ("blackwell", "12.9"))
ALL_COMBOS = tuple((gpu, cuda) for gpu in GPUS for cuda in sglang_oracle.CUDAS)


def _first_line(text: str) -> str:
    text = re.sub(r" at 0x[0-9a-fA-F]+>", ">", str(text))
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


def _argparse_error(stderr: str, code: Any) -> str:
    for line in reversed([ln for ln in stderr.splitlines() if ln.strip()]):
        match = re.search(r"error: (.*)$", line)
        if match:
            return _first_line(match.group(1))
    return f"SystemExit({code})"


# --------------------------------------------------------------------------- child side

def _server_args_of(exc: BaseException) -> Any:
    """The ServerArgs a failing resolution was working on (from the traceback's frames)."""
    from sglang.srt.server_args import ServerArgs

    tb = exc.__traceback__
    found = None
    while tb is not None:
        for name in ("self", "server_args"):
            value = tb.tb_frame.f_locals.get(name)
            if isinstance(value, ServerArgs):
                found = value
        tb = tb.tb_next
    return found


def _view(server_args: Any) -> Any:
    try:
        from sglang.srt.arg_groups.overrides import resolved_view

        return resolved_view(server_args)
    except Exception:
        return server_args


def _resolved(server_args: Any) -> dict[str, Any] | None:
    """What SGLang resolved: the values the ReplaySSM checks read."""
    if server_args is None:
        return None
    view = _view(server_args)

    def get(name: str) -> Any:
        try:
            return getattr(view, name)
        except Exception:
            return getattr(server_args, name, None)

    spec = get("enable_linear_replayssm_spec")
    if spec is None:
        spec = get("enable_gdn_replayssm_spec")
    decode = get("linear_attn_decode_backend") or get("linear_attn_backend")
    return {
        "model_path": get("model_path"),
        "enable_linear_replayssm": get("enable_linear_replayssm"),
        "spec": bool(spec),
        "linear_replayssm_cache_len": get("linear_replayssm_cache_len"),
        "mamba_radix_cache_strategy": get("mamba_radix_cache_strategy"),
        "mamba_radix_cache_strategy_raw": getattr(server_args, "mamba_radix_cache_strategy", None),
        "disable_overlap_schedule": get("disable_overlap_schedule"),
        "disable_radix_cache": get("disable_radix_cache"),
        "page_size": get("page_size"),
        "attention_backend": get("attention_backend"),
        "decode_backend": decode,
        "mamba_ssm_dtype": get("mamba_ssm_dtype"),
        "disaggregation_mode": get("disaggregation_mode"),
        "uses_mamba_radix_cache": get("uses_mamba_radix_cache"),
        "enable_unified_memory": get("enable_unified_memory"),
        "speculative_algorithm": get("speculative_algorithm"),
        "speculative_num_draft_tokens": get("speculative_num_draft_tokens"),
    }


def _serve_argv(argv: list[str]) -> list[str]:
    """What ``sglang serve`` hands to the LLM server's parser."""
    import sglang.cli.serve as serve

    _, argv = serve._extract_model_type_override(list(argv))
    normalize = getattr(serve, "_normalize_positional_model_path", None)
    if normalize is not None:
        argv, _ = normalize(argv)
    else:
        from sglang.cli.utils import get_model_path

        get_model_path(argv)  # 0.5.15: --model-path is required here
    return argv


class _RouterStop(Exception):
    """Raised where ``sglang_router.launch_server.main`` would start the workers."""


def _router_server_args(argv: list[str]) -> Any:
    """What ``python -m sglang_router.launch_server ARGV`` builds before it starts workers:
    its own parser (every ServerArgs option, the router's ``--router-*`` options, no
    ``--config`` merge) and ``ServerArgs.from_cli_args`` (resolution included up to 0.5.19).
    The real ``main()`` runs; it is stopped where it would look for free ports."""
    import multiprocessing

    import sglang_router.launch_server as router

    def stop(*args: Any, **kwargs: Any) -> None:
        raise _RouterStop()

    saved = (sys.argv, router.find_available_ports, multiprocessing.set_start_method)
    sys.argv = ["sglang_router.launch_server", *argv]
    router.find_available_ports = stop
    router.mp.set_start_method = lambda *a, **k: None
    try:
        router.main()
    except _RouterStop as exc:
        return _server_args_of(exc)
    finally:
        sys.argv, router.find_available_ports, router.mp.set_start_method = saved
    raise RuntimeError("sglang_router.launch_server.main() returned without starting workers")


def _env_reads() -> set[str]:
    """The SGLANG_* / SGL_* variables read so far (sitecustomize logs them), then cleared."""
    import sitecustomize

    reads = set(getattr(sitecustomize, "ENV_READS", ()))
    getattr(sitecustomize, "ENV_READS", set()).clear()
    return reads


def run_one(launch: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
    from sglang.srt.server_args import prepare_server_args

    for key in [k for k in os.environ if k.startswith(("SGLANG_", "SGL_"))]:
        del os.environ[key]
    os.environ.update(launch["env"])
    argv = list(launch["argv"])
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if launch["entry"] == "serve":
                argv = _serve_argv(argv)
            if launch["entry"] == "router":
                server_args = _router_server_args(argv)
            else:
                server_args = prepare_server_args(argv)
    except SystemExit as exc:
        return {"stage": "argparse", "error": _argparse_error(err.getvalue(), exc.code)}, None
    except ImportError as exc:  # every sglang-router needs sglang.srt.utils.is_port_available (0.5.20+)
        where = re.sub(r" \(/[^()]*\)$", "", _first_line(str(exc)))  # no local path in the record
        return {"stage": "import", "error": where, "exc": type(exc).__name__}, None
    except Exception as exc:
        stage = "server_args" if _server_args_of(exc) is not None else "argparse"
        return ({"stage": stage, "error": _first_line(str(exc)) or type(exc).__name__,
                 "exc": type(exc).__name__}, _resolved(_server_args_of(exc)))
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            if hasattr(server_args, "resolve_once"):
                server_args.resolve_once()
    except Exception as exc:
        if os.environ.get("ORACLE_TRACE"):
            traceback.print_exc()
        return ({"stage": "server_args", "error": _first_line(str(exc)) or type(exc).__name__,
                 "exc": type(exc).__name__}, _resolved(server_args))
    return "ok", _resolved(server_args)


def child(release: str, gpu: str, cuda: str) -> None:
    import logging

    logging.disable(logging.CRITICAL)
    import sglang.srt.server_args  # noqa: F401  (variables read on import are not the launch's)

    read: set[str] = set()
    for line in sys.stdin:
        launch = json.loads(line)
        launch.pop("combos", None)
        _env_reads()
        outcome, resolved = run_one(launch)
        read |= _env_reads()
        record = dict(launch, release=release, gpu=gpu, cuda=cuda, outcome=outcome, resolved=resolved,
                      models=models_of(launch))
        print(json.dumps(record, sort_keys=True, default=str), flush=True)
    print(json.dumps({"env_reads": sorted(read)}), flush=True)


# --------------------------------------------------------------------------- parent side

def models_of(launch: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{model folder as written: the part of its config.json the linter reads} for every
    tiny model the launch names (``architectures``, and ``layer_types`` where the model
    has them: GraniteMoeHybrid is dense or hybrid by its layers)."""
    blobs = list(launch["argv"]) + list(launch["files"].values())
    out = {}
    for folder, config in sglang_generate.MODEL_CONFIGS.items():
        pattern = re.compile(r"(?<![\w./-])" + re.escape(folder) + r"(?![\w./-])")
        if any(pattern.search(b) for b in blobs):
            out[folder] = {k: config[k] for k in ("architectures", "layer_types") if k in config}
    return out


def workdir(launches: list[dict[str, Any]]) -> str:
    work = tempfile.mkdtemp(prefix="sglang-oracle-")
    for folder, text in sglang_generate.model_config_texts().items():
        os.makedirs(os.path.join(work, folder), exist_ok=True)
        with open(os.path.join(work, folder, "config.json"), "w", encoding="utf-8") as fh:
            fh.write(text)
    for launch in launches:
        for path, text in launch["files"].items():
            full = os.path.join(work, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as fh:
                fh.write(text)
    return work


#: {release: every SGLANG_* / SGL_* variable its resolution read, over all launches and GPUs}
ENV_READS: dict[str, set[str]] = {}


def combos_of(launch: dict[str, Any]) -> list[tuple[str, str]]:
    return [tuple(c) for c in launch.get("combos", DEFAULT_COMBOS)]  # type: ignore[misc]


def record(release: str, gpu: str, launches: list[dict[str, Any]], oracle_dir: str,
           cuda: str = "12.9") -> list[dict[str, Any]]:
    work = workdir(launches)
    env = sglang_oracle.oracle_env(release, oracle_dir, gpu, cuda)
    env["PYTHONPATH"] += os.pathsep + HERE
    python = os.path.join(oracle_dir, "venv", "bin", "python")
    proc = subprocess.run([python, os.path.abspath(__file__), "--child", "--release", release, "--gpu", gpu,
                           "--cuda", cuda],
                          input="".join(json.dumps(launch) + "\n" for launch in launches), env=env, cwd=work,
                          capture_output=True, text=True)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    records = [line for line in lines if "env_reads" not in line]
    for rec in records:
        if rec["outcome"] != "ok":  # what a refused resolution had reached: kept out of the files (size)
            rec["resolved"] = None
        if rec.pop("post", False):
            rec["post"] = sglang_post_resolution.post_outcome(rec, os.path.join(oracle_dir, f"sglang-{release}"))
    for line in lines:
        ENV_READS.setdefault(release, set()).update(line.get("env_reads", ()))
    if len(records) != len(launches):
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"{release}/{gpu}/{cuda}: {len(records)} of {len(launches)} launches recorded")
    return records


def record_release(release: str, launches: list[dict[str, Any]], oracle_dir: str,
                   combos: tuple[tuple[str, str], ...] | None = None) -> list[dict[str, Any]]:
    """Every launch for each of its (GPU, CUDA) pairs (``combos``: all launches for these)."""
    out = []
    for gpu, cuda in ALL_COMBOS:
        todo = [launch for launch in launches
                if (gpu, cuda) in (combos if combos is not None else combos_of(launch))]
        if todo:
            out += record(release, gpu, todo, oracle_dir, cuda)
    return out


def _key(rec: dict[str, Any]) -> tuple[str, str, str]:
    return (rec["id"], rec["gpu"], rec["cuda"])


def merged(path: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of ``path`` with each of ``records`` in place of the one of the same launch,
    GPU and CUDA version (re-recording one category keeps the file's order and the rest); a
    launch new to the file goes after the one before it in ``records`` (same GPU and CUDA)."""
    new = {_key(rec): rec for rec in records}
    with open(path, encoding="utf-8") as fh:
        out = [new.get(_key(rec), rec) for rec in (json.loads(line) for line in fh if line.strip())]
    before = None
    for rec in records:
        keys = [_key(r) for r in out]
        if _key(rec) not in keys:
            if before is None or before[1:] != _key(rec)[1:]:
                raise SystemExit(f"{path}: nowhere to put {_key(rec)} (the first of its GPU and CUDA)")
            out.insert(keys.index(before) + 1, rec)
        before = _key(rec)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", required=True, help="a release, or 'all' (with 0.5.15.post1)")
    ap.add_argument("--gpu", choices=GPUS, help="--adhoc: one GPU generation (default: both)")
    ap.add_argument("--cuda", choices=sglang_oracle.CUDAS, default="12.9", help="--adhoc: the CUDA version")
    ap.add_argument("--all-combos", action="store_true",
                    help="record every launch on both GPUs with both CUDA versions (the equivalence check)")
    ap.add_argument("--oracle-dir", default="/work/cache/sglang-oracle")
    ap.add_argument("--out", help="default: tests/conformance/sglang/RELEASE.jsonl (a folder with 'all')")
    ap.add_argument("--env", action="append", default=[], help="--adhoc: NAME=VALUE in the launch's environment")
    ap.add_argument("--adhoc", help="one launch: 'serve ARGS', 'launch_server ARGS' or 'router ARGS'; "
                    "prints the record")
    ap.add_argument("--only", nargs="+", metavar="PREFIX", help="only the launches whose id starts so")
    ap.add_argument("--merge", action="store_true",
                    help="with --only: put the new records in place of the same launches' (id, GPU, CUDA) in "
                    "the release's file, keeping every other record and the order")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ns = ap.parse_args()
    if ns.child:
        child(ns.release, ns.gpu, ns.cuda)
        return
    if ns.adhoc:
        entry, *argv = shlex.split(ns.adhoc)
        launch = {"id": "adhoc", "entry": entry, "argv": argv, "env": dict(e.split("=", 1) for e in ns.env),
                  "files": {}, "post": True}
        for gpu in [ns.gpu] if ns.gpu else list(GPUS):
            print(json.dumps(record(ns.release, gpu, [launch], ns.oracle_dir, ns.cuda)[0], indent=1,
                             sort_keys=True))
        return
    launches = [launch for launch in sglang_generate.launches()
                if not ns.only or launch["id"].startswith(tuple(ns.only))]
    releases = sglang_oracle.RELEASES + sglang_oracle.POST_RELEASES if ns.release == "all" else (ns.release,)
    for release in releases:
        records = record_release(release, launches, ns.oracle_dir, ALL_COMBOS if ns.all_combos else None)
        folder = ns.out if ns.out and ns.release == "all" else os.path.join(REPO, "tests", "conformance", "sglang")
        out = ns.out if ns.out and ns.release != "all" else os.path.join(folder, f"{release}.jsonl")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if ns.merge:
            records = merged(out, records)
        with open(out, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n")
        if not ns.only:  # a selection's reads are not the release's
            with open(os.path.join(ns.oracle_dir, f"env-reads-{release}.json"), "w", encoding="utf-8") as fh:
                json.dump(sorted(ENV_READS.get(release, ())), fh, indent=0)
        ok = sum(1 for r in records if r["outcome"] == "ok")
        print(f"{release}: {len(records)} records ({ok} ok) -> {out}", flush=True)


if __name__ == "__main__":
    main()
