#!/usr/bin/env bash
# Data at a scale this machine cannot hold in one process (issue 29's benchmark).
#
# A. A `nimbus gen` file larger than the machine's memory (SCALE_BIG_GB, default 1.1 x MemTotal)
#    is split into shards, evaluated and predicted: each command's wall time and peak memory
#    (GNU time's maximum resident set), beside the file's size.
# B. A file of SCALE_TRAIN_GB (default 12) is trained by 8 process workers that read their own
#    byte ranges (no split step), each held to a tenth of the machine's memory
#    (--worker-memory-mb): every process's peak (bench/peak_rss.py: VmHWM of the master and of
#    each worker), the time, the objective; and liblinear on the same file (-s 0, C = 1/(N l2))
#    beside it, its time and peak, if it fits at all, its objective by `nimbus eval`.
#
# C. L1 Newton's working set against a worker's memory: the suite's Fashion-MNIST (binary, 2
#    process workers, l1 1e-3 and l2 1e-4), each worker's peak (VmHWM) beside its shard's CSR,
#    with no limit (the working columns copied) and under --worker-memory-mb SCALE_CAP_MB
#    (default 230: the copy does not fit, the rows are reordered in place), and the solve's
#    time and objective in each; SCALE_REPEAT runs of each, interleaved.
#
# The files are large: A needs about 2.2 x SCALE_BIG_GB of disk (the file and its shards,
# deleted after), B about SCALE_TRAIN_GB. Everything else stays in OUTDIR.
#
# usage: bench/data_at_scale.sh NIMBUS [OUTDIR]     (OUTDIR default /tmp/nimbus-bench-scale)
#   SCALE_PARTS="A B C"   which parts to run
set -euo pipefail
nimbus=$(realpath "${1:?usage: bench/data_at_scale.sh NIMBUS [OUTDIR]}")
out=${2:-/tmp/nimbus-bench-scale}
here=$(cd "$(dirname "$0")" && pwd)
parts=${SCALE_PARTS:-A B C}
mkdir -p "$out"
mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
big_gb=${SCALE_BIG_GB:-$(awk -v m="$mem_kb" 'BEGIN {printf "%.0f", 1.1 * m / 1024 / 1024 + 1}')}
train_gb=${SCALE_TRAIN_GB:-12}
l2=${SCALE_L2:-1e-4}
report="$out/data_at_scale.md"
: > "$report"
say() { echo "$*" | tee -a "$report"; }
# Wall seconds and peak MB of a command, its output in LOG.
timed() {
  local log=$1; shift
  /usr/bin/time -f "%e %M" -o "$log.time" "$@" > "$log" 2>&1 || { echo "failed: $* (see $log)" >&2; return 1; }
  awk '{printf "%.1f s, peak %.0f MB", $1, $2 / 1024}' "$log.time"
}
# Rows for a file of about GB gigabytes: `nimbus gen` writes about 15.1 bytes per entry at
# 20 entries a row over 1,000,000 features.
rows_for() { awk -v gb="$1" 'BEGIN {printf "%.0f", gb * 1e9 / (15.1 * 20)}'; }

say "# Data at scale ($(date -u +%Y-%m-%d), $(nproc) cores, $((mem_kb / 1024)) MB of memory)"
say ""
if [[ " $parts " == *" A "* ]]; then
  big="$out/big.svm"
  rows=$(rows_for "$big_gb")
  say "## A. A file larger than memory: $rows rows x 20 entries (about $big_gb GB)"
  say ""
  say "- gen: $(timed "$out/gen-big.log" "$nimbus" gen --rows "$rows" --cols 1000000 --nnz-per-row 20 --seed 7 --out "$big")"
  size=$(stat -c %s "$big")
  say "- the file: $((size / 1000000)) MB ($(awk -v s="$size" -v m="$mem_kb" 'BEGIN {printf "%.2f", s / (m * 1024)}') x this machine's memory)"
  say "- split --shards 8: $(timed "$out/split-big.log" "$nimbus" split --quiet --data "$big" --shards 8 --out "$out/big-shards")"
  say "  $(grep 'bytes per nonzero' "$out/split-big.log" || true)"
  # A model from the file's first 200,000 rows, to score the whole with.
  head -n 200000 "$big" > "$out/head.svm"
  "$nimbus" train --quiet --data "$out/head.svm" --l2 "$l2" --out "$out/head-model.json"
  say "- eval: $(timed "$out/eval-big.log" "$nimbus" eval --quiet --model "$out/head-model.json" --data "$big")"
  say "  $(tr '\n' ' ' < "$out/eval-big.log")"
  say "- predict: $(timed "$out/predict-big.log" "$nimbus" predict --quiet --model "$out/head-model.json" --data "$big" --out "$out/predictions.txt")"
  rm -rf "$big" "$out/big-shards" "$out/predictions.txt"
  say ""
fi

if [[ " $parts " == *" B "* ]]; then
  data="$out/train.svm"
  rows=$(rows_for "$train_gb")
  cap_mb=$((mem_kb / 1024 / 10))
  say "## B. $train_gb GB trained by 8 process workers reading their own ranges, each held to $cap_mb MB"
  say ""
  [ -f "$data" ] || "$nimbus" gen --rows "$rows" --cols 1000000 --nnz-per-row 20 --seed 8 --out "$data" > "$out/gen-train.log"
  say "- the file: $(( $(stat -c %s "$data") / 1000000 )) MB, $rows rows; l2 $l2"
  "$nimbus" train --data "$data" --l2 "$l2" --workers 8 --runtime process --worker-memory-mb "$cap_mb" \
    --summary-json "$out/train-summary.json" --out "$out/nimbus-model.json" > "$out/train.log" 2>&1 &
  train=$!
  python3 "$here/peak_rss.py" "$train" "$nimbus" 0.5 > "$out/train-peaks.txt"
  wait "$train" || { echo "nimbus train failed (see $out/train.log)" >&2; exit 1; }
  say "- nimbus: $(python3 -c "
import json; s = json.load(open('$out/train-summary.json'))
print('%.1f s (load %.1f s, setup %.1f s, solve %.1f s), %s after %d rounds, objective %.12g' % (
    s['load_seconds'] + s['setup_seconds'] + s['solve_seconds'], s['load_seconds'], s['setup_seconds'],
    s['solve_seconds'], s['termination'], s['rounds'], s['objective']))")"
  say "- peaks (VmHWM), every process:"
  sed 's/^/      /' "$out/train-peaks.txt" | tee -a "$report"
  n=$(python3 -c "import json; print(json.load(open('$out/train-summary.json'))['rows'])")
  c=$(awk -v n="$n" -v l="$l2" 'BEGIN {printf "%.17g", 1 / (n * l)}')
  if timed "$out/liblinear.log" liblinear-train -s 0 -c "$c" -e 0.01 -q "$data" "$out/liblinear.model" > "$out/liblinear.summary"; then
    say "- liblinear -s 0 -c $c -e 0.01: $(cat "$out/liblinear.summary"), objective $("$nimbus" eval --model "$out/liblinear.model" --data "$data" --l2 "$l2" --json | python3 -c 'import json,sys; print("%.12g" % json.load(sys.stdin)["objective"])')"
  else
    say "- liblinear -s 0 -c $c: did not finish ($(tail -1 "$out/liblinear.log"))"
  fi
fi
if [[ " $parts " == *" C "* ]]; then
  source "$here/data/build.sh"
  fashion=$(suite_data_file "$out" fashion)
  suite_build_data "$out" fashion "$nimbus" || { echo "cannot build $fashion" >&2; exit 1; }
  cap=${SCALE_CAP_MB:-230}
  say "## C. L1 Newton's working set against a worker's memory: Fashion-MNIST, 2 process workers"
  say ""
  say "| problem | limit | worker peaks (VmHWM) | solve | rounds | objective |"
  say "|---|---|---|---|---|---|"
  for run in $(seq 1 "${SCALE_REPEAT:-2}"); do
    for problem in "--l1 1e-3" "--l2 1e-4"; do
      for limit in 0 "$cap"; do
        args=(train --quiet --data "$fashion" $problem --workers 2 --runtime process --summary-json "$out/c.json")
        [ "$limit" = 0 ] || args+=(--worker-memory-mb "$limit")
        "$nimbus" "${args[@]}" > "$out/c.log" 2>&1 &
        train=$!
        python3 "$here/peak_rss.py" "$train" "$nimbus" 0.2 > "$out/c-peaks.txt"
        wait "$train" || { echo "nimbus train failed (see $out/c.log)" >&2; exit 1; }
        peaks=$(awk '/worker/ {printf "%s%s MB", sep, $(NF-1); sep=", "}' "$out/c-peaks.txt")
        say "| $problem | $([ "$limit" = 0 ] && echo none || echo "$limit MiB") | $peaks | $(python3 -c "
import json; s = json.load(open('$out/c.json'))
print('%.2f s | %d | %.12g' % (s['solve_seconds'], s['rounds'], s['objective']))") |"
      done
    done
  done
  say ""
  say "(each worker's shard: $(python3 -c "
import sys
rows = nnz = 0
for line in open('$fashion'):
    rows += 1; nnz += line.count(':')
print('%.1f MB of CSR, %d rows and %d nonzeros of doubles' % ((8 * rows / 2 + 12 * nnz / 2) / 1e6, rows / 2, nnz / 2))"))"
fi
echo "report: $report"
