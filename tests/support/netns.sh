#!/usr/bin/env bash
# Network namespaces for the network tests and for manual runs: a master and K workers, each
# in a namespace of its own, joined by veth pairs to a bridge in the master's namespace. Their
# addresses, 10.77.0.0/24, exist only inside these namespaces: nothing here reaches or is
# reached from the machine's own network. In each worker's namespace nftables drops every
# inbound connection attempt, as a Lambda function's network does: workers can only dial out.
#
#   netns.sh check            exit 0 if namespaces can be made here (root, ip, nft), else say why
#   netns.sh up PREFIX K      make PREFIX-m (master, 10.77.0.1) and PREFIX-w1 .. PREFIX-wK
#                             (10.77.0.2 ..); first remove those of test processes that are gone
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

up() {
  local prefix=$1 workers=$2 master="$1-m"
  sweep
  ip netns add "$master"
  ip -n "$master" link set lo up
  ip -n "$master" link add br0 type bridge
  ip -n "$master" addr add 10.77.0.1/24 dev br0
  ip -n "$master" link set br0 up
  for ((k = 1; k <= workers; k++)); do
    local worker="$prefix-w$k"
    ip netns add "$worker"
    ip -n "$worker" link set lo up
    ip link add eth0 netns "$worker" type veth peer name "w$k" netns "$master"
    ip -n "$worker" addr add "10.77.0.$((k + 1))/24" dev eth0
    ip -n "$worker" link set eth0 up
    ip -n "$master" link set "w$k" master br0
    ip -n "$master" link set "w$k" up
    drop_inbound "$worker"
  done
}

down() {
  local ns
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$1-(m|w[0-9]+)$" || true); do
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
  up) up "$2" "$3" ;;
  down) down "$2" ;;
  demo) check >/dev/null && demo "${2:-3}" ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
