#!/usr/bin/env bash
# Relays on capped links, measured and predicted (issue 31): the master, R relays and K worker
# processes each in a network namespace of its own (tests/support/netns.sh), every link capped
# each way by tc tbf (the master's at MASTER_MBIT, each worker's at WORKER_MBIT, each relay's at
# RELAY_MBIT).
# The star and each relay topology train the same shards of a suite set nimbus did not make
# (SET: debian, the default, Debian package descriptions; or zipf, two Zipf topics;
# bench/data/build.sh) with the defaults (distributed Newton);
# `nimbus simulate` predicts the same runs from the set's Newton profile on the same links
# (calibrated at each message precision). Prints ms per round measured and predicted, and the
# bytes through the master's link.
#
#   sudo bench/relays_netns.sh [NIMBUS]     (root: it makes namespaces)
#
# K (default 16), MASTER_MBIT (200), WORKER_MBIT (50), RELAY_MBIT (MASTER_MBIT), TOPOLOGIES
# (default "0 2 4": relays; 0 is the star) and PRECISIONS (default "float64 float32":
# --message-precision) choose the runs. BENCH_DIR (default /tmp/nimbus-bench-relays) keeps the
# profile, as bench/relays.sh does; SOLVERS_DIR (default /tmp/nimbus-bench-solvers) the data.
set -euo pipefail
nimbus=$(realpath "${1:-build/apps/nimbus}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
k=${K:-16} master_mbit=${MASTER_MBIT:-200} worker_mbit=${WORKER_MBIT:-50} topologies=${TOPOLOGIES:-0 2 4}
relay_mbit=${RELAY_MBIT:-$master_mbit} precisions=${PRECISIONS:-float64 float32}
work=${BENCH_DIR:-/tmp/nimbus-bench-relays}
solvers_dir=${SOLVERS_DIR:-/tmp/nimbus-bench-solvers}
l1=1e-5
"$here/../tests/support/netns.sh" check
mkdir -p "$work"
# shellcheck source=data/build.sh
source "$here/data/build.sh"
set_name=${SET:-debian}
suite_build_data "$solvers_dir" "$set_name" "$nimbus"
data=$(suite_data_file "$solvers_dir" "$set_name")
profile_of() {  # PRECISION: the set's Newton profile with messages at that precision
  local profile=$work/$set_name-newton-profile.json
  [ "$1" = float64 ] || profile=$work/$set_name-newton-$1-profile.json
  [ -s "$profile" ] || "$nimbus" simulate calibrate --data "$data" --l1 "$l1" --algorithm newton \
    --message-precision "$1" --workers 1,2,4,8,16 --repeat 2 --out "$profile" >&2
  echo "$profile"
}
max_relays=0
for r in $topologies; do ((r > max_relays)) && max_relays=$r; done
prefix="nb$$"
run=$(mktemp -d)
trap '"$here/../tests/support/netns.sh" down "$prefix"; rm -rf "$run"' EXIT
"$here/../tests/support/netns.sh" up "$prefix" "$k" "$max_relays" "$master_mbit" "$worker_mbit" "$relay_mbit"
"$nimbus" split --data "$data" --shards "$k" --out "$run/shards" > /dev/null
hosts=$(seq -s, -f "$prefix-w%g" 1 "$k")
relay_hosts=$(seq -s, -f "$prefix-r%g" 1 "$max_relays")

echo "nimbus relays on capped links: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores; $data, l1 $l1; K = $k worker"
echo "processes; links each way: master $master_mbit Mbit/s, relays $relay_mbit Mbit/s, workers $worker_mbit Mbit/s (tc tbf)"
echo
echo "| topology | messages | rounds | ms/round measured | predicted | error | x the float64 star's round | MB/round at the master | objective |"
echo "|---|---|---|---|---|---|---|---|---|"
star_ms=""
for precision in $precisions; do
profile=$(profile_of "$precision")
for relays in $topologies; do
  topology=(--workers "$k")
  name="star"
  fanout=0
  if ((relays > 0)); then
    topology+=(--relays "$relays" --relay-workers command --relay-hosts "$(cut -d, -f1-"$relays" <<< "$relay_hosts")")
    name="$relays relays of $((k / relays))"
    fanout=$(((k + relays - 1) / relays))  # simulate's fan-in min(F, ceil(K/F)) = relays for F = K/relays
  fi
  ip netns exec "$prefix-m" "$nimbus" train --quiet --data "$run/shards" --l1 "$l1" "${topology[@]}" \
    --runtime command --hosts "$hosts" --launch "ip netns exec {host} $nimbus worker {args}" \
    --listen tcp://10.77.0.1:5601 --message-precision "$precision" --summary-json "$run/$relays.json" \
    --out "$run/$relays.model"
  rounds=$(suite_json_field "$run/$relays.json" rounds)
  measured=$(awk -v s="$(suite_json_field "$run/$relays.json" solve_seconds)" -v r="$rounds" 'BEGIN { printf "%.1f", 1e3 * s / r }')
  bytes=$(awk -v a="$(suite_json_field "$run/$relays.json" bytes_sent)" -v b="$(suite_json_field "$run/$relays.json" bytes_received)" \
    -v r="$rounds" 'BEGIN { printf "%.2f", (a + b) / r / 1e6 }')
  "$nimbus" simulate --profile "$profile" --platform lambda --master-gbps "$(awk "BEGIN { print $master_mbit / 1000 }")" \
    --worker-mbps "$worker_mbit" --relay-host-gbps "$(awk "BEGIN { print $relay_mbit / 1000 }")" --latency-ms 0.05 \
    --jitter 0 --straggler-probability 0 --workers "$k" --relay-fanout "$fanout" \
    --features "$(suite_json_field "$profile" cols)" --rows "$(suite_json_field "$profile" rows)" --out "$run/sim$relays" --no-plots --quiet
  predicted=$(/usr/bin/python3 -c "import json, sys; print('%.1f' % (1e3 * json.load(open(sys.argv[1]))[0]['round_seconds']))" \
    "$run/sim$relays/simulate.json")
  star_ms=${star_ms:-$measured}
  error=$(awk -v m="$measured" -v p="$predicted" 'BEGIN { printf "%+.0f%%", 100 * (p - m) / m }')
  echo "| $name | $precision | $rounds | $measured | $predicted | $error |" \
    "$(awk -v m="$measured" -v s="$star_ms" 'BEGIN { printf "%.2f", m / s }') | $bytes | $(suite_json_field "$run/$relays.json" objective) |"
done
done
