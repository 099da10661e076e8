"""Multinomial logistic regression against scikit-learn, and multiclass eval against its metrics.

scikit-learn's LogisticRegression(multi_class='multinomial', solver='lbfgs') minimizes
C sum_r c_r (log sum_k exp(m_rk) - m_{r,y_r}) + ||W||^2 / 2, which is C N times nimbus's
F = (1/N) sum_r c_r softmax_loss_r + (l2/2) ||W||^2 with l2 = 1 / (C N). F is computed here in
numpy from both models: nimbus's must be within 1e-6 relative of scikit-learn's (and not above it
by more). With L1, which scikit-learn's lbfgs does not take, the KKT conditions are checked here
from numpy's gradient. `nimbus eval` must report the accuracy, log loss, per-class precision and
recall and confusion matrix that scikit-learn.metrics computes from the same predictions.

usage: sklearn_multinomial_test.py NIMBUS
"""
import json
import pathlib
import subprocess
import sys
import tempfile
import warnings

import numpy as np
from scipy.special import logsumexp, softmax
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix, log_loss, precision_score, recall_score

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from nimbus_files import read_multiclass_model, write_libsvm  # noqa: E402


def digits():
    """scikit-learn's bundled 8x8 digits (no download): 1797 rows, 64 pixels scaled to [0, 1],
    labels written as 10..19 so that class values are not indices."""
    data = load_digits()
    return data.data / 16.0, data.target + 10


def objective(x, classes, y, coef, intercept, weights, l1, l2):
    margins = x @ coef + intercept
    index = np.searchsorted(classes, y)
    loss = logsumexp(margins, axis=1) - margins[np.arange(len(y)), index]
    return np.mean(weights * loss) + l1 * np.abs(coef).sum() + 0.5 * l2 * (coef * coef).sum()


def train(nimbus, work, data, args):
    run = subprocess.run([nimbus, "train", "--quiet", "--data", data, "--multiclass", "multinomial",
                          "--out", f"{work}/model.json"] + args, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return read_multiclass_model(f"{work}/model.json", 64)


def check_l2(nimbus, work, x, y, intercept, sample_weight, extra):
    rows = x.shape[0]
    c = 0.5
    l2 = 1.0 / (c * rows)
    data = f"{work}/digits.svm"
    write_libsvm(data, x, y)
    args = ["--l2", repr(l2), "--gradient-tolerance", "1e-11"] + extra + (["--intercept"] if intercept else [])
    weights = np.ones(rows) if sample_weight is None else sample_weight
    if sample_weight is not None:
        np.savetxt(f"{work}/weights.txt", sample_weight, fmt="%.17g")
        args += ["--sample-weights", f"{work}/weights.txt"]
    coef, b, classes = train(nimbus, work, data, args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # multi_class's deprecation in newer releases
        reference = LogisticRegression(multi_class="multinomial", solver="lbfgs", C=c, fit_intercept=intercept,
                                       tol=1e-12, max_iter=20000).fit(x, y, sample_weight=sample_weight)
    assert list(reference.classes_) == classes, (reference.classes_, classes)
    ours = objective(x, np.array(classes), y, coef, b, weights, 0, l2)
    theirs = objective(x, reference.classes_, y, reference.coef_.T, reference.intercept_, weights, 0, l2)
    relative = (ours - theirs) / theirs
    print(f"L2 intercept={intercept} weighted={sample_weight is not None} {extra}: nimbus F {ours:.12g}, "
          f"scikit-learn F {theirs:.12g}, relative {relative:.2e}")
    assert abs(relative) <= 1e-6, relative
    return coef, b, classes


def check_l1_kkt(nimbus, work, x, y):
    rows = x.shape[0]
    l1 = 2e-3
    data = f"{work}/digits.svm"
    write_libsvm(data, x, y)
    coef, b, classes = train(nimbus, work, data, ["--l1", repr(l1), "--intercept", "--gradient-tolerance", "1e-10"])
    p = softmax(x @ coef + b, axis=1)
    onehot = np.zeros_like(p)
    onehot[np.arange(rows), np.searchsorted(classes, y)] = 1
    gradient = x.T @ (p - onehot) / rows
    gradient_b = (p - onehot).mean(axis=0)
    nonzero = coef != 0
    # 0 in grad + l1 d|w|: grad = -l1 sign(w) where w != 0, |grad| <= l1 where w = 0.
    off_nonzero = np.abs(gradient[nonzero] + l1 * np.sign(coef[nonzero])).max()
    off_zero = (np.abs(gradient[~nonzero]) - l1).max()
    print(f"L1 {l1}: {nonzero.sum()} of {coef.size} weights nonzero; KKT: |g + l1 sign w| <= {off_nonzero:.2e}, "
          f"|g| - l1 <= {off_zero:.2e} at zeros, |g_b| <= {np.abs(gradient_b).max():.2e}")
    assert 0 < nonzero.sum() < coef.size
    assert off_nonzero <= 1e-6 and off_zero <= 1e-6 and np.abs(gradient_b).max() <= 1e-6


def check_eval(nimbus, work, x, y, coef, b, classes):
    data = f"{work}/held_out.svm"
    write_libsvm(data, x, y)
    run = subprocess.run([nimbus, "eval", "--model", f"{work}/model.json", "--data", data, "--json"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    probabilities = softmax(x @ coef + b, axis=1)
    predicted = np.array(classes)[probabilities.argmax(axis=1)]
    assert report["classes"] == classes
    assert abs(report["accuracy"] - np.mean(predicted == y)) <= 1e-12
    assert abs(report["log_loss"] - log_loss(y, probabilities, labels=classes)) <= 1e-9 * report["log_loss"]
    assert np.allclose(report["precision"], precision_score(y, predicted, labels=classes, average=None), atol=1e-12)
    assert np.allclose(report["recall"], recall_score(y, predicted, labels=classes, average=None), atol=1e-12)
    assert report["confusion"] == confusion_matrix(y, predicted, labels=classes).tolist()
    print(f"eval: accuracy {report['accuracy']:.4f}, log loss {report['log_loss']:.6f}, as scikit-learn.metrics")


def main():
    nimbus = sys.argv[1]
    x, y = digits()
    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory() as work:
        check_l2(nimbus, work, x, y, False, None, ["--workers", "2"])
        check_l2(nimbus, work, x, y, True, rng.uniform(0.2, 3.0, size=len(y)),
                 ["--workers", "3", "--runtime", "process"])
        coef, b, classes = check_l2(nimbus, work, x[:1200], y[:1200], True, None, ["--workers", "2"])
        check_eval(nimbus, work, x[1200:], y[1200:], coef, b, classes)
        check_l1_kkt(nimbus, work, x, y)
    print("ok")


if __name__ == "__main__":
    main()
