"""nimbus's estimators on data held in a Dask cluster (dask.array or dask.dataframe).

The client runs nimbus's master. Each partition is served by a nimbus worker in a task on the
Dask worker that holds it, which dials out to the master as every runtime's workers do: the
partitions stay where they are, and what reaches the client is each part's size and labels'
classes, then the solver's vectors (a model's length, not a partition's). A Dask worker that
dies takes its nimbus workers with it: the master starts a new one for its part, in a task
that Dask runs where the part is recomputed, and the answer does not change.

    import dask.array as da, nimbus.dask
    from distributed import Client
    client = Client(cluster)
    model = nimbus.dask.LogisticRegression(penalty="l1", C=0.5).fit(X, y)   # X, y: dask collections

The estimators take what nimbus.LogisticRegression takes (numpy and scipy arrays fit in this
process as there), and dask.array (dense or scipy.sparse chunks) or dask.dataframe inputs.
runtime_options may set listen and advertise: the address the master binds and the one the
Dask workers dial (default: the loopback, for a cluster on this machine).
"""

import uuid

import numpy as np
import scipy.sparse as sp

from . import _nimbus
from . import linear_model

__all__ = ["LogisticRegression", "LogisticRegressionCV", "is_dask_collection"]


def is_dask_collection(value):
    """Whether `value` is a Dask collection (without importing Dask unless it is loaded)."""
    try:
        import dask
    except ImportError:
        return False
    return dask.is_dask_collection(value)


def _blocks(collection, rows_chunks=None):
    """A dask.array's or dask.dataframe's (or Series') row blocks, as delayed objects."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(collection, da.Array):
        if collection.ndim == 2:
            collection = collection.rechunk({1: collection.shape[1]})
        if rows_chunks is not None:
            collection = collection.rechunk({0: rows_chunks})
        blocks = collection.to_delayed()  # rows x 1 (a 2-D array's one column chunk), or rows
        return list(blocks.reshape(blocks.shape[0], -1)[:, 0])
    if isinstance(collection, (dd.DataFrame, dd.Series)):
        return list(collection.to_delayed())
    raise TypeError("expected a dask.array or a dask.dataframe, got %s" % type(collection).__name__)


def _part_arrays(x, y, weights, classes):
    """One partition as serve_worker takes it: CSR arrays of float64 values, labels as the
    class indices 0 .. C-1 (as an in-memory fit encodes them), weights or None."""
    if hasattr(x, "to_numpy"):  # pandas
        x = x.to_numpy(dtype=np.float64)
    # A CSR chunk of float64 values is used as it is (its arrays shared, not copied).
    matrix = sp.csr_matrix(x, dtype=np.float64) if not sp.issparse(x) else x.tocsr().astype(np.float64, copy=False)
    indptr, indices, data = linear_model.csr_arrays(matrix)
    y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y).ravel()
    if y.shape[0] != matrix.shape[0]:
        raise ValueError("a partition has %d rows of X and %d labels: X and y must be partitioned alike"
                         % (matrix.shape[0], y.shape[0]))
    labels = np.searchsorted(classes, y).astype(np.float64)
    if weights is not None:
        weights = np.ascontiguousarray(np.asarray(weights.to_numpy() if hasattr(weights, "to_numpy") else weights,
                                                  dtype=np.float64).ravel())
        if weights.shape[0] != matrix.shape[0]:
            raise ValueError("a partition has %d rows and %d sample weights" % (matrix.shape[0], weights.shape[0]))
    return {"indptr": indptr, "indices": indices, "data": data, "n_features": matrix.shape[1], "y": labels,
            "sample_weight": weights}


def _part_rows(part):
    return int(part["indptr"].size - 1)


def _serve(arguments, client_secret, key, part):
    """A Dask task: serves one nimbus worker with its partition until the master lets it go,
    outside the worker's pool of task threads (each part's worker runs at once with the others
    on the same Dask worker)."""
    from distributed import secede

    secede()
    return _nimbus.serve_worker(arguments, client_secret, key, part["indptr"], part["indices"], part["data"],
                                part["n_features"], part["y"], part["sample_weight"])


class _HeldParts:
    """The partitions of a fit on the cluster, served by nimbus workers where they lie."""

    def __init__(self, estimator, X, y, sample_weight):
        import dask
        import dask.array as da
        from distributed import default_client

        if y is None:
            raise ValueError("y: the labels, a dask collection partitioned as X is")
        self.client = estimator.client or default_client()
        self.n_features = int(X.shape[1]) if not np.isnan(X.shape[1]) else len(X.columns)
        rows_chunks = X.chunks[0] if isinstance(X, da.Array) else None
        xs = _blocks(X)
        ys = _blocks(y, rows_chunks)
        ws = _blocks(sample_weight, rows_chunks) if sample_weight is not None else [None] * len(xs)
        if not len(xs) == len(ys) == len(ws):
            raise ValueError("X, y and sample_weight: %d, %d and %d partitions; they must be partitioned alike"
                             % (len(xs), len(ys), len(ws)))
        # The classes: a small reduction over y (only its distinct values reach the client).
        (classes,) = dask.compute(da.unique(y.to_dask_array() if hasattr(y, "to_dask_array") else y))
        self.classes = np.asarray(classes)
        if self.classes.size < 2:
            raise ValueError("this solver needs samples of at least 2 classes in the data, but the data contains "
                             "only one class: %r" % (self.classes[0],))
        to_part = dask.delayed(_part_arrays, pure=True)
        self.parts = self.client.compute([to_part(x, yy, w, self.classes) for x, yy, w in zip(xs, ys, ws)])
        rows = self.client.gather(self.client.map(_part_rows, self.parts))
        self.kept = [part for part, count in zip(self.parts, rows) if count > 0]  # an empty one has nothing to serve
        if not self.kept:
            raise ValueError("X: no rows")
        self.rows = int(sum(rows))
        self.keys = ["part-%d" % i for i in range(len(self.kept))]
        self.run = uuid.uuid4().hex[:12]
        self.started = []

    def start_worker(self, worker, invocation, arguments, client_secret):
        """RuntimeOptions::start_worker: a task that serves part `worker` where Dask has it."""
        future = self.client.submit(_serve, list(arguments), client_secret, self.keys[worker], self.kept[worker],
                                    pure=False, key="nimbus-%s-worker-%d-%d" % (self.run, worker, invocation))
        self.started.append(future)
        return future

    def release(self, timeout=10):
        """After the master's BYE (or Ctrl-C, which ends the solve with one), the workers' tasks
        end by themselves: wait for them a bounded while, then let go of the partitions."""
        from distributed import wait

        try:
            wait(self.started, timeout=timeout)
        except Exception:  # a task still running past the bound: cancelled below
            pass
        self.client.cancel(self.started + self.parts)


class _DaskFit:
    """What both estimators do with Dask inputs: the options of a fit on held parts."""

    def _dask_options(self, parts):
        if self.warm_start:
            raise ValueError("warm_start: not yet with Dask inputs")
        self.classes_ = parts.classes
        self.n_features_in_ = parts.n_features
        options = self._solver_options(self.classes_.size)
        for key in ("workers", "worker_program"):  # a worker per part, in the Dask workers
            options.pop(key, None)
        options["runtime"] = "command"
        options.update(getattr(self, "_test_faults", {}))  # tests: inject_crash "@WORKER:ROUND", inject_delay "MS"
        return options


class LogisticRegression(_DaskFit, linear_model.LogisticRegression):
    __doc__ = linear_model.LogisticRegression.__doc__ + """
    On dask.array and dask.dataframe inputs (nimbus.dask): each partition is fitted where it lies,
    a nimbus worker per non-empty partition, on `client`'s cluster (None: distributed's default
    client). n_workers and runtime do not apply there. After a fit on them, worker_restarts_ is
    how many nimbus workers were started again and bytes_received_ what the master received.
    """

    def __init__(self, penalty="l2", *, C=1.0, l1_ratio=None, fit_intercept=True, tol=1e-5, max_iter=1000,
                 solver="auto", class_weight=None, multi_class="auto", warm_start=False, n_workers=None,
                 runtime="threads", runtime_options=None, verbose=0, progress=True, client=None):
        super().__init__(penalty, C=C, l1_ratio=l1_ratio, fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
                         solver=solver, class_weight=class_weight, multi_class=multi_class, warm_start=warm_start,
                         n_workers=n_workers, runtime=runtime, runtime_options=runtime_options, verbose=verbose,
                         progress=progress)
        self.client = client

    def fit(self, X, y=None, sample_weight=None):
        if not is_dask_collection(X):
            return super().fit(X, y, sample_weight)
        if not (isinstance(self.C, (int, float, np.number)) and self.C > 0 and np.isfinite(self.C)):
            raise ValueError("C: must be a positive number, got %r" % (self.C,))
        self._check_parameters()
        parts = _HeldParts(self, X, y, sample_weight)
        try:
            options = self._dask_options(parts)
            ratio = {"l1": 1.0, "l2": 0.0}.get(self.penalty, self.l1_ratio)
            options.update(l1=float(ratio), l2=float(1.0 - ratio), c=float(self.C))
            with linear_model.shown_progress(options):
                outcome = _nimbus.fit_held(parts.keys, parts.n_features, options, parts.start_worker)
        finally:
            parts.release()
        self.worker_restarts_ = int(outcome["worker_restarts"])
        self.bytes_received_ = int(outcome["bytes_received"])
        self._keep(outcome)
        return self


class LogisticRegressionCV(_DaskFit, linear_model.LogisticRegressionCV):
    __doc__ = linear_model.LogisticRegressionCV.__doc__ + """
    On dask.array and dask.dataframe inputs (nimbus.dask): as nimbus.dask.LogisticRegression
    fits them, each worker dealing its rows' folds and scoring those it holds out (folds_ is
    then None).
    """

    warm_start = False

    def __init__(self, *, Cs=10, cv=5, penalty="l2", scoring=None, fit_intercept=True, tol=1e-5, max_iter=1000,
                 solver="auto", class_weight=None, multi_class="auto", refit=True, random_state=None,
                 n_workers=None, runtime="threads", runtime_options=None, verbose=0, progress=True, client=None):
        super().__init__(Cs=Cs, cv=cv, penalty=penalty, scoring=scoring, fit_intercept=fit_intercept, tol=tol,
                         max_iter=max_iter, solver=solver, class_weight=class_weight, multi_class=multi_class,
                         refit=refit, random_state=random_state, n_workers=n_workers, runtime=runtime,
                         runtime_options=runtime_options, verbose=verbose, progress=progress)
        self.client = client

    def fit(self, X, y=None, sample_weight=None):
        if not is_dask_collection(X):
            return super().fit(X, y, sample_weight)
        self._check_parameters()
        parts = _HeldParts(self, X, y, sample_weight)
        try:
            options = self._dask_options(parts)
            cv_options = self._cv_options(parts.rows)
            with linear_model.shown_progress(options, linear_model.grid_points(cv_options)):
                result = _nimbus.cross_validate_held(parts.keys, parts.n_features, options, cv_options,
                                                     parts.start_worker)
        finally:
            parts.release()
        return self._keep_cv(result)
