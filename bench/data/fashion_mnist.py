#!/usr/bin/python3
"""Fashion-MNIST as LIBSVM text, from the IDX files of Debian's dataset-fashion-mnist.

    bench/data/fashion_mnist.py --split train --out fashion-train.svm     # 60,000 rows
    bench/data/fashion_mnist.py --split test  --out fashion-test.svm      # 10,000 rows
    bench/data/fashion_mnist.py --split train --multiclass --out f10.svm  # labels 0..9

Binary task (the default): label +1 for the classes 0, 2, 4, 6 (T-shirt/top, pullover, coat,
shirt: upper-body garments) and -1 for the rest. Features: pixel / 255 written with 6
significant digits, zeros omitted, 1-based indices 1..784 in row-major pixel order. Rows keep
the order of the IDX file, so the output is byte-for-byte the same on every run. The file is
written next to --out under a temporary name and renamed into place.

Needs python3 and numpy only (Debian: python3-numpy, dataset-fashion-mnist).
"""

import argparse
import gzip
import os
import sys

import numpy as np

from svmfile import write_atomically

DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"  # dpkg -L dataset-fashion-mnist
POSITIVE_CLASSES = (0, 2, 4, 6)
FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


def open_idx(directory, stem):
    for name, opener in ((stem + ".gz", gzip.open), (stem, open)):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            with opener(path, "rb") as f:
                return path, f.read()
    sys.exit(f"fashion_mnist.py: no {stem}[.gz] in {directory}; install it with "
             f"'apt-get install dataset-fashion-mnist' (or scripts/install-deps), or give --idx-dir")


def read_idx(directory, stem, want_dims):
    """An IDX file: 2 zero bytes, a type byte (0x08 = unsigned byte), the number of dimensions,
    then that many big-endian uint32 sizes, then the data."""
    path, raw = open_idx(directory, stem)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08 or raw[3] != want_dims:
        sys.exit(f"fashion_mnist.py: {path}: not an unsigned-byte IDX file with {want_dims} dimensions")
    dims = np.frombuffer(raw, dtype=">u4", count=want_dims, offset=4).astype(np.int64)
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * want_dims)
    if data.size != int(np.prod(dims)):
        sys.exit(f"fashion_mnist.py: {path}: {data.size} bytes of data, the header says {tuple(dims)}")
    return data.reshape(tuple(dims))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=sorted(FILES), default="train",
                        help="train (60,000 rows) or test (10,000 rows); default train")
    parser.add_argument("--multiclass", action="store_true",
                        help="keep the 10 class labels 0..9 instead of the binary +1/-1 task")
    parser.add_argument("--idx-dir", default=DEFAULT_DIR, help=f"the IDX files' directory (default {DEFAULT_DIR})")
    parser.add_argument("--out", required=True, help="output LIBSVM file")
    args = parser.parse_args()

    images_stem, labels_stem = FILES[args.split]
    images = read_idx(args.idx_dir, images_stem, 3)
    labels = read_idx(args.idx_dir, labels_stem, 1)
    if images.shape[0] != labels.shape[0]:
        sys.exit(f"fashion_mnist.py: {images.shape[0]} images but {labels.shape[0]} labels")
    rows, pixels = images.shape[0], images.shape[1] * images.shape[2]
    images = images.reshape(rows, pixels)

    if args.multiclass:
        label_text = [str(int(c)) for c in labels]
    else:
        positive = np.isin(labels, POSITIVE_CLASSES)
        label_text = np.where(positive, "+1", "-1").tolist()

    # "j:v" for every (feature, nonzero pixel value), looked up instead of formatted per entry.
    value_text = [""] + ["%.6g" % (v / 255.0) for v in range(1, 256)]
    table = np.array([[f"{j + 1}:{value_text[v]}" for v in range(256)] for j in range(pixels)], dtype=object)
    table = table.reshape(-1)
    nonzeros = 0

    def write(f):
        nonlocal nonzeros
        for r in range(rows):
            row = images[r]
            cols = np.flatnonzero(row)
            nonzeros += cols.size
            entries = table[cols * 256 + row[cols]]
            f.write(label_text[r] + (" " if cols.size else "") + " ".join(entries) + "\n")

    write_atomically(args.out, write)
    summary = f"{rows} rows, {pixels} features, {nonzeros} nonzeros"
    if args.multiclass:
        counts = np.bincount(labels, minlength=10)
        summary += ", classes " + " ".join(f"{c}:{n}" for c, n in enumerate(counts))
    else:
        summary += f", {int(positive.sum())} positive ({positive.mean():.1%})"
    print(f"fashion_mnist.py: {args.out}: {args.split} split, {summary}", file=sys.stderr)


if __name__ == "__main__":
    main()
