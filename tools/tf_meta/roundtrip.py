#!/usr/bin/env python3
"""roundtrip.py -- TF -> dgrun -> TF training round trip (issue 24 item 4).

Needs TensorFlow (the fixture venv) and a built dgrun; not part of the test
suite.

  python tools/tf_meta/roundtrip.py [DGRUN] [--steps N] [--resource]
      (DGRUN default build/cli/dgrun; N default 100; --resource: the
       graph's variables are resource variables, TF 2's default, instead
       of TF-1's reference variables)

The TF-1 MLP of make_fixtures.py (Adam, global step, full-batch feeds):

  A. TF trains 3N steps in one session (the reference);
  B. TF trains N steps and saves (Saver: ck/model.ckpt-N + .meta);
     dgrun train ck/model.ckpt-N.meta --checkpoint ck --restore --steps N
       (the train op from the MetaGraphDef's collection, the checkpoint TF
        wrote; dgrun saves ck/model.ckpt-2N in TF's format);
     TF restores the newest checkpoint (Saver.restore of
       tf.train.latest_checkpoint) into the graph of the .meta
       (import_meta_graph) and trains N more steps.

B's losses (TF's steps 1..N and 2N+1..3N, dgrun's last loss) and final
Variables (weights, Adam slots, beta powers, global_step) must equal A's
within float tolerance (rtol 1e-4, atol 1e-5).  Prints the differences and
exits 1 on a mismatch.
"""
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402

tf1 = tf.compat.v1
RTOL, ATOL = 1e-4, 1e-5


def variables(sess):
    return {v.op.name: sess.run(v) for v in tf1.global_variables()}


def run_a(x, y, n):
    with tf.Graph().as_default():
        m = mf.build_mlp()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            fd = {m["x"]: x, m["y"]: y}
            losses = [float(sess.run([m["loss"], m["train"]], fd)[0])
                      for _ in range(3 * n)]
            return losses, variables(sess)


def run_b(x, y, n, dgrun, work):
    ck = os.path.join(work, "ck")
    with tf.Graph().as_default():
        m = mf.build_mlp()
        saver = tf1.train.Saver(save_relative_paths=True)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            fd = {m["x"]: x, m["y"]: y}
            first = [float(sess.run([m["loss"], m["train"]], fd)[0])
                     for _ in range(n)]
            saver.save(sess, os.path.join(ck, "model.ckpt"), global_step=n)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    meta = os.path.join(ck, "model.ckpt-%d.meta" % n)
    cmd = [dgrun, "train", meta, "--checkpoint", ck, "--restore",
           "--steps", str(n), "--feed", "x=" + os.path.join(work, "x.npy"),
           "--feed", "y=" + os.path.join(work, "y.npy"), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("dgrun failed (%d): %s" % (r.returncode, r.stderr.strip()))
    dg = json.loads(r.stdout)
    latest = tf.train.latest_checkpoint(ck)
    with tf.Graph().as_default():
        saver = tf1.train.import_meta_graph(meta)
        g = tf1.get_default_graph()
        loss = g.get_tensor_by_name("loss:0")
        train = tf1.get_collection(tf1.GraphKeys.TRAIN_OP)[0]
        fd = {g.get_tensor_by_name("x:0"): x, g.get_tensor_by_name("y:0"): y}
        with tf1.Session() as sess:
            saver.restore(sess, latest)
            gs0 = int(sess.run(tf1.train.get_global_step()))
            last = [float(sess.run([loss, train], fd)[0]) for _ in range(n)]
            return first, dg, latest, gs0, last, variables(sess)


def main():
    args = [a for a in sys.argv[1:]]
    n = 100
    if "--steps" in args:
        i = args.index("--steps")
        n = int(args[i + 1])
        del args[i:i + 2]
    resource = "--resource" in args
    if resource:  # TF 2's default: VarHandleOp, ResourceApplyAdam
        args.remove("--resource")
    else:
        tf1.disable_resource_variables()  # TF-1's VariableV2
    dgrun = os.path.abspath(args[0] if args else "build/cli/dgrun")
    x, y = mf.data()
    la, va = run_a(x, y, n)
    with tempfile.TemporaryDirectory() as work:
        first, dg, latest, gs0, last, vb = run_b(x, y, n, dgrun, work)
    ok = True

    def check(what, a, b):
        nonlocal ok
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        d = float(np.max(np.abs(a - b))) if a.size else 0.0
        good = a.shape == b.shape and np.allclose(a, b, rtol=RTOL, atol=ATOL)
        ok &= good
        print("%-28s max |diff| %.3g %s" % (what, d, "ok" if good else
                                             "MISMATCH"))

    print("steps: TF %d, dgrun %d (dgrun reported %d), TF %d; restored %s "
          "at global_step %d" % (n, n, dg["steps"], n, os.path.basename(latest),
                                 gs0))
    ok &= dg["steps"] == n and gs0 == 2 * n
    check("losses, TF steps 1..%d" % n, la[:n], first)
    check("loss, dgrun step %d" % (2 * n), la[2 * n - 1], dg["loss"])
    check("losses, TF steps %d..%d" % (2 * n + 1, 3 * n), la[2 * n:], last)
    for k in sorted(va):
        check("variable %s" % k, va[k], vb[k])
    print("round trip: %s (final loss %.7g vs %.7g)" % (
        "PASS" if ok else "FAIL", la[-1], last[-1]))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
