#!/usr/bin/python3
"""make_digits.py -- build graphs/data/digits_*.npy from the UCI optical
recognition of handwritten digits data as shipped by Debian's python3-sklearn
(sklearn/datasets/data/digits.csv.gz: 1797 rows of 64 pixels 0..16 + label).

Deterministic: a fixed permutation (numpy RandomState(0)) then an 80/20
train/test split.  Pixels are scaled to [0, 1] (float32); labels are one-hot
float32 rows of 10.  Run with /usr/bin/python3 (needs python3-numpy):
    /usr/bin/python3 tools/make_digits.py
"""
import gzip
import os
import sys

import numpy as np

SRC = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else SRC
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "graphs", "data")
    with gzip.open(src, "rt") as f:
        data = np.loadtxt(f, delimiter=",")
    x = (data[:, :64] / 16.0).astype(np.float32)
    y = data[:, 64].astype(np.int64)
    perm = np.random.RandomState(0).permutation(len(x))
    x, y = x[perm], y[perm]
    n_train = int(round(0.8 * len(x)))
    onehot = np.eye(10, dtype=np.float32)[y]
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "digits_train_x.npy"), x[:n_train])
    np.save(os.path.join(out, "digits_train_y.npy"), onehot[:n_train])
    np.save(os.path.join(out, "digits_test_x.npy"), x[n_train:])
    np.save(os.path.join(out, "digits_test_y.npy"), onehot[n_train:])
    print("train %d, test %d" % (n_train, len(x) - n_train))


if __name__ == "__main__":
    main()
