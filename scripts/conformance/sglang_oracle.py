"""The SGLang oracle's environment: which folders, which stubs, which GPU.

SGLang's ``ServerArgs`` resolution (the code that accepts or refuses a
ReplaySSM launch) runs on a CPU-only machine once three things are arranged,
all outside the repository (``sglang_setup_env.sh`` builds the folders):

* ``DIR/venv``: torch 2.13.0 (CPU build) and the light packages of
  ``oracle-requirements.txt`` plus ``sglang-oracle-requirements.txt``;
  ``DIR/sglang-RELEASE``: ``pip install --no-deps --target`` of the wheel;
  ``DIR/tf-X``: the transformers release that SGLang release pins (with the
  tokenizers / huggingface_hub it accepts), first on the path;
* compiled CUDA-only packages SGLang imports at module level (``sgl_kernel``,
  ``flashinfer``, ``torchvision``, ``pynvml``) are stand-in modules whose every
  attribute is a dummy; nothing of them runs while server arguments resolve;
* torch is told it has CUDA devices of one generation: ``ORACLE_GPU=hopper``
  (compute capability 9.0, "H100") or ``blackwell`` (10.0, "B200"), 80 GB each,
  built for CUDA ``ORACLE_CUDA`` (``torch.version.cuda``: 12.9 or 13.0);
  SGLang's own detection (``is_cuda``, ``is_sm100_supported``, the platform
  context) then takes the CUDA path exactly as on that GPU.

* every read of an ``SGLANG_*`` / ``SGL_*`` environment variable is logged
  (``ORACLE_ENV_LOG``): the recorder tells which variables a resolution read.

``sitecustomize.py`` in ``DIR/_stubs`` does the last three at interpreter start.
"""

from __future__ import annotations

import os

RELEASES = ("0.5.15", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22",
            "0.5.23")
#: recorded too, but not a release of the linter's tables (judged by 0.5.15's)
POST_RELEASES = ("0.5.15.post1",)
#: the GPU generations and CUDA versions a launch is recorded for
GPUS = ("hopper", "blackwell")
CUDAS = ("12.9", "13.0")
#: the sglang-router release a user of each SGLang release runs ``python -m
#: sglang_router.launch_server`` with (installed in ``DIR/router-VERSION``).  The facts:
#: - neither side pins the other: no SGLang wheel's metadata (0.5.15-0.5.23, every extra)
#:   requires sglang-router, and sglang-router's requires no sglang, so ``pip install
#:   sglang-router`` takes the newest release;
#: - PyPI upload dates: sglang-router 0.3.0 2025-12-24, 0.3.1 2026-01-09, 0.3.2 2026-01-15 (the
#:   newest, no later release); sglang 0.5.15 2026-07-10 ... 0.5.19 2026-09-04, 0.5.20
#:   2026-09-18 ... 0.5.23 2026-10-30: 0.3.2 is the newest router at every SGLang release;
#: - every sglang-router ``launch_server.py`` read from the wheels (0.0.11, 0.1.0, 0.1.4, 0.1.9,
#:   0.2.0-0.2.4, 0.3.0-0.3.2) imports ``is_port_available`` from ``sglang.srt.utils`` at module level, and
#:   SGLang's ``sglang/srt/utils/__init__.py`` re-exports it (from ``utils/network.py``) only
#:   from 0.5.20: with 0.5.15-0.5.19 no router release imports (``sglang_router_pairing.py``
#:   executes the imports of each pair), so the pair a user runs there fails before any
#:   argument is read (recorded, stage ``import``), and no older router does better.
ROUTERS = {release: "0.3.2" for release in RELEASES + POST_RELEASES}

#: transformers (and what it accepts) pinned by each release's wheel metadata
TRANSFORMERS = {
    "5.12.1": ("transformers==5.12.1", "tokenizers==0.22.2", "huggingface_hub==1.33.0"),
    "5.19.0": ("transformers==5.19.0",),
}


def base_release(release: str) -> str:
    """``0.5.15.post1`` -> ``0.5.15`` (the table a post release is judged by)."""
    return release.split(".post")[0]


def router_of(release: str) -> str:
    """The sglang-router release recorded with SGLang ``release`` (:data:`ROUTERS`)."""
    return ROUTERS[release]


def transformers_of(release: str) -> str:
    return "5.19.0" if release in ("0.5.22", "0.5.23") else "5.12.1"


SITECUSTOMIZE = '''
"""Installed by scripts/conformance/sglang_oracle.py: stand-ins and a pretend GPU."""
import importlib.abc
import importlib.machinery
import os
import sys
import types

_STUBBED = ("torchvision", "sgl_kernel", "flashinfer", "pynvml")


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

    def __getitem__(self, key):
        return _Dummy()

    def __or__(self, other):
        return _Dummy()

    __ror__ = __or__

    def __bool__(self):
        return False


def _module_getattr(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Dummy()


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in _STUBBED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__version__ = "0.0.0+oracle-stub"
        module.__getattr__ = _module_getattr
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())

_GPU = os.environ.get("ORACLE_GPU")
if _GPU:
    import torch

    _CAPABILITY = {"hopper": (9, 0), "blackwell": (10, 0)}[_GPU]
    _NAME = {"hopper": "NVIDIA H100 80GB HBM3", "blackwell": "NVIDIA B200"}[_GPU]

    class _Properties:
        total_memory = 80 * 1024 ** 3
        major, minor = _CAPABILITY
        name = _NAME
        multi_processor_count = 132

    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 8
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_capability = lambda *a, **k: _CAPABILITY
    torch.cuda.get_device_name = lambda *a, **k: _NAME
    torch.cuda.get_device_properties = lambda *a, **k: _Properties()
    torch.cuda.mem_get_info = lambda *a, **k: (79 * 1024 ** 3, 80 * 1024 ** 3)
    torch.version.cuda = os.environ.get("ORACLE_CUDA", "12.9")

#: SGLANG_* / SGL_* variables read since the last clear (os.getenv, os.environ.get, `in`)
ENV_READS = set()


class _LoggingEnviron(type(os.environ)):
    def __getitem__(self, key):
        if isinstance(key, str) and key.startswith(("SGLANG_", "SGL_")):
            ENV_READS.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        if isinstance(key, str) and key.startswith(("SGLANG_", "SGL_")):
            ENV_READS.add(key)
        return super().__contains__(key)


os.environ.__class__ = _LoggingEnviron
'''


def write_stubs(oracle_dir: str) -> str:
    """``DIR/_stubs`` holding the sitecustomize above (rewritten every run)."""
    folder = os.path.join(oracle_dir, "_stubs")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "sitecustomize.py"), "w", encoding="utf-8") as fh:
        fh.write(SITECUSTOMIZE)
    return folder


def oracle_env(release: str, oracle_dir: str, gpu: str, cuda: str = "12.9",
               router: str | None = None) -> dict[str, str]:
    """The environment a process running SGLang ``release`` on ``gpu`` with ``cuda`` needs
    (the release's sglang-router, installed in ``DIR/router-VERSION``, is on the path after
    SGLang; ``router``: another sglang-router release instead)."""
    stubs = write_stubs(oracle_dir)
    path = [stubs, os.path.join(oracle_dir, f"sglang-{release}"),
            os.path.join(oracle_dir, f"tf-{transformers_of(base_release(release))}"),
            os.path.join(oracle_dir, f"router-{router or router_of(release)}")]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_"))}
    env.update(PYTHONPATH=os.pathsep.join(path), ORACLE_GPU=gpu, ORACLE_CUDA=cuda, HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", PYTHONWARNINGS="ignore")
    return env
