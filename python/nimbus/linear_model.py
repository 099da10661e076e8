"""scikit-learn estimators over nimbus's solver.

nimbus minimizes F(w) = (1/N) sum_r c_r loss(y_r, x_r . w + b) + l1 ||w||_1 + (l2/2) ||w||^2.
scikit-learn's LogisticRegression minimizes C sum_r s_r loss_r + r ||w||_1 + (1 - r)/2 ||w||^2
(r = 1 for 'l1', 0 for 'l2', l1_ratio for 'elasticnet'), which is C N times F with
l1 = r / (C N) and l2 = (1 - r) / (C N): the same model.
"""

import contextlib
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.linear_model._base import LinearClassifierMixin, SparseCoefMixin
from sklearn.utils.extmath import softmax
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _nimbus

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The worker program of the process runtime: the nimbus binary the package carries.
WORKER_PROGRAM = os.path.join(_PACKAGE_DIR, "bin", "nimbus")

_PENALTIES = ("l1", "l2", "elasticnet")
_MULTI_CLASS = ("auto", "ovr", "multinomial")
_SOLVERS = ("auto", "newton", "admm", "columns")
_RUNTIMES = ("threads", "process", "command", "lambda", "mpi")
# runtime_options' keys: RuntimeOptions' fields (docs/python.md says what each does).
RUNTIME_OPTIONS = ("lambda_function", "lambda_endpoint", "lambda_pass_credentials", "shard_dir", "launch", "hosts",
                   "listen", "advertise", "insecure", "worker_program", "max_restarts", "heartbeat", "max_lifetime",
                   "round_timeout_floor", "worker_memory_mb", "relays", "relay_fanout", "relay_workers",
                   "relay_hosts", "algorithm_profiles")


class _Progress:
    """A fit's progress once it has run a second: a tqdm bar (tqdm.auto: a widget in a notebook,
    a line on a terminal) where tqdm is installed, else a plain line on standard error every
    few seconds. A solve's is its stop test's measure on a log scale, from its first value to its
    target; a cross-validation's, the grid's points done (`points` of them)."""

    delay_seconds = 1.0
    plain_every_seconds = 5.0

    def __init__(self, points=None):
        self.points = points
        self.points_done = 0
        self.first_measure = None
        self.started = time.monotonic()
        self.bar = None
        self.plain_at = 0.0

    def __call__(self, iteration, objective, measure, target, elapsed):
        """Each iteration's (from the solver's callback)."""
        if self.first_measure is None and measure > 0:
            self.first_measure = measure
        fraction = 0.0
        if self.first_measure and target > 0 and measure > 0 and self.first_measure > target:
            fraction = np.log(self.first_measure / measure) / np.log(self.first_measure / target)
        if self.points:
            fraction = (self.points_done + min(max(fraction, 0.0), 1.0)) / self.points
            return self._show(fraction, "C %d of %d" % (min(self.points_done + 1, self.points), self.points))
        self._show(fraction, "iteration %d, objective %.8g" % (iteration, objective))

    def point(self, lam):
        """A cross-validation's point done (from its callback)."""
        self.points_done += 1
        self.first_measure = None
        if self.points:
            self._show(self.points_done / self.points, "C %d of %d" % (self.points_done, self.points))

    def _show(self, fraction, text):
        now = time.monotonic()
        if now - self.started < self.delay_seconds:
            return
        percent = int(100 * min(max(fraction, 0.0), 1.0))
        if self.bar is None and self.plain_at == 0.0:
            try:
                from tqdm.auto import tqdm
                self.bar = tqdm(total=100, desc="nimbus", unit="%", bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                                "{elapsed}{postfix}")
            except ImportError:
                self.plain_at = now - self.plain_every_seconds
        if self.bar is not None:
            self.bar.n = max(self.bar.n, percent)
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.refresh()
        elif now - self.plain_at >= self.plain_every_seconds:
            self.plain_at = now
            print("nimbus: %d%% (%s, %.0f s)" % (percent, text, now - self.started), file=sys.stderr, flush=True)

    def close(self, finished):
        """The display ended: at 100% when the solve finished (its last iteration's measure may
        be reported before the step that met the stop test)."""
        if self.bar is not None:
            if finished:
                self.bar.n = 100
                self.bar.refresh()
            self.bar.close()
            self.bar = None
        elif finished and self.plain_at != 0.0:
            print("nimbus: 100%% (%.0f s)" % (time.monotonic() - self.started), file=sys.stderr, flush=True)


def grid_points(cv_options):
    """The points of a cross-validation's grid."""
    return cv_options.get("length") or len(cv_options.get("lambdas") or cv_options.get("cs") or ())


@contextlib.contextmanager
def shown_progress(options, points=None):
    """options["progress"] (the estimator's display, if any) for the length of a solve, with
    `points` for a cross-validation's grid; closed however the solve ends."""
    progress = options.get("progress")
    if progress is not None:
        progress.points = points
    finished = False
    try:
        yield
        finished = True
    finally:
        if progress is not None:
            progress.close(finished)


def csr_arrays(X):
    """The arrays of a CSR matrix as nimbus reads them: int64 indptr, uint32 indices (a view
    of int32 ones, not a copy) and float64 data, with each row's indices ascending and unique.
    Only indptr is copied when it is int32 (rows + 1 entries)."""
    X = sp.csr_matrix(X) if not sp.isspmatrix_csr(X) else X
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # sorts the indices too
    indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
    indices = X.indices
    if indices.dtype == np.int64:
        if indices.size and indices.max() >= 2**32:
            raise ValueError("X: a column index does not fit in 32 bits")
        indices = indices.astype(np.uint32)
    else:
        indices = np.ascontiguousarray(indices).view(np.uint32)
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    return indptr, indices, data


class _NimbusClassifier(LinearClassifierMixin, SparseCoefMixin, BaseEstimator):
    """What the estimators share: parameter checks, the options nimbus gets, the data as CSR
    arrays, and the model kept (coef_, intercept_, classes_)."""

    def _check_parameters(self):
        if self.penalty not in self._penalties:
            raise ValueError("penalty: must be one of %s, got %r" % (", ".join(self._penalties), self.penalty))
        if self.penalty == "elasticnet" and (self.l1_ratio is None or not 0 <= self.l1_ratio <= 1):
            raise ValueError("l1_ratio: must be in [0, 1] with penalty='elasticnet', got %r" % (self.l1_ratio,))
        if not (isinstance(self.tol, (int, float, np.number)) and 0 < self.tol < 1):
            raise ValueError("tol: must be in (0, 1), got %r" % (self.tol,))
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 0):
            raise ValueError("max_iter: must be an integer >= 0, got %r" % (self.max_iter,))
        if self.solver not in _SOLVERS:
            raise ValueError("solver: must be one of %s, got %r" % (", ".join(_SOLVERS), self.solver))
        if self.multi_class not in _MULTI_CLASS:
            raise ValueError("multi_class: must be one of %s, got %r" % (", ".join(_MULTI_CLASS), self.multi_class))
        if self.runtime not in _RUNTIMES:
            raise ValueError("runtime: must be one of %s, got %r" % (", ".join(_RUNTIMES), self.runtime))
        if self.n_workers is not None and not (isinstance(self.n_workers, (int, np.integer)) and self.n_workers >= 1):
            raise ValueError("n_workers: must be an integer >= 1 or None, got %r" % (self.n_workers,))

    def _solver_options(self, n_classes):
        """Everything but the regularization, which the caller sets."""
        options = {
            "intercept": bool(self.fit_intercept),
            "gradient_tolerance": float(self.tol),
            "max_iterations": int(self.max_iter),
            "algorithm": self.solver,
            "multiclass": "ovr" if self.multi_class == "ovr" or n_classes <= 2 else "multinomial",
            "runtime": self.runtime,
            "verbose": int(self.verbose),
        }
        if self.progress and not self.verbose:  # verbose > 0 prints each iteration instead
            options["progress"] = _Progress()
        if self.n_workers is not None:
            options["workers"] = int(self.n_workers)
        if self.runtime == "process":
            options["worker_program"] = WORKER_PROGRAM
        unknown = sorted(set(self.runtime_options or {}) - set(RUNTIME_OPTIONS))
        if unknown:
            raise ValueError("runtime_options: unknown option %r (known: %s)" % (unknown[0], ", ".join(RUNTIME_OPTIONS)))
        options.update(self.runtime_options or {})
        if isinstance(self.class_weight, str):
            if self.class_weight != "balanced":
                raise ValueError("class_weight: must be a dict, 'balanced' or None, got %r" % (self.class_weight,))
            options["class_weight_balanced"] = True
        elif self.class_weight is not None:
            # nimbus sees the class indices 0 .. C-1 as labels.
            weights = {}
            for label, weight in dict(self.class_weight).items():
                found = np.flatnonzero(self.classes_ == label)
                if found.size == 0:
                    raise ValueError("class_weight: the label %r does not occur in y" % (label,))
                weights[float(found[0])] = float(weight)
            options["class_weight"] = weights
        return options

    def _location_options(self, location, y, sample_weight):
        """For LIBSVM text at `location`, which the workers read: the options (class weights by
        the file's labels, which nimbus maps itself) and the sample weights file (or None)."""
        if y is not None:
            raise ValueError("y: the labels are in the file %r; give y=None" % (location,))
        if sample_weight is not None and not isinstance(sample_weight, (str, os.PathLike)):
            raise ValueError("sample_weight: with a file's data, a file of one weight per line (or None)")
        self._check_parameters()
        class_weight = self.class_weight
        if isinstance(class_weight, dict):
            self.class_weight = None
        options = self._solver_options(0)
        self.class_weight = class_weight
        if isinstance(class_weight, dict):
            options["class_weight"] = {float(label): float(weight) for label, weight in class_weight.items()}
        # As for arrays: the softmax for three classes or more (unless 'ovr'), one problem for two.
        options["multiclass"] = "ovr" if self.multi_class == "ovr" else "auto"
        return options, os.fspath(sample_weight) if sample_weight is not None else None

    def _prepare(self, X, y, sample_weight):
        """The arrays nimbus solves on: (indptr, indices, data, n_features, labels, weights),
        with classes_ and n_features_in_ set."""
        self._check_parameters()
        X, y = self._validate_data(X, y, accept_sparse="csr", dtype=np.float64, order="C",
                                   accept_large_sparse=True)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError("this solver needs samples of at least 2 classes in the data, but the data contains "
                             "only one class: %r" % (self.classes_[0],))
        weights = None
        if sample_weight is not None:
            weights = np.ascontiguousarray(sample_weight, dtype=np.float64)
            if weights.shape != (X.shape[0],):
                raise ValueError("sample_weight: expected %d weights, got shape %r" % (X.shape[0], weights.shape))
        indptr, indices, data = csr_arrays(X)
        return indptr, indices, data, X.shape[1], encoded.astype(np.float64), weights

    def _keep(self, outcome):
        self.coef_ = outcome["coef"]
        self.intercept_ = outcome["intercept"]
        self.n_iter_ = np.array([outcome["iterations"]], dtype=np.int32)
        self.objective_ = outcome["objective"]
        self.solve_summary_ = {k: outcome[k] for k in ("termination", "message", "rounds", "solve_seconds",
                                                        "cost_dollars", "algorithm", "algorithm_reason")}
        self._multinomial = bool(outcome["multinomial"])

    def predict_proba(self, X):
        """Class probabilities: the sigmoid of the decision value for two classes, each
        class's sigmoid normalized over the classes for one-vs-rest, the softmax for
        multinomial models."""
        check_is_fitted(self)
        if self._multinomial:
            return softmax(self.decision_function(X).copy())
        return super()._predict_proba_lr(X)

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class LogisticRegression(_NimbusClassifier):
    """Logistic regression solved by nimbus on threads, local processes, AWS Lambda functions
    or MPI ranks, with scikit-learn's parameters and their meaning.

    Parameters
    ----------
    penalty : 'l1', 'l2' or 'elasticnet'
    C : float, inverse of the regularization strength (scikit-learn's meaning)
    l1_ratio : float in [0, 1], for 'elasticnet'
    fit_intercept : bool; the intercept is not penalized
    tol : float in (0, 1), the stop test: the norm of the minimum subgradient relative to
        its value at the start (nimbus's --gradient-tolerance)
    max_iter : int, Newton steps (or ADMM iterations)
    solver : 'auto' (distributed Newton; the column method, one block in this process, for a
        binary 'l1' or 'elasticnet' problem with fit_intercept on threads with n_workers None, where
        it was measured faster), 'newton', 'admm' (consensus ADMM) or 'columns' (coordinate
        descent on n_workers blocks of columns in this process, liblinear's newGLMNET's kind:
        for weakly regularized L1; threads runtime, one-vs-rest, no warm start)
    class_weight : None, a dict {label: weight} or 'balanced'
    multi_class : 'auto' (multinomial for three classes or more), 'ovr' or 'multinomial'
    warm_start : bool, start from the previous fit's coef_ and intercept_ (same classes and
        features) instead of zero; the stop test is still relative to zero, so the answer is
        a cold start's, reached in fewer steps from near it
    n_workers : int or None, the workers (None: the runtime's default, this machine's cores
        for threads)
    runtime : 'threads', 'process', 'command', 'lambda' or 'mpi'
    runtime_options : dict of nimbus's runtime options (RUNTIME_OPTIONS: lambda_function,
        lambda_endpoint, shard_dir (s3://bucket/prefix for Lambda workers), launch, hosts, ...)
    verbose : int, > 0 prints each iteration
    progress : bool, a fit that runs longer than a second shows its progress: a tqdm bar where
        tqdm is installed (a widget in a notebook), plain lines on standard error otherwise
    """

    def __init__(self, penalty="l2", *, C=1.0, l1_ratio=None, fit_intercept=True, tol=1e-5, max_iter=1000,
                 solver="auto", class_weight=None, multi_class="auto", warm_start=False, n_workers=None,
                 runtime="threads", runtime_options=None, verbose=0, progress=True):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver
        self.class_weight = class_weight
        self.multi_class = multi_class
        self.warm_start = warm_start
        self.n_workers = n_workers
        self.runtime = runtime
        self.runtime_options = runtime_options
        self.verbose = verbose
        self.progress = progress

    _penalties = _PENALTIES

    def _previous_fit(self):
        """(classes_, coef_ dense, intercept_) of the fit a warm start starts from, or None."""
        if not self.warm_start or not hasattr(self, "coef_"):
            return None
        coef = self.coef_.toarray() if sp.issparse(self.coef_) else np.asarray(self.coef_)
        return self.classes_, coef, np.asarray(self.intercept_, dtype=np.float64)

    def _warm_start_options(self, previous, n_features):
        classes, coef, intercept = previous
        if not np.array_equal(classes, self.classes_) or coef.shape[1] != n_features:
            raise ValueError("warm_start: the previous fit had classes %r and %d features; this data has classes %r "
                             "and %d features" % (list(classes), coef.shape[1], list(self.classes_), n_features))
        return {"warm_start_coef": coef, "warm_start_intercept": intercept}

    def fit(self, X, y=None, sample_weight=None):
        """Fits the model on X (a numpy array or a scipy.sparse matrix) and labels y; or on the
        LIBSVM text at the location X (a file, a directory or s3:// prefix of files, several
        separated by commas, plain or .gz/.zst/.xz), y None, which the workers read themselves:
        no process, this one included, reads all of it. sample_weight is then a file of one
        weight per line, a line per row, or None."""
        if not (isinstance(self.C, (int, float, np.number)) and self.C > 0 and np.isfinite(self.C)):
            raise ValueError("C: must be a positive number, got %r" % (self.C,))
        if isinstance(X, (str, os.PathLike)):
            return self._fit_location(os.fspath(X), y, sample_weight)
        previous = self._previous_fit()  # before _prepare sets classes_ anew
        indptr, indices, data, n_features, labels, weights = self._prepare(X, y, sample_weight)
        options = self._solver_options(self.classes_.size)
        if previous is not None:
            options.update(self._warm_start_options(previous, n_features))
        ratio = {"l1": 1.0, "l2": 0.0}.get(self.penalty, self.l1_ratio)
        scale = 1.0 / (self.C * labels.size)
        options.update(l1=ratio * scale, l2=(1.0 - ratio) * scale)
        with shown_progress(options):
            self._keep(_nimbus.fit(indptr, indices, data, n_features, labels, weights, options))
        return self


    def _fit_location(self, location, y, sample_weight):
        if self.warm_start:
            raise ValueError("warm_start: not with a file's data (its classes are known once it is read)")
        options, weights = self._location_options(location, y, sample_weight)
        ratio = {"l1": 1.0, "l2": 0.0}.get(self.penalty, self.l1_ratio)
        options.update(l1=float(ratio), l2=float(1.0 - ratio), c=float(self.C))
        with shown_progress(options):
            outcome = _nimbus.fit_file(location, weights, options)
        self.classes_ = np.asarray(outcome["classes"], dtype=np.float64)
        self.n_features_in_ = int(outcome["n_features"])
        _sparse_coef(outcome, self.n_features_in_)
        self._keep(outcome)
        return self


def _sparse_coef(outcome, n_features):
    """An outcome of a feature space too large for a dense coef_: its coef as a CSR matrix."""
    if "coef" in outcome:
        return
    held = outcome["coef_held"]
    columns = np.asarray(outcome["coef_columns"], dtype=np.int64)
    outcome["coef"] = sp.csr_matrix((held.ravel(), np.tile(columns, held.shape[0]),
                                     np.arange(held.shape[0] + 1) * columns.size), shape=(held.shape[0], n_features))


# scikit-learn's scoring names -> nimbus's metrics, and whether scikit-learn negates it.
_SCORINGS = {"accuracy": ("accuracy", 1.0), "neg_log_loss": ("log_loss", -1.0), "roc_auc": ("auc", 1.0)}


class LogisticRegressionCV(_NimbusClassifier):
    """Logistic regression with C chosen by K-fold cross-validation, nimbus's `cv`: the folds'
    problems and the one on all the data are solved side by side, as copies of one problem in
    the same passes over the data, at each C of the grid in turn (each warm-started from the
    one before). With solver='columns' (L1, two classes; auto's choice for L1 on the threads
    runtime), each fold's problem and the one on all the data are paths of their own, stepped C
    by C side by side on this process's cores.

    Parameters as LogisticRegression's, and
    Cs : int or list of floats. An int: that many values from the smallest C whose L1 model
        is zero (nimbus's lambda_max; 1000 times below that for L2) upwards, evenly in log,
        over 3 decades (L1) or 6 (L2). A list: those values.
    cv : int, the folds (stratified by label, shuffled with random_state)
    penalty : 'l1' or 'l2'
    scoring : None (accuracy), 'accuracy', 'neg_log_loss' or 'roc_auc' (two classes)
    refit : True: the model is the one on all the data at the best C (the only choice)
    random_state : int, the folds' seed (None: 1)

    Attributes as LogisticRegression's, and C_ (the best C, per class as scikit-learn keeps
    it), Cs_, scores_: {class: array (folds, Cs)} of the scoring per fold (one entry, for
    classes_[1], with two classes), and folds_, the fold each row is held out in.
    """

    _penalties = ("l1", "l2")

    def __init__(self, *, Cs=10, cv=5, penalty="l2", scoring=None, fit_intercept=True, tol=1e-5, max_iter=1000,
                 solver="auto", class_weight=None, multi_class="auto", refit=True, random_state=None,
                 n_workers=None, runtime="threads", runtime_options=None, verbose=0, progress=True):
        self.Cs = Cs
        self.cv = cv
        self.penalty = penalty
        self.scoring = scoring
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver
        self.class_weight = class_weight
        self.multi_class = multi_class
        self.refit = refit
        self.random_state = random_state
        self.n_workers = n_workers
        self.runtime = runtime
        self.runtime_options = runtime_options
        self.verbose = verbose
        self.progress = progress

    l1_ratio = None  # no elastic net here

    def _cv_options(self, n_samples):
        if not (isinstance(self.cv, (int, np.integer)) and self.cv >= 2):
            raise ValueError("cv: must be an integer number of folds >= 2, got %r" % (self.cv,))
        if self.scoring is not None and self.scoring not in _SCORINGS:
            raise ValueError("scoring: must be None or one of %s, got %r" % (", ".join(_SCORINGS), self.scoring))
        if self.refit is not True:
            raise ValueError("refit: only True (the model on all the data at the best C) is supported")
        options = {"folds": int(self.cv), "seed": 1 if self.random_state is None else int(self.random_state),
                   "metric": _SCORINGS[self.scoring or "accuracy"][0], "penalty": self.penalty}
        if isinstance(self.Cs, (int, np.integer)):
            if self.Cs < 1:
                raise ValueError("Cs: must be >= 1, got %r" % (self.Cs,))
            options["length"] = int(self.Cs)
        else:
            Cs = np.asarray(self.Cs, dtype=np.float64)
            if Cs.ndim != 1 or Cs.size == 0 or not np.all(Cs > 0) or not np.all(np.isfinite(Cs)):
                raise ValueError("Cs: must be an int or a list of positive numbers, got %r" % (self.Cs,))
            if n_samples is None:  # a file's: nimbus scales the Cs once its rows are counted
                options["cs"] = [float(C) for C in Cs]
            else:
                options["lambdas"] = sorted(1.0 / (Cs * n_samples), reverse=True)
        return options

    def _cross_validate_location(self, location, y, sample_weight):
        options, weights = self._location_options(location, y, sample_weight)
        cv_options = self._cv_options(None)
        with shown_progress(options, grid_points(cv_options)):
            result = _nimbus.cross_validate_file(location, weights, options, cv_options)
        best = result["points"][result["best"]]
        self.classes_ = np.asarray(best["classes"], dtype=np.float64)
        self.n_features_in_ = int(best["n_features"])
        for point in result["points"]:
            _sparse_coef(point, self.n_features_in_)
        return result

    def fit(self, X, y=None, sample_weight=None):
        """Cross-validates along the grid and keeps the model on all the data at the best C.
        X: a numpy array or scipy.sparse matrix with labels y; or the location of LIBSVM text
        (as LogisticRegression.fit takes it), y None, which the workers read, deal the folds of
        and score themselves (folds_ is then None; `nimbus cv --write-folds` lists them)."""
        if isinstance(X, (str, os.PathLike)):
            result = self._cross_validate_location(os.fspath(X), y, sample_weight)
        else:
            indptr, indices, data, n_features, labels, weights = self._prepare(X, y, sample_weight)
            options, cv_options = self._solver_options(self.classes_.size), self._cv_options(labels.size)
            with shown_progress(options, grid_points(cv_options)):
                result = _nimbus.cross_validate(indptr, indices, data, n_features, labels, weights, options,
                                                cv_options)
        return self._keep_cv(result)

    def _keep_cv(self, result):
        """The model at the best C, and the grid's scores, from a cross-validation's result."""
        n_samples = result["rows"]
        points = result["points"]  # largest lambda (smallest C) first
        self.Cs_ = np.array([1.0 / (p["lambda"] * n_samples) for p in points])
        best = points[result["best"]]
        self._keep(best)
        blocks = self.coef_.shape[0]
        self.C_ = np.full(blocks, self.Cs_[result["best"]])
        sign = _SCORINGS[self.scoring or "accuracy"][1]
        per_fold = sign * np.array([p["folds"][result["metric"]] for p in points]).T  # folds x Cs
        keys = self.classes_[1:] if self.classes_.size == 2 else self.classes_
        self.scores_ = {key: per_fold for key in keys}
        self.folds_ = result.get("fold_of_rows")  # the fold each row is held out in
        self.cv_summary_ = {"lambda_max": result["lambda_max"], "best": result["best"], "one_se": result["one_se"],
                            "metric": result["metric"], "wall_seconds": result["wall_seconds"],
                            "cost_dollars": result["cost_dollars"]}
        return self
