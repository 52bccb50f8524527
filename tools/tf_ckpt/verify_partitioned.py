#!/usr/bin/env python3
"""verify_partitioned.py -- TensorFlow restores the partitioned variables
`dgrun train` saved (issue 24).  Needs the TF venv (not part of the suite):

  tools/tf_fixtures/.venv/bin/python tools/tf_ckpt/verify_partitioned.py build/cli/dgrun

With the fixture of make_partitioned.py (tests/data/tf_ckpt/part: w [6,4]
in 3 parts along axis 0, v [4,7] in 3 along axis 1, TF's checkpoint after
2 steps), in a temporary copy:
  1. `dgrun train model.ckpt-2.meta --checkpoint DIR --restore --steps 1`
     writes model.ckpt-3 (each full variable in slices, as TF's Saver);
  2. tf.compat.v1.train.Saver().restore of model.ckpt-3 into TF's graph
     (import_meta_graph): every part equals TF's own step 3, and TF's loss
     before step 4 is TF's;
  3. tf.train.load_checkpoint(model.ckpt-3).get_tensor("w") / ("v"): the
     full tensors TF assembles from dgrun's slices equal TF's;
  4. dgrun restores the GraphDef (no slice information: the names and the
     checkpoint's slices) and the .meta from dgrun's model.ckpt-3 and
     prints the logits TF computes from it.
Prints one line per check; exit 0 when all pass.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
DGRUN = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIX = os.path.join(ROOT, "tests", "data", "tf_ckpt", "part")
TMP = tempfile.mkdtemp(prefix="dgrun_tfpart_")
FAILED = []


def check(what, ok, detail=""):
    print("%-60s %s %s" % (what, "ok" if ok else "FAIL", detail))
    if not ok:
        FAILED.append(what)


def main():
    d = os.path.join(TMP, "part")
    shutil.copytree(FIX, d)
    meta = json.load(open(os.path.join(FIX, "meta.json")))
    r = subprocess.run([DGRUN, "train", "model.ckpt-2.meta", "--checkpoint",
                        ".", "--restore", "--steps", "1", "--feed", "x=x.npy",
                        "--feed", "y=y.npy"], cwd=d, capture_output=True,
                       text=True)
    check("dgrun train --restore --steps 1", r.returncode == 0,
          r.stderr.strip()[-300:])
    prefix = os.path.join(d, "model.ckpt-3")
    check("dgrun wrote model.ckpt-3", os.path.exists(prefix + ".index"))
    g = tf.Graph()
    with g.as_default():
        saver = tf1.train.import_meta_graph(os.path.join(d,
                                                         "model.ckpt-2.meta"))
        with tf1.Session(graph=g) as s:
            saver.restore(s, prefix)
            for name, want in sorted(meta["after_step3"].items()):
                if name in ("w", "v", "e"):
                    continue
                got = s.run(g.get_tensor_by_name(name + ":0"))
                diff = float(np.max(np.abs(got - np.array(want))))
                check("Saver.restore: %s" % name, diff < 1e-5,
                      "max |diff| %.3g" % diff)
            fd = {g.get_tensor_by_name("x:0"): np.load(os.path.join(d,
                                                                    "x.npy")),
                  g.get_tensor_by_name("y:0"): np.load(os.path.join(d,
                                                                    "y.npy"))}
            loss = float(s.run(g.get_tensor_by_name("loss:0"), fd))
            logits3 = s.run(g.get_tensor_by_name("logits:0"), fd)
            check("TF's loss before step 4 from dgrun's checkpoint",
                  abs(loss - meta["loss_step4"]) < 1e-5,
                  "%.8f vs %.8f" % (loss, meta["loss_step4"]))
    rd = tf.train.load_checkpoint(prefix)
    shapes = rd.get_variable_to_shape_map()
    for name in ("w", "v", "e", "b"):
        got = rd.get_tensor(name)
        diff = float(np.max(np.abs(got - np.array(meta["after_step3"][name]))))
        check("load_checkpoint().get_tensor(%r) %s" % (name, shapes[name]),
              diff < 1e-5, "max |diff| %.3g" % diff)
    for graph in ("graph.pb", "model.ckpt-2.meta"):
        r = subprocess.run([DGRUN, "run", graph, "--checkpoint", "model.ckpt-3",
                            "--fetch", "logits", "--feed", "x=x.npy",
                            "--json"], cwd=d, capture_output=True, text=True)
        ok = r.returncode == 0
        if ok:
            got = np.array(json.loads(r.stdout)["logits"]["value"])
            diff = float(np.max(np.abs(got - logits3)))
            ok = diff < 1e-5
        check("dgrun run %s --checkpoint model.ckpt-3: TF's logits" % graph,
              ok, r.stderr.strip()[-200:])
    shutil.rmtree(TMP, ignore_errors=True)
    print("partitioned variables: %s" % ("FAIL" if FAILED else "PASS"))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
