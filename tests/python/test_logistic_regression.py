"""nimbus.LogisticRegression against scikit-learn's own solvers, on data nimbus did not make.

Objectives are scikit-learn's, C sum_r s_r log(1 + exp(-y_r m_r)) + penalty(w), written out
here from the formula; each fit must end within 1e-5 relative of the reference solver's.
"""

import json
import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler

import nimbus
from nimbus.linear_model import csr_arrays

def objective(model, X, y, C, penalty, l1_ratio=None, sample_weight=None):
    """scikit-learn's binary objective at a fitted model's coef_ and intercept_."""
    signs = np.where(y == model.classes_[1], 1.0, -1.0)
    margins = X @ model.coef_.ravel() + np.atleast_1d(model.intercept_)[0]
    weights = np.ones_like(signs) if sample_weight is None else sample_weight
    loss = C * np.sum(weights * np.logaddexp(0.0, -signs * margins))
    w = model.coef_.ravel()
    ratio = {"l1": 1.0, "l2": 0.0}.get(penalty, l1_ratio)
    return loss + ratio * np.abs(w).sum() + (1.0 - ratio) * 0.5 * w @ w


def relative_gap(ours, reference):
    return (ours - reference) / abs(reference)


def test_l1_matches_liblinear(heart):
    X, y = heart
    C = 0.5
    ours = nimbus.LogisticRegression(penalty="l1", C=C, fit_intercept=False, n_workers=2).fit(X, y)
    reference = SkLogisticRegression(penalty="l1", C=C, fit_intercept=False, solver="liblinear", tol=1e-10,
                                     max_iter=10000).fit(X, y)
    gap = relative_gap(objective(ours, X, y, C, "l1"), objective(reference, X, y, C, "l1"))
    assert gap < 1e-5, gap
    assert np.count_nonzero(ours.coef_) < X.shape[1]  # an l1 model drops some features
    np.testing.assert_array_equal(ours.classes_, [-1.0, 1.0])
    assert ours.coef_.shape == (1, X.shape[1]) and ours.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("data", ["fashion", "text"])
@pytest.mark.parametrize("penalty", ["l1", "l2"])
@pytest.mark.parametrize("solver", ["auto", "columns"])
def test_real_data_matches_scikit_learn(data, penalty, solver, request):
    """L1 against liblinear (which penalizes an intercept: none here), L2 with an intercept
    against lbfgs, on 3,000 Fashion-MNIST images and 3,000 rows of the text-like set; with the
    default solver (distributed Newton) and the column method."""
    X, y = request.getfixturevalue(data)
    C = 1.0
    intercept = penalty == "l2"
    ours = nimbus.LogisticRegression(penalty=penalty, C=C, fit_intercept=intercept, n_workers=2,
                                     solver=solver).fit(X, y)
    if penalty == "l1":
        reference = SkLogisticRegression(penalty="l1", C=C, fit_intercept=False, solver="liblinear", tol=1e-8,
                                         max_iter=100000).fit(X, y)
    else:
        reference = SkLogisticRegression(C=C, solver="lbfgs", tol=1e-10, max_iter=100000).fit(X, y)
    gap = relative_gap(objective(ours, X, y, C, penalty), objective(reference, X, y, C, penalty))
    assert gap < 1e-5, gap
    assert ours.solve_summary_["termination"] == "converged"
    assert ours.solve_summary_["algorithm"] == ("columns" if solver == "columns" else "newton")


@pytest.mark.parametrize("solver", ["auto", "columns"])
def test_l2_with_intercept_and_weights_matches_lbfgs(heart, solver):
    X, y = heart
    C = 2.0
    weights = np.linspace(0.5, 1.5, X.shape[0])
    ours = nimbus.LogisticRegression(C=C, n_workers=2, solver=solver).fit(X, y, sample_weight=weights)
    reference = SkLogisticRegression(C=C, solver="lbfgs", tol=1e-12, max_iter=100000).fit(
        X.toarray(), y, sample_weight=weights)
    gap = relative_gap(objective(ours, X, y, C, "l2", sample_weight=weights),
                       objective(reference, X, y, C, "l2", sample_weight=weights))
    assert abs(gap) < 1e-5, gap
    np.testing.assert_allclose(ours.predict_proba(X), reference.predict_proba(X.toarray()), atol=1e-4)
    assert ours.score(X, y) == pytest.approx(reference.score(X.toarray(), y), abs=0.01)


def test_csr_arrays_view_the_matrix_without_copying(heart):
    X, _ = heart
    indptr, indices, data = csr_arrays(X)
    assert np.shares_memory(indices, X.indices) and np.shares_memory(data, X.data)
    assert indptr.dtype == np.int64 and indices.dtype == np.uint32


def three_classes(X, y):
    """heart_scale's labels with a third class: the positive rows whose first feature is below
    its median."""
    first = X[:, 0].toarray().ravel()
    return np.where((y > 0) & (first < np.median(first)), 2.0, y)


def softmax_objective(model, X, labels, C):
    """scikit-learn's multinomial objective with an l2 penalty at a fitted model."""
    m = X @ model.coef_.T + model.intercept_
    rows = np.arange(X.shape[0])
    index = np.searchsorted(model.classes_, labels)
    loss = np.sum(np.logaddexp.reduce(m, axis=1) - m[rows, index])
    return C * loss + 0.5 * np.sum(model.coef_ ** 2)


def test_three_classes_multinomial_matches_lbfgs(heart):
    X, y = heart
    labels = three_classes(X, y)
    C = 1.0
    ours = nimbus.LogisticRegression(C=C, multi_class="multinomial", n_workers=2).fit(X, labels)
    reference = SkLogisticRegression(C=C, multi_class="multinomial", solver="lbfgs", tol=1e-12,
                                     max_iter=100000).fit(X.toarray(), labels)
    assert abs(relative_gap(softmax_objective(ours, X, labels, C), softmax_objective(reference, X, labels, C))) < 1e-5
    probabilities = ours.predict_proba(X)
    assert probabilities.shape == (X.shape[0], 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ours.classes_[probabilities.argmax(axis=1)])


@pytest.mark.parametrize("classes", [2, 3])
def test_warm_start_from_another_C_reaches_lbfgs_in_fewer_steps(heart, classes):
    """A second fit with warm_start=True starts from the first's coef_ and intercept_: it ends
    at scikit-learn's optimum for the new C (not nearer the old one's), in fewer Newton steps
    than a fit from zero."""
    X, y = heart
    labels = y if classes == 2 else three_classes(X, y)
    C = 1.0
    model = nimbus.LogisticRegression(C=4 * C, warm_start=True, n_workers=2).fit(X, labels)
    cold = nimbus.LogisticRegression(C=C, n_workers=2).fit(X, labels)
    model.set_params(C=C).fit(X, labels)
    reference = SkLogisticRegression(C=C, solver="lbfgs", tol=1e-12, max_iter=100000).fit(X.toarray(), labels)
    if classes == 2:
        gap = relative_gap(objective(model, X, labels, C, "l2"), objective(reference, X, labels, C, "l2"))
    else:
        gap = relative_gap(softmax_objective(model, X, labels, C), softmax_objective(reference, X, labels, C))
    assert abs(gap) < 1e-5, gap
    assert model.n_iter_[0] < cold.n_iter_[0], (model.n_iter_, cold.n_iter_)
    with pytest.raises(ValueError, match="warm_start: the previous fit had classes .* and 13 features; this data has "
                                         "classes .* and 5 features"):
        model.fit(X[:, :5], labels)


def test_pickles_and_works_in_pipelines_and_searches(heart):
    X, y = heart
    model = nimbus.LogisticRegression(C=0.3, n_workers=1).fit(X, y)
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    pipeline = make_pipeline(MaxAbsScaler(), nimbus.LogisticRegression(n_workers=1))
    assert cross_val_score(pipeline, X, y, cv=3).mean() > 0.7
    search = GridSearchCV(nimbus.LogisticRegression(n_workers=1), {"C": [0.01, 1.0]}, cv=3).fit(X, y)
    assert search.best_params_["C"] in (0.01, 1.0)


def test_bad_input_raises_value_error_with_nimbus_message(heart):
    X, y = heart
    with pytest.raises(ValueError, match="class_weight: the label 7.0 does not occur"):
        nimbus.LogisticRegression(class_weight={7.0: 2.0}).fit(X, y)
    weights = np.ones(X.shape[0])
    weights[3] = -1.0
    with pytest.raises(ValueError, match="weight"):
        nimbus.LogisticRegression().fit(X, y, sample_weight=weights)
    with pytest.raises(ValueError, match="penalty"):
        nimbus.LogisticRegression(penalty="l3").fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        nimbus.LogisticRegression().fit(X, np.ones(X.shape[0]))
    with pytest.raises(ValueError, match="runtime_options: unknown option 'lambda_fuction'"):
        nimbus.LogisticRegression(runtime_options={"lambda_fuction": "f"}).fit(X, y)
    with pytest.raises(ValueError, match="--runtime lambda: needs --lambda-function"):
        nimbus.LogisticRegression(runtime="lambda").fit(X, y)


@pytest.mark.skipif(not os.path.exists(nimbus.linear_model.WORKER_PROGRAM), reason="no worker program")
def test_process_runtime_matches_threads(heart):
    X, y = heart
    threads = nimbus.LogisticRegression(penalty="l1", C=0.5, n_workers=2).fit(X, y)
    processes = nimbus.LogisticRegression(penalty="l1", C=0.5, n_workers=2, runtime="process").fit(X, y)
    np.testing.assert_allclose(processes.coef_, threads.coef_, atol=1e-8)
    assert sp.issparse(X)


@pytest.mark.skipif(not os.path.exists(nimbus.linear_model.WORKER_PROGRAM), reason="no worker program")
def test_auto_takes_the_algorithm_its_profiles_predict_faster(heart, tmp_path):
    """solver='auto' with runtime_options={'algorithm_profiles': [...]}: the profiles (nimbus
    simulate calibrate on the same data) predict each algorithm's solve; with one of them made
    100 times slower by its rounds, auto takes the other, and the summary says why."""
    X, y = heart
    from conftest import HEART_SCALE
    profiles = {}
    for algorithm in ("newton", "admm"):
        profiles[algorithm] = str(tmp_path / (algorithm + ".json"))
        subprocess.run([nimbus.linear_model.WORKER_PROGRAM, "simulate", "calibrate", "--data", HEART_SCALE,
                        "--l1", "0.01", "--algorithm", algorithm, "--workers", "1,2", "--repeat", "1", "--quiet",
                        "--out", profiles[algorithm]], check=True, timeout=300)

    def slowed(algorithm):
        with open(profiles[algorithm]) as f:
            profile = json.load(f)
        for point in profile["points"]:
            point["rounds"] *= 100
            if algorithm == "admm":
                point["iterations"] *= 100
        path = str(tmp_path / (algorithm + "-slow.json"))
        with open(path, "w") as f:
            json.dump(profile, f)
        return path

    def chosen(paths):
        model = nimbus.LogisticRegression(penalty="l1", C=0.5, n_workers=2, runtime="process",
                                          runtime_options={"algorithm_profiles": paths}).fit(X, y)
        return model.solve_summary_

    admm = chosen([slowed("newton"), profiles["admm"]])
    assert admm["algorithm"] == "admm", admm
    assert "auto: admm, predicted" in admm["algorithm_reason"], admm["algorithm_reason"]
    assert chosen([profiles["newton"], slowed("admm")])["algorithm"] == "newton"
    with pytest.raises(ValueError, match="give one profile of each algorithm"):
        chosen([profiles["newton"]])


INTERRUPTED_FIT = """
import sys, numpy as np, scipy.sparse as sp, nimbus
rng = np.random.default_rng(1)
X = sp.random(20000, 2000, density=0.02, format="csr", random_state=1)
y = np.where(X @ rng.standard_normal(2000) + 0.5 * rng.standard_normal(20000) > 0, 1.0, -1.0)
model = nimbus.LogisticRegression(penalty="l1", C=1e4, tol=1e-12, max_iter=100000, n_workers=2,
                                  runtime="process", solver="admm", verbose=1)
try:
    model.fit(X, y)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_ends_a_fit_and_its_worker_processes(tmp_path):
    """SIGINT to the process group (what a terminal's Ctrl-C sends) during a long fit on
    worker processes: the fit raises KeyboardInterrupt, and no worker is left behind."""
    script = tmp_path / "fit.py"
    script.write_text(INTERRUPTED_FIT)
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True, env=dict(os.environ))
    lines = []
    try:
        for line in child.stdout:  # bounded: the child ends by itself or by the signal
            lines.append(line)
            if line.startswith("nimbus: iteration 3 "):
                os.killpg(child.pid, signal.SIGINT)
                break
        rest, _ = child.communicate(timeout=120)
        lines.append(rest)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    output = "".join(lines)
    assert "interrupted" in output, output
    assert child.returncode == 0, output
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _workers_running():
        time.sleep(0.1)
    assert not _workers_running(), "worker processes outlived the fit"


def _workers_running():
    """Whether a process of the package's worker program is running (this suite runs one
    test at a time, and only this test's fit starts them now)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0] == nimbus.linear_model.WORKER_PROGRAM.encode() and b"worker" in argv[1:2]:
            return True
    return False


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning", "ignore:Line Search failed")
@pytest.mark.parametrize("penalty, solver", [("l2", "auto"), ("l1", "newton"), ("l1", "auto")])
def test_cv_scores_are_those_of_separate_fits_on_the_same_folds(heart, penalty, solver):
    """Each fold's log loss at one C equals that of scikit-learn's fit on the fold's training
    rows (liblinear for L1, without an intercept; newton-cg for L2, which lbfgs does not solve
    to 1e-7 here), scored on its held-out rows."""
    X, y = heart
    C = 0.7
    intercept = penalty == "l2"
    cv = nimbus.LogisticRegressionCV(Cs=[C], cv=4, penalty=penalty, scoring="neg_log_loss", solver=solver,
                                     fit_intercept=intercept, tol=1e-9, n_workers=2).fit(X, y)
    folds = cv.folds_
    assert sorted(np.unique(folds)) == [0, 1, 2, 3]
    losses = -cv.scores_[1.0][:, 0]
    for k in range(4):
        train, held = folds != k, folds == k
        if penalty == "l1":
            reference = SkLogisticRegression(penalty="l1", C=C * y.size / train.sum(), fit_intercept=False,
                                             solver="liblinear", tol=1e-10, max_iter=100000)
        else:
            reference = SkLogisticRegression(C=C * y.size / train.sum(), solver="newton-cg", tol=1e-10, max_iter=1000)
        reference.fit(X[train], y[train])
        p = reference.predict_proba(X[held])[:, 1]
        expected = -np.mean(np.where(y[held] > 0, np.log(p), np.log1p(-p)))
        assert losses[k] == pytest.approx(expected, rel=1e-7), k
    np.testing.assert_allclose(cv.Cs_, [C])
    # The model is the one on all the data at the best (the only) C.
    alone = nimbus.LogisticRegression(penalty=penalty, C=C, fit_intercept=intercept, tol=1e-9, n_workers=2).fit(X, y)
    np.testing.assert_allclose(cv.coef_, alone.coef_, atol=1e-6)


def test_cv_over_a_grid_chooses_the_best_mean_score(heart):
    X, y = heart
    cv = nimbus.LogisticRegressionCV(Cs=6, penalty="l1", n_workers=2).fit(X, y)
    assert cv.Cs_.shape == (6,) and np.all(np.diff(cv.Cs_) > 0)
    means = cv.scores_[1.0].mean(axis=0)
    assert cv.C_[0] == cv.Cs_[np.argmax(means)]
    assert np.count_nonzero(cv.coef_) > 0
    with pytest.raises(ValueError, match="cv: must be an integer"):
        nimbus.LogisticRegressionCV(cv=1).fit(X, y)
    with pytest.raises(ValueError, match="scoring"):
        nimbus.LogisticRegressionCV(scoring="f1").fit(X, y)


def test_verbose_prints_each_iteration(heart, capsys):
    X, y = heart
    model = nimbus.LogisticRegression(penalty="l1", C=0.5, n_workers=1, verbose=1).fit(X, y)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("nimbus: iteration")]
    # (L1 Newton reports after each cycle on an active set, which may make several steps.)
    assert len(lines) >= 2, lines
    assert int(lines[-1].split()[2]) == model.n_iter_[0], lines
    assert "objective" in lines[-1]


def test_cv_of_a_file_is_the_cv_of_its_rows(heart):
    """LogisticRegressionCV.fit("FILE"): the workers read the text, deal their rows' folds and
    score them (this process reads no row); the grid, the scores and the choice are those of
    the same rows given as arrays, whose folds this process deals by the same rule."""
    from conftest import HEART_SCALE
    X, y = heart
    for runtime, Cs in (("threads", 4), ("process", [0.05, 0.5, 5.0])):
        params = dict(Cs=Cs, cv=4, penalty="l1", scoring="neg_log_loss", tol=1e-9, n_workers=3, runtime=runtime,
                      solver="newton")  # auto's column method reads the text in this process
        from_file = nimbus.LogisticRegressionCV(**params).fit(HEART_SCALE)
        from_arrays = nimbus.LogisticRegressionCV(**params).fit(X, y)
        np.testing.assert_allclose(from_file.Cs_, from_arrays.Cs_, rtol=1e-12)
        np.testing.assert_allclose(from_file.scores_[1.0], from_arrays.scores_[1.0], atol=1e-7)
        assert from_file.C_[0] == from_arrays.C_[0]
        np.testing.assert_array_equal(from_file.classes_, from_arrays.classes_)
        assert from_file.folds_ is None and from_arrays.folds_.shape == (X.shape[0],)
        assert relative_gap(objective(from_file, X, y, from_file.C_[0], "l1"),
                            objective(from_arrays, X, y, from_arrays.C_[0], "l1")) < 1e-7


def test_a_file_name_is_read_by_the_workers(heart, tmp_path):
    """fit("FILE") (the workers read the text; this process reads no row): the model of the
    same rows given as arrays, on threads and on worker processes, with a sample weights file;
    and a hashed feature space too large for a dense coef_ comes back sparse."""
    from conftest import HEART_SCALE  # the file the heart fixture loads
    X, y = heart
    for runtime in ("threads", "process"):
        from_file = nimbus.LogisticRegression(penalty="l1", C=0.5, n_workers=3, runtime=runtime).fit(HEART_SCALE)
        from_arrays = nimbus.LogisticRegression(penalty="l1", C=0.5, n_workers=3, runtime=runtime).fit(X, y)
        np.testing.assert_array_equal(from_file.classes_, from_arrays.classes_)
        assert from_file.n_features_in_ == X.shape[1]
        assert relative_gap(objective(from_file, X, y, 0.5, "l1"), objective(from_arrays, X, y, 0.5, "l1")) < 1e-7
        np.testing.assert_array_equal(from_file.predict(X), from_arrays.predict(X))
    weights = np.linspace(0.5, 2.0, X.shape[0])
    weight_file = tmp_path / "weights.txt"
    weight_file.write_text("".join("%.17g\n" % w for w in weights))
    weighted = nimbus.LogisticRegression(C=2.0, fit_intercept=False).fit(HEART_SCALE, sample_weight=weight_file)
    reference = SkLogisticRegression(C=2.0, fit_intercept=False, tol=1e-10, max_iter=100000).fit(
        X, y, sample_weight=weights)
    gap = relative_gap(objective(weighted, X, y, 2.0, "l2", sample_weight=weights),
                       objective(reference, X, y, 2.0, "l2", sample_weight=weights))
    assert gap < 1e-5, gap
    hashed = tmp_path / "hashed.svm"
    hashed.write_text("1 3:1 2147483647:1\n-1 3:-1 77777:2\n1 5:1 2147483647:1\n-1 77777:1\n")
    model = nimbus.LogisticRegression(C=1.0).fit(str(hashed))
    assert sp.issparse(model.coef_) and model.coef_.shape == (1, 2147483647)
    assert model.coef_[0, 2147483646] > 0 and model.coef_[0, 77776] < 0
    with pytest.raises(ValueError, match="the labels are in the file"):
        nimbus.LogisticRegression().fit(HEART_SCALE, y)
