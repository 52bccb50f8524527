#!/usr/bin/python3
"""bench_cnn.py -- LeNet training steps on CPU:0 (conv 5x5x32 SAME, max
pool 2x2, conv 5x5x64, max pool, fc 3136x256, fc 256x10, Relu, softmax cross
entropy, Adam, batch 64, random 28x28 images): the ms per step of each dgrun
binary given (e.g. a default build with oneDNN and a -Ddnnl=disabled build
that runs dgrun's own loops), and the forward pass alone.

    /usr/bin/python3 bench/bench_cnn.py build/cli/dgrun [build-nodnnl/cli/dgrun ...]
        [--steps N] [--threads T]

A step's time is (t(N + 5 steps) - t(5 steps)) / N, so process start,
compilation and data loading are not counted.  Needs python3-numpy.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def graph(d, batch):
    def var(name, shape):
        return {"name": name, "op": "Variable",
                "attrs": {"dtype": "float32", "shape": shape,
                          "init": {"glorot_uniform": {}} if len(shape) > 1
                          else {"zeros": {}}}}

    def conv(name, x, w, b):
        return [{"name": name + "/conv", "op": "Conv2D", "inputs": [x, w],
                 "attrs": {"strides": [1, 1, 1, 1], "padding": "SAME"}},
                {"name": name + "/bias", "op": "BiasAdd",
                 "inputs": [name + "/conv", b]},
                {"name": name, "op": "Relu", "inputs": [name + "/bias"]},
                {"name": name + "/pool", "op": "MaxPool", "inputs": [name],
                 "attrs": {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                           "padding": "VALID"}}]
    nodes = [
        {"name": "x", "op": "Placeholder",
         "attrs": {"dtype": "float32", "shape": [-1, 28, 28, 1]}},
        {"name": "y", "op": "Placeholder",
         "attrs": {"dtype": "float32", "shape": [-1, 10]}},
        var("w1", [5, 5, 1, 32]), var("b1", [32]),
        var("w2", [5, 5, 32, 64]), var("b2", [64]),
        var("w3", [3136, 256]), var("b3", [256]),
        var("w4", [256, 10]), var("b4", [10])]
    nodes += conv("c1", "x", "w1", "b1") + conv("c2", "c1/pool", "w2", "b2")
    nodes += [
        {"name": "flat", "op": "Reshape", "inputs": ["c2/pool"],
         "attrs": {"shape": [-1, 3136]}},
        {"name": "f3/mm", "op": "MatMul", "inputs": ["flat", "w3"]},
        {"name": "f3/b", "op": "BiasAdd", "inputs": ["f3/mm", "b3"]},
        {"name": "f3", "op": "Relu", "inputs": ["f3/b"]},
        {"name": "f4/mm", "op": "MatMul", "inputs": ["f3", "w4"]},
        {"name": "logits", "op": "BiasAdd", "inputs": ["f4/mm", "b4"]},
        {"name": "xent", "op": "SoftmaxCrossEntropyWithLogits",
         "inputs": ["logits", "y"]},
        {"name": "loss", "op": "Mean", "inputs": ["xent"]}]
    return {"version": 1, "nodes": nodes, "fetch": ["loss"],
            "train": {"loss": "loss",
                      "optimizer": {"type": "adam", "learning_rate": 0.001},
                      "steps": 10, "log_every": 1000000,
                      "feeds": {"x": {"file": os.path.join(d, "x.npy"),
                                      "batch": batch},
                                "y": {"file": os.path.join(d, "y.npy"),
                                      "batch": batch}}}}


def timed(cmd, threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def main():
    args = sys.argv[1:]
    steps, threads, bins = 30, 2, []
    while args:
        a = args.pop(0)
        if a == "--steps":
            steps = int(args.pop(0))
        elif a == "--threads":
            threads = int(args.pop(0))
        else:
            bins.append(a)
    batch = 64
    with tempfile.TemporaryDirectory() as d:
        rng = np.random.default_rng(0)
        np.save(os.path.join(d, "x.npy"),
                rng.random((batch * 4, 28, 28, 1), dtype=np.float32))
        lab = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch * 4)]
        np.save(os.path.join(d, "y.npy"), lab)
        g = os.path.join(d, "lenet.json")
        with open(g, "w") as f:
            json.dump(graph(d, batch), f)
        xb = os.path.join(d, "xb.npy")
        np.save(xb, rng.random((batch, 28, 28, 1), dtype=np.float32))
        yb = os.path.join(d, "yb.npy")
        np.save(yb, lab[:batch])
        th = ["--opencl-devices", "none", "--inter-op-threads", "1",
              "--intra-op-threads", str(threads)]
        for b in bins:
            t = [timed([b, "train", g, "--steps", str(n)] + th, threads)
                 for n in (5, steps + 5)]
            run = [b, "run", g, "--feed", "x=" + xb, "--feed", "y=" + yb,
                   "--fetch", "loss"] + th
            f = [timed(run + ["--repeat", str(n)], threads)
                 for n in (5, steps + 5)]
            print("%-32s train %7.2f ms/step   forward %7.2f ms/step"
                  % (b, (t[1] - t[0]) / steps * 1e3,
                     (f[1] - f[0]) / steps * 1e3))


if __name__ == "__main__":
    main()
