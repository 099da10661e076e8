#!/usr/bin/python3
"""A text-like synthetic LIBSVM set: Zipf word frequencies, varied row lengths, and labels
that come from two latent topics rather than from a planted linear model.

    bench/data/zipf_text.py --out zipf.svm [--rows 100000] [--cols 50000] [--seed 1]

How a row is made:
  * its topic t is +1 or -1 with probability 1/2 each; its label is t, flipped with
    probability --label-noise (default 0.1);
  * its number of distinct words L is drawn from a lognormal law with mean --mean-nnz (67)
    and log-standard-deviation --sigma (0.7), clipped to [1, cols / 4]; the row draws
    n(L) words, n(L) the number of draws whose expected number of distinct words is L;
  * each word is drawn independently: a rank r in 1..cols with P(r) proportional to
    r^-exponent (--exponent, default 1.1), then mapped to a feature by the topic's
    permutation of the vocabulary. Topic -1 uses a random permutation P of 1..cols; topic
    +1 uses P with the entries at a random 5% of the ranks
    shuffled among themselves (--swap-fraction, default 0.05). The two topics thus share most words at the same frequency
    and differ on a random scattering of ranks, frequent and rare;
  * values are log(1 + count) of each distinct word, and the row is scaled to unit
    Euclidean norm.

With the defaults: 100,000 rows x 50,000 features, about 6.7 million nonzeros. The same
arguments give the same bytes (numpy's PCG64 generator, seeded). Values are written with 6
significant digits, features in increasing order, 1-based. The file is written under a
temporary name and renamed into place.

Needs python3 and numpy only.
"""

import argparse
import os
import sys

import numpy as np

from svmfile import write_atomically


def draws_for_distinct(p, targets):
    """For each target number of distinct words L, the number of draws n with
    E[distinct words in n draws] = sum_r 1 - (1 - p_r)^n closest to L (n >= L)."""
    grid = np.unique(np.round(np.geomspace(1, 200 * max(1.0, targets.max()), 600)).astype(np.int64))
    log_q = np.log1p(-p)
    expected = np.array([np.sum(-np.expm1(n * log_q)) for n in grid])  # increasing in n
    n = np.interp(targets, expected, grid)
    return np.maximum(np.round(n).astype(np.int64), targets)


def vocabulary(rng, cols, swap_fraction, exponent):
    """The two topics' orders of the vocabulary (topic -1 reads P, topic +1 reads P with a
    subset of its ranks shuffled), and the Zipf law over the ranks and its cumulative sums."""
    order = {0: rng.permutation(cols)}
    swapped = rng.choice(cols, size=int(round(swap_fraction * cols)), replace=False)
    order[1] = order[0].copy()
    order[1][swapped] = order[0][rng.permutation(swapped)]
    words_of_topic = np.stack([order[0], order[1]])
    p = np.arange(1, cols + 1, dtype=np.float64) ** -exponent
    p /= p.sum()
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    return words_of_topic, p, cdf


def draw_rows(rng, rows, words_of_topic, p, cdf, mean_nnz=67.0, sigma=0.7, label_noise=0.1):
    """`rows` rows as the module's docstring says: labels (+1/-1), CSR row starts, column
    indices (0-based, ascending in each row) and values (each row of unit norm), and the
    number of words drawn."""
    cols = cdf.size
    topic = (rng.random(rows) < 0.5).astype(np.int64)
    flip = rng.random(rows) < label_noise
    label = np.where(topic == 1, 1, -1) * np.where(flip, -1, 1)

    mu = np.log(mean_nnz) - sigma ** 2 / 2
    distinct = np.clip(np.round(rng.lognormal(mu, sigma, rows)), 1, max(1, cols // 4)).astype(np.int64)
    draws = draws_for_distinct(p, distinct)

    row_of_draw = np.repeat(np.arange(rows, dtype=np.int64), draws)
    ranks = np.searchsorted(cdf, rng.random(row_of_draw.size), side="right")
    ranks = np.minimum(ranks, cols - 1)
    word = words_of_topic[topic[row_of_draw], ranks]

    keys, counts = np.unique(row_of_draw * cols + word, return_counts=True)  # sorted by row, then word
    row_of, col_of = keys // cols, keys % cols
    values = np.log1p(counts.astype(np.float64))
    norms = np.sqrt(np.bincount(row_of, weights=values * values, minlength=rows))
    values /= norms[row_of]
    starts = np.searchsorted(row_of, np.arange(rows + 1))
    return label, starts, col_of, values, row_of_draw.size


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100000)
    parser.add_argument("--cols", type=int, default=50000)
    parser.add_argument("--mean-nnz", type=float, default=67.0, help="mean distinct words per row (default 67)")
    parser.add_argument("--sigma", type=float, default=0.7, help="log-standard-deviation of the row lengths")
    parser.add_argument("--exponent", type=float, default=1.1, help="Zipf exponent: P(rank r) ~ r^-exponent")
    parser.add_argument("--swap-fraction", type=float, default=0.05,
                        help="fraction of ranks whose words differ between the two topics")
    parser.add_argument("--label-noise", type=float, default=0.1, help="probability that a label is flipped")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True, help="output LIBSVM file")
    args = parser.parse_args()
    if args.rows < 1 or args.cols < 2 or args.mean_nnz < 1 or not 0 <= args.swap_fraction <= 1 \
            or not 0 <= args.label_noise <= 0.5:
        sys.exit("zipf_text.py: need rows >= 1, cols >= 2, mean-nnz >= 1, swap-fraction in [0, 1], "
                 "label-noise in [0, 0.5]")

    rng = np.random.Generator(np.random.PCG64(args.seed))
    rows, cols = args.rows, args.cols
    words_of_topic, p, cdf = vocabulary(rng, cols, args.swap_fraction, args.exponent)
    label, starts, col_of, values, drawn = draw_rows(rng, rows, words_of_topic, p, cdf, args.mean_nnz, args.sigma,
                                                    args.label_noise)
    cols_text = (col_of + 1).astype(str)

    def write(f):
        for r in range(rows):
            a, b = starts[r], starts[r + 1]
            entries = " ".join(c + ":" + ("%.6g" % v) for c, v in zip(cols_text[a:b], values[a:b].tolist()))
            f.write(("+1 " if label[r] > 0 else "-1 ") + entries + "\n")

    write_atomically(args.out, write)
    positive = int((label > 0).sum())
    print(f"zipf_text.py: {args.out}: {rows} rows, {cols} features ({np.unique(col_of).size} used), {col_of.size} "
          f"nonzeros ({col_of.size / rows:.1f} per row, {drawn / rows:.1f} words drawn per row), "
          f"{positive} positive ({positive / rows:.1%})", file=sys.stderr)


if __name__ == "__main__":
    main()
