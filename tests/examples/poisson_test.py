"""examples/poisson against scikit-learn's PoissonRegressor on the same data and alpha.

Both minimize  F(x, b) = (1/N) sum_r [exp(m_r) - y_r m_r + y_r log y_r - y_r] + (alpha/2) ||x||^2
(scikit-learn's half mean Poisson deviance plus its penalty), m_r = a_r . x + b. F is
computed here, in numpy, from each model's coefficients; nimbus's must be within 1e-6
relative of scikit-learn's (tolerances tight enough that both are at the optimum).

usage: poisson_test.py EXAMPLE_BINARY RUNTIME
"""
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.linear_model import PoissonRegressor

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from nimbus_files import read_model, write_libsvm  # noqa: E402

ALPHA = 0.01


def make_data(rng, rows=400, cols=12):
    """Sparse-ish features, counts drawn from a log-linear model."""
    a = rng.normal(size=(rows, cols)) * (rng.random((rows, cols)) < 0.5)
    truth = rng.normal(scale=0.3, size=cols)
    y = rng.poisson(np.exp(a @ truth + 0.5)).astype(float)
    return a, y


def objective(a, y, coef, intercept):
    m = a @ coef + intercept
    y_log_y = np.where(y > 0, y * np.log(np.where(y > 0, y, 1)), 0)
    return np.mean(np.exp(m) - y * m + y_log_y - y) + 0.5 * ALPHA * coef @ coef


def main():
    binary, runtime = sys.argv[1], sys.argv[2]
    a, y = make_data(np.random.default_rng(7))
    with tempfile.TemporaryDirectory() as work:
        data, model = f"{work}/counts.svm", f"{work}/model.json"
        write_libsvm(data, a, y)
        run = subprocess.run([binary, data, str(ALPHA), runtime, "3", model], capture_output=True, text=True,
                             timeout=600)
        print(run.stdout, run.stderr)
        assert run.returncode == 0, f"the example failed with {run.returncode}"
        coef, intercept, loss = read_model(model, a.shape[1])
        assert loss == "poisson", loss

    reference = PoissonRegressor(alpha=ALPHA, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(a, y)
    f_nimbus = objective(a, y, coef, intercept)
    f_sklearn = objective(a, y, reference.coef_, reference.intercept_)
    print(f"F nimbus {f_nimbus:.15g}  scikit-learn {f_sklearn:.15g}  relative {(f_nimbus - f_sklearn) / f_sklearn:.3g}")
    assert abs(f_nimbus - f_sklearn) <= 1e-6 * abs(f_sklearn), "objectives differ by more than 1e-6 relative"
    printed = float(run.stdout.split()[1])
    # The objective nimbus reports is F without the constant sum y log y - y.
    constant = np.mean(np.where(y > 0, y * np.log(np.where(y > 0, y, 1)), 0) - y)
    assert abs(printed + constant - f_nimbus) <= 1e-9 * abs(f_nimbus), "the reported objective is not F at the model"
    print("ok")


if __name__ == "__main__":
    main()
