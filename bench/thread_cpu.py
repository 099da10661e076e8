#!/usr/bin/env python3
"""Where a round's CPU goes, thread by thread: a traced process-runtime train, sampled.

usage: bench/thread_cpu.py NIMBUS DATA L1 K [more `nimbus train` flags]

Runs `NIMBUS train --data DATA --l1 L1 --workers K --runtime process --trace ...` and reads,
every 50 ms, the CPU of every thread of the master and of its worker processes
(/proc/PID/task/TID/stat), and the machine's (/proc/stat). Over the rounds (from the third
round's dispatch to the last round's replies, so that the load, the starts and the end are
left out) it prints, per round in ms:

  master IO / worker IO    ZeroMQ's I/O threads (ZMQbg/IO/*): CurveZMQ's sealing and
                           opening, and the sockets' system calls
  master app / worker app  the rest: encoding and decoding, the master's own work, the
                           workers' compute
  machine                  all CPU of the machine (this sampler's own included)

and how many cores were busy on average. The kernel counts a thread's CPU in clock ticks
(10 ms), so a window of a few hundred rounds is needed for a figure per round to hold.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def children(pid):
    found = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    found += [int(c) for c in f.read().split()]
            except OSError:
                pass
    except OSError:
        pass
    return found


def thread_kind(role, name):
    return f"{role} {'IO' if name.startswith('ZMQbg/IO') else 'reaper' if name.startswith('ZMQbg/Reaper') else 'app'}"


def machine_cpu():
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / TICK  # all but idle and iowait


def sample(master, last):
    """Updates each thread's last seen CPU; returns the CPU per kind, threads gone included."""
    for pid, role in [(master, "master")] + [(c, "worker") for c in children(master)]:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            last[(pid, int(tid))] = (thread_kind(role, name), (int(fields[11]) + int(fields[12])) / TICK)
    per_kind = collections.defaultdict(float)
    for kind, cpu in last.values():
        per_kind[kind] += cpu
    per_kind["machine"] = machine_cpu()
    return dict(per_kind)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    nimbus, data, l1, workers = sys.argv[1:5]
    with tempfile.TemporaryDirectory(prefix="nimbus-thread-cpu-") as work:
        trace = os.path.join(work, "trace.jsonl")
        command = [nimbus, "train", "--data", data, "--l1", l1, "--workers", workers, "--runtime", "process",
                   "--quiet", "--trace", trace, "--out", os.path.join(work, "model.json")] + sys.argv[5:]
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        series, last = [], {}
        while run.poll() is None:
            series.append((time.time(), sample(run.pid, last)))
            time.sleep(0.05)
        if run.returncode != 0:
            sys.exit(f"thread_cpu: {' '.join(command)} exited with {run.returncode}")
        with open(trace) as f:
            rounds = [e for e in map(json.loads, f) if e.get("event") == "round"]
    if len(rounds) < 4:
        sys.exit(f"thread_cpu: the run took {len(rounds)} rounds; too few to leave out its start and end")
    begin = next((s for s in series if s[0] >= rounds[2]["dispatch"]), None)
    end = next((s for s in reversed(series) if s[0] <= rounds[-1]["replies"]), None)
    counted = sum(1 for r in rounds if begin and end and begin[0] <= r["dispatch"] < end[0])
    if counted < 1:
        sys.exit("thread_cpu: the rounds were too short for a 50 ms sample to fall inside them")
    wall = end[0] - begin[0]
    print(f"K = {workers}: {counted} rounds in {wall:.2f} s, {1e3 * wall / counted:.2f} ms per round")
    threads = 0.0
    for kind in sorted(k for k in end[1] if k != "machine" and not k.endswith("reaper")):
        ms = 1e3 * (end[1][kind] - begin[1].get(kind, 0)) / counted
        threads += ms
        print(f"  {kind:11s} {ms:8.2f} ms per round")
    machine = end[1]["machine"] - begin[1]["machine"]
    print(f"  {'threads':11s} {threads:8.2f} ms per round; the machine {1e3 * machine / counted:.2f}, "
          f"{machine / wall:.2f} cores busy")


if __name__ == "__main__":
    main()
