#!/usr/bin/python3
"""nimbus.LogisticRegression(warm_start=True) along a grid of C, against a fit from zero at
each C: Newton steps, rounds and time, and how far apart the two answers are.

    PYTHONPATH=build/python bench/python_warm_start.py [OUTDIR] [--sets fashion,zipf,debian]
        [--penalties l1,l2] [--points 5]

OUTDIR (default /tmp/nimbus-bench-solvers) holds the suite's LIBSVM files (bench/data/build.sh
makes them). For each set and penalty: lambda from 1e-2 down to 1e-4, evenly in log (C =
1/(N lambda)), no intercept, n_workers=2, defaults otherwise. "cold" fits a fresh estimator at
each C; "warm" refits one estimator with warm_start=True, C set anew before each fit, as a user
walking a grid by hand would. Times are of `fit` alone, on the matrix in memory, one run each.
The table goes to stdout and OUTDIR/python/warm_start.md.
"""

import argparse
import os
import sys
import time

import numpy as np
from sklearn.datasets import load_svmlight_file

import nimbus

FILES = {"fashion": "fashion-train.svm", "zipf": "zipf-text.svm", "debian": "debian-packages.svm"}


def objective(model, X, signs, C, penalty):
    w = model.coef_.ravel()
    regularizer = np.abs(w).sum() if penalty == "l1" else 0.5 * w @ w
    return C * np.sum(np.logaddexp(0.0, -signs * (X @ w))) + regularizer


def walk(grid, X, y, signs, penalty, warm):
    """(seconds, steps, rounds, objectives) of fits along `grid`."""
    seconds, steps, rounds, objectives = 0.0, 0, 0, []
    model = nimbus.LogisticRegression(penalty=penalty, fit_intercept=False, n_workers=2, warm_start=warm)
    for C in grid:
        if not warm:
            model = nimbus.LogisticRegression(penalty=penalty, fit_intercept=False, n_workers=2)
        model.set_params(C=C)
        start = time.perf_counter()
        model.fit(X, y)
        seconds += time.perf_counter() - start
        steps += int(model.n_iter_[0])
        rounds += int(model.solve_summary_["rounds"])
        objectives.append(objective(model, X, signs, C, penalty))
    return seconds, steps, rounds, np.array(objectives)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", nargs="?", default="/tmp/nimbus-bench-solvers")
    parser.add_argument("--sets", default="fashion,zipf,debian")
    parser.add_argument("--penalties", default="l1,l2")
    parser.add_argument("--points", type=int, default=5)
    args = parser.parse_args()
    lines = ["| data | penalty | cold: steps, rounds, time | warm: steps, rounds, time | time warm / cold | "
             "largest objective gap |", "|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for name in args.sets.split(","):
        path = os.path.join(args.outdir, FILES[name])
        if not os.path.exists(path):
            sys.exit("python_warm_start: %s is missing (bench/data/build.sh %s makes it)" % (path, args.outdir))
        X, y = load_svmlight_file(path)
        X = X.tocsr()
        signs = np.where(y == np.unique(y)[-1], 1.0, -1.0)
        grid = [1.0 / (X.shape[0] * lam) for lam in np.logspace(-2, -4, args.points)]
        for penalty in args.penalties.split(","):
            cold = walk(grid, X, y, signs, penalty, warm=False)
            warm = walk(grid, X, y, signs, penalty, warm=True)
            gap = np.max(np.abs(warm[3] - cold[3]) / np.abs(cold[3]))
            line = "| %s %dx%d | %s | %d, %d, %.2f s | %d, %d, %.2f s | %.2f | %.1e |" % (
                name, X.shape[0], X.shape[1], penalty, cold[1], cold[2], cold[0], warm[1], warm[2], warm[0],
                warm[0] / cold[0], gap)
            lines.append(line)
            print(line, flush=True)
    os.makedirs(os.path.join(args.outdir, "python"), exist_ok=True)
    with open(os.path.join(args.outdir, "python", "warm_start.md"), "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
