#!/usr/bin/env python3
"""What nimbus-fault-proxy cost the machine per byte it forwarded, reading and writing apart:
its report's last line (written as it exits) has its CPU in all, and how much of it went to
reading chunks (before their delay starts) and to writing them (once due); the bytes are the
largest bytes_up + bytes_down of each stream. The CPU it spent elsewhere (its poll loop) is
shared out in the same proportion. bench/link.sh gives the two figures to `nimbus simulate
--relay-read-ns-per-byte R --relay-write-ns-per-byte W`: the proxy shares the machine's cores
with the runs it relays.

usage: relay_cpu.py REPORT.jsonl   (after the proxy has exited; prints "R W" in nanoseconds)
"""
import json
import sys


def main():
    forwarded, cpu = {}, None
    with open(sys.argv[1]) as f:
        for line in f:
            event = json.loads(line)
            if event["event"] == "cpu":
                cpu = event
                continue
            total = event["bytes_up"] + event["bytes_down"]
            forwarded[event["stream"]] = max(forwarded.get(event["stream"], 0), total)
    total = sum(forwarded.values())
    if total == 0:
        sys.exit("relay_cpu.py: the proxy forwarded nothing")
    if cpu is None:
        sys.exit("relay_cpu.py: the report has no cpu line: is the proxy still running?")
    measured = cpu["read_seconds"] + cpu["write_seconds"]
    if measured <= 0:
        sys.exit("relay_cpu.py: the proxy measured no CPU in reading or writing")
    scale = max(cpu["process_seconds"], measured) / measured / total * 1e9
    print(f"{cpu['read_seconds'] * scale:.3f} {cpu['write_seconds'] * scale:.3f}")


if __name__ == "__main__":
    main()
