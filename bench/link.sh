#!/usr/bin/env bash
# The simulator against a real link (issue 16): worker processes reach their master through
# nimbus-fault-proxy (tests/support/fault_proxy.cpp), which delays every stream by half a
# round-trip time each way and caps each worker stream's rate; `nimbus scale` measures the
# time per round and to solution at K = 2, 4, 8, and `nimbus simulate --validate` predicts the
# same runs from the problem's profile given the same latency and bandwidth, and the proxy's own
# CPU per byte forwarded, reading and writing apart (bench/relay_cpu.py: it runs on the same
# cores, and its delay starts once it has read a chunk). One problem of the
# suite's data, nimbus did not make it: Zipf topics (bench/data/build.sh) at its strong L1, the
# default algorithm (distributed Newton). Last, one traced run at K = 2 beside the proxy's log of
# every chunk (--chunks): where a round goes (bench/link_phases.py).
#
# Usage: bench/link.sh [NIMBUS] [PROXY]   (BENCH_DIR=DIR keeps the files and reuses the profile;
#        SOLVERS_DIR=DIR: where the data is, or is built, default /tmp/nimbus-bench-solvers;
#        RTTS="5 20 50", MBITS="100 1000", WORKERS=2,4,8 choose the grid)
set -euo pipefail
nimbus=${1:-build/apps/nimbus}
proxy=${2:-$(dirname "$nimbus")/../tests/nimbus-fault-proxy}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
trap '[ -n "${BENCH_DIR:-}" ] || rm -rf "$work"' EXIT
solvers=${SOLVERS_DIR:-/tmp/nimbus-bench-solvers}
rtts=${RTTS:-5 20 50}
mbits=${MBITS:-100 1000}
workers=${WORKERS:-2,4,8}
l1=1e-5
[ -x "$proxy" ] || { echo "bench/link.sh: no nimbus-fault-proxy at $proxy (make builds it)"; exit 1; }

# shellcheck source=data/build.sh
source "$here/data/build.sh"   # the suite's data sets, shared with bench/solvers.sh
mkdir -p "$solvers"
suite_build_data "$solvers" zipf "$nimbus"
data=$(suite_data_file "$solvers" zipf)
echo "nimbus link benchmark: $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores; $data, l1 $l1; files in $work"

# The profile: compute, messages and rounds on this machine, without a proxy.
profile="$work/zipf-profile.json"
[ -s "$profile" ] || "$nimbus" simulate calibrate --data "$data" --l1 "$l1" --workers "1,$workers" --repeat 3 \
  --out "$profile" > "$work/calibrate.txt"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# A proxy for the files of RUN: every stream delayed RTT/2 each way and capped at MBIT; its
# ports in master_port and proxy_port, its pid in proxy_pid.
start_proxy() {  # RUN RTT MBIT [PROXY OPTIONS]
  master_port=$(free_port)
  proxy_port=$(free_port)
  rm -f "$1/ready" "$1/proxy.jsonl"
  "$proxy" --listen "127.0.0.1:$proxy_port" --target "127.0.0.1:$master_port" \
    --stream "*=delay:$(python3 -c "print($2 / 2)"),rate:$3" --ready-file "$1/ready" --report "$1/proxy.jsonl" "${@:4}" \
    > "$1/proxy.log" 2>&1 &
  proxy_pid=$!
  for _ in $(seq 100); do [ -e "$1/ready" ] && break; sleep 0.05; done
}
stop_proxy() {
  kill "$proxy_pid"
  wait "$proxy_pid" 2>/dev/null || true
}
through_proxy() { echo --listen "tcp://127.0.0.1:$master_port" --advertise "tcp://127.0.0.1:$proxy_port"; }

table="$work/link.md"
echo "| RTT | Mbit/s per worker | K | ms/round measured | predicted | error | time to solution measured | predicted | error |" > "$table"
echo "|---|---|---|---|---|---|---|---|---|" >> "$table"
for rtt in $rtts; do
  for mbit in $mbits; do
    run="$work/rtt$rtt-mbit$mbit"
    mkdir -p "$run"
    start_proxy "$run" "$rtt" "$mbit"
    # shellcheck disable=SC2046
    "$nimbus" scale --data "$data" --l1 "$l1" --workers "$workers" --runtime process --repeat 2 --quiet \
      $(through_proxy) --out "$run/scale"
    stop_proxy
    # The proxy's own CPU per byte it forwarded (its report's last line): it shared the
    # machine's cores with the runs.
    read -r relay_read_ns relay_write_ns < <(python3 "$here/relay_cpu.py" "$run/proxy.jsonl")
    echo "RTT $rtt ms, $mbit Mbit/s: the proxy took $relay_read_ns ns of CPU per byte it read and $relay_write_ns per byte it wrote"
    "$nimbus" simulate --profile "$profile" --platform local --latency-ms "$(python3 -c "print($rtt / 2)")" \
      --worker-mbps "$mbit" \
      --relay-read-ns-per-byte "$relay_read_ns" --relay-write-ns-per-byte "$relay_write_ns" \
      --validate "$run/scale/scale.json" --out "$run/validation" > "$run/validation.txt" || true
    # Its rows: K, rounds measured and predicted, ms/round measured, predicted, error, then the
    # time to solution's three.
    awk -v rtt="$rtt" -v mbit="$mbit" '$1 ~ /^[0-9]+$/ && NF == 9 {
      printf "| %s ms | %s | %s | %s | %s | %s | %s s | %s s | %s |\n", rtt, mbit, $1, $4, $5, $6, $7, $8, $9 }' \
      "$run/validation.txt" >> "$table"
  done
done
echo
cat "$table"

# Where one round goes: a traced run at the first RTT, the last rate and K = 2, beside the
# proxy's log of every chunk it forwarded.
rtt=${rtts%% *}
mbit=${mbits##* }
run="$work/phases"
mkdir -p "$run"
start_proxy "$run" "$rtt" "$mbit" --chunks "$run/chunks.jsonl"
# shellcheck disable=SC2046
"$nimbus" train --data "$data" --l1 "$l1" --workers 2 --runtime process --quiet $(through_proxy) \
  --trace "$run/trace.jsonl" --out "$run/model.json"
stop_proxy
echo
echo "Where a round goes at RTT $rtt ms, $mbit Mbit/s per worker, K = 2 (bench/link_phases.py):"
python3 "$here/link_phases.py" "$run/trace.jsonl" "$run/chunks.jsonl"
