#!/usr/bin/env python3
"""Generate a large TensorFlow GraphDef in proto3 JSON for compile-time
benchmarks (the GraphDef twin of gen_graph.py).

usage: gen_graphdef.py N OUT.json

N nodes: a float32 [4] Const every 16 nodes, the rest a chain of
elementwise ops (Sin, Cos, Tanh, Relu, Square, and an Add joining the
latest Const every 16 nodes), with a few explicit "/device:CPU:0" requests
and control inputs.  Streams to the file (no node list in memory);
deterministic for a given N.  TensorFlow imports it with
json_format.Parse(text, tf.compat.v1.GraphDef()).
"""
import sys

CONST = ('{"name": "%s", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, '
         '"value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "4"}]}, '
         '"floatVal": [1, 2, 3, 4]}}}}')
UNARY = '{"name": "%s", "op": "%s", "input": [%s], "attr": {"T": {"type": "DT_FLOAT"}}%s}'


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    ops = ["Sin", "Cos", "Tanh", "Relu", "Square"]
    with open(out, "w") as f:
        f.write('{"node": [\n')
        prev, last_const = None, None
        for i in range(n):
            name = "n%d" % i
            if i % 16 == 0 or prev is None:
                node = CONST % name
                last_const = name
                if prev is None:
                    prev = name
            elif i % 16 == 1:
                node = UNARY % (name, "Add", '"%s", "%s"' % (prev, last_const), "")
                prev = name
            else:
                inputs = '"%s"' % prev
                if i % 97 == 0:
                    inputs += ', "^n%d"' % (i - 3)
                dev = ', "device": "/device:CPU:0"' if i % 101 == 0 else ""
                node = UNARY % (name, ops[i % len(ops)], inputs, dev)
                prev = name
            f.write(node)
            f.write(",\n" if i + 1 < n else "\n")
        f.write('], "versions": {"producer": 1087}}\n')


if __name__ == "__main__":
    main()
