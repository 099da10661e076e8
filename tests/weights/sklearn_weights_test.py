"""nimbus train with weights against scikit-learn's LogisticRegression(solver='liblinear').

scikit-learn minimizes  C sum_r s_r W_{class r} loss_r + ||w||_1  (or + ||w||^2 / 2), which is
C N times nimbus's F = (1/N) sum_r W s loss_r + l1 ||w||_1 with l1 = 1 / (C N) (or l2 = 1 / (C N)).
Each case: real-valued sample weights, class_weight='balanced', and both together, for L1 and L2,
on liblinear's heart_scale and on a sparse text-like set. F is computed here in numpy from both
models; nimbus's must be within 1e-5 relative of scikit-learn's, and `nimbus eval` with the same
weights must report it.

usage: sklearn_weights_test.py NIMBUS HEART_SCALE
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from nimbus_files import read_model  # noqa: E402



def text_like(rng, rows=600, cols=400):
    """Sparse counts with a few informative features; labels 0/1."""
    x = sp.random(rows, cols, density=0.03, random_state=np.random.RandomState(5), format="csr")
    x.data = np.ceil(x.data * 3)
    truth = np.zeros(cols)
    truth[:20] = rng.normal(scale=2.0, size=20)
    y = (x @ truth + rng.normal(scale=0.5, size=rows) > 0.3).astype(float)
    return x, y


def objective(x, y, w, weights, penalty, lam):
    signs = np.where(y > 0, 1.0, -1.0)
    loss = np.logaddexp(0, -signs * (x @ w))
    reg = lam * np.abs(w).sum() if penalty == "l1" else 0.5 * lam * w @ w
    return np.mean(weights * loss) + reg


def check(nimbus, work, name, x, y, penalty, sample_weight, balanced):
    rows, cols = x.shape
    c = 1.0
    lam = 1.0 / (c * rows)
    data = f"{work}/{name}.svm"
    dump_svmlight_file(x, y, data, zero_based=False)
    weight_args = []
    if sample_weight is not None:
        np.savetxt(f"{work}/weights.txt", sample_weight, fmt="%.17g")
        weight_args += ["--sample-weights", f"{work}/weights.txt"]
    if balanced:
        weight_args += ["--class-weight", "balanced"]
    run = subprocess.run([nimbus, "train", "--quiet", "--data", data, f"--{penalty}", repr(lam), "--workers", "2",
                          "--gradient-tolerance", "1e-10", "--out", f"{work}/model.json"] + weight_args,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    ours, _, _ = read_model(f"{work}/model.json", cols)

    reference = LogisticRegression(penalty=penalty, C=c, solver="liblinear", fit_intercept=False, tol=1e-8,
                                   class_weight="balanced" if balanced else None)
    reference.fit(x, y, sample_weight=sample_weight)
    theirs = reference.coef_.ravel()

    weights = np.ones(rows) if sample_weight is None else sample_weight.copy()
    if balanced:
        counts = {label: np.sum(y == label) for label in (0.0, 1.0)}
        weights *= np.array([rows / (2.0 * counts[label]) for label in y])
    f_ours = objective(x, y, ours, weights, penalty, lam)
    f_theirs = objective(x, y, theirs, weights, penalty, lam)
    relative = (f_ours - f_theirs) / f_theirs
    print(f"{name} {penalty} sample_weight={sample_weight is not None} balanced={balanced}: "
          f"F nimbus {f_ours:.12g} scikit-learn {f_theirs:.12g} relative {relative:.2g}")
    assert abs(relative) <= 1e-5, "objectives differ by more than 1e-5 relative"
    # nimbus eval with the same weights reports F at nimbus's model (its l1 or l2 is the model's).
    evaluated = subprocess.run([nimbus, "eval", "--model", f"{work}/model.json", "--data", data, "--json"] + weight_args,
                               capture_output=True, text=True, timeout=600)
    assert evaluated.returncode == 0, evaluated.stderr
    f_eval = json.loads(evaluated.stdout)["objective"]
    assert abs(f_eval - f_ours) <= 1e-9 * f_ours, f"nimbus eval's objective {f_eval} is not F {f_ours}"
    # The weights matter: the unweighted optimum is worse under them.
    unweighted = LogisticRegression(penalty=penalty, C=c, solver="liblinear", fit_intercept=False, tol=1e-8)
    unweighted = unweighted.fit(x, y).coef_.ravel()
    assert objective(x, y, unweighted, weights, penalty, lam) > f_theirs * (1 + 1e-4)


def main():
    nimbus, heart_scale = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(3)
    heart_x, heart_y = load_svmlight_file(heart_scale)
    heart_y = (heart_y > 0).astype(float)
    sets = {"heart_scale": (heart_x.tocsr(), heart_y), "text_like": text_like(rng)}
    with tempfile.TemporaryDirectory() as work:
        for name, (x, y) in sets.items():
            sample_weight = rng.uniform(0.1, 3.0, size=x.shape[0])
            for penalty in ("l1", "l2"):
                check(nimbus, work, name, x, y, penalty, sample_weight, balanced=False)
                check(nimbus, work, name, x, y, penalty, None, balanced=True)
                check(nimbus, work, name, x, y, penalty, sample_weight, balanced=True)
    print("ok")


if __name__ == "__main__":
    main()
