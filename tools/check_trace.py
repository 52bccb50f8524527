#!/usr/bin/env python3
"""check_trace.py -- strict checker for dgrun's Chrome traces (SPEC section 7).

Usage: check_trace.py TRACE [--expect-devices N] [--expect-ops N]
                            [--expect-memcpy N] [--expect-flows N]

Checks the top-level object, required fields and their types for every event
kind (M, X, s, f, C), that metadata comes first and is sorted, that every
pid/tid used has process/thread names, that complete events are never
negative and are nested or disjoint on each (pid, tid), that Memcpy events
carry complete args on the destination device, and that counters are numeric.

Viewer rules (what Perfetto and chrome://tracing actually draw):
- displayTimeUnit is "ns": chrome://tracing decides nesting at the display
  unit's precision, and "ms" rounds to 1 us;
- lanes: no thread_name lane has tid == pid (Perfetto merges it into the
  process's main thread) and a tid names one lane in the whole trace;
  process_sort_index (default: the pid) keeps the pid order, CPU:0 first;
- kernels: slices on an "OpenCL queue" lane never nest (an in-order queue
  runs one kernel at a time: a nested slice is a host-timed event drawn
  inside a kernel it did not run in);
- flows: every id has exactly one "s" and one "f" with "bp": "e" (a "t"
  step leaves the flow open in chrome://tracing), f not before s, and each
  end binds where the viewers bind it -- Perfetto: the last slice begun on
  its lane before it (in file order at equal times); chrome://tracing: the
  deepest slice containing it -- to the same slice, which for "s" produces
  the tensor the flow names (the op's node, or a transfer of it) and for
  "f" consumes it (the op's args name it among its inputs, or a transfer
  of it), and the "f" slice does not start before the "s" slice (Perfetto
  orders a flow's ends by their slices' starts).  Exits 1 with a message on the first problem,
0 with a one-line summary otherwise.  Standard library only.
"""
import bisect
import json
import math
import re
import sys

DEVICE_RE = re.compile(r"^/job:[a-z][a-z0-9_]*/replica:0/task:\d+/device:(CPU|GPU):(\d+)$")
META_NAMES = ("process_name", "process_sort_index", "thread_name",
              "thread_sort_index")
MEMCPY_NAMES = ("MemcpyHtoD", "MemcpyDtoH", "MemcpyDtoD", "MemcpyRemote")
TASK_RE = re.compile(r"^(/job:[^/]+/replica:\d+/task:\d+)/")


class TraceError(Exception):
    pass


def fail(i, ev, msg):
    text = json.dumps(ev, sort_keys=True)
    if len(text) > 300:
        text = text[:300] + "..."
    raise TraceError("event %d: %s: %s" % (i, msg, text))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v))


def is_str(v):
    return isinstance(v, str)


def need(i, ev, key, pred, what):
    if key not in ev:
        fail(i, ev, "missing '%s'" % key)
    if not pred(ev[key]):
        fail(i, ev, "'%s' must be %s" % (key, what))
    return ev[key]


def ns(v):
    """Microseconds (3 decimals) to integer nanoseconds."""
    return int(round(v * 1000.0))


def reject_constant(name):
    raise TraceError("invalid JSON constant %s" % name)


def check(path, expect_devices=None, expect_ops=None, expect_memcpy=None,
          expect_flows=None):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise TraceError("cannot read %s: %s" % (path, e))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TraceError("not UTF-8: %s" % e)
    try:
        doc = json.loads(text, parse_constant=reject_constant)
    except ValueError as e:
        raise TraceError("invalid JSON: %s" % e)

    if not isinstance(doc, dict):
        raise TraceError("top level must be an object")
    for key in ("traceEvents", "displayTimeUnit", "otherData"):
        if key not in doc:
            raise TraceError("top level: missing '%s'" % key)
    if doc["displayTimeUnit"] != "ns":
        raise TraceError("displayTimeUnit must be 'ns': chrome://tracing nests "
                         "slices at the display unit's precision ('ms' rounds to "
                         "1 us, so sub-microsecond ops nest in their neighbours "
                         "and flows bound to them are dropped)")
    other = doc["otherData"]
    if not isinstance(other, dict):
        raise TraceError("otherData must be an object")
    for key in ("dgrun_version", "graph"):
        if not is_str(other.get(key)):
            raise TraceError("otherData.%s must be a string" % key)
    events = doc["traceEvents"]
    if not isinstance(events, list):
        raise TraceError("traceEvents must be an array")

    proc_names = {}      # pid -> device name
    proc_sort = {}       # pid -> process_sort_index
    thread_names = {}    # (pid, tid) -> name
    seen_meta = set()
    meta_done = False
    last_proc_key = None
    last_thread_key = None
    lanes = {}           # (pid, tid) -> [(start_ns, end_ns, i, ev)]
    used_pids = {}       # pid -> first event index using it
    used_lanes = {}      # (pid, tid) -> first event index using it
    flows = {}           # id -> {"s": (i, ev), "t": (i, ev)}
    memcpys = []
    n_ops = 0
    n_counters = 0

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise TraceError("event %d: not an object" % i)
        ph = need(i, ev, "ph", is_str, "a string")
        if ph == "M":
            if meta_done:
                fail(i, ev, "metadata after other events")
            name = need(i, ev, "name", is_str, "a string")
            if name not in META_NAMES:
                fail(i, ev, "unknown metadata name '%s'" % name)
            pid = need(i, ev, "pid", is_int, "an integer")
            args = need(i, ev, "args", lambda v: isinstance(v, dict), "an object")
            if name.startswith("process_"):
                key = (pid, name)
                if last_proc_key is not None and (pid, 0) < last_proc_key:
                    fail(i, ev, "process metadata not sorted by pid")
                last_proc_key = (pid, 0)
                if name == "process_name":
                    dev = args.get("name")
                    if not is_str(dev) or not DEVICE_RE.match(dev):
                        fail(i, ev, "process_name must be a full device name")
                    if dev in proc_names.values():
                        fail(i, ev, "device named by two processes")
                    proc_names[pid] = dev
                else:
                    if not is_int(args.get("sort_index")):
                        fail(i, ev, "sort_index must be an integer")
                    proc_sort[pid] = args["sort_index"]
            else:
                tid = need(i, ev, "tid", is_int, "an integer")
                key = (pid, tid, name)
                if last_thread_key is not None and (pid, tid) < last_thread_key:
                    fail(i, ev, "thread metadata not sorted by (pid, tid)")
                last_thread_key = (pid, tid)
                if name == "thread_name":
                    if not is_str(args.get("name")) or not args.get("name"):
                        fail(i, ev, "thread_name needs a non-empty name")
                    thread_names[(pid, tid)] = args["name"]
                else:
                    if not is_int(args.get("sort_index")):
                        fail(i, ev, "sort_index must be an integer")
            if key in seen_meta:
                fail(i, ev, "duplicate metadata")
            seen_meta.add(key)
            continue

        meta_done = True
        pid = need(i, ev, "pid", is_int, "an integer")
        ts = need(i, ev, "ts", is_num, "a number")
        if ts < 0:
            fail(i, ev, "negative ts")
        used_pids.setdefault(pid, i)
        cat = need(i, ev, "cat", is_str, "a string")
        name = need(i, ev, "name", is_str, "a string")
        if ph == "X":
            tid = need(i, ev, "tid", is_int, "an integer")
            dur = need(i, ev, "dur", is_num, "a number")
            if dur < 0:
                fail(i, ev, "negative dur")
            args = need(i, ev, "args", lambda v: isinstance(v, dict), "an object")
            used_lanes.setdefault((pid, tid), i)
            if cat == "Op":
                n_ops += 1
                if not is_str(args.get("name")) or not args["name"]:
                    fail(i, ev, "Op args.name must be the node name")
                if args.get("op") != name:
                    fail(i, ev, "Op args.op must equal the event name")
                if not is_int(args.get("step")):
                    fail(i, ev, "Op args.step must be an integer")
                k = 0
                while "input%d" % k in args:
                    if not is_str(args["input%d" % k]):
                        fail(i, ev, "input%d must be a string" % k)
                    k += 1
                for a in args:
                    if a.startswith("input") and a[5:].isdigit() and int(a[5:]) >= k:
                        fail(i, ev, "input args not numbered from 0")
            elif cat == "Memcpy":
                if name not in MEMCPY_NAMES:
                    fail(i, ev, "Memcpy name must be one of %s" % (MEMCPY_NAMES,))
                if not is_int(args.get("bytes")) or args["bytes"] < 0:
                    fail(i, ev, "Memcpy args.bytes must be an integer >= 0")
                for a in ("src_device", "dst_device"):
                    if not is_str(args.get(a)) or not DEVICE_RE.match(args[a]):
                        fail(i, ev, "Memcpy args.%s must be a full device name" % a)
                if not is_str(args.get("tensor")) or not args["tensor"]:
                    fail(i, ev, "Memcpy args.tensor must be a tensor name")
                if args["src_device"] == args["dst_device"]:
                    fail(i, ev, "Memcpy within one device")
                st = DEVICE_RE.match(args["src_device"]).group(1)
                dt = DEVICE_RE.match(args["dst_device"]).group(1)
                want = {("CPU", "GPU"): "MemcpyHtoD", ("GPU", "CPU"): "MemcpyDtoH",
                        ("GPU", "GPU"): "MemcpyDtoD"}.get((st, dt))
                # between two tasks of a cluster (SPEC 8.3): MemcpyRemote,
                # one slice on each end's lane, args.end "send" or "recv"
                ts_, td_ = (TASK_RE.match(args["src_device"]),
                            TASK_RE.match(args["dst_device"]))
                if ts_ and td_ and ts_.group(1) != td_.group(1):
                    want = "MemcpyRemote"
                    if args.get("end") not in ("send", "recv"):
                        fail(i, ev, "MemcpyRemote args.end must be send or recv")
                if want != name:
                    fail(i, ev, "Memcpy %s -> %s must be named %s" % (st, dt, want))
                memcpys.append((i, ev))
            else:
                fail(i, ev, "X event category must be Op or Memcpy")
            lanes.setdefault((pid, tid), []).append((ns(ts), ns(ts) + ns(dur), i, ev))
        elif ph in ("s", "t", "f"):
            if ph == "t":
                fail(i, ev, "flow step 't' ends no flow (chrome://tracing leaves "
                     "it dangling): end flows with 'f' and \"bp\": \"e\"")
            if ph == "f" and ev.get("bp") != "e":
                fail(i, ev, "flow end 'f' needs \"bp\": \"e\" (bind to the "
                     "enclosing slice, not the next one)")
            tid = need(i, ev, "tid", is_int, "an integer")
            fid = need(i, ev, "id", lambda v: is_int(v) or is_str(v),
                       "an integer or string")
            if cat != "DataFlow":
                fail(i, ev, "flow category must be DataFlow")
            used_lanes.setdefault((pid, tid), i)
            slot = flows.setdefault(fid, {})
            if ph in slot:
                fail(i, ev, "flow id %r has two '%s' events" % (fid, ph))
            slot[ph] = (i, ev)
        elif ph == "C":
            if cat != "Memory":
                fail(i, ev, "counter category must be Memory")
            args = need(i, ev, "args", lambda v: isinstance(v, dict) and v,
                        "a non-empty object")
            if "bytes_in_use" not in args:
                fail(i, ev, "counter needs args.bytes_in_use")
            for k, v in args.items():
                if not is_num(v) or v < 0:
                    fail(i, ev, "counter value '%s' must be a number >= 0" % k)
            n_counters += 1
        else:
            fail(i, ev, "unknown phase '%s'" % ph)

    for pid, i in sorted(used_pids.items()):
        if pid not in proc_names:
            fail(i, events[i], "pid %d has no process_name metadata" % pid)
    for lane, i in sorted(used_lanes.items()):
        if lane not in thread_names:
            fail(i, events[i], "pid %d tid %d has no thread_name metadata" % lane)
    for (pid, tid) in thread_names:
        if pid not in proc_names:
            raise TraceError("thread_name for pid %d without process_name" % pid)

    # Memcpy events run on the destination device's lanes (the sending end
    # of a MemcpyRemote on the source device's).
    for i, ev in memcpys:
        side = "src_device" if ev["args"].get("end") == "send" else "dst_device"
        if proc_names.get(ev["pid"]) != ev["args"][side]:
            fail(i, ev, "Memcpy must be on the destination device's process")

    # Complete events: nested or disjoint per lane.
    for lane, evs in lanes.items():
        evs.sort(key=lambda e: (e[0], -e[1], e[2]))
        stack = []
        for s, e, i, ev in evs:
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and e > stack[-1][1]:
                fail(i, ev, "overlaps event %d on pid %d tid %d without nesting"
                     % (stack[-1][2], lane[0], lane[1]))
            stack.append((s, e, i))

    check_lanes(events, proc_names, thread_names, proc_sort, lanes)
    check_flows(flows, lanes)

    if expect_devices is not None and len(proc_names) != expect_devices:
        raise TraceError("expected %d devices, found %d" % (expect_devices, len(proc_names)))
    if expect_ops is not None and n_ops != expect_ops:
        raise TraceError("expected %d op events, found %d" % (expect_ops, n_ops))
    if expect_memcpy is not None and len(memcpys) != expect_memcpy:
        raise TraceError("expected %d Memcpy events, found %d" % (expect_memcpy, len(memcpys)))
    if expect_flows is not None and len(flows) != expect_flows:
        raise TraceError("expected %d flows, found %d" % (expect_flows, len(flows)))
    return "%s: ok: %d devices, %d ops, %d transfers, %d flows, %d counters" % (
        path, len(proc_names), n_ops, len(memcpys), len(flows), n_counters)


def tensor_key(name):
    """'x:0' and 'x' name the same tensor."""
    return name[:-2] if name.endswith(":0") else name


def produces(ev, tensor):
    args = ev["args"]
    if ev["cat"] == "Memcpy":
        return tensor_key(args["tensor"]) == tensor_key(tensor)
    return tensor.split(":")[0] == args["name"] or tensor == args["name"]


def consumes(ev, tensor):
    args = ev["args"]
    if ev["cat"] == "Memcpy":
        return tensor_key(args["tensor"]) == tensor_key(tensor)
    want = tensor_key(tensor)
    k = 0
    while "input%d" % k in args:
        if tensor_key(args["input%d" % k]) == want:
            return True
        k += 1
    return False


def check_lanes(events, proc_names, thread_names, proc_sort, lanes):
    """Lanes are separate tracks, processes in declared order, queue lanes
    hold no nested (host-timed) slices."""
    owner = {}
    for (pid, tid), name in sorted(thread_names.items()):
        if tid == pid:
            raise TraceError("lane '%s' of pid %d has tid == pid: Perfetto merges "
                             "it into the process's main thread" % (name, pid))
        if tid in owner and owner[tid] != pid:
            raise TraceError("tid %d names lanes of pids %d and %d"
                             % (tid, owner[tid], pid))
        owner[tid] = pid
    pids = sorted(proc_names)
    order = sorted(pids, key=lambda p: (proc_sort.get(p, p), p))
    if order != pids:
        raise TraceError("process_sort_index does not follow the pid order %s" % pids)
    if pids and not proc_names[order[0]].endswith("CPU:0"):
        raise TraceError("the first process must be CPU:0")
    for lane, evs in lanes.items():
        if not thread_names.get(lane, "").startswith("OpenCL queue"):
            continue
        end = None
        for s, e, i, ev in evs:  # sorted by the nesting check
            if end is not None and s < end:
                fail(i, ev, "nested inside a kernel slice on queue lane '%s' "
                     "(host-timed events belong on their own lane)"
                     % thread_names[lane])
            end = e if end is None or e > end else end


def bound_slice(lanes, starts, ev, i):
    """The slice a flow event binds to in both viewers, or a message."""
    lane = (ev["pid"], ev["tid"])
    evs = lanes.get(lane)
    if not evs:
        return None, "flow on a lane without slices"
    t = ns(ev["ts"])
    # Perfetto: the last slice begun before the flow event (equal times in
    # file order: slices are written first)
    k = bisect.bisect_right(starts[lane], (t, i)) - 1
    if k < 0:
        return None, "flow point before every slice of its lane"
    s, e, j, sev = evs[k]
    if not (s <= t < e or s == t == e):
        return None, ("flow point outside the slice Perfetto binds it to "
                      "(event %d): chrome://tracing binds elsewhere" % j)
    # chrome://tracing: the deepest slice containing t (closed ranges) must
    # be that one: no earlier non-enclosing slice may end at t
    for s2, e2, j2, _ in evs[max(0, k - 8):k]:
        if e2 == t and not (s2 <= s and e <= e2):
            return None, ("flow point on the boundary of events %d and %d: "
                          "viewers disagree" % (j2, j))
    return (j, sev), None


def check_flows(flows, lanes):
    starts = dict((lane, [(e[0], e[2]) for e in evs]) for lane, evs in lanes.items())
    for fid, slot in flows.items():
        if "s" not in slot or "f" not in slot:
            i, ev = slot.get("s") or slot.get("f")
            fail(i, ev, "flow id %r needs exactly one 's' and one 'f'" % (fid,))
        (si, sev), (fi, fev) = slot["s"], slot["f"]
        if ns(fev["ts"]) < ns(sev["ts"]):
            fail(fi, fev, "flow ends before it starts (event %d)" % si)
        if sev.get("name") != fev.get("name"):
            fail(fi, fev, "flow 's' and 'f' names differ")
        tensor = sev["name"]
        bound = []
        for i, ev, role, pred in ((si, sev, "produce", produces),
                                  (fi, fev, "consume", consumes)):
            got, msg = bound_slice(lanes, starts, ev, i)
            if msg:
                fail(i, ev, msg)
            j, slc = got
            bound.append(ns(slc["ts"]))
            if not pred(slc, tensor):
                fail(i, ev, "flow '%s' binds to event %d (%s '%s'), which does "
                     "not %s it" % (tensor, j, slc["name"],
                                    slc["args"].get("name", slc["args"].get("tensor")),
                                    role))
        if bound[1] < bound[0]:
            fail(fi, fev, "flow '%s' ends in a slice that starts before the one it "
                 "starts in: Perfetto orders a flow by its slices' starts and "
                 "draws it backwards" % tensor)


def main(argv):
    usage = ("usage: check_trace.py TRACE [--expect-devices N] [--expect-ops N]"
             " [--expect-memcpy N] [--expect-flows N]")
    path = None
    opts = {}
    names = {"--expect-devices": "expect_devices", "--expect-ops": "expect_ops",
             "--expect-memcpy": "expect_memcpy", "--expect-flows": "expect_flows"}
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(usage)
            return 0
        key = a.split("=", 1)[0]
        if key in names:
            if "=" in a:
                val = a.split("=", 1)[1]
            elif i + 1 < len(argv):
                i += 1
                val = argv[i]
            else:
                print(usage, file=sys.stderr)
                return 2
            try:
                opts[names[key]] = int(val)
            except ValueError:
                print(usage, file=sys.stderr)
                return 2
        elif path is None and not a.startswith("--"):
            path = a
        else:
            print(usage, file=sys.stderr)
            return 2
        i += 1
    if path is None:
        print(usage, file=sys.stderr)
        return 2
    try:
        print(check(path, **opts))
    except TraceError as e:
        print("check_trace: %s: %s" % (path, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
