#!/usr/bin/env python3
"""tests/data/patchwork/proxy.py PORTFILE UPSTREAM DIR [PORT]: a tiny HTTP proxy on 127.0.0.1 between
klab and a test's Patchwork, for the fault tests of t0530. It listens on loopback port PORT (default: a
free one; written to PORTFILE) and passes every request to UPSTREAM (http://127.0.0.1:PORT) as it came,
except:
  - while DIR/fail holds a number N > 0, it answers 500 and writes N - 1 back;
  - when DIR/inject exists, the next events list it passes has a malformed event (no
    payload.series) put first, and the file is removed;
  - when DIR/slowpost holds a number S, the next POST goes to the server, and its answer is held
    S seconds (longer than klab's timeout: the server has the check, klab got no answer), logged
    with the server's status at once and as "slowed a POST by S s"; the file is removed.
Each request is logged to DIR/proxy.log as "METHOD PATH STATUS" (never a header: the token is in
one). Loopback only; it stops when its parent test kills it."""
import http.client, http.server, json, os, sys, time, urllib.parse

portfile, upstream, d = sys.argv[1], urllib.parse.urlparse(sys.argv[2]), sys.argv[3]
port = int(sys.argv[4]) if len(sys.argv) > 4 else 0


def log(line):
    with open(os.path.join(d, "proxy.log"), "a") as f:
        f.write(line + "\n")


def take_fail():
    p = os.path.join(d, "fail")
    try:
        n = int(open(p).read().strip() or 0)
    except (OSError, ValueError):
        return False
    if n <= 0:
        return False
    open(p, "w").write(str(n - 1))
    return True


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        log("%s %s %d" % (self.command, self.path, code))

    def any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        if take_fail():
            return self.send(500, b'{"detail": "injected 500"}')
        c = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=30)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
        c.request(self.command, self.path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        inject = os.path.join(d, "inject")
        if self.command == "GET" and self.path.startswith("/api/1.3/events/") and os.path.exists(inject) \
                and r.status == 200:
            evs = json.loads(data)
            if evs:
                evs.insert(0, {"id": 999999, "category": "series-completed", "date": evs[0]["date"],
                               "payload": {"cover": None}})
                data = json.dumps(evs).encode()
                os.unlink(inject)
                log("injected a malformed event")
        slow = os.path.join(d, "slowpost")
        if self.command == "POST" and os.path.exists(slow):
            secs = float(open(slow).read().strip() or 15)
            os.unlink(slow)
            # the server has answered: logged now, so that a test that kills the proxy meanwhile loses nothing
            log("%s %s %d" % (self.command, self.path, r.status))
            log("slowed a POST by %g s" % secs)
            time.sleep(secs)
            try:
                self.send_response(r.status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass	# klab had given up on it
        else:
            self.send(r.status, data, r.getheader("Content-Type") or "application/octet-stream")
        c.close()

    do_GET = do_POST = any


http.server.ThreadingHTTPServer.allow_reuse_address = True
s = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
open(portfile + ".tmp", "w").write(str(s.server_address[1]))
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
