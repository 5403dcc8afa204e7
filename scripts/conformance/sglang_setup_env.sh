#!/usr/bin/env bash
# Build the throwaway CPU-only environment in which SGLang's own parser and ServerArgs
# resolution run (the oracle used by sglang_record.py).  Everything lives OUTSIDE the
# repository:
#
#   scripts/conformance/sglang_setup_env.sh [DIR] [RELEASE...]   (DIR default /work/cache/sglang-oracle)
#
#   DIR/venv/              one venv for every release: torch==2.13.0 (CPU build) + the light
#                          packages of oracle-requirements.txt and sglang-oracle-requirements.txt
#   DIR/sglang-RELEASE/    `pip install --no-deps --target` of that release's wheel
#   DIR/tf-X/              the transformers release SGLang pins (with the tokenizers and
#                          huggingface_hub it accepts), `--no-deps --target`
#   DIR/router-VERSION/    `--no-deps --target` of each sglang-router release that
#                          sglang_oracle.ROUTERS pairs with a release (its `python -m
#                          sglang_router.launch_server` is recorded too)
#
# SGLang is always installed with --no-deps: its own dependency set pulls CUDA torch,
# flashinfer, sgl-kernel and friends (many GB).  sglang_oracle.py stands in for the
# compiled CUDA modules and tells torch it has a Hopper or Blackwell GPU.
set -euo pipefail

DIR="${1:-/work/cache/sglang-oracle}"
shift || true
RELEASES=("$@")
if [ ${#RELEASES[@]} -eq 0 ]; then
    RELEASES=(0.5.15 0.5.15.post1 0.5.16 0.5.17 0.5.18 0.5.19 0.5.20 0.5.21 0.5.22 0.5.23)
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"
VENV="$DIR/venv"
PIP="$VENV/bin/pip"
mkdir -p "$DIR/wheels"

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("2.13.0") and torch.version.cuda is None else 1)' 2>/dev/null; then
    "$PIP" install "torch==2.13.0"   # must be the CPU build (a find-links folder or a CPU index)
    "$VENV/bin/python" -c 'import torch, sys; sys.exit(0 if torch.version.cuda is None else "a CUDA torch was installed")'
fi
"$PIP" install -q -c <(echo "torch==2.13.0") -r "$HERE/oracle-requirements.txt" -r "$HERE/sglang-oracle-requirements.txt"

for tf in 5.12.1 5.19.0; do
    if [ ! -d "$DIR/tf-$tf/transformers" ]; then
        pkgs="$("$VENV/bin/python" -c "import sys; sys.path.insert(0, '$HERE'); import sglang_oracle; print(' '.join(sglang_oracle.TRANSFORMERS['$tf']))")"
        # shellcheck disable=SC2086
        "$PIP" install -q --no-deps --target "$DIR/tf-$tf" $pkgs
    fi
done

# the sglang-router release each SGLang release is recorded with (sglang_oracle.ROUTERS)
ROUTERS="$("$VENV/bin/python" -c "import sys; sys.path.insert(0, '$HERE'); import sglang_oracle; print(' '.join(sorted(set(sglang_oracle.ROUTERS.values()))))")"
for v in $ROUTERS; do
    if [ ! -f "$DIR/router-$v/sglang_router/launch_server.py" ]; then
        "$PIP" install -q --no-deps --target "$DIR/router-$v" "sglang-router==$v"
    fi
done

for r in "${RELEASES[@]}"; do
    if [ ! -f "$DIR/sglang-$r/sglang/__init__.py" ]; then
        WHEEL="$(ls "$DIR"/wheels/sglang-"$r"-*.whl 2>/dev/null | head -n1 || true)"
        if [ -z "$WHEEL" ]; then
            "$PIP" download -q --no-deps --only-binary=:all: -d "$DIR/wheels" "sglang==$r"
            WHEEL="$(ls "$DIR"/wheels/sglang-"$r"-*.whl | head -n1)"
        fi
        "$PIP" install -q --no-deps --target "$DIR/sglang-$r" "$WHEEL"
    fi
done
echo "SGLang oracle ready in $DIR: python3 $HERE/sglang_record.py --oracle-dir $DIR --release ${RELEASES[-1]}"
