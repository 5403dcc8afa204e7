#!/usr/bin/env bash
# Rebuild tests/conformance/RELEASE.jsonl for every release (or those given).
#
#   scripts/conformance/record_all.sh [RELEASE...]
#
# Env: ORACLE_DIR (default /tmp/vllm-oracle), JOBS (parallel recorders, default 2).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
DIR="${ORACLE_DIR:-/tmp/vllm-oracle}"
JOBS="${JOBS:-2}"
RELEASES=("$@")
if [ ${#RELEASES[@]} -eq 0 ]; then
    RELEASES=(0.33.0 0.32.0 0.31.0 0.30.0 0.29.0 0.28.0 0.27.1 0.27.0)
fi

# environments first, one at a time (pip)
for r in "${RELEASES[@]}"; do
    "$HERE/setup_env.sh" "$r" "$DIR" > "$DIR/setup-$r.log" 2>&1 || {
        echo "setup of $r failed, see $DIR/setup-$r.log" >&2; exit 1; }
done

mkdir -p "$REPO/tests/conformance"
printf '%s\n' "${RELEASES[@]}" | xargs -P "$JOBS" -I{} sh -c \
    '"$1/venv/bin/python" "$2/record.py" --release "$3" --vllm-dir "$1/vllm-$3" \
        --out "$4/tests/conformance/$3.jsonl" > "$1/record-$3.log" 2>&1 \
        && tail -n 1 "$1/record-$3.log" || { echo "record $3 failed, see $1/record-$3.log"; exit 1; }' \
    _ "$DIR" "$HERE" {} "$REPO"

python3 "$HERE/summarize.py" "$REPO"/tests/conformance/*.jsonl
