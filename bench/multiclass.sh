#!/usr/bin/env bash
# One-vs-rest on the 10 classes of Fashion-MNIST (60,000 x 784; bench/data/fashion_mnist.py
# --multiclass), L1: nimbus against liblinear, which trains the same ten binary problems one
# after another.
#
#   F*_c      per class c, the smaller of two references: liblinear-train -s 6 -e $MC_FSTAR_EPS
#             (default 1e-7) and nimbus train --gradient-tolerance 1e-10; a model's F_c is
#             `nimbus eval --l1 L --json`'s class_objectives (each class's own binary problem).
#   liblinear the first -e of 0.1, 0.01, ..., 1e-7 whose model has every F_c <= F*_c (1 + 1e-4):
#             wall time of the whole process, load included.
#   nimbus    `nimbus train --data FILE --l1 L --workers K` with every other option default
#             (threads, auto algorithm, the default stop test): wall time of the whole process,
#             and whether every class reached F*_c (1 + 1e-4). If the default stop leaves a class
#             short, the run is repeated with --target-objective sum_c F*_c (1 + 1e-5) and shown so.
# Times are medians of $REPEATS (default 3). The table goes to stdout and OUTDIR/multiclass.md.
#
# Usage: bench/multiclass.sh NIMBUS [OUTDIR]     (OUTDIR default /tmp/nimbus-bench-solvers)
#   MC_LAMBDA=1e-4   the L1 weight       MC_KS="1 2"   worker counts      REPEATS=3
set -euo pipefail
nimbus_source=${1:?usage: bench/multiclass.sh NIMBUS [OUTDIR]}
out=${2:-/tmp/nimbus-bench-solvers}
lambda=${MC_LAMBDA:-1e-4}
fstar_eps=${MC_FSTAR_EPS:-1e-7}
repeats=${REPEATS:-3}
read -r -a ks <<< "${MC_KS:-1 2}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=data/build.sh
source "$here/data/build.sh"
mkdir -p "$out/bin" "$out/multiclass"
cp "$nimbus_source" "$out/bin/nimbus-mc.tmp" && mv "$out/bin/nimbus-mc.tmp" "$out/bin/nimbus-mc"
nimbus=$out/bin/nimbus-mc
work=$out/multiclass
log() { echo "multiclass.sh: $*" >&2; }
calc() { awk "BEGIN { $1 }"; }

suite_build_data "$out" fashion10 "$nimbus"
data=$(suite_data_file "$out" fashion10)
rows=$(wc -l < "$data")
c=$(calc "printf \"%.17g\", 1 / ($rows * $lambda)")

# Each class's objective of a model (either format), one per line.
class_objectives() {
  "$nimbus" eval --model "$1" --data "$data" --l1 "$lambda" --l2 0 --json |
    sed -n 's/.*"class_objectives":\[\([^]]*\)\].*/\1/p' | tr ',' '\n'
}
# Whether every class of a model is within 1e-4 of F*_c (fstar.txt): "yes", or the worst gap.
reaches() {
  class_objectives "$1" > "$work/f.txt"
  paste "$work/f.txt" "$work/fstar.txt" | awk '{ gap = ($1 - $2) / $2; if (gap > worst) worst = gap }
    END { if (worst <= 1e-4) print "yes"; else printf "no (worst %.1e)\n", worst }'
}
seconds() {  # wall seconds of one run of a command
  /usr/bin/time -f %e -o "$work/time.txt" "$@" > /dev/null 2> "$work/stderr.txt" || { cat "$work/stderr.txt" >&2; return 1; }
  tail -1 "$work/time.txt"
}
median_seconds() {
  local times=() i
  for ((i = 0; i < repeats; i++)); do times+=("$(seconds "$@")"); done
  printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# ---- F*_c ----------------------------------------------------------------------------------------
cache=$work/fstar-$lambda-e$fstar_eps.txt
if [ ! -s "$cache" ] || [ "$data" -nt "$cache" ]; then
  log "F*: liblinear-train -s 6 -c $c -e $fstar_eps, and nimbus train --gradient-tolerance 1e-10"
  liblinear-train -s 6 -c "$c" -e "$fstar_eps" -q "$data" "$work/fstar.model" > /dev/null
  "$nimbus" train --quiet --data "$data" --l1 "$lambda" --gradient-tolerance 1e-10 --out "$work/fstar-nimbus.json"
  paste <(class_objectives "$work/fstar.model") <(class_objectives "$work/fstar-nimbus.json") |
    awk '{ print ($1 < $2 ? $1 : $2) }' > "$cache"
fi
cp "$cache" "$work/fstar.txt"
fstar_sum=$(awk '{ s += $1 } END { printf "%.17g", s }' "$work/fstar.txt")

# ---- liblinear -----------------------------------------------------------------------------------
ll_time="" ll_eps=""
for eps in 0.1 0.01 0.001 0.0001 0.00001 0.000001 0.0000001; do
  liblinear-train -s 6 -c "$c" -e "$eps" -q "$data" "$work/ll.model" > /dev/null
  if [ "$(reaches "$work/ll.model")" = yes ]; then
    ll_eps=$eps
    ll_time=$(median_seconds liblinear-train -s 6 -c "$c" -e "$eps" -q "$data" "$work/ll.model")
    break
  fi
done
[ -n "$ll_time" ] || { log "liblinear reached no class within 1e-4 up to -e 1e-7"; exit 1; }

# ---- nimbus --------------------------------------------------------------------------------------
table="| runner | stop | every class within 1e-4 | wall (load included) | / liblinear |
|---|---|---|---|---|
| liblinear-train -s 6 | -e $ll_eps (the first of 0.1, 0.01, ... that reaches it) | yes | $(printf '%.2f s' "$ll_time") | 1.00 |"
for k in "${ks[@]}"; do
  stop="default" flags=()
  "$nimbus" train --quiet --data "$data" --l1 "$lambda" --workers "$k" --out "$work/nimbus.json"
  reached=$(reaches "$work/nimbus.json")
  if [ "$reached" != yes ]; then
    target=$(calc "printf \"%.17g\", $fstar_sum * (1 + 1e-5)")
    stop="--target-objective sum F*_c (1 + 1e-5) (default: $reached)" flags=(--target-objective "$target")
    "$nimbus" train --quiet --data "$data" --l1 "$lambda" --workers "$k" "${flags[@]}" --out "$work/nimbus.json"
    reached=$(reaches "$work/nimbus.json")
  fi
  t=$(median_seconds "$nimbus" train --quiet --data "$data" --l1 "$lambda" --workers "$k" "${flags[@]}" --out "$work/nimbus.json")
  table+="
| nimbus K = $k (threads) | $stop | $reached | $(printf '%.2f s' "$t") | $(calc "printf \"%.2f\", $t / $ll_time") |"
done
{
  echo "One-vs-rest, Fashion-MNIST 10 classes ($rows x 784), L1 $lambda (liblinear -c $c), F*_c from -e $fstar_eps; medians of $repeats"
  echo
  echo "$table"
} | tee "$out/multiclass.md"
