#!/usr/bin/env bash
# Cross-validation along a path on Fashion-MNIST binary (60,000 x 784; bench/data/fashion_mnist.py):
# `nimbus cv --folds 5` over a 10-point L1 path against liblinear-train -s 6 -v 5 run at each of
# the same 10 lambdas one after another (C = 1 / (N lambda)), as a liblinear user would.
#
#   nimbus     `nimbus cv --data FILE --folds 5 --path-length 10 --runtime process --workers 4`,
#              every other option default; then the same with --gradient-tolerance 1e-3 (closer
#              to liblinear's default stop, eps 0.01 on the 1-norm of the subgradient).
#   liblinear  the wall time of the 10 processes, each loading the file (load included), at the
#              default eps and at -e 1e-4.
# Both report each lambda's cross-validation accuracy (nimbus: the mean over its folds; the
# folds differ, so a few tenths of a percent apart). Wall times of the whole processes, one run.
# The table goes to stdout and OUTDIR/cv/cv.md.
#
# Usage: bench/cv.sh NIMBUS [OUTDIR]     (OUTDIR default /tmp/nimbus-bench-solvers)
#   CV_WORKERS=4   CV_POINTS=10   CV_FOLDS=5
set -euo pipefail
nimbus_source=${1:?usage: bench/cv.sh NIMBUS [OUTDIR]}
out=${2:-/tmp/nimbus-bench-solvers}
workers=${CV_WORKERS:-4}
points=${CV_POINTS:-10}
folds=${CV_FOLDS:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=data/build.sh
source "$here/data/build.sh"
mkdir -p "$out/bin" "$out/cv"
cp "$nimbus_source" "$out/bin/nimbus-cv.tmp" && mv "$out/bin/nimbus-cv.tmp" "$out/bin/nimbus-cv"
nimbus=$out/bin/nimbus-cv
work=$out/cv
log() { echo "cv.sh: $*" >&2; }

suite_build_data "$out" fashion "$nimbus"
data=$(suite_data_file "$out" fashion)
rows=$(wc -l < "$data")

seconds() {  # wall seconds of one run of a command; its stdout into $work/stdout.txt
  /usr/bin/time -f %e -o "$work/time.txt" "$@" > "$work/stdout.txt" 2> "$work/stderr.txt" ||
    { cat "$work/stderr.txt" >&2; return 1; }
  tail -1 "$work/time.txt"
}
# Each point's mean cross-validation accuracy from a cv.json, one per line.
accuracies() { python3 -c 'import json,sys
for p in json.load(open(sys.argv[1]))["points"]: print("%.4f" % p["scores"]["accuracy"]["mean"])' "$1"; }

log "nimbus cv, defaults"
nimbus_time=$(seconds "$nimbus" cv --quiet --data "$data" --folds "$folds" --path-length "$points" --runtime process \
  --workers "$workers" --out "$work/nimbus")
log "nimbus cv, --gradient-tolerance 1e-3"
loose_time=$(seconds "$nimbus" cv --quiet --data "$data" --folds "$folds" --path-length "$points" --runtime process \
  --workers "$workers" --gradient-tolerance 1e-3 --out "$work/nimbus-loose")
mapfile -t lambdas < <(python3 -c 'import json,sys
for p in json.load(open(sys.argv[1]))["points"]: print(repr(p["lambda"]))' "$work/nimbus/cv.json")

# liblinear at each lambda, at an eps: total seconds, and each point's accuracy into $work/ll-EPS.txt.
liblinear_path() {  # EPS (empty: the default)
  local eps=$1 total=0 t c
  : > "$work/ll-${eps:-default}.txt"
  for lambda in "${lambdas[@]}"; do
    c=$(awk "BEGIN { printf \"%.17g\", 1 / ($rows * $lambda) }")
    t=$(seconds liblinear-train -s 6 -v "$folds" -c "$c" ${eps:+-e "$eps"} -q "$data")
    sed -n 's/Cross Validation Accuracy = \([0-9.]*\)%/\1/p' "$work/stdout.txt" |
      awk '{ printf "%.4f\n", $1 / 100 }' >> "$work/ll-${eps:-default}.txt"
    total=$(awk "BEGIN { print $total + $t }")
  done
  echo "$total"
}
log "liblinear -v $folds at ${#lambdas[@]} lambdas, default eps"
ll_time=$(liblinear_path "")
log "liblinear -v $folds at ${#lambdas[@]} lambdas, -e 1e-4"
ll_tight_time=$(liblinear_path 1e-4)

{
  echo "### nimbus cv --folds $folds over a $points-point L1 path, Fashion-MNIST binary ($rows rows), process runtime, K = $workers"
  echo
  echo "| runner | wall s (load included) | ratio to liblinear (default eps) |"
  echo "|---|---|---|"
  awk -v t="$ll_time" 'BEGIN { printf "| liblinear-train -s 6 -v 5, each lambda in turn, default eps | %.1f | 1.00 |\n", t }'
  awk -v t="$ll_tight_time" -v b="$ll_time" 'BEGIN { printf "| the same, -e 1e-4 | %.1f | %.2f |\n", t, t / b }'
  awk -v t="$nimbus_time" -v b="$ll_time" 'BEGIN { printf "| nimbus cv, defaults | %.1f | %.2f |\n", t, t / b }'
  awk -v t="$loose_time" -v b="$ll_time" 'BEGIN { printf "| nimbus cv --gradient-tolerance 1e-3 | %.1f | %.2f |\n", t, t / b }'
  echo
  echo "| lambda | nimbus accuracy | nimbus 1e-3 | liblinear | liblinear 1e-4 |"
  echo "|---|---|---|---|---|"
  paste <(printf '%s\n' "${lambdas[@]}") <(accuracies "$work/nimbus/cv.json") <(accuracies "$work/nimbus-loose/cv.json") \
    "$work/ll-default.txt" "$work/ll-1e-4.txt" | awk '{ printf "| %.4g | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }'
} | tee "$work/cv.md"
