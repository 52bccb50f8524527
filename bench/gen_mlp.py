#!/usr/bin/python3
"""gen_mlp.py -- write a dense MLP training graph and random data for the
compute-bound benchmarks (bench/peers.py):

    gen_mlp.py OUTDIR [--layers 784,1024,1024,10] [--batch 256] [--rows 2048]

OUTDIR/mlp.json trains layers[0]-...-layers[-1] (Relu hidden layers,
softmax cross entropy, Adam; progress logged every 5 steps) on OUTDIR/x.npy (rows x layers[0], uniform
[0,1)) and OUTDIR/y.npy (one-hot of rows labels).  No numpy needed;
deterministic.
"""
import json
import os
import random
import struct
import sys


def write_npy(path, rows, cols, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % (rows * cols), *values))


def graph(layers, batch):
    nodes = [
        {"name": "x", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, layers[0]]}},
        {"name": "y", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, layers[-1]]}},
    ]
    prev = "x"
    for i in range(1, len(layers)):
        w, b = "w%d" % i, "b%d" % i
        nodes.append({"name": w, "op": "Variable", "attrs": {"dtype": "float32", "shape": [layers[i - 1], layers[i]],
                                                         "init": {"glorot_uniform": {}}}})
        nodes.append({"name": b, "op": "Variable", "attrs": {"dtype": "float32", "shape": [layers[i]],
                                                         "init": {"zeros": {}}}})
        nodes.append({"name": "l%d/MatMul" % i, "op": "MatMul", "inputs": [prev, w]})
        last = i == len(layers) - 1
        nodes.append({"name": "logits" if last else "l%d/BiasAdd" % i, "op": "BiasAdd",
                      "inputs": ["l%d/MatMul" % i, b]})
        if not last:
            nodes.append({"name": "h%d" % i, "op": "Relu", "inputs": ["l%d/BiasAdd" % i]})
            prev = "h%d" % i
    nodes.append({"name": "xent", "op": "SoftmaxCrossEntropyWithLogits", "inputs": ["logits", "y"]})
    nodes.append({"name": "loss", "op": "Mean", "inputs": ["xent"]})
    return {"version": 1, "nodes": nodes, "fetch": ["loss"],
            "train": {"loss": "loss", "optimizer": {"type": "adam", "learning_rate": 0.001},
                      "steps": 100, "log_every": 5,
                      "feeds": {"x": {"file": "x.npy", "batch": batch, "shuffle": False},
                                "y": {"file": "y.npy", "batch": batch, "shuffle": False}}}}


def main():
    args = sys.argv[1:]
    out = args[0]
    layers, batch, rows = [784, 1024, 1024, 10], 256, 2048
    for i, a in enumerate(args):
        if a == "--layers":
            layers = [int(v) for v in args[i + 1].split(",")]
        elif a == "--batch":
            batch = int(args[i + 1])
        elif a == "--rows":
            rows = int(args[i + 1])
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(7)
    write_npy(os.path.join(out, "x.npy"), rows, layers[0],
              [rnd.random() for _ in range(rows * layers[0])])
    ys = []
    for _ in range(rows):
        row = [0.0] * layers[-1]
        row[rnd.randrange(layers[-1])] = 1.0
        ys += row
    write_npy(os.path.join(out, "y.npy"), rows, layers[-1], ys)
    with open(os.path.join(out, "mlp.json"), "w") as f:
        json.dump(graph(layers, batch), f, indent=1)


if __name__ == "__main__":
    main()
