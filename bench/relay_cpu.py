#!/usr/bin/env python3
"""What a running nimbus-fault-proxy has cost the machine per byte it forwarded: its CPU time
(from /proc) over the bytes its report counts (the largest bytes_up + bytes_down of each
stream). bench/link.sh gives the figure to `nimbus simulate --relay-ns-per-byte`: the proxy
shares the machine's cores with the runs it relays.

usage: relay_cpu.py PID REPORT.jsonl   (prints nanoseconds per byte)
"""
import json
import os
import sys


def main():
    pid, report = int(sys.argv[1]), sys.argv[2]
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu_seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    forwarded = {}
    with open(report) as f:
        for line in f:
            event = json.loads(line)
            total = event["bytes_up"] + event["bytes_down"]
            forwarded[event["stream"]] = max(forwarded.get(event["stream"], 0), total)
    total = sum(forwarded.values())
    if total == 0:
        sys.exit("relay_cpu.py: the proxy forwarded nothing")
    print(f"{cpu_seconds / total * 1e9:.3f}")


if __name__ == "__main__":
    main()
