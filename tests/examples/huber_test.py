"""examples/huber against a known optimum.

F(x, b) = (1/N) sum_r h(a_r . x + b - y_r) + (l2/2) ||x||^2 is strictly convex, so (x*, b*) is
its minimizer exactly when the gradient vanishes there:
    (1/N) sum_r h'(r_r) a_r + l2 x* = 0   and   sum_r h'(r_r) = 0,   r_r = a_r . x* + b* - y_r.
The data are built backwards from chosen residuals: pairs (+r, -r) make the second sum zero,
some of them beyond delta (outliers, h' = +-delta); x* = -(1/(N l2)) sum_r h'(r_r) a_r; then
y_r = a_r . x* + b* - r_r. nimbus must find x* and b* on each runtime.

usage: huber_test.py EXAMPLE_BINARY RUNTIME
"""
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from nimbus_files import read_model, write_libsvm  # noqa: E402

L2, DELTA = 0.05, 1.0


def known_optimum(rng, pairs=150, cols=8):
    a = rng.normal(size=(2 * pairs, cols)) * (rng.random((2 * pairs, cols)) < 0.6)
    half = rng.normal(scale=0.8, size=pairs)
    half[: pairs // 5] = rng.uniform(3, 10, size=pairs // 5) * np.sign(rng.normal(size=pairs // 5))  # outliers
    residuals = np.concatenate([half, -half])
    clipped = np.clip(residuals, -DELTA, DELTA)
    rows = a.shape[0]
    x_star = -(a.T @ clipped) / (rows * L2)
    b_star = 0.7
    y = a @ x_star + b_star - residuals
    return a, y, x_star, b_star


def main():
    binary, runtime = sys.argv[1], sys.argv[2]
    a, y, x_star, b_star = known_optimum(np.random.default_rng(11))
    with tempfile.TemporaryDirectory() as work:
        data, model_path = f"{work}/huber.svm", f"{work}/model.json"
        write_libsvm(data, a, y)
        run = subprocess.run([binary, data, str(L2), str(DELTA), runtime, "3", model_path], capture_output=True,
                             text=True, timeout=600)
        print(run.stdout, run.stderr)
        assert run.returncode == 0, f"the example failed with {run.returncode}"
        x, bias, loss = read_model(model_path, a.shape[1])
    error = max(np.max(np.abs(x - x_star)), abs(bias - b_star))
    print(f"largest difference from the known optimum: {error:.3g} (|x*| = {np.max(np.abs(x_star)):.3g})")
    assert loss == f"huber:{DELTA}", loss
    assert error <= 1e-6, "not the known optimum"
    print("ok")


if __name__ == "__main__":
    main()
