#!/usr/bin/env bash
# Evaluation benchmark (issue 5): the simulator checked against real process runs on this
# machine, then the paper's figures predicted for Lambda. Everything in one run; the tables
# go to stdout and every file (profiles, scale runs, reports, plots) stays in $BENCH_DIR.
# Parts A to C measure consensus ADMM on `nimbus gen` data (--algorithm admm, as their figures
# in docs/evaluation.md were made); part D both algorithms on real data.
#
#   A. validation: `nimbus simulate calibrate` and `nimbus scale --runtime process` at
#      K = 1..16 on two problems (d = 2*10^4 and 10^5); `nimbus simulate --validate` prints
#      predicted against measured (the simulator must be within 20%)
#   B. this machine's own run, reported: a process run at K = 8 for 200 rounds with a trace,
#      `nimbus report` (cold starts, stragglers, where the rounds went)
#   C. the paper's figures on the Lambda platform: speedup and efficiency to K = 1024, the
#      cold-start share, and the communication share against d at K = 16, 64 and 256
#   D. real data (issue 12): the suite's data sets nimbus did not make (Fashion-MNIST, Debian
#      packages, Zipf topics: bench/data/build.sh, cached in SOLVERS_DIR as bench/solvers.sh
#      keeps them) at their strong L1, calibrated with the default algorithm (Newton) and with
#      --algorithm admm at K = 1..16; on the Lambda platform at the data's own size and at 10x
#      and 100x its rows, K = 1..256: speedup and efficiency per solve and per round, the
#      communication and cold-start shares, $ per solve (a summary table at the end); where
#      the data uses far fewer features than its d (the hashed bag of words), once more at the
#      used count (the master's own vectors are d long); and every profile's predictions
#      against `nimbus scale --runtime process` at the same K on the same data (20%). With
#      BENCH_DIR, profiles and scale runs already there are reused.
#
# Usage: bench/evaluation.sh [NIMBUS]      (BENCH_DIR=DIR keeps the files and reuses the data;
#        PARTS="A C" runs some parts; QUICK=1 skips C's large calibration and the second
#        validation problem, and runs D on Zipf topics alone, K = 1..8, without validation;
#        SOLVERS_DIR=DIR: where the real data sets are, or are built, default
#        /tmp/nimbus-bench-solvers; REPEAT=N: solves per K on each side of a validation, the
#        fastest counting, default 3; docs/evaluation.md, "How much a solve varies here")
set -euo pipefail
nimbus=${1:-build/apps/nimbus}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
trap '[ -n "${BENCH_DIR:-}" ] || rm -rf "$work"' EXIT
quick=${QUICK:-0}
parts=${PARTS:-A B C D}
repeat=${REPEAT:-3}
part() { [[ " $parts " == *" $1 "* ]]; }

echo "nimbus evaluation benchmark: $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores; files in $work"

gen() {  # NAME ROWS COLS NNZ_PER_ROW
  [ -s "$work/$1.svm" ] || "$nimbus" gen --rows "$2" --cols "$3" --nnz-per-row "$4" --seed 3 --out "$work/$1.svm" > /dev/null
}

validate() {  # NAME L1
  local name=$1 l1=$2
  echo
  echo "== A. validation on $name ($(grep -c "" "$work/$name.svm") rows), l1 $l1"
  "$nimbus" simulate calibrate --data "$work/$name.svm" --l1 "$l1" --algorithm admm --workers 1,2,4,8,16 \
    --repeat "$repeat" --out "$work/$name-profile.json"
  "$nimbus" scale --data "$work/$name.svm" --l1 "$l1" --algorithm admm --workers 1,2,4,8,16 --runtime process \
    --repeat "$repeat" --quiet --out "$work/$name-scale"
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
  "$nimbus" train --data "$work/small.svm" --l1 1e-4 --algorithm admm --workers 8 --runtime process --eps-rel 1e-5 \
    --eps-abs 1e-9 --max-iter 200 --trace "$work/small-k8.jsonl" --quiet
  "$nimbus" report "$work/small-k8.jsonl" --out "$work/small-k8-report"
fi

if part C; then
  echo
  echo "== C. the paper's figures on the Lambda platform"
  if [ "$quick" != 1 ]; then
    gen large 1000000 10000 30
    "$nimbus" simulate calibrate --data "$work/large.svm" --l1 1e-5 --algorithm admm --workers 1,2,4,8,16 --repeat 2 \
      --out "$work/large-profile.json"
    profile="$work/large-profile.json"
  else
    [ -s "$work/small-profile.json" ] || "$nimbus" simulate calibrate --data "$work/small.svm" --l1 1e-4 \
      --algorithm admm --quiet --out "$work/small-profile.json"
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
fi

part D || exit 0
echo
echo "== D. real data: Newton and ADMM calibrated on the suite's data sets, predicted on Lambda"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=data/build.sh
source "$here/data/build.sh"
solvers_dir=${SOLVERS_DIR:-/tmp/nimbus-bench-solvers}
# The suite's strongly regularized L1 case of each data set (docs/benchmarks.md).
declare -A real_l1=([fashion]=1e-3 [debian]=1e-5 [zipf]=1e-5)
if [ "$quick" = 1 ]; then real_sets=(zipf); real_ks=1,2,4,8; real_repeat=1
else real_sets=(fashion debian zipf); real_ks=1,2,4,8,16; real_repeat=$repeat; fi
lambda_ks=1,2,4,8,16,32,64,128,256
# The features a LIBSVM file uses (cached beside it in FILE.used).
used_features() {
  [ -s "$1.used" ] && [ "$1.used" -nt "$1" ] ||
    awk '{ for (i = 2; i <= NF; i++) { split($i, a, ":"); used[a[1]] = 1 } } END { print length(used) }' "$1" > "$1.used"
  cat "$1.used"
}

# One row per data set, algorithm and size: rounds and time at K = 1, and at K = 64 and 256 the
# speedup and efficiency per solve and per round, the communication and cold-start shares, and
# $ per solve (from simulate.json: one object per line).
summary="| data | algorithm | rows | rounds K=1/64/256 | K=1 s | K=64: speedup, eff., eff./round, comm., cold | K=256: speedup, eff., eff./round, comm., cold | \$/solve K=1/64/256 |
|---|---|---|---|---|---|---|---|"
summarize() {  # NAME ALGORITHM ROWS SIMULATE.JSON
  summary+=$'\n'$(awk -v name="$1" -v alg="$2" -v rows="$3" '
    function get(key,   m) { match($0, "\"" key "\": [^,}]*"); return substr($0, RSTART + length(key) + 4, RLENGTH - length(key) - 4) }
    /"workers"/ { k = get("workers"); r[k] = get("rounds"); t[k] = get("total_seconds"); s[k] = get("speedup");
      e[k] = get("efficiency"); re[k] = get("round_efficiency"); c[k] = get("communication_share");
      cs[k] = get("cold_start_share"); d[k] = get("dollars") }
    function at(k) { return sprintf("%.1fx, %.2f, %.2f, %.0f%%, %.0f%%", s[k], e[k], re[k], 100 * c[k], 100 * cs[k]) }
    END { printf "| %s | %s | %s | %d/%d/%d | %.2f | %s | %s | %.4f/%.4f/%.4f |", name, alg, rows, r[1], r[64], r[256],
      t[1], at(64), at(256), d[1], d[64], d[256] }' "$4")
}

# Predicted against measured: `nimbus scale --runtime process` at the calibration's K on the
# data itself, and `nimbus simulate --validate` (one row per K in the table at the end).
validation="| data | algorithm | K | rounds measured, predicted | ms/round measured | predicted | error | time to solution measured | predicted | error |
|---|---|---|---|---|---|---|---|---|---|"
validate_real() {  # NAME DATA L1 ALGORITHM PROFILE
  local run=$work/real-$1-$4-scale
  [ -s "$run/scale.json" ] || "$nimbus" scale --data "$2" --l1 "$3" --algorithm "$4" --workers "$real_ks" \
    --runtime process --repeat "$real_repeat" --quiet --out "$run"
  "$nimbus" simulate --profile "$5" --validate "$run/scale.json" --out "$run/validation" > "$run/validation.txt" || true
  cat "$run/validation.txt"
  validation+=$'\n'$(awk -v name="$1" -v alg="$4" '$1 ~ /^[0-9]+$/ && NF == 9 {
    printf "| %s | %s | %s | %s, %s | %s | %s | %s | %s s | %s s | %s |\n", name, alg, $1, $2, $3, $4, $5, $6, $7, $8, $9 }' \
    "$run/validation.txt")
}

for name in "${real_sets[@]}"; do
  if ! suite_build_data "$solvers_dir" "$name" "$nimbus"; then
    echo "could not build the $name data set: left out"
    continue
  fi
  data=$(suite_data_file "$solvers_dir" "$name")
  l1=${real_l1[$name]}
  for algorithm in newton admm; do
    profile=$work/real-$name-$algorithm-profile.json
    echo
    echo "-- $name ($(basename "$data")), l1 $l1, --algorithm $algorithm: calibration at K = $real_ks"
    if [ -s "$profile" ]; then
      echo "(the profile of an earlier run, $profile)"
    else
      "$nimbus" simulate calibrate --data "$data" --l1 "$l1" --algorithm "$algorithm" --workers "$real_ks" \
        --repeat "$real_repeat" --out "$profile"
    fi
    if [ "$quick" != 1 ]; then
      echo "-- $name, $algorithm: predicted against nimbus scale --runtime process at K = $real_ks"
      validate_real "$name" "$data" "$l1" "$algorithm" "$profile"
    fi
    rows=$(suite_json_field "$profile" rows) cols=$(suite_json_field "$profile" cols) nnz=$(suite_json_field "$profile" nnz)
    per_row=$(awk "BEGIN { printf \"%.6f\", $nnz / $rows }")
    used=$(used_features "$data")
    dims=("$cols")
    [ $((used * 10)) -lt $((cols * 9)) ] && dims+=("$used")
    for times in 1 10 100; do
      for d in "${dims[@]}"; do
        echo "-- $name, $algorithm, Lambda: $times x $rows rows, d = $d ($used of $cols features used), $per_row nonzeros per row"
        out=$work/real-$name-$algorithm-lambda-x$times-d$d
        "$nimbus" simulate --profile "$profile" --features "$d" --rows $((rows * times)) --nnz-per-row "$per_row" \
          --workers "$lambda_ks" --out "$out" --no-plots
        summarize "$name$([ "$d" = "$cols" ] || echo " (d = $d used)")" "$algorithm" "$times x $rows" "$out/simulate.json"
      done
    done
  done
done

if [ "$quick" != 1 ]; then
  echo
  echo "-- D. the simulator against process runs on this machine (local platform; tolerance 20%)"
  echo "$validation"
fi

echo
echo "-- D. summary (Lambda platform; per solve: speedup and efficiency of the time to solution against K = 1;"
echo "   eff./round: of the time per round; comm.: the share communication adds; cold: launches and cold starts)"
echo "$summary"
