#!/usr/bin/env python3
"""record.py -- record how TensorFlow parses device strings (issue 21, item 5).

Run with the TF venv (tools/tf_fixtures/.venv/bin/python); writes
tests/compiler/devspec_tf_cases.h, the table tests/compiler/test_devspec.c
checks dgrun's two device-string syntaxes against:

  py       tf.DeviceSpec.from_string(s).to_string(), or "!" + the exception:
           what `with tf.device(s)` makes of s in Python (dgrun JSON
           `device`, placement rules, --device)
  py_run   a Const built under `with tf.device(s)` and run in a session
           with soft placement: "ok", or "!" + the error (the whole TF
           pipeline: Python's parse, then the C++ placer reading the string
           Python wrote)
  py_cpu   the same without soft placement on this CPU-only machine: "ok"
           where the string means a device this host has (the CPU), which
           is how the meaning of a lenient spelling shows
  cpp      a one-node GraphDef whose NodeDef `device` is s, imported
           through the C API (no Python parse) and run with soft
           placement: "ok" or "!" + the error (C++
           DeviceNameUtils::ParseFullName; dgrun's GraphDef loader)

Errors: "!Malformed" is TF's "Malformed device specification",
"!Unplaced" a well-formed string no device of this CPU-only host fits
("Cannot assign a device ..."), else "!" + Python's exception.
  cpp_cpu  the same without soft placement

Usage: record.py [OUT]
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow as tf  # noqa: E402
from tensorflow.python.client import pywrap_tf_session as c_api  # noqa: E402
from tensorflow.python.framework import c_api_util  # noqa: E402

tf1 = tf.compat.v1
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "compiler",
    "devspec_tf_cases.h")

SPELLINGS = [
    "", "/", "//", "cpu", "CPU", "gpu", "/cpu:0", "/CPU:0", "/gpu:1",
    "/GPU:1", "cpu:0", "gpu:0", "Cpu:0", "/Gpu:0", "cpu/:0", "/cpu:0/",
    "cpu:*", "/gpu:*", "/device:CPU:0", "/device:GPU:1", "device:GPU:1",
    "/device:gpu:0", "/device:cpu:0", "/device:GPU", "/device:GPU:",
    "/device:GPU:*", "/device:*:1", "/device:*", "/device:TPU:0",
    "/device:XLA_GPU:0", "/device:Gpu:0", "/device::0", "/tpu:0", "tpu:0",
    "/job:worker", "/job:worker/task:1",
    "/job:worker/replica:0/task:1/device:GPU:0",
    "/job:localhost/replica:0/task:0/device:CPU:0", "/job:*/device:CPU:0",
    "/job:", "/job:w-1", "/job:1w", "/job:ps/job:localhost", "/task:01",
    "/task:1x", "/task:-1", "/task:+1", "/task: 1", "/task:1_0",
    "/replica:*", "/task:*", "job:localhost/task:0/cpu:0", "/cpu:0/gpu:0",
    "/device:CPU:0/device:GPU:0", "/gpu:0/device:CPU:0", "/cpu", "/cpu:",
    "/cpu:x", "/device:GPU:x", "/foo:0", "foo", "/:0", ":0", "/cpu:0:1",
    "/device:GPU:0:1", "/device:GPU:1/", " /cpu:0", "/CPU:0 ",
    "/job:localhost/task:0/cpu:0/replica:0", "/task:0/job:localhost",
    "/device:CUSTOM:0", "/epu:0", "custom:0", "/device:CPU:0/",
    "///cpu:0", "/job:localhost//cpu:0", "/replica:0/task:0",
    "/job:localhost/replica:1", "/device:cpu:*", "CPU:0/GPU:0",
    "/device:CPU:1", "/cpu:1", "/job:localhost/task:0/device:GPU:0",
    "/job:local_host2", "/gpu:0/", "gpu:1/job:localhost",
]


def short(e):
    """"!Malformed" (TF's "Malformed device specification"), "!Unplaced"
    (well formed, but no device of this host fits: "Cannot assign a
    device" / "Could not satisfy"), or "!" + Python's exception."""
    m = str(e)
    if "Malformed device specification" in m:
        return "!Malformed"
    if "Cannot assign a device" in m or "Could not satisfy" in m:
        return "!Unplaced"
    m = m.strip().splitlines()[0] if m.strip() else ""
    return "!" + type(e).__name__ + ": " + m[:160]


def py_parse(s):
    try:
        return tf.DeviceSpec.from_string(s).to_string()
    except Exception as e:  # noqa: BLE001
        return short(e)


def cfg(soft):
    return tf1.ConfigProto(allow_soft_placement=soft,
                           intra_op_parallelism_threads=1,
                           inter_op_parallelism_threads=1)


def py_run(s, soft):
    g = tf.Graph()
    try:
        with g.as_default():
            with tf.device(s):
                c = tf.constant(1.0, name="c")
        with tf1.Session(graph=g, config=cfg(soft)) as sess:
            sess.run(c)
        return "ok"
    except Exception as e:  # noqa: BLE001
        return short(e)


def cpp_run(s, soft):
    gd = tf1.GraphDef()
    n = gd.node.add()
    n.name = "c"
    n.op = "Const"
    n.device = s
    n.attr["dtype"].type = tf.float32.as_datatype_enum
    n.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(1.0, tf.float32))
    g = tf.Graph()
    try:
        # through the C API: tf.graph_util.import_graph_def would parse the
        # device with Python's DeviceSpec first
        with c_api_util.tf_buffer(gd.SerializeToString()) as buf:
            opts = c_api.TF_NewImportGraphDefOptions()
            with g._c_graph.get() as cg:
                c_api.TF_GraphImportGraphDefWithResults(cg, buf, opts)
            c_api.TF_DeleteImportGraphDefOptions(opts)
        g._add_new_tf_operations(compute_devices=False)
        with tf1.Session(graph=g, config=cfg(soft)) as sess:
            sess.run("c:0")
        return "ok"
    except Exception as e:  # noqa: BLE001
        return short(e)


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    rows = []
    for s in SPELLINGS:
        rows.append((s, py_parse(s), py_run(s, True), py_run(s, False),
                     cpp_run(s, True), cpp_run(s, False)))
    with open(OUT, "w") as f:
        f.write("/*\n * devspec_tf_cases.h -- TensorFlow %s's answers for "
                "device strings,\n * recorded by tools/tf_devspec/record.py "
                "(do not edit; rerun it).\n * Columns: spelling, py, py_run, "
                "py_cpu, cpp, cpp_cpu (record.py says\n * what each is; "
                "\"ok\" or \"!\" + TF's error).\n */\n" % tf.__version__)
        for r in rows:
            f.write("{%s},\n" % ", ".join(cstr(x) for x in r))
    for r in rows:
        print(" | ".join(r))


if __name__ == "__main__":
    main()
