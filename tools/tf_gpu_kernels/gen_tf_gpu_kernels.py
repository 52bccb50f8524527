#!/usr/bin/env python3
"""gen_tf_gpu_kernels.py -- TensorFlow's GPU kernel table for the TF ops
dgrun loads (issue 21, item 4): writes compiler/ir/tf_gpu_kernels.def.

Needs the CUDA build of TensorFlow (`pip install tensorflow`, not
tensorflow-cpu): it registers its GPU kernels even on a host without a GPU.
Run it with such a venv, e.g. .venv-tfgpu/bin/python (gitignored; see
docs/graphdef.md).  The op names are the ones tools/tf_attrs/gen_tf_attrs.py
reads from the sources.  Each row:

  DGC_TF_GPU("Op", "dtypes", "host memory args", "typed arg")

dtypes: the dgrun dtypes (float32, float64, int32, int64, bool) of the
op's type attr (T, else dtype, SrcT, Tout, Tidx: the first its GPU kernels
constrain) for which TF registers a GPU kernel (device GPU, or DEFAULT:
every device); "*" when such a kernel constrains no type (NoOp, Identity's
DEFAULT kernel); "" when TF has no GPU kernel.
host memory args: per dtype ("*": the untyped kernel), the inputs and
outputs TF's GPU kernel keeps in host memory: "int32:x,y,z;...".
typed arg: where a node's dtype for that type attr is read: "in:K" (input
K), "out:K" (output K), "" (no type attr).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tf_attrs"))
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework import kernels  # noqa: E402
from tensorflow.python.framework import op_def_registry  # noqa: E402
from gen_tf_attrs import ROOT, dgrun_tf_names  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "compiler", "ir", "tf_gpu_kernels.def")
DTYPES = [(tf.float32, "float32"), (tf.float64, "float64"),
          (tf.int32, "int32"), (tf.int64, "int64"), (tf.bool, "bool")]
TYPE_ATTRS = ["T", "dtype", "SrcT", "Tout", "Tidx"]


def typed_arg(name, attr):
    """Which of the op's args has type attr `attr`, as dgrun counts a
    node's inputs and outputs: "in:K" (its input K, the first of a list),
    "out:K", "attr:NAME" (no arg has it: TensorArrayV3's dtype, read from
    the node's attribute), or "" (only behind a list of unknown length)."""
    od = op_def_registry.get(name)
    if attr is None or od is None:
        return ""
    pos = 0
    for a in od.input_arg:
        if a.type_attr == attr:
            return "in:%d" % pos
        if a.number_attr or a.type_list_attr:
            pos = None  # later inputs sit behind a list
            break
        pos += 1
    for k, a in enumerate(od.output_arg):
        if a.type_attr == attr:
            return "out:%d" % k
        if a.number_attr or a.type_list_attr:
            return ""
    if not any(a.type_attr == attr for a in
               list(od.input_arg) + list(od.output_arg)):
        return "attr:" + attr
    return ""


def attr_args(name, attr):
    """The names of the op's args whose type is `attr`."""
    od = op_def_registry.get(name)
    return [a.name for a in list(od.input_arg) + list(od.output_arg)
            if a.type_attr == attr]


def type_attr(name, cons, host):
    """The kernel's type attr: the first of TYPE_ATTRS it constrains whose
    args are not all kept in host memory (RandomUniform's T types its
    host-memory shape, its dtype the values), else the first it
    constrains; None when it constrains none."""
    have = [a for a in TYPE_ATTRS if a in cons]
    for a in have:
        args = attr_args(name, a)
        if args and not set(args) <= set(host):
            return a
    return have[0] if have else None


def row(name):
    """(dtypes, host, typed arg): see the module doc."""
    gpu = [k for k in kernels.get_registered_kernels_for_op(name).kernel
           if k.device_type in ("GPU", "DEFAULT")]
    if not gpu:
        return "", "", ""
    have, host, any_type, first_attr = set(), {}, False, None
    for k in gpu:
        cons = {c.name: list(c.allowed_values.list.type) for c in k.constraint}
        attr = type_attr(name, cons, k.host_memory_arg)
        first_attr = first_attr or attr
        types = cons[attr] if attr else [None]
        any_type |= attr is None
        for t in types:
            have.add(t)
            if k.host_memory_arg:
                host.setdefault(t, set()).update(k.host_memory_arg)
    names = [n for t, n in DTYPES if t.as_datatype_enum in have]
    hs = []
    for t, n in DTYPES + [(None, "*")]:
        e = t.as_datatype_enum if t is not None else None
        if e in host:
            hs.append("%s:%s" % (n, ",".join(sorted(host[e]))))
    return (("*" if any_type else ",".join(names)), ";".join(hs),
            typed_arg(name, first_attr))


def main():
    if not any(k.device_type == "GPU" for k in
               kernels.get_registered_kernels_for_op("MatMul").kernel):
        sys.exit("this TensorFlow registers no GPU kernels: use the CUDA "
                 "build (pip install tensorflow), not tensorflow-cpu")
    rows = []
    for name in dgrun_tf_names():
        if op_def_registry.get(name) is None or name.startswith("_"):
            continue
        rows.append((name,) + row(name))
    with open(OUT, "w") as f:
        f.write("/*\n * tf_gpu_kernels.def -- TensorFlow %s's GPU kernels for "
                "the TF ops dgrun\n * loads (X-macro DGC_TF_GPU(op, dtypes, "
                "host_memory_args, typed_arg),\n * sorted by op).  Generated by "
                "tools/tf_gpu_kernels/gen_tf_gpu_kernels.py from the CUDA\n"
                " * build's kernel registry; do not edit, rerun it.  dtypes: "
                "the dgrun dtypes\n * of the op's type attr with a GPU kernel "
                "(\"*\": any, \"\": none); per\n * dtype, the args TF keeps "
                "in host memory on a GPU; typed_arg: the node input or\n"
                " * output whose dtype is that type attr's (\"in:K\", "
                "\"out:K\", \"\": none).\n * Read by compiler/ir/ops.c "
                "(dgc_tf_gpu_kernel); `dgrun ops` shows it.\n */\n"
                % tf.__version__)
        for r in rows:
            f.write('DGC_TF_GPU("%s", "%s", "%s", "%s")\n' % r)
    print("%d ops -> %s" % (len(rows), OUT))


if __name__ == "__main__":
    main()
