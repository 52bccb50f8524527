#!/usr/bin/env python3
"""Generate a large synthetic dgrun graph for compile-time benchmarks.

usage: gen_graph.py N OUT.json

The graph has N nodes: Variables (1 in 16, pinned to the CPU by a rule) and
chains of elementwise float ops over them with occasional explicit devices,
colocate_with edges and control inputs, so loading, inference and every
placement step (rules, groups, explicit requests, defaults, consumers) do
real work.  Deterministic for a given N.
"""
import sys


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    ops = ["Sin", "Cos", "Tanh", "Relu", "Square"]
    with open(out, "w") as f:
        f.write('{"version": 1, "placement": {"rules": [{"match": {"op": ["Variable"]}, '
                '"device": "/cpu:0"}]}, "nodes": [\n')
        prev = None
        for i in range(n):
            name = "n%d" % i
            if i % 16 == 0:
                node = '{"name": "%s", "op": "Variable", "attrs": {"dtype": "float32", "shape": [4], "init": 0.5}}' % name
            elif i % 16 == 1:
                node = '{"name": "%s", "op": "Const", "attrs": {"value": [1, 2, 3, 4]}}' % name
            elif i % 16 == 2:
                node = '{"name": "%s", "op": "Add", "inputs": ["n%d", "n%d"]}' % (name, i - 2, i - 1)
            else:
                extra = ""
                if i % 97 == 0:
                    extra = ', "device": "/gpu:%d"' % (i % 4)
                elif i % 89 == 0:
                    extra = ', "colocate_with": ["n%d"]' % (i - 1)
                inputs = '"%s"' % prev
                if i % 53 == 0:
                    inputs += ', "^n%d"' % (i - 3)
                node = '{"name": "%s", "op": "%s", "inputs": [%s]%s}' % (
                    name, ops[i % len(ops)], inputs, extra)
            prev = name
            f.write(node)
            f.write(",\n" if i + 1 < n else "\n")
        f.write("]}\n")


if __name__ == "__main__":
    main()
