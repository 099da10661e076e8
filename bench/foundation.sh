#!/usr/bin/env bash
# Foundation benchmark (issue 2): nimbus against liblinear on one generated problem, in one run.
#
#   time to F <= F* (1 + 1e-4), load included, where F* is liblinear's objective at -e 1e-6:
#     liblinear-train -s 6    (the first of -e 1, 0.1, 0.01, ... that reaches the target)
#     nimbus train, 1 and 2 threads workers (--target-objective)
#   parse throughput: nimbus's reader against liblinear's loader (open to close of the file,
#     timed with strace), MB/s
#   peak memory of nimbus (2 workers) against the CSR size of the data
#
# Usage: bench/foundation.sh [NIMBUS] [ROWS COLS NNZ_PER_ROW L1]
set -euo pipefail
nimbus=${1:-build/apps/nimbus}
rows=${2:-200000} cols=${3:-100000} nnz=${4:-40} l1=${5:-3e-6}
repeats=${REPEATS:-3}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
trap '[ -n "${BENCH_DIR:-}" ] || rm -rf "$work"' EXIT
data="$work/train.svm"

field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" "$2" | tr -d '"'; }
objective() { "$nimbus" eval --model "$1" --data "$data" --l1 "$l1" --l2 0 --json > "$work/eval.json"; field objective "$work/eval.json"; }
# Median wall seconds of a command over $repeats runs; peak RSS (KB) of the last run in $work/rss.
median_seconds() {
  local times=()
  for _ in $(seq "$repeats"); do
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" > /dev/null 2> "$work/stderr.txt" || { cat "$work/stderr.txt" >&2; return 1; }
    times+=("$(cut -d' ' -f1 "$work/time.txt")")
    cut -d' ' -f2 "$work/time.txt" > "$work/rss"
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

echo "nimbus foundation benchmark: $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $repeats runs per figure (median)"
[ -s "$data" ] || "$nimbus" gen --rows "$rows" --cols "$cols" --nnz-per-row "$nnz" --seed 1 --out "$data" > /dev/null
bytes=$(stat -c %s "$data")
c=$(awk -v n="$rows" -v l="$l1" 'BEGIN { printf "%.17g", 1 / (n * l) }')
echo "data: nimbus gen --rows $rows --cols $cols --nnz-per-row $nnz --seed 1 ($((bytes / 1000000)) MB); l1 = $l1 (liblinear C = $c)"

liblinear-train -s 6 -c "$c" -e 1e-6 -q "$data" "$work/optimum.model"
fstar=$(objective "$work/optimum.model")
target=$(awk -v f="$fstar" 'BEGIN { printf "%.17g", f * (1 + 1e-4) }')
echo "F* = $fstar (liblinear -e 1e-6); target F*(1 + 1e-4) = $target"
echo

# liblinear: the loosest tolerance whose model reaches the target.
ll_time="" ll_eps=""
for eps in 1 0.1 0.01 0.001 0.0001 0.00001 0.000001; do
  liblinear-train -s 6 -c "$c" -e "$eps" -q "$data" "$work/ll.model"
  f=$(objective "$work/ll.model")
  if awk -v f="$f" -v t="$target" 'BEGIN { exit !(f <= t) }'; then
    ll_eps=$eps
    ll_time=$(median_seconds liblinear-train -s 6 -c "$c" -e "$eps" -q "$data" "$work/ll.model")
    break
  fi
done

declare -A nb_time nb_iter
for k in 1 2; do
  nb_time[$k]=$(median_seconds "$nimbus" train --data "$data" --l1 "$l1" --workers "$k" --target-objective "$target" \
    --summary-json "$work/summary$k.json" --quiet)
  [ "$(field termination "$work/summary$k.json")" = target_objective ] || { echo "nimbus K=$k did not reach the target" >&2; exit 1; }
  nb_iter[$k]=$(field iterations "$work/summary$k.json")
  [ "$k" = 2 ] && nb_rss=$(cat "$work/rss")
done
nb_load=$(field load_seconds "$work/summary2.json")

# liblinear's loader: from opening the data file to closing it.
strace --seccomp-bpf -f -ttt -e trace=openat,close -o "$work/strace.txt" \
  liblinear-train -s 6 -c "$c" -e 1000 -q "$data" /dev/null > /dev/null
ll_load=$(awk -v f="$data" 'index($0, f) && /openat/ { open = $2; fd = $NF; next }
  open && /close\(/ && $3 == "close(" fd ")" { print $2 - open; exit }' "$work/strace.txt")

nnz_total=$((rows * nnz))
csr_bytes=$((nnz_total * 12 + (rows + 1) * 8 + rows * 8))
echo "| measure | liblinear | nimbus, 1 worker | nimbus, 2 workers |"
echo "|---|---|---|---|"
printf "| time to F*(1+1e-4), load included | %.2f s (-e %s) | %.2f s (%s iterations) | %.2f s (%s iterations) |\n" \
  "$ll_time" "$ll_eps" "${nb_time[1]}" "${nb_iter[1]}" "${nb_time[2]}" "${nb_iter[2]}"
awk -v l="$ll_time" -v a="${nb_time[1]}" -v b="${nb_time[2]}" \
  'BEGIN { printf "| ratio to liblinear (target: 2 workers <= 2) | 1 | %.2f | %.2f |\n", a / l, b / l }'
awk -v b="$bytes" -v l="$ll_load" -v n="$nb_load" \
  'BEGIN { printf "| parse throughput (target: >= 3x liblinear) | %.0f MB/s (%.2f s) | %.0f MB/s (%.2f s), %.1fx | |\n", b / l / 1e6, l, b / n / 1e6, n, l / n }'
awk -v r="$nb_rss" -v c="$csr_bytes" \
  'BEGIN { printf "| peak memory, 2 workers (target: <= 1.5x CSR %.0f MB) | | | %.0f MB = %.2fx CSR |\n", c / 1e6, r * 1024 / 1e6, r * 1024 / c }'
