#!/usr/bin/env bash
# The rows behind `--algorithm auto`'s choice of the column method for train and path (issue 32;
# src/api/solve.cpp and path.cpp, docs/benchmarks.md "auto chooses the column method"): one block
# of columns on this process's threads (--algorithm columns, --workers not given) against Newton
# on its default workers (--algorithm newton), with and without an intercept, on the suite's
# data (bench/data/build.sh). One run each, whole process (load included), in one sitting:
#   train  nimbus train --data FILE --l1 L [--intercept] --algorithm A --target-objective T,
#          T = F*(1 + 1e-4), F* from --algorithm columns --workers 1 --gradient-tolerance 1e-10
#          (cached in OUTDIR/auto per case)
#   path   nimbus path --data FILE [--intercept] --algorithm A (its defaults: 20 points)
# The table goes to stdout and to OUTDIR/auto/auto_columns.md.
#
# Usage: bench/auto_columns.sh NIMBUS [OUTDIR]   (OUTDIR default /tmp/nimbus-bench-solvers)
#   AUTO_DATA="debian zipf fashion"   the data sets (default: these three)
#   AUTO_INTERCEPT="yes no"           with an intercept, without, or both (default)
set -euo pipefail
nimbus=${1:?usage: bench/auto_columns.sh NIMBUS [OUTDIR]}
out=${2:-/tmp/nimbus-bench-solvers}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=data/build.sh
source "$here/data/build.sh"
[ -x "$nimbus" ] || { echo "auto_columns.sh: no nimbus binary at $nimbus" >&2; exit 1; }
work=$out/auto
mkdir -p "$work"
declare -A strengths=([debian]="1e-5 1e-6" [zipf]="1e-5 1e-6" [fashion]="1e-3 1e-5")
declare -A took=()  # seconds by algorithm, of the case at hand

# Wall seconds of one run of a command (its output into $work/last.txt), or "fail".
seconds_of() {
  if /usr/bin/time -f %e -o "$work/time.txt" "$@" > "$work/last.txt" 2>&1; then tail -1 "$work/time.txt"; return; fi
  tail -3 "$work/last.txt" >&2
  echo fail
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

rows=()
for name in ${AUTO_DATA:-debian zipf fashion}; do
  suite_build_data "$out" "$name" "$nimbus"
  file=$(suite_data_file "$out" "$name")
  for intercept in ${AUTO_INTERCEPT:-yes no}; do
    flag=(); [ "$intercept" = yes ] && flag=(--intercept)
    for l1 in ${strengths[$name]}; do
      fstar=$work/fstar-$name-$l1-$intercept.json
      if [ ! -s "$fstar" ]; then
        echo "auto_columns.sh: F* of $name, l1 $l1, intercept $intercept" >&2
        "$nimbus" train --quiet --data "$file" --l1 "$l1" "${flag[@]}" --algorithm columns --workers 1 \
          --gradient-tolerance 1e-10 --max-iter 3000 --summary-json "$fstar.tmp" > /dev/null
        mv "$fstar.tmp" "$fstar"
      fi
      target=$(awk -v f="$(suite_json_field "$fstar" objective)" 'BEGIN { printf "%.12g", f * (1 + 1e-4) }')
      for algorithm in columns newton; do
        echo "auto_columns.sh: train $name l1 $l1 intercept $intercept, $algorithm" >&2
        took[$algorithm]=$(seconds_of "$nimbus" train --quiet --data "$file" --l1 "$l1" "${flag[@]}" \
          --algorithm "$algorithm" --target-objective "$target")
      done
      rows+=("| $name | train l1 $l1 | $intercept | ${took[columns]} | ${took[newton]} | $(ratio "${took[columns]}" "${took[newton]}") |")
    done
    for algorithm in columns newton; do
      echo "auto_columns.sh: path $name intercept $intercept, $algorithm" >&2
      took[$algorithm]=$(seconds_of "$nimbus" path --quiet --no-plots --data "$file" "${flag[@]}" \
        --algorithm "$algorithm" --out "$work/path-$name-$intercept-$algorithm")
    done
    rows+=("| $name | path, 20 points | $intercept | ${took[columns]} | ${took[newton]} | $(ratio "${took[columns]}" "${took[newton]}") |")
  done
done

{
  echo "auto's column rule: one block of columns against Newton's default workers, whole process, seconds ($(date -u +%F))"
  echo
  echo "| data | work | intercept | columns | newton | columns / newton |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$work/auto_columns.md"
