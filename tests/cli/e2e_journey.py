#!/usr/bin/env python3
"""The new user's journey: the commands the README and docs/ show must
print what the docs say they print.

Usage: e2e_journey.py DGRUN GROUP
  readme      every `$ build/cli/dgrun ...` of the README's usage block, run
              from the source root; stderr then stdout must equal the lines
              shown under it, `$ echo $?` the previous exit code
  profile     `profile` ends its summary with where the trace went
  checkpoint  `--checkpoint DIR/` (TF's checkpoint_dir: model.ckpt-STEP and
              the `checkpoint` state file) and missing parent directories
              are created
  feeds       .csv feeds for run and train; a bad feed file names the
              Placeholder and the file (exit 2, one line)
  multigpu    the op and transfer counts of docs/multi-gpu.md's profile
              summaries and docs/profiling.md's colocation table
Standard library only.  Exit 0 = pass, 1 = failure.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

DGRUN = os.path.abspath(sys.argv[1])
GROUP = sys.argv[2]
ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TMP = tempfile.mkdtemp(prefix="dgrun-journey-")
FAILURES = []


def env():
    e = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES"):
        e.pop(k, None)
    e.setdefault("POCL_DEVICES", "pthread")
    return e


def dg(args, cwd=None):
    p = subprocess.run([DGRUN] + [str(a) for a in args], capture_output=True,
                       text=True, env=env(), cwd=cwd, timeout=300)
    return p


def check(cond, what, p=None):
    if not cond:
        extra = ""
        if p is not None:
            extra = "\n--- exit %d\n--- stdout:\n%s--- stderr:\n%s" % (
                p.returncode, p.stdout[:3000], p.stderr[:3000])
        print("FAIL: " + what + extra)
        FAILURES.append(what)
    return cond


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def test_readme():
    text = read("README.md")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    block = next((b for b in blocks if "$ build/cli/dgrun" in b), None)
    if not check(block is not None, "README has a `$ build/cli/dgrun` block"):
        return
    # split into (command, expected output lines)
    steps = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    check(len(steps) >= 4, "README shows at least 4 commands")
    last = None
    for cmd, want in steps:
        if cmd == "echo $?":
            check(last is not None and [str(last.returncode)] == want,
                  "README `echo $?` after the previous command shows %r" % want,
                  last)
            continue
        argv = shlex.split(cmd)
        if not check(argv[0] == "build/cli/dgrun", "README command %r" % cmd):
            continue
        p = dg(argv[1:], cwd=ROOT)
        got = (p.stderr + p.stdout).splitlines()
        check(got == want, "README: `%s` prints what the README shows\n"
              "want: %r\ngot:  %r" % (cmd, want, got), p)
        last = p


def test_profile():
    out = os.path.join(TMP, "sub", "t.json")
    os.makedirs(os.path.dirname(out))
    p = dg(["profile", os.path.join(ROOT, "graphs", "matmul.json"), "-o", out])
    check(p.returncode == 0 and os.path.exists(out), "profile -o writes", p)
    lines = p.stdout.splitlines()
    check(lines and lines[-1] == "trace written to %s (open it in "
          "https://ui.perfetto.dev or chrome://tracing)" % out,
          "profile's last line names the trace file", p)
    check(len(lines) > 2 and lines[-2] == "", "a blank line before it", p)
    # the default file, relative to the current directory
    p = dg(["profile", os.path.join(ROOT, "graphs", "matmul.json")], cwd=TMP)
    check(p.returncode == 0 and os.path.exists(os.path.join(TMP, "trace.json"))
          and p.stdout.splitlines()[-1].startswith("trace written to trace.json "),
          "profile names the default trace.json", p)


def test_checkpoint():
    g = os.path.join(TMP, "g.json")
    with open(g, "w") as f:
        f.write('{"version": 1, "nodes": ['
                '{"name": "w", "op": "Variable", "attrs": {"dtype": "float32", "shape": [], "init": 3.0}},'
                '{"name": "l", "op": "Square", "inputs": ["w"]}],'
                '"train": {"loss": "l", "optimizer": {"type": "sgd", "learning_rate": 0.1}, "steps": 2}}')
    # a trailing slash: a checkpoint_dir, created, holding model.ckpt-STEP
    # and TF's state file
    def bundle(prefix):
        return all(os.path.isfile(os.path.join(TMP, prefix + s))
                   for s in (".index", ".data-00000-of-00001"))

    def state(d):
        try:
            with open(os.path.join(TMP, d, "checkpoint")) as f:
                return f.read()
        except OSError:
            return None
    p = dg(["train", g, "--checkpoint", "ck/"], cwd=TMP)
    check(p.returncode == 0 and bundle("ck/model.ckpt-2") and
          state("ck") == 'model_checkpoint_path: "model.ckpt-2"\n'
          'all_model_checkpoint_paths: "model.ckpt-2"\n',
          "--checkpoint ck/ makes ck/model.ckpt-2 and ck/checkpoint", p)
    p = dg(["train", g, "--checkpoint", "ck/", "--restore", "--json"], cwd=TMP)
    check(p.returncode == 0 and "step 4/4" in p.stderr and bundle("ck/model.ckpt-4") and
          'model_checkpoint_path: "model.ckpt-4"' in (state("ck") or ""),
          "--restore from ck/ continues at step 2, saves model.ckpt-4", p)
    # a named checkpoint of the directory
    p = dg(["run", g, "--checkpoint", "ck/model.ckpt-2", "--fetch", "w"], cwd=TMP)
    check(p.returncode == 0 and p.stdout == "w = 1.9200001\n",
          "--checkpoint ck/model.ckpt-2 restores that one", p)
    # missing parent directories are made; a prefix gets the state file too
    p = dg(["train", g, "--checkpoint", "a/b/c.ckpt"], cwd=TMP)
    check(p.returncode == 0 and bundle("a/b/c.ckpt") and
          'model_checkpoint_path: "c.ckpt"' in (state("a/b") or ""),
          "--checkpoint a/b/c.ckpt makes a/b", p)
    # an existing directory without the slash is a checkpoint_dir too
    os.makedirs(os.path.join(TMP, "d"))
    p = dg(["train", g, "--checkpoint", "d"], cwd=TMP)
    check(p.returncode == 0 and bundle("d/model.ckpt-2"),
          "--checkpoint d (existing) makes d/model.ckpt-2", p)
    # a path that cannot be made names the file, not its temporary
    p = dg(["train", g, "--checkpoint", "/proc/no/such/x.ckpt"], cwd=TMP)
    last = p.stderr.splitlines()[-1] if p.stderr else ""
    check(p.returncode == 1 and last.startswith("dgrun: error: ") and
          "/proc/no/such/x.ckpt: cannot write checkpoint" in last and
          ".tmp." not in last, "unwritable checkpoint error", p)


def test_feeds():
    g = os.path.join(TMP, "f.json")
    with open(g, "w") as f:
        f.write('{"version": 1, "nodes": ['
                '{"name": "x", "op": "Placeholder", "attrs": {"dtype": "float32", "shape": [-1, 3]}},'
                '{"name": "w", "op": "Variable", "attrs": {"dtype": "float32", "shape": [3, 1], "init": 0.5}},'
                '{"name": "p", "op": "MatMul", "inputs": ["x", "w"]},'
                '{"name": "l", "op": "Mean", "inputs": ["p"]}],'
                '"train": {"loss": "l", "optimizer": {"type": "sgd", "learning_rate": 0.1}, "steps": 2,'
                '          "feeds": {"x": {"file": "%s", "batch": 1}}},'
                '"fetch": ["l"]}' % "x.csv")
    def write(name, text):
        with open(os.path.join(TMP, name), "w") as f:
            f.write(text)
    write("x.csv", "1,2,3\n4,5,6\n")
    write("narrow.csv", "1,2\n3,4\n")
    write("ragged.csv", "1,2,3\n4,5\n")
    p = dg(["run", g, "--feed", "x=x.csv"], cwd=TMP)
    check(p.returncode == 0 and p.stdout == "l = 5.25\n", "run --feed x=x.csv", p)
    p = dg(["train", g], cwd=TMP)
    check(p.returncode == 0, "train with a .csv feed", p)
    for what, args in (("run narrow", ["run", g, "--feed", "x=narrow.csv"]),
                       ("run ragged", ["run", g, "--feed", "x=ragged.csv"]),
                       ("run nope", ["run", g, "--feed", "x=nope.csv"]),
                       ("train --feed narrow", ["train", g, "--feed", "x=narrow.csv"])):
        p = dg(args, cwd=TMP)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and len(lines) == 1 and
              lines[0].startswith("dgrun: error: %s: node 'x': " % g) and
              (what.split()[-1] + ".csv") in lines[0],
              "%s: exit 2, one line naming node 'x' and the file" % what, p)
    with open(g) as f:
        text = f.read()
    with open(g, "w") as f:
        f.write(text.replace('"x.csv"', '"ragged.csv"'))
    p = dg(["train", g], cwd=TMP)
    check(p.returncode == 2 and
          p.stderr.startswith("dgrun: error: %s: node 'x': " % g) and
          "ragged.csv:2:" in p.stderr and
          p.stderr.count("\n") == 1, "train section feed error names node 'x'", p)


def counts(summary):
    """{device or direction: (count, bytes?)} from a profile summary."""
    res = {}
    for line in summary.splitlines():
        m = re.match(r"(/job:\S+)\s+(\d+)\s", line)
        if m:
            res[m.group(1)] = int(m.group(2))
        m = re.match(r"((?:CPU|GPU):\d+ -> (?:CPU|GPU):\d+|total)\s+(\d+)\s+(\d+)\s", line)
        if m:
            res[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return res


def test_multigpu():
    doc = read("docs/multi-gpu.md")
    m = re.search(r"```\n--colocate\n(.*?)\n--no-colocate\n(.*?)```", doc, re.S)
    if not check(m is not None, "docs/multi-gpu.md has the two summaries"):
        return
    graph = os.path.join(ROOT, "graphs", "multi_gpu_mlp.json")
    for flag, want in (("--colocate", m.group(1)), ("--no-colocate", m.group(2))):
        p = dg(["profile", graph, "--train", "--steps", "100", "--opencl-devices",
                "all", "--virtual-gpus", "2", flag, "-o",
                os.path.join(TMP, "mg.json")])
        w, g = counts(want), counts(p.stdout)
        check(p.returncode == 0 and w and w == g,
              "multi-gpu.md %s counts\nwant: %r\ngot:  %r" % (flag, w, g), p)
    # docs/profiling.md: the colocation table's op and transfer counts
    prof = read("docs/profiling.md")
    graph = os.path.join(ROOT, "graphs", "colocate.json")
    for flag in ("--colocate", "--no-colocate"):
        m = re.search(r"`%s`:\n\n```\n(.*?)```" % flag, prof, re.S)
        if not check(m is not None, "profiling.md has the %s summary" % flag):
            continue
        p = dg(["profile", graph, flag, "--opencl-devices", "all", "--steps", "20",
                "-o", os.path.join(TMP, "c.json")])
        w, g = counts(m.group(1)), counts(p.stdout)
        check(p.returncode == 0 and w and w == g,
              "profiling.md %s counts\nwant: %r\ngot:  %r" % (flag, w, g), p)


GROUPS = {"readme": test_readme, "profile": test_profile,
          "checkpoint": test_checkpoint, "multigpu": test_multigpu,
          "feeds": test_feeds}

if __name__ == "__main__":
    GROUPS[GROUP]()
    if FAILURES:
        print("%d failure(s); files kept in %s" % (len(FAILURES), TMP))
        sys.exit(1)
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(0)
