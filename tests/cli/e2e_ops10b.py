#!/usr/bin/env python3
"""End-to-end checks of the ops10b ops' failures (issue 22; TF is never
needed here): a StatelessRandomUniformInt with minval >= maxval fails the
run (exit 1) and a stateless op whose seed is no pair or an
ApproximateEqual of two shapes is an invalid graph (exit 2), each with
one line naming the node and the reason; the passing forms run (exit 0).
The helpers are e2e_ops9a.py's.

Usage: e2e_ops10b.py DGRUN    Exit 0 = pass, 1 = failure.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_ops9a as e9  # noqa: E402  (DGRUN from this argv)


def graph(*nodes, fetch="r"):
    return {"version": 1, "nodes": list(nodes), "fetch": [fetch]}


def uniform_int(lo, hi):
    return graph(e9.cst("sh", "int32", [3]), e9.cst("sd", "int64", [1, 2]),
                 e9.cst("a", "int32", lo), e9.cst("b", "int32", hi),
                 {"name": "r", "op": "StatelessRandomUniformInt",
                  "inputs": ["sh", "sd", "a", "b"],
                  "attrs": {"dtype": "int32"}})


def uniform(seed):
    return graph(e9.cst("sh", "int32", [3]), e9.cst("sd", "int64", seed),
                 {"name": "r", "op": "StatelessRandomUniform",
                  "inputs": ["sh", "sd"], "attrs": {"dtype": "float32"}})


def approx(n):
    return graph(e9.cst("x", "float32", [1.0, 2.0]),
                 e9.cst("y", "float32", [1.0, 2.5, 3.0][:n]),
                 {"name": "r", "op": "ApproximateEqual",
                  "inputs": ["x", "y"], "attrs": {"tolerance": 0.6}})


def main():
    with tempfile.TemporaryDirectory() as tmp:
        e9.expect(tmp, "uniform_int_empty_range", uniform_int(5, 5), 1,
                  ["node 'r'", "need minval < maxval, got 5 >= 5"])
        out = e9.expect(tmp, "uniform_int_ok", uniform_int(5, 6), 0, [])
        e9.check("[5 5 5]" in out, "uniform_int_ok: output %r" % out)
        e9.expect(tmp, "uniform_seed_3", uniform([1, 2, 3]), 2,
                  ["node 'r'", "seed must be an int32/int64 vector of 2"])
        e9.expect(tmp, "uniform_ok", uniform([1, 2]), 0, [])
        e9.expect(tmp, "approx_shapes", approx(3), 2, ["node 'r'"])
        out = e9.expect(tmp, "approx_ok", approx(2), 0, [])
        e9.check("[ True  True]" in out or "[True True]" in out,
                 "approx_ok: output %r" % out)
    print("%d failures" % len(e9.FAILURES) if e9.FAILURES else "pass")
    return 1 if e9.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
