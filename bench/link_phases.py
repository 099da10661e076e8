#!/usr/bin/env python3
"""Where a round goes on a link: a nimbus trace beside nimbus-fault-proxy's --chunks log.

usage: bench/link_phases.py TRACE.jsonl CHUNKS.jsonl

For every round of the trace (`nimbus train --trace`, workers through the proxy) and every
worker stream, the ROUND is the stream's master-to-worker bytes read within the round, the
REPLY its worker-to-master bytes read after the ROUND was delivered. Prints the mean over
rounds (the first two and the last left out: setup and the stop) of each phase, in ms:

  sealing      the master's dispatch to the ROUND's first byte at the proxy
  ROUND link   its first byte read to its last byte due out (the delay and the rate cap)
  worker       the ROUND's last byte out to the REPLY's first byte in, and of it the compute
               the worker reported
  REPLY link   as for the ROUND
  opening      the last REPLY's last byte out to the master having every reply
  master       the master's own work, to the next dispatch

Both files carry wall-clock seconds of this machine's one clock.
"""
import json
import sys
from collections import defaultdict


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(trace_path, chunks_path):
    rounds = [e for e in read_lines(trace_path) if e.get("event") == "round"]
    chunks = defaultdict(list)  # (stream, down) -> [(read, due, bytes)]
    for c in read_lines(chunks_path):
        chunks[(c["stream"], c["down"])].append((c["read"], c["due"], c["bytes"]))
    # The workers' links carry the rounds; their heartbeat streams carry a few bytes a second.
    links = sorted({s for (s, down), v in chunks.items() if down and sum(b for _, _, b in v) > 1e6})
    phases = defaultdict(list)
    for previous, r in zip(rounds, rounds[1:]):
        if r is rounds[-1] or previous is rounds[0]:
            continue
        dispatch, replies = r["dispatch"], r["replies"]
        firsts, round_links, worker, reply_links, last_in = [], [], [], [], []
        for s in links:
            out = [c for c in chunks[(s, True)] if dispatch <= c[0] <= replies]
            if not out:
                continue
            delivered = max(c[1] for c in out)
            back = [c for c in chunks[(s, False)] if delivered <= c[0] <= replies]
            if not back:
                continue
            firsts.append(min(c[0] for c in out))
            round_links.append(delivered - min(c[0] for c in out))
            worker.append(min(c[0] for c in back) - delivered)
            reply_links.append(max(c[1] for c in back) - min(c[0] for c in back))
            last_in.append(max(c[1] for c in back))
        if len(firsts) != len(r["workers"]):
            continue  # a stream's bytes fell outside the round's window: leave the round out
        mean = lambda v: sum(v) / len(v)
        phases["sealing (first ROUND)"].append(min(firsts) - dispatch)
        phases["sealing (last ROUND)"].append(max(firsts) - dispatch)
        phases["ROUND link"].append(mean(round_links))
        phases["worker"].append(mean(worker))
        phases["  of which compute"].append(mean([w["end"] - w["start"] for w in r["workers"]]))
        phases["REPLY link"].append(mean(reply_links))
        phases["opening (last REPLY)"].append(replies - max(last_in))
        phases["master"].append(r["dispatch"] - previous["replies"])
        phases["round"].append(replies - previous["replies"])
    if not phases:
        sys.exit("link_phases.py: no round of the trace matched the proxy's chunks")
    for name, values in phases.items():
        print(f"  {name:24s} {1e3 * sum(values) / len(values):8.2f} ms  ({len(values)} rounds)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
