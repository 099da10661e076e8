#!/usr/bin/env bash
# What an instruction-set level costs: the same `nimbus train` runs with nimbus binaries built
# for different -march levels (e.g. -march=native against the portable baseline that
# `nimbus lambda package` ships), on the data nimbus did not make (bench/data/build.sh).
#
# Usage: bench/target_levels.sh LABEL=NIMBUS [LABEL=NIMBUS ...]
#   e.g. bench/target_levels.sh native=/tmp/native/apps/nimbus baseline=build/apps/nimbus
# Every case runs once with each binary in turn, REPEATS times over (so that the load of a shared
# machine falls on all binaries alike); the table shows the median solve time (summary's
# solve_seconds, the part the kernels decide), the median wall time of the whole process, and both
# as ratios to the first binary. Rounds and objectives show whether the binaries compute the same.
#   REPEATS=N              rounds over all binaries (default 5)
#   LEVELS_DATA_DIR=DIR    where the data sets are (built there if missing; default
#                          /tmp/nimbus-bench-solvers, shared with bench/solvers.sh)
#   LEVELS_WORKERS=K       --workers (default 2, threads)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/target_levels.sh LABEL=NIMBUS [LABEL=NIMBUS ...]" >&2; exit 1; }
repeats=${REPEATS:-5}
data_dir=${LEVELS_DATA_DIR:-/tmp/nimbus-bench-solvers}
workers=${LEVELS_WORKERS:-2}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=data/build.sh
source "$here/data/build.sh"

labels=() binaries=()
for arg in "$@"; do
  labels+=("${arg%%=*}") binaries+=("${arg#*=}")
  [ -x "${arg#*=}" ] || { echo "target_levels.sh: ${arg#*=} is not an executable" >&2; exit 1; }
done
cases=("fashion --l1 1e-4" "fashion --l2 1e-4" "debian --l1 1e-4" "debian --l2 1e-4" "zipf --l1 1e-4"
  "zipf --l2 1e-4" "debian --l1 1e-5 --algorithm admm")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" "$2" | tr -d '"'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

for c in "${!cases[@]}"; do
  name=${cases[$c]%% *}
  file=$(suite_data_file "$data_dir" "$name")
  [ -s "$file" ] || suite_build_data "$data_dir" "$name" "${binaries[0]}"
done

declare -A solve wall rounds objective
for ((r = 1; r <= repeats; ++r)); do
  for c in "${!cases[@]}"; do
    read -r name flags <<< "${cases[$c]}"
    file=$(suite_data_file "$data_dir" "$name")
    for b in "${!binaries[@]}"; do
      # shellcheck disable=SC2086
      /usr/bin/time -f %e -o "$work/time" "${binaries[$b]}" train --data "$file" $flags --workers "$workers" \
        --summary-json "$work/s.json" --quiet > /dev/null
      solve[$c,$b]+=" $(field solve_seconds "$work/s.json")"
      wall[$c,$b]+=" $(tail -1 "$work/time")"
      rounds[$c,$b]=$(field rounds "$work/s.json")
      objective[$c,$b]=$(field objective "$work/s.json")
    done
  done
  echo "target_levels.sh: round $r of $repeats done" >&2
done

echo "nimbus at instruction-set levels: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, --workers $workers (threads)," \
  "median of $repeats interleaved runs; ratios to ${labels[0]}"
echo
header="| case |" rule="|---|"
for label in "${labels[@]}"; do header+=" $label: solve | wall | rounds |"; rule+="---|---|---|"; done
echo "$header"
echo "$rule"
for c in "${!cases[@]}"; do
  row="| ${cases[$c]} |"
  # shellcheck disable=SC2086
  base_solve=$(median ${solve[$c,0]}) base_wall=$(median ${wall[$c,0]})
  for b in "${!binaries[@]}"; do
    # shellcheck disable=SC2086
    s=$(median ${solve[$c,$b]}) w=$(median ${wall[$c,$b]})
    if [ "$b" = 0 ]; then row+=" $(printf '%.3f s' "$s") | $(printf '%.2f s' "$w") |"
    else row+=" $(printf '%.3f s (%.3f)' "$s" "$(awk "BEGIN { print $s / $base_solve }")") | $(printf '%.2f s (%.3f)' "$w" "$(awk "BEGIN { print $w / $base_wall }")") |"; fi
    row+=" ${rounds[$c,$b]} |"
  done
  echo "$row"
done
echo
echo "objectives (the last run of each):"
for c in "${!cases[@]}"; do
  line="  ${cases[$c]}:"
  for b in "${!binaries[@]}"; do line+=" ${labels[$b]} ${objective[$c,$b]}"; done
  echo "$line"
done
