"""e2e_pbjson.py -- a GraphDef JSON with a function library loads (issue
22): its PartitionedCall is inlined as the binary file's is, and bad input
in the library is one error line naming the field's path.

Usage: e2e_pbjson.py DGRUN"""
import json
import os
import subprocess
import sys
import tempfile

DGRUN = sys.argv[1]
SRC = os.path.join(os.environ.get("DGRUN_SOURCE_ROOT", "."),
                   "tests", "data", "graphdef", "library_call.json")
fails = []


def run(path):
    p = subprocess.run([DGRUN, "run", path, "--fetch", "y"],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


rc, out = run(SRC)
if rc != 0 or out.strip() != "y = [ 3. -4.]":
    fails.append("library_call.json: rc %d: %s" % (rc, out))
with open(SRC) as f:
    good = json.load(f)
bad_cases = [
    (lambda g: g["library"]["function"][0]["nodeDef"][0].update(bogus=1),
     "library.function[0].nodeDef[0].bogus: unknown field"),
    (lambda g: g["library"]["function"][0]["signature"]["inputArg"][0]
     .update(type="DT_NOPE"),
     "library.function[0].signature.inputArg[0].type: unknown enum value"),
    (lambda g: g["node"][0]["attr"]["value"]["tensor"].update(
        tensorContent="**"),
     "node[0].attr['value'].tensor.tensorContent: invalid base64"),
    (lambda g: g["library"]["function"][0]["signature"].update(
        name="other"), "double_it"),
]
with tempfile.TemporaryDirectory() as tmp:
    for k, (edit, want) in enumerate(bad_cases):
        g = json.loads(json.dumps(good))
        edit(g)
        path = os.path.join(tmp, "bad%d.json" % k)
        with open(path, "w") as f:
            json.dump(g, f)
        rc, out = run(path)
        if rc != 2 or want not in out or out.count("\n") != 1:
            fails.append("case %d: rc %d, want '%s': %s" % (k, rc, want, out))
for f in fails:
    print("FAIL:", f)
print("pass" if not fails else "%d failures" % len(fails))
sys.exit(1 if fails else 0)
