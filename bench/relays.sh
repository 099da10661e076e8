#!/bin/bash
# Relays on the Lambda platform model (issue 31): the suite's text sets (Debian packages, Zipf
# topics), each calibrated with Newton (the default) on this machine, predicted at 100x and
# 1,000x their rows for K = 1..1024, in the star, through relay trees of fanout F (no node,
# the master included, with more than F children; nimbus train --relays, --relay-fanout) and
# through the storage reduction (nimbus simulate --storage-reduction: S3, LambdaML's
# ScatterReduce).
#
#   bench/relays.sh NIMBUS [FANOUTS]      FANOUTS: default "0 8 16 storage" (0: the star)
#
# BENCH_DIR (default /tmp/nimbus-bench-relays) keeps the profiles; SOLVERS_DIR the data sets
# (bench/data/build.sh). Prints one table row per set, size and fanout: the time to solution
# and efficiency against the best K = 1 time, where the time stops falling, and $ per solve.
set -euo pipefail
nimbus=${1:?usage: bench/relays.sh NIMBUS [FANOUTS]}
fanouts=${2:-0 8 16 storage}
work=${BENCH_DIR:-/tmp/nimbus-bench-relays}
solvers_dir=${SOLVERS_DIR:-/tmp/nimbus-bench-solvers}
mkdir -p "$work"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=data/build.sh
source "$here/data/build.sh"
declare -A l1=([debian]=1e-5 [zipf]=1e-5)
ks=1,2,4,8,16,32,64,128,256,512,1024

table="| data | rows | fanout | K=1 s | K=16 s, eff. | K=64 s, eff., comm. | K=256 s, eff. | K=1024 s | fastest K | speedup at 64 | \$/solve K=64 |
|---|---|---|---|---|---|---|---|---|---|---|"
row() {  # NAME ROWS FANOUT SIMULATE.JSON BEST_K1_SECONDS
  table+=$'\n'$(awk -v name="$1" -v rows="$2" -v fanout="$3" -v best="$5" '
    function get(key,   m) { match($0, "\"" key "\": [^,}]*"); return substr($0, RSTART + length(key) + 4, RLENGTH - length(key) - 4) }
    /"workers"/ { k = get("workers") + 0; t[k] = get("total_seconds") + 0; c[k] = get("communication_share") + 0; d[k] = get("dollars") + 0
      if (fastest == "" || t[k] < t[fastest]) fastest = k }
    function eff(k) { return best / (k * t[k]) }
    END { printf "| %s | %s | %s | %.1f | %.1f, %.2f | %.1f, %.2f, %.0f%% | %.1f, %.2f | %.1f | %d | %.1f | %.4f |",
      name, rows, fanout == "0" ? "star" : fanout, t[1], t[16], eff(16), t[64], eff(64), 100 * c[64], t[256], eff(256),
      t[1024], fastest, best / t[64], d[64] }' "$4")
}

for name in debian zipf; do
  suite_build_data "$solvers_dir" "$name" "$nimbus" || { echo "could not build the $name data set: left out"; continue; }
  data=$(suite_data_file "$solvers_dir" "$name")
  profile=$work/$name-newton-profile.json
  [ -s "$profile" ] || "$nimbus" simulate calibrate --data "$data" --l1 "${l1[$name]}" --algorithm newton \
    --workers 1,2,4,8,16 --repeat 2 --out "$profile"
  rows=$(suite_json_field "$profile" rows) cols=$(suite_json_field "$profile" cols) nnz=$(suite_json_field "$profile" nnz)
  per_row=$(awk "BEGIN { printf \"%.6f\", $nnz / $rows }")
  for times in 100 1000; do
    best=""
    for fanout in $fanouts; do
      out=$work/$name-x$times-fanout$fanout
      topology=(--relay-fanout "$fanout")
      [ "$fanout" = storage ] && topology=(--storage-reduction)
      "$nimbus" simulate --profile "$profile" --platform lambda --features "$cols" --rows $((rows * times)) \
        --nnz-per-row "$per_row" --workers "$ks" "${topology[@]}" --out "$out" --no-plots --quiet
      k1=$(awk '/"workers": 1,/ { match($0, /"total_seconds": [^,]*/); print substr($0, RSTART + 17, RLENGTH - 17) }' \
        "$out/simulate.json")
      best=${best:-$k1}
      best=$(awk -v a="$best" -v b="$k1" 'BEGIN { print (b < a ? b : a) }')
    done
    for fanout in $fanouts; do
      row "$name" "$times x $rows" "$fanout" "$work/$name-x$times-fanout$fanout/simulate.json" "$best"
    done
  done
done

echo "Lambda platform model (docs/evaluation.md), Newton profiles of this machine; efficiency per solve against the"
echo "best K = 1 time; comm.: the share communication adds to the solve"
echo "$table"
# Every K, each fanout beside the star: seconds to solution and dollars per solve.
for name in debian zipf; do
  for times in 100 1000; do
    [ -s "$work/$name-x$times-fanout0/simulate.json" ] || continue
    echo
    echo "$name at ${times}x its rows: seconds to solution, \$ per solve"
    /usr/bin/python3 - "$work" "$name" "$times" $fanouts <<'PY'
import json, sys
work, name, times, fanouts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
runs = {f: {p["workers"]: p for p in json.load(open(f"{work}/{name}-x{times}-fanout{f}/simulate.json"))} for f in fanouts}
print("| K | " + " | ".join({"0": "star", "storage": "storage (S3)"}.get(f, f"fanout {f}") for f in fanouts) + " |")
print("|---" * (len(fanouts) + 1) + "|")
for k in sorted(runs[fanouts[0]]):
    cells = [f"{runs[f][k]['total_seconds']:.1f} s, ${runs[f][k]['dollars']:.4f}" for f in fanouts]
    print(f"| {k} | " + " | ".join(cells) + " |")
PY
  done
done
