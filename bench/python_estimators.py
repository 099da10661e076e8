#!/usr/bin/python3
"""nimbus.LogisticRegression against scikit-learn's liblinear and saga solvers: the time each
takes to reach the objective nimbus reaches with its defaults, on the suite's data.

    PYTHONPATH=build/python bench/python_estimators.py [OUTDIR] [--sets fashion,zipf,debian]
        [--penalties l1,l2] [--max-iter 200]

OUTDIR (default /tmp/nimbus-bench-solvers) holds the suite's LIBSVM files (bench/data/build.sh
makes them; bench/solvers.sh runs it). For each set and penalty, lambda = 1e-4 (C = 1/(N
lambda)), no intercept (liblinear penalizes one; the others do not):

  nimbus   LogisticRegression(penalty, C, fit_intercept=False, n_workers=2), defaults: its
           objective F_nimbus is the target
  liblinear, saga   scikit-learn's, at tol 1e-1, 1e-2, ... 1e-10 (a fresh fit each, max_iter
           --max-iter) until a fit ends at or below F_nimbus (1e-9 relative slack); the time
           of that fit

Times are of `fit` alone, on the matrix already in memory (the same for every solver), one run
each, in one process; scikit-learn's solvers use one core, nimbus two worker threads. A solver
that does not reach the target within its ladder is reported as such with its best gap.
The table goes to stdout and OUTDIR/python/estimators.md.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression as SkLogisticRegression

import nimbus

FILES = {"fashion": "fashion-train.svm", "zipf": "zipf-text.svm", "debian": "debian-packages.svm"}
LAMBDA = 1e-4
TOLERANCES = [10.0 ** -k for k in range(1, 11)]


def objective(model, X, signs, C, penalty):
    margins = X @ model.coef_.ravel()
    w = model.coef_.ravel()
    regularizer = np.abs(w).sum() if penalty == "l1" else 0.5 * w @ w
    return C * np.sum(np.logaddexp(0.0, -signs * margins)) + regularizer


def timed_fit(model, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    return time.perf_counter() - start


def time_to_target(make, X, y, signs, C, penalty, target):
    """(seconds, tol) of the first fit on the ladder at or below target, else (None, best gap)."""
    best = np.inf
    for tol in TOLERANCES:
        model = make(tol)
        seconds = timed_fit(model, X, y)
        value = objective(model, X, signs, C, penalty)
        best = min(best, value)
        if value <= target * (1 + 1e-9):
            return seconds, tol
    return None, (best - target) / target


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", nargs="?", default="/tmp/nimbus-bench-solvers")
    parser.add_argument("--sets", default="fashion,zipf,debian")
    parser.add_argument("--penalties", default="l1,l2")
    parser.add_argument("--max-iter", type=int, default=200,
                        help="scikit-learn's max_iter: liblinear's Newton steps, saga's epochs (default 200)")
    args = parser.parse_args()
    rows = ["| data | penalty | nimbus fit | F (nimbus) | liblinear | saga |", "|---|---|---|---|---|---|"]
    for name in args.sets.split(","):
        path = os.path.join(args.outdir, FILES[name])
        if not os.path.exists(path):
            sys.exit("python_estimators.py: %s is missing (bench/data/build.sh makes it)" % path)
        X, y = load_svmlight_file(path)
        X = X.tocsr()
        signs = np.where(y == np.max(y), 1.0, -1.0)
        C = 1.0 / (X.shape[0] * LAMBDA)
        for penalty in args.penalties.split(","):
            ours = nimbus.LogisticRegression(penalty=penalty, C=C, fit_intercept=False, n_workers=2)
            seconds = timed_fit(ours, X, y)
            target = objective(ours, X, signs, C, penalty)
            cells = ["%s (%d x %d)" % (name, X.shape[0], X.shape[1]), penalty, "%.2f s" % seconds, "%.9g" % target]
            for solver in ("liblinear", "saga"):
                def make(tol, solver=solver):
                    return SkLogisticRegression(penalty=penalty, C=C, fit_intercept=False, solver=solver, tol=tol,
                                                max_iter=args.max_iter)
                reached, detail = time_to_target(make, X, y, signs, C, penalty, target)
                cells.append("%.2f s (tol %g; %.1fx)" % (reached, detail, reached / seconds) if reached is not None
                             else "not reached (best %.1e above)" % detail)
            rows.append("| " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    table = "\n".join(rows)
    os.makedirs(os.path.join(args.outdir, "python"), exist_ok=True)
    with open(os.path.join(args.outdir, "python", "estimators.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
