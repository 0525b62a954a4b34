#!/usr/bin/env bash
# The ordered reductions on one NVIDIA GPU: the GPU-relevant tests, the scatter_reduction
# benchmark at 16-256 MiB, x.at[].add with and without --xla_gpu_deterministic_ops, the
# segment reductions, the gathers' gradients against jnp.take's, `dmljax.deterministic` on a
# message-passing training step and an embedding gradient (with and without the flag), and
# the deterministic, segment, cumulative and selection benchmark groups at 16 MiB.
#
# Usage (from the repository root, no network, no installs):
#   PYTHONPATH=. scripts/gpu_check.sh            # on the GPU machine, about 10 minutes
#   PYTHONPATH=. scripts/gpu_check.sh --dry-run  # on the CPU, tiny sizes (tests/test_gpu_check.py)
# Every part at its time limit adds up to about 13 minutes: where one command may run 10 at
# most, run it as two, each into its own OUT, e.g.
#   OUT=gpu1 PARTS="environment tests bench ops" scripts/gpu_check.sh
#   OUT=gpu2 PARTS="environment segments gather_grad deterministic groups" scripts/gpu_check.sh
# (PARTS: name prefixes of the parts to run; the others are recorded as skipped.)
# Writes into ${OUT:-./gpu-results}: gpu_check.log (everything), one JSON per part and
# gpu_check.json (every part's status and seconds, the figures). A failing or timed-out
# part is recorded and the next one runs; gpu_check.json is written in every case.
set -u

DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; fi
OUT_DIR=${OUT:-./gpu-results}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
LOG="$OUT_DIR/gpu_check.log"
PY=${PYTHON:-python3}
export PYTHONPATH=${PYTHONPATH:-.}
: >"$LOG"
: >"$OUT_DIR/parts.tsv"

if [ "$DRY" = 1 ]; then
  export JAX_PLATFORMS=cpu
  SIZES_LIST="4K"
  TEST_LIMIT=120
  TEST_FILTER="combiner_rounds or level_boundaries"
  BENCH_LIMIT=120
  OPS_LOG2=10
else
  SIZES_LIST="16M 64M 256M"
  TEST_LIMIT=170
  TEST_FILTER="not sharded and not xla_cpu_scatter and not partitioned and not onnx_node_case and not random_against"
  TEST_FILTER="$TEST_FILTER and not eight and not onnx and not onnxruntime and not export"
  BENCH_LIMIT=65
  OPS_LOG2=24
fi

# selected NAME: whether NAME starts with one of the prefixes in PARTS.
selected() {
  local prefix
  for prefix in $PARTS; do
    case "$1" in "$prefix"*) return 0 ;; esac
  done
  return 1
}

# part NAME LIMIT_SECONDS COMMAND...: run one part under a time limit; record its status.
part() {
  local name=$1 limit=$2
  shift 2
  if [ -n "${PARTS:-}" ] && ! selected "$name"; then
    printf '%s\tskipped\t0\n' "$name" >>"$OUT_DIR/parts.tsv"
    return
  fi
  local start end rc
  start=$(date +%s)
  echo "=== $name (limit ${limit}s): $*" >>"$LOG"
  timeout -k 10 "$limit" "$@" >>"$LOG" 2>&1
  rc=$?
  end=$(date +%s)
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((end - start))" >>"$OUT_DIR/parts.tsv"
  echo "=== $name: exit $rc" >>"$LOG"
}

part environment 30 "$PY" -c "import jax, jaxlib, sys; print(sys.version); print(jax.__version__, jaxlib.__version__, jax.devices())"

# GPU-relevant tests: every formulation against ufunc.at (on a GPU the "cpu scatter" case runs the
# fold too: platform_dependent), the reductions' oracles, the lowering guards, export.
TESTS="tests/test_sorted_fold.py tests/test_scatter_reduction.py tests/test_extremal.py tests/test_segment.py"
TESTS="$TESTS tests/test_gather_grad_order.py"
if ! "$PY" -c "import onnx, onnxruntime" 2>/dev/null; then
  TESTS="tests/test_sorted_fold.py tests/test_segment.py"  # the others import onnx, onnxruntime
  echo "onnx/onnxruntime missing: only tests/test_sorted_fold.py" >>"$LOG"
fi
# Several pytest workers share the GPU (compiling dominates); none preallocates its memory.
WORKERS="-p no:xdist"
if [ "$DRY" = 0 ] && "$PY" -c "import xdist" 2>/dev/null; then WORKERS="-n 4 --dist load"; fi
if "$PY" -c "import pytest" 2>/dev/null; then
  # shellcheck disable=SC2086
  part tests "$TEST_LIMIT" env XLA_PYTHON_CLIENT_PREALLOCATE=false "$PY" -m pytest -q -p no:cacheprovider -p no:benchmark $WORKERS \
    --maxfail=25 -rf $TESTS -k "$TEST_FILTER" --junitxml="$OUT_DIR/tests.xml"
else
  echo "pytest missing: tests skipped" >>"$LOG"
  printf 'tests\tskipped\t0\n' >>"$OUT_DIR/parts.tsv"
fi

# The benchmark, one process per size (a size that runs out of time loses only itself).
for size in $SIZES_LIST; do
  part "bench_$size" "$BENCH_LIMIT" "$PY" -m dmljax --only scatter_reduction --sizes "$size" --rounds 3 \
    --no-peers --json "$OUT_DIR/bench_$size.json"
done

# x.at[].add and dmljax at 2^OPS_LOG2 updates, random and hot targets, with and without
# XLA's deterministic GPU scatter (a flag fixed at start: one process each).
part ops_default 60 env XLA_FLAGS="" "$PY" scripts/gpu_ops.py "$OPS_LOG2" "" "$OUT_DIR/ops_default.json"
part ops_deterministic 60 env XLA_FLAGS=--xla_gpu_deterministic_ops=true "$PY" scripts/gpu_ops.py "$OPS_LOG2" \
  "--xla_gpu_deterministic_ops=true" "$OUT_DIR/ops_deterministic.json"

# The segment reductions on the device: against the loop, run to run beside jax.ops.segment_sum,
# the guide's gradients run to run, timings (segment_gpu.json).
if [ "$DRY" = 1 ]; then SEG_ARGS="--dry-run"; else SEG_ARGS=""; fi
# shellcheck disable=SC2086
part segments 60 env OUT="$OUT_DIR" "$PY" scripts/gpu_segments.py $SEG_ARGS

# The gathers' gradients on the device: np.add.at's bits in row-major order, run to run, their
# cost against jnp.take's gradient (gather_grad.json).
if [ "$DRY" = 1 ]; then GG_ARGS="--dry-run"; else GG_ARGS=""; fi
# shellcheck disable=SC2086
part gather_grad 60 env OUT="$OUT_DIR" "$PY" scripts/gpu_gather_grad.py $GG_ARGS

# dmljax.deterministic on training programs as users write them: run to run, equal to the host
# CPU's result, its cost against the plain program, with and without XLA's deterministic flag.
if [ "$DRY" = 1 ]; then DET_ARGS="--dry-run"; else DET_ARGS=""; fi
# shellcheck disable=SC2086
part deterministic_default 75 env XLA_FLAGS="" OUT="$OUT_DIR" "$PY" scripts/gpu_deterministic.py default $DET_ARGS
# shellcheck disable=SC2086
part deterministic_xla_flag 75 env XLA_FLAGS=--xla_gpu_deterministic_ops=true OUT="$OUT_DIR" "$PY" \
  scripts/gpu_deterministic.py xla_flag $DET_ARGS

# What exactness costs on the device: the deterministic, segment, cumulative and selection
# (top-k) groups of the benchmark against jax.ops / jnp / lax.top_k, one size.
if [ "$DRY" = 1 ]; then GROUPS_SIZE="4K"; else GROUPS_SIZE="16M"; fi
part groups 150 "$PY" -m dmljax --only deterministic,segment,cumulative,selection --sizes "$GROUPS_SIZE" \
  --rounds 3 --no-peers --json "$OUT_DIR/groups_$GROUPS_SIZE.json"

# The summary: every part's status, and the figures the parts wrote (missing ones are null).
"$PY" - "$OUT_DIR" "$DRY" <<'EOF' >>"$LOG" 2>&1 || echo '{"summary": "failed"}' >"$OUT_DIR/gpu_check.json"
import glob, json, os, sys
out_dir, dry = sys.argv[1], sys.argv[2] == "1"
parts = {}
for line in open(os.path.join(out_dir, "parts.tsv")):
    name, rc, seconds = line.rstrip("\n").split("\t")
    parts[name] = {"exit": rc, "seconds": float(seconds or 0)}
figures = {}
for path in sorted(glob.glob(os.path.join(out_dir, "*.json"))):
    name = os.path.basename(path)[:-5]
    if name == "gpu_check":
        continue
    try:
        figures[name] = json.load(open(path))
    except (OSError, ValueError) as error:
        figures[name] = {"unreadable": str(error)}
ok = all(p["exit"] in ("0", "skipped") for p in parts.values())
summary = {"dry_run": dry, "ok": ok, "parts": parts, "figures": figures}
json.dump(summary, open(os.path.join(out_dir, "gpu_check.json"), "w"), indent=1)
print(json.dumps({"ok": ok, "parts": parts}))
EOF
if [ ! -s "$OUT_DIR/gpu_check.json" ]; then echo '{"summary": "missing"}' >"$OUT_DIR/gpu_check.json"; fi
tail -n 1 "$LOG"
