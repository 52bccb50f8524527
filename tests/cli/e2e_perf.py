#!/usr/bin/env python3
"""End-to-end checks of issue 16's cheap paths.

Usage: e2e_perf.py DGRUN GROUP
  check_light  `dgrun check` of a graph that names no GPU loads no library
               at run time (no OpenCL ICD, no oneDNN) and stays small; a
               graph that names /gpu:0 still gets the real devices (its
               verdict matches `place`), and --assume-gpus still works.
  graphdef_stream  a 200,000-node GraphDef JSON (bench/gen_graphdef.py)
               checks with bounded memory: its nodes stream one at a time
               (the whole-document parse took 240 MB; now ~95 MB).
  no_device_libs  check, place --assume-gpus and ops load no device or math
               library (OpenCL ICD, clBLAST, OpenBLAS, oneDNN, OpenMP): they
               are loaded on first use (runtime/core/lazylib.h); run and
               devices still load them.
  blas_threads  a run that loads OpenBLAS starts no OpenBLAS server
               threads (each spun ~0.1 s of a core in sched_yield at load:
               dgrun calls it single-threaded): the same thread count as
               with OPENBLAS_NUM_THREADS=1 set by hand.
Exit 0 = pass, 1 = failure.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
G = os.path.join(ROOT, "graphs")
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([DGRUN] + args, capture_output=True, text=True,
                          env=e, timeout=120)


def check_light():
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = run(["check", os.path.join(G, "matmul.json")], {"LD_DEBUG": "files"})
    check(r.returncode == 0, "check matmul.json exits 0: %r" % r.stderr[-300:])
    loaded = [ln for ln in r.stderr.splitlines() if "dynamically loaded by" in ln]
    check(not loaded, "check of a CPU-only graph dlopens nothing: %r" % loaded[:3])
    r = run(["check", os.path.join(G, "matmul.json")])
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if "ASAN_OPTIONS" not in os.environ and rss > before:
        check(rss < 40 * 1024, "check peak RSS %d KB < 40 MB" % rss)
    # a GPU request needs the real devices: same verdict as place
    gpu = os.path.join(G, "sin_gpu.json")
    rc = run(["check", gpu]).returncode
    rp = run(["place", gpu]).returncode
    check(rc == rp, "check and place agree on sin_gpu.json (%d vs %d)" % (rc, rp))
    r = run(["check", gpu, "--assume-gpus", "0"])
    check(r.returncode != 0 and "GPU" in r.stderr,
          "check --assume-gpus 0 of a /gpu:0 request fails: %r" % r.stderr)
    r = run(["check", os.path.join(G, "matmul.json"), "--device", "/gpu:0",
             "--assume-gpus", "1"])
    check(r.returncode == 0, "check --device /gpu:0 --assume-gpus 1: %r" % r.stderr)


def graphdef_stream():
    tmp = tempfile.mkdtemp(prefix="dgrun_gdstream_")
    try:
        path = os.path.join(tmp, "gd200k.json")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench",
                        "gen_graphdef.py"), "200000", path], check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        r = run(["check", path])
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        check(r.returncode == 0, "check gd200k.json exits 0: %r" % r.stderr[-300:])
        if "ASAN_OPTIONS" not in os.environ:
            check(rss > before, "the check is the largest child so far")
            check(rss < 150 * 1024, "check of 200k GraphDef nodes: peak RSS "
                  "%d KB < 150 MB (a whole-document parse takes ~240 MB)" % rss)
        # one error deep in the stream still names its node
        with open(path) as f:
            text = f.read()
        bad = text.replace('"name": "n199999", "op": "Square"',
                           '"name": "n199999", "op": "Square", "device": 7')
        check(bad != text, "the generator's last node is a Square")
        with open(path, "w") as f:
            f.write(bad)
        r = run(["check", path])
        check(r.returncode == 2 and "node 'n199999': 'device' must be a "
              "string, got a number" in r.stderr, "late error: %r" % r.stderr)
    finally:
        shutil.rmtree(tmp)


DEVICE_LIBS = ("libOpenCL", "libclblast", "libopenblas", "libdnnl", "libgomp")


def loaded_libs(args):
    """The device/math libraries the dynamic loader loads for `dgrun ARGS`
    (LD_DEBUG=files: linked and dlopen'ed ones alike), and the result."""
    r = run(args, {"LD_DEBUG": "files"})
    libs = set()
    for ln in r.stderr.splitlines():
        if "file=" not in ln:
            continue
        name = os.path.basename(ln.split("file=", 1)[1].split()[0])
        libs.update(lib for lib in DEVICE_LIBS if name.startswith(lib))
    return libs, r


def no_device_libs():
    if "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ:
        print("sanitizer build: it links the device libraries (meson.build)")
        return
    mm = os.path.join(G, "matmul.json")
    for args in (["check", mm], ["check", mm, "--assume-gpus", "2"],
                 ["place", mm, "--assume-gpus", "2"], ["ops"]):
        libs, r = loaded_libs(args)
        check(r.returncode == 0, "%s exits 0: %r" % (args[0], r.stderr[-300:]))
        check(not libs, "dgrun %s loads no device library: %s"
              % (" ".join(args[:1] + args[2:]), sorted(libs)))
    # the check above can fail: running a MatMul loads OpenBLAS
    libs, r = loaded_libs(["run", mm, "--device", "/cpu:0"])
    check(r.returncode == 0, "run exits 0: %r" % r.stderr[-300:])
    check("libopenblas" in libs, "run of a MatMul loads OpenBLAS: %s"
          % sorted(libs))


def threads_once_blas_loaded(e):
    """Threads of a long `dgrun run` of a small MatMul (OpenBLAS's path)
    in environment e once OpenBLAS is mapped, or None if it never was."""
    p = subprocess.Popen([DGRUN, "run", os.path.join(G, "matmul.json"), "--device",
                          "/cpu:0", "--opencl-devices", "none", "--repeat", "100000000",
                          "--intra-op-threads", "1", "--inter-op-threads", "1"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=e)
    try:
        for _ in range(600):
            try:
                with open("/proc/%d/maps" % p.pid) as f:
                    if "libopenblas" in f.read():
                        time.sleep(0.3)  # its constructor has run
                        return len(os.listdir("/proc/%d/task" % p.pid))
            except OSError:
                return None
            time.sleep(0.05)
        return None
    finally:
        p.kill()
        p.wait()


def blas_threads():
    if "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ:
        print("sanitizer build: it links OpenBLAS, loaded before dgrun's "
              "constructor (meson.build)")
        return
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS")}
    default = threads_once_blas_loaded(env)
    one = threads_once_blas_loaded(dict(env, OPENBLAS_NUM_THREADS="1"))
    check(default is not None and one is not None,
          "a run of a MatMul maps OpenBLAS (%r, %r)" % (default, one))
    check(default == one, "no OpenBLAS server threads: %r threads by default, %r "
          "with OPENBLAS_NUM_THREADS=1" % (default, one))


GROUPS = {"check_light": check_light, "graphdef_stream": graphdef_stream,
          "no_device_libs": no_device_libs, "blas_threads": blas_threads}

if __name__ == "__main__":
    GROUPS[GROUP]()
    sys.exit(1 if FAILURES else 0)
