#!/usr/bin/env bash
# Evaluation benchmark (issue 5): the simulator checked against real process runs on this
# machine, then the paper's figures predicted for Lambda. Everything in one run; the tables
# go to stdout and every file (profiles, scale runs, reports, plots) stays in $BENCH_DIR.
#
#   A. validation: `nimbus simulate calibrate` and `nimbus scale --runtime process` at
#      K = 1..16 on two problems (d = 2*10^4 and 10^5); `nimbus simulate --validate` prints
#      predicted against measured (the simulator must be within 20%)
#   B. this machine's own run, reported: a process run at K = 8 for 200 rounds with a trace,
#      `nimbus report` (cold starts, stragglers, where the rounds went)
#   C. the paper's figures on the Lambda platform: speedup and efficiency to K = 1024, the
#      cold-start share, and the communication share against d at K = 16, 64 and 256
#
# Usage: bench/evaluation.sh [NIMBUS]      (BENCH_DIR=DIR keeps the files and reuses the data;
#        PARTS="A C" runs some parts; QUICK=1 skips C's large calibration and the second
#        validation problem)
set -euo pipefail
nimbus=${1:-build/apps/nimbus}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
trap '[ -n "${BENCH_DIR:-}" ] || rm -rf "$work"' EXIT
quick=${QUICK:-0}
parts=${PARTS:-A B C}
part() { [[ " $parts " == *" $1 "* ]]; }

echo "nimbus evaluation benchmark: $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores; files in $work"

gen() {  # NAME ROWS COLS NNZ_PER_ROW
  [ -s "$work/$1.svm" ] || "$nimbus" gen --rows "$2" --cols "$3" --nnz-per-row "$4" --seed 3 --out "$work/$1.svm" > /dev/null
}

validate() {  # NAME L1
  local name=$1 l1=$2
  echo
  echo "== A. validation on $name ($(grep -c "" "$work/$name.svm") rows), l1 $l1"
  "$nimbus" simulate calibrate --data "$work/$name.svm" --l1 "$l1" --workers 1,2,4,8,16 --repeat 3 \
    --out "$work/$name-profile.json"
  "$nimbus" scale --data "$work/$name.svm" --l1 "$l1" --workers 1,2,4,8,16 --runtime process --repeat 3 --quiet \
    --out "$work/$name-scale"
  cat "$work/$name-scale/scale.txt"
  "$nimbus" simulate --profile "$work/$name-profile.json" --validate "$work/$name-scale/scale.json" \
    --out "$work/$name-validation" || true
}

gen small 50000 20000 30
if part A; then
  validate small 1e-4
  if [ "$quick" != 1 ]; then
    gen wide 200000 100000 40
    validate wide 3e-6
  fi
fi

if part B; then
  echo
  echo "== B. a process run at K = 8 on 'small', 200 rounds, reported"
  "$nimbus" train --data "$work/small.svm" --l1 1e-4 --workers 8 --runtime process --eps-rel 1e-5 --eps-abs 1e-9 \
    --max-iter 200 --trace "$work/small-k8.jsonl" --quiet
  "$nimbus" report "$work/small-k8.jsonl" --out "$work/small-k8-report"
fi

part C || exit 0
echo
echo "== C. the paper's figures on the Lambda platform"
if [ "$quick" != 1 ]; then
  gen large 1000000 10000 30
  "$nimbus" simulate calibrate --data "$work/large.svm" --l1 1e-5 --workers 1,2,4,8,16 --repeat 2 \
    --out "$work/large-profile.json"
  profile="$work/large-profile.json"
else
  [ -s "$work/small-profile.json" ] || "$nimbus" simulate calibrate --data "$work/small.svm" --l1 1e-4 --quiet \
    --out "$work/small-profile.json"
  profile="$work/small-profile.json"
fi
# The profile's problem (10^6 rows of 30 nonzeros) and ten and a hundred times more rows: the
# data per worker sets how much compute each round has to hide communication behind.
for rows in 1000000 10000000 100000000; do
  echo "-- speedup and efficiency, d = 10^4, $rows rows"
  "$nimbus" simulate --profile "$profile" --features 1e4 --rows "$rows" --nnz-per-row 30 \
    --workers 1,2,4,8,16,32,64,128,256,512,1024 --out "$work/lambda-speedup-$rows"
  echo "-- communication against d, $rows rows"
  "$nimbus" simulate --profile "$profile" --rows "$rows" --nnz-per-row 30 --workers 16,64,256 \
    --features 1e3,1e4,2e4,4e4,8e4,1.6e5,3.2e5,1e6,1e7 --out "$work/lambda-features-$rows"
done
