#!/usr/bin/env bash
# Build a throwaway CPU-only environment in which vLLM RELEASE's own parser and
# config validators can run (the "oracle" used by record.py).
#
#   scripts/conformance/setup_env.sh RELEASE [DIR]      (DIR default /tmp/vllm-oracle)
#
# Layout (all OUTSIDE the repository):
#   DIR/venv/            one venv shared by every release: torch==2.13.0 (CPU build)
#                        plus the light packages of oracle-requirements.txt
#   DIR/wheels/          vllm-RELEASE wheel, downloaded with --no-deps
#   DIR/vllm-RELEASE/    `pip install --no-deps --target` of that wheel; record.py
#                        puts it first on sys.path / PYTHONPATH
#
# Never let pip resolve vLLM's own dependency set (CUDA torch, nvidia-*,
# flashinfer: ~9 GB).  vLLM is always installed with --no-deps.
set -euo pipefail

RELEASE="${1:?usage: setup_env.sh RELEASE [DIR]}"
DIR="${2:-/tmp/vllm-oracle}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"

mkdir -p "$DIR/wheels"
VENV="$DIR/venv"
PIP="$VENV/bin/pip"

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi

echo "torch==2.13.0" > "$DIR/constraints.txt"

if ! "$VENV/bin/python" -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("2.13.0") and torch.version.cuda is None else 1)' 2>/dev/null; then
    # A CPU wheel of torch 2.13.0 must be what pip picks (a local find-links
    # folder or a CPU index configured for pip).  Refuse a CUDA build.
    "$PIP" install "torch==2.13.0"
    "$VENV/bin/python" -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda); sys.exit(0 if torch.version.cuda is None else "a CUDA torch was installed; install the CPU build of torch 2.13.0")'
fi

STAMP="$VENV/.oracle-requirements.sha"
WANT="$(sha256sum "$HERE/oracle-requirements.txt" | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    "$PIP" install -c "$DIR/constraints.txt" -r "$HERE/oracle-requirements.txt"
    # suffix decoding checks only that the package is importable
    "$PIP" install -c "$DIR/constraints.txt" --no-deps "arctic-inference==0.3.0"
    echo "$WANT" > "$STAMP"
fi

TARGET="$DIR/vllm-$RELEASE"
if [ ! -f "$TARGET/vllm/__init__.py" ]; then
    WHEEL="$(ls "$DIR"/wheels/vllm-"$RELEASE"-*.whl 2>/dev/null | head -n1 || true)"
    if [ -z "$WHEEL" ]; then
        "$PIP" download --no-deps --only-binary=:all: -d "$DIR/wheels" "vllm==$RELEASE"
        WHEEL="$(ls "$DIR"/wheels/vllm-"$RELEASE"-*.whl | head -n1)"
    fi
    "$PIP" install --no-deps --target "$TARGET" "$WHEEL"
fi

echo
echo "oracle for vLLM $RELEASE ready:"
echo "  $VENV/bin/python $HERE/record.py --release $RELEASE --vllm-dir $TARGET"
