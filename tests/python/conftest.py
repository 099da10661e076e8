"""Data for the Python suite: real data (Fashion-MNIST from Debian's dataset-fashion-mnist,
heart_scale from liblinear-tools) and the suite's text-like set (bench/data/zipf_text.py)."""

import gzip
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEART_SCALE = "/usr/share/doc/liblinear-tools/examples/heart_scale"
FASHION_DIR = "/usr/share/datasets/fashion-mnist"


@pytest.fixture(scope="session")
def heart():
    X, y = load_svmlight_file(HEART_SCALE)
    return X.tocsr(), y


@pytest.fixture(scope="session")
def fashion():
    """The first 3,000 training images of Fashion-MNIST, pixels / 255, as bench/data makes its
    binary task: +1 for the upper-body garments (classes 0, 2, 4, 6), -1 for the rest."""
    rows = 3000
    with gzip.open(os.path.join(FASHION_DIR, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16)[: rows * 784].reshape(rows, 784)
    with gzip.open(os.path.join(FASHION_DIR, "train-labels-idx1-ubyte.gz")) as f:
        classes = np.frombuffer(f.read(), dtype=np.uint8, offset=8)[:rows]
    y = np.where(np.isin(classes, (0, 2, 4, 6)), 1.0, -1.0)
    return sp.csr_matrix(images / 255.0), y


@pytest.fixture(scope="session")
def text(tmp_path_factory):
    """3,000 rows of the suite's Zipf bag of words over 5,000 words."""
    out = tmp_path_factory.mktemp("text") / "zipf.svm"
    subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "bench", "data", "zipf_text.py"), "--rows", "3000",
                    "--cols", "5000", "--out", str(out)], check=True)
    X, y = load_svmlight_file(str(out), n_features=5000)
    return X.tocsr(), y
