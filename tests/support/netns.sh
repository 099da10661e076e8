#!/usr/bin/env bash
# Network namespaces for the network tests and for manual runs: a master, K workers and R
# relays, each in a namespace of its own with one link (a veth pair) to a switch (a bridge in a
# namespace of its own). Their addresses, 10.77.0.0/24, exist only inside these namespaces:
# nothing here reaches or is reached from the machine's own network. In each worker's namespace
# nftables drops every inbound connection attempt, as a Lambda function's network does:
# workers can only dial out. Relays, like the master, accept connections.
#
#   netns.sh check            exit 0 if namespaces can be made here (root, ip, nft), else say why
#   netns.sh up PREFIX K [R [MASTER_MBIT WORKER_MBIT [RELAY_MBIT]]]
#                             make PREFIX-m (master, 10.77.0.1), PREFIX-w1 .. PREFIX-wK
#                             (10.77.0.2 ..), PREFIX-r1 .. PREFIX-rR (10.77.0.201 ..) and the
#                             switch PREFIX-s; first remove those of test processes that are
#                             gone. With rates, every link is capped each way (tc tbf): the
#                             master's at MASTER_MBIT, the workers' at WORKER_MBIT, the relays'
#                             at RELAY_MBIT (default MASTER_MBIT)
#   netns.sh down PREFIX      remove them, links included
#   netns.sh demo [K]         up, a solve with the command runtime across them, down
#
# A test's PREFIX is nb<pid>, so that namespaces a killed test left behind are found and removed.
set -euo pipefail

check() {
  [[ $(id -u) -eq 0 ]] || { echo "network namespaces need root (ip netns add)"; return 1; }
  command -v ip >/dev/null || { echo "no ip (Debian's iproute2)"; return 1; }
  command -v nft >/dev/null || { echo "no nft (Debian's nftables; scripts/install-deps installs it)"; return 1; }
  local probe="nbprobe$$"
  ip netns add "$probe" 2>/dev/null || { echo "ip netns add fails here (no CAP_SYS_ADMIN?)"; return 1; }
  local ok=0
  ip netns exec "$probe" nft add table inet probe 2>/dev/null || ok=1
  ip netns del "$probe"
  [[ $ok -eq 0 ]] || { echo "nftables does not work in a namespace here"; return 1; }
}

# Namespaces of test processes (nb<pid>-...) whose process is gone.
sweep() {
  local ns pid
  for ns in $(ip netns list | awk '{print $1}' | grep -E '^nb[0-9]+-' || true); do
    pid=${ns#nb}
    pid=${pid%%-*}
    [[ -d /proc/$pid ]] || ip netns del "$ns" 2>/dev/null || true
  done
}

# Every inbound connection attempt is dropped; replies to the worker's own connections pass.
drop_inbound() {
  ip netns exec "$1" nft -f - <<'EOF'
table inet nimbus_worker {
  chain input {
    type filter hook input priority 0; policy accept;
    iif "lo" accept
    ct state established,related accept
    ct state new counter drop
  }
}
EOF
}

# A host's namespace `ns` at `address`, its eth0 joined to the switch's port `port`; with a
# rate, the link capped at `mbit` each way (the host's eth0 sends, the switch's port delivers).
join() {
  local prefix=$1 ns=$2 address=$3 port=$4 mbit=${5:-}
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip link add eth0 netns "$ns" type veth peer name "$port" netns "$prefix-s"
  ip -n "$ns" addr add "$address/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$prefix-s" link set "$port" master br0
  ip -n "$prefix-s" link set "$port" up
  if [[ -n $mbit ]]; then
    # burst: at least one 64 KB segmentation-offload packet; a queue of at most 200 ms.
    ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "${mbit}mbit" burst 64kb latency 200ms
    ip netns exec "$prefix-s" tc qdisc add dev "$port" root tbf rate "${mbit}mbit" burst 64kb latency 200ms
  fi
}

up() {
  local prefix=$1 workers=$2 relays=${3:-0} master_mbit=${4:-} worker_mbit=${5:-} relay_mbit=${6:-${4:-}}
  sweep
  ip netns add "$prefix-s"
  ip -n "$prefix-s" link set lo up
  ip -n "$prefix-s" link add br0 type bridge
  ip -n "$prefix-s" link set br0 up
  join "$prefix" "$prefix-m" 10.77.0.1 p-m "$master_mbit"
  for ((k = 1; k <= workers; k++)); do
    join "$prefix" "$prefix-w$k" "10.77.0.$((k + 1))" "p-w$k" "$worker_mbit"
    drop_inbound "$prefix-w$k"
  done
  for ((r = 1; r <= relays; r++)); do
    join "$prefix" "$prefix-r$r" "10.77.0.$((r + 200))" "p-r$r" "$relay_mbit"
  done
}

down() {
  local ns
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$1-(m|s|w[0-9]+|r[0-9]+)$" || true); do
    ip netns del "$ns"
  done
}

# A solve whose master is in its namespace and whose workers are each in theirs.
demo() {
  local workers=${1:-3} here nimbus prefix="nbdemo$$" dir
  here=$(cd "$(dirname "$0")/../.." && pwd)
  nimbus="$here/build/apps/nimbus"
  [[ -x $nimbus ]] || { echo "netns.sh demo: build first (make)"; exit 1; }
  dir=$(mktemp -d)
  trap "down '$prefix'; rm -rf '$dir'" EXIT
  up "$prefix" "$workers"
  "$nimbus" gen --rows 20000 --cols 2000 --nnz-per-row 20 --seed 1 --out "$dir/data.svm"
  local hosts
  hosts=$(seq -s, -f "$prefix-w%g" 1 "$workers")
  ip netns exec "$prefix-m" "$nimbus" train --data "$dir/data.svm" --l1 1e-4 --workers "$workers" \
    --runtime command --hosts "$hosts" --launch "ip netns exec {host} $nimbus worker {args}" \
    --listen tcp://10.77.0.1:5555
  for ((k = 1; k <= workers; k++)); do
    echo "$prefix-w$k: inbound connection attempts dropped:" \
      "$(ip netns exec "$prefix-w$k" nft list chain inet nimbus_worker input | grep -o 'packets [0-9]*')"
  done
}

case "${1:-}" in
  check) check ;;
  up) shift; up "$@" ;;
  down) down "$2" ;;
  demo) check >/dev/null && demo "${2:-3}" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
