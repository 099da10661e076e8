#!/usr/bin/env python3
"""Peak memory of every process of a run: polls /proc every INTERVAL seconds while PID lives,
for the processes whose command line starts with PROGRAM (the master and its workers), and
keeps each one's VmHWM (its peak resident set, which the kernel keeps). At the end it prints one
line per process: its pid, role (master, or worker W.INVOCATION from its arguments) and peak.

usage: peak_rss.py PID PROGRAM [INTERVAL]
"""
import os
import sys
import time


def processes(program):
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                args = f.read().split(b"\0")
            if not args or os.path.realpath(args[0].decode()) != program:
                continue
            with open("/proc/%s/status" % name) as f:
                peak = next((int(line.split()[1]) for line in f if line.startswith("VmHWM:")), 0)
            yield int(name), [a.decode() for a in args if a], peak
        except (OSError, StopIteration, ValueError):
            continue


def role(args):
    if len(args) > 1 and args[1] == "worker":
        worker = args[args.index("--worker") + 1] if "--worker" in args else "?"
        invocation = args[args.index("--invocation") + 1] if "--invocation" in args else "?"
        return "worker %s.%s" % (worker, invocation)
    return "master (%s)" % (args[1] if len(args) > 1 else "?")


def main():
    pid, program = int(sys.argv[1]), os.path.realpath(sys.argv[2])
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
    peaks, roles = {}, {}
    while os.path.exists("/proc/%d" % pid):
        for p, args, peak in processes(program):
            peaks[p] = max(peaks.get(p, 0), peak)
            roles[p] = role(args)
        time.sleep(interval)
    for p in sorted(peaks, key=lambda p: roles[p]):
        print("%-8d %-22s %8.1f MB" % (p, roles[p], peaks[p] / 1024.0))


if __name__ == "__main__":
    main()
