#!/usr/bin/python3
"""nimbus.dask beside the same data's in-memory fit and beside Dask's own way to fit it, on the
suite's text-like data (bench/data/zipf_text.py's rows, made in partitions on the Dask workers,
where they stay) held by a LocalCluster of worker processes.

For L1 and L2-regularized logistic regression (no intercept), F(w) = (1/N) sum_r log(1 +
exp(-y_r x_r.w)) + l1 |w|_1 + (l2/2) |w|^2:
  F*          nimbus.dask.LogisticRegression with tol 1e-9 (Newton's stop test; the in-memory fit
              with the same tol must agree within 1e-9);
  nimbus.dask its default settings: wall time of fit() (the partitions already on the workers),
              rounds, and the gap (F - F*)/F*;
  in memory   nimbus.LogisticRegression on the rows gathered into this process (the gathering
              not timed), default settings, threads on this machine's cores;
  Dask's own  a loop written with Dask's reductions over the same partitions, as dask-glm
              writes its solvers: F and its gradient summed over the partitions' tasks each
              iteration; L-BFGS (scipy's, on those sums) for L2, accelerated proximal gradient
              (FISTA, backtracking on the step) for L1. Its time to F <= F*(1 + 1e-4), or its gap
              when --limit seconds run out.

usage: PYTHONPATH=build/python bench/dask_fit.py [--rows 4000000] [--cols 50000] [--partitions 16]
           [--workers 4] [--l1 1e-5] [--l2 1e-4] [--limit 900] [--out DIR]
Both cases run unless --l1 or --l2 is given alone. The table goes to stdout and DIR/dask_fit.md.
"""

import argparse
import os
import sys
import time

import numpy as np
import scipy.optimize
import scipy.sparse as sp
from scipy.special import expit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
import zipf_text  # noqa: E402

TARGET = 1e-4  # Dask's own loop runs to F <= F*(1 + TARGET)


def make_part(index, rows, cols):
    """Partition `index`: its own rows from the suite's generator, the vocabulary shared (seed 1)."""
    words_of_topic, p, cdf = zipf_text.vocabulary(np.random.Generator(np.random.PCG64(1)), cols, 0.05, 1.1)
    rng = np.random.Generator(np.random.PCG64([1, index]))
    label, starts, col_of, values, _ = zipf_text.draw_rows(rng, rows, words_of_topic, p, cdf)
    matrix = sp.csr_matrix((values, col_of.astype(np.int32), starts), shape=(rows, cols))
    return matrix, label.astype(np.float64)


def load(client, args):
    import dask
    import dask.array as da

    sizes = [args.rows // args.partitions + (1 if i < args.rows % args.partitions else 0)
             for i in range(args.partitions)]
    parts = [dask.delayed(make_part)(i, n, args.cols) for i, n in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(part[0], shape=(n, args.cols), dtype=np.float64,
                                        meta=sp.csr_matrix((0, args.cols))) for part, n in zip(parts, sizes)])
    y = da.concatenate([da.from_delayed(part[1], shape=(n,), dtype=np.float64) for part, n in zip(parts, sizes)])
    X, y = client.persist([X, y])
    from distributed import wait
    wait([X, y])
    return X, y


class DaskObjective:
    """F and its gradient, each a sum over the partitions' tasks (the partitions stay put;
    what comes back is a number and a vector of the model's length from each)."""

    def __init__(self, client, X, y, l1, l2):
        import dask

        self.client, self.l1, self.l2 = client, l1, l2
        self.rows = X.shape[0]
        self.blocks = list(zip(X.to_delayed().ravel(), y.to_delayed().ravel()))
        self.delayed = dask.delayed
        self.evaluations = 0

    @staticmethod
    def _part(x, y, w, gradient):
        margins = -y * (x @ w)
        loss = np.logaddexp(0.0, margins).sum()
        return (loss, x.T @ (-y * expit(margins))) if gradient else (loss, None)

    def smooth(self, w, gradient=True):
        """(1/N) sum loss + (l2/2)|w|^2, and its gradient."""
        import dask

        self.evaluations += 1
        [shared] = self.client.scatter([w], broadcast=True, hash=False)  # a key of its own: an equal w is no reuse
        parts = [self.delayed(self._part)(x, y, shared, gradient) for x, y in self.blocks]
        results = dask.compute(*parts)
        loss = sum(r[0] for r in results) / self.rows + 0.5 * self.l2 * w.dot(w)
        if not gradient:
            return loss, None
        return loss, sum(r[1] for r in results) / self.rows + self.l2 * w

    def F(self, w):
        return self.smooth(w, gradient=False)[0] + self.l1 * np.abs(w).sum()


class Reaching:
    """When a loop's F first met each of the targets (descending), and its passes then."""

    def __init__(self, targets, limit):
        self.targets, self.limit = targets, limit
        self.start = time.monotonic()
        self.best = np.inf
        self.reached = [None] * len(targets)  # (seconds, passes)

    def seen(self, F, passes):
        """True when the loop should stop: every target met, or the time is up."""
        self.best = min(self.best, F)
        for i, target in enumerate(self.targets):
            if self.reached[i] is None and F <= target:
                self.reached[i] = (time.monotonic() - self.start, passes)
        return self.reached[-1] is not None or time.monotonic() - self.start > self.limit


def dask_lbfgs(objective, d, reaching):
    def fun(w):
        f, g = objective.smooth(w)
        if reaching.seen(f, objective.evaluations):
            raise StopIteration
        return f, g

    try:
        scipy.optimize.minimize(fun, np.zeros(d), jac=True, method="L-BFGS-B",
                                options={"maxiter": 10**6, "maxfun": 10**6, "gtol": 0, "ftol": 0})
    except StopIteration:
        pass


def dask_fista(objective, d, reaching):
    """FISTA with backtracking (Beck and Teboulle): the step 1/L grows back by 2x each iteration."""
    w = np.zeros(d)
    v, t, L = w.copy(), 1.0, 1.0
    while True:
        f_v, g_v = objective.smooth(v)
        while True:
            step = v - g_v / L
            candidate = np.sign(step) * np.maximum(np.abs(step) - objective.l1 / L, 0.0)
            diff = candidate - v
            f_c, _ = objective.smooth(candidate, gradient=False)
            if f_c <= f_v + g_v.dot(diff) + 0.5 * L * diff.dot(diff):
                break
            L *= 2.0
        if reaching.seen(f_c + objective.l1 * np.abs(candidate).sum(), objective.evaluations):
            return
        t_next = (1 + np.sqrt(1 + 4 * t * t)) / 2
        v = candidate + (t - 1) / t_next * (candidate - w)
        w, t, L = candidate, t_next, L / 2.0


def run_case(client, X, y, args, name, l1, l2):
    import nimbus
    import nimbus.dask

    penalty = "l1" if l1 > 0 else "l2"
    C = 1.0 / (X.shape[0] * (l1 if l1 > 0 else l2))
    common = dict(penalty=penalty, C=C, fit_intercept=False, progress=False)
    rows = []
    print("dask_fit.py: %s: F* (nimbus.dask, tol 1e-9)" % name, file=sys.stderr, flush=True)
    fstar = nimbus.dask.LogisticRegression(tol=1e-9, **common).fit(X, y).objective_

    start = time.monotonic()
    model = nimbus.dask.LogisticRegression(**common).fit(X, y)
    took = time.monotonic() - start
    rows.append(("nimbus.dask (default settings)", took, model.objective_, model.solve_summary_["rounds"],
                 "%d rounds" % model.solve_summary_["rounds"]))
    print("dask_fit.py: %s: nimbus.dask %.2f s" % (name, took), file=sys.stderr, flush=True)

    # Gathered for the in-memory fit (not timed), chunk by chunk: computing X whole would join the
    # chunks on a worker first, which holds a quarter of the machine's memory.
    Xm = sp.vstack(client.gather(client.compute(list(X.to_delayed().ravel())))).tocsr()
    ym = np.concatenate(client.gather(client.compute(list(y.to_delayed().ravel()))))
    start = time.monotonic()
    memory = nimbus.LogisticRegression(**common).fit(Xm, ym)
    took = time.monotonic() - start
    rows.append(("in memory, nimbus.LogisticRegression (threads)", took, memory.objective_,
                 memory.solve_summary_["rounds"], "%d rounds" % memory.solve_summary_["rounds"]))
    tight = nimbus.LogisticRegression(tol=1e-9, **common).fit(Xm, ym).objective_
    del Xm, ym
    if abs(tight - fstar) > 1e-9 * fstar:
        print("dask_fit.py: %s: F* from Dask %.12g and in memory %.12g differ" % (name, fstar, tight), file=sys.stderr)

    objective = DaskObjective(client, X, y, l1, l2)
    loop = dask_fista if l1 > 0 else dask_lbfgs
    print("dask_fit.py: %s: Dask's own loop (limit %d s)" % (name, args.limit), file=sys.stderr, flush=True)
    # To F*(1 + 1e-4), then on to nimbus.dask's own F (the same accuracy), in one run.
    targets = [fstar * (1 + TARGET), max(model.objective_, fstar * (1 + 1e-15))]
    reaching = Reaching(targets, args.limit)
    loop(objective, X.shape[1], reaching)
    label = "Dask's own loop, " + ("FISTA" if l1 > 0 else "L-BFGS")
    for target_name, reached, F in zip(("to F*(1 + 1e-4)", "to nimbus.dask's F"), reaching.reached, targets):
        if reached is not None:
            rows.append(("%s, %s" % (label, target_name), reached[0], F, reached[1], "%d passes" % reached[1]))
        else:
            rows.append(("%s, %s" % (label, target_name), time.monotonic() - reaching.start, reaching.best,
                         objective.evaluations, "%d passes, not there in %d s (its F: its best)"
                         % (objective.evaluations, args.limit)))
    return fstar, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--cols", type=int, default=50_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--l1", type=float)
    parser.add_argument("--l2", type=float)
    parser.add_argument("--limit", type=float, default=900, help="seconds for Dask's own loop")
    parser.add_argument("--out", default="/tmp/nimbus-bench-dask")
    args = parser.parse_args()
    cases = []
    if args.l1 is not None or args.l2 is None:
        cases.append(("L1 %g" % (args.l1 or 1e-5), args.l1 or 1e-5, 0.0))
    if args.l2 is not None or args.l1 is None:
        cases.append(("L2 %g" % (args.l2 or 1e-4), 0.0, args.l2 or 1e-4))

    from distributed import Client, LocalCluster

    os.makedirs(args.out, exist_ok=True)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        start = time.monotonic()
        X, y = load(client, args)
        made = time.monotonic() - start
        import dask
        nnz = sum(dask.compute(*[dask.delayed(getattr)(block, "nnz") for block in X.to_delayed().ravel()]))
        lines = ["nimbus dask benchmark: %s on %d cores, a LocalCluster of %d worker processes; %d rows x %d "
                 "features, %d nonzeros, in %d partitions made on the workers in %.0f s"
                 % (time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), os.cpu_count(), args.workers, args.rows,
                    args.cols, nnz, args.partitions, made), "",
                 "| case | F* | method | time | ratio to nimbus.dask | F | gap (F - F*)/F* | work |",
                 "|---|---|---|---|---|---|---|---|"]
        for name, l1, l2 in cases:
            fstar, rows = run_case(client, X, y, args, name, l1, l2)
            base = rows[0][1]
            for method, took, F, _, work in rows:
                lines.append("| %s | %.10g | %s | %.2f s | %.2f | %.10g | %.1e | %s |"
                             % (name, fstar, method, took, took / base, F, (F - fstar) / fstar, work))
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, "dask_fit.md.tmp"), "w") as f:
        f.write(text)
    os.replace(os.path.join(args.out, "dask_fit.md.tmp"), os.path.join(args.out, "dask_fit.md"))


if __name__ == "__main__":
    main()
