"""cdp.py -- a minimal Chrome DevTools Protocol client for the viewer test:
start headless Chromium, evaluate JavaScript in its page (awaiting promises),
navigate, take screenshots.  Uses websocket-client (tests/viewer/.venv)."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import websocket


class CDPError(Exception):
    pass


class Browser:
    """Headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self, exe, width=1600, height=1000):
        self.profile = tempfile.mkdtemp(prefix="dgrun_viewer_chromium.")
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--remote-debugging-port=0",
             "--remote-allow-origins=*", "--user-data-dir=" + self.profile,
             "--window-size=%d,%d" % (width, height), "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 60
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if self.proc.poll() is not None or time.time() > deadline:
                self.close()
                raise CDPError("chromium did not start its DevTools server")
            time.sleep(0.1)
        with open(port_file) as f:
            port = int(f.readline())
        with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port) as r:
            targets = json.load(r)
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"],
                                              timeout=300, suppress_origin=True)
        self.next_id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width,
                  height=height, deviceScaleFactor=1, mobile=False)

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise CDPError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})

    def eval(self, expr, timeout=120):
        """Value of a JavaScript expression (awaited if a promise)."""
        r = self.call("Runtime.evaluate", expression=expr, awaitPromise=True,
                      returnByValue=True, timeout=timeout * 1000)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text")
            raise CDPError("JavaScript failed: %s" % text)
        return r["result"].get("value")

    def wait_for(self, expr, timeout=120, what=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if self.eval(expr, timeout=30):
                    return
            except CDPError:
                pass
            time.sleep(0.25)
        raise CDPError("timed out waiting for %s" % (what or expr))

    def navigate(self, url):
        self.call("Page.navigate", url=url)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
