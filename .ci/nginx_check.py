"""Debian's nginx in front of `flags serve`, configured as ServingOverOFREP.md says (the
section "Behind a proxy or a CDN"; its two `nginx` blocks are what runs here):

- nginx A runs the documented configuration, nginx B the same with the files' location of a
  CDN that holds them for 60 s (its cache warmed before the edits, so that it holds an old
  text);
- one origin `flags serve DIR`, and three relays following it: R0 directly, R1 through
  nginx A, R2 through nginx B;
- six edits of the origin's file, 2 s apart: each must show in R1's and R2's
  `/rules/app.flags` within a second of R0's, and each `refetchEvaluation` of the event
  stream (`/ofrep/v1/events`, read on a raw socket through nginx A) must arrive within a
  second of R0 showing the edit, so the stream is not buffered;
- the relays are polled from the first edit until 65 s after the last (past the relays'
  30 s check upstream and the 60 s cache): no relay may ever show a text older than one it
  has shown;
- nginx B served an older text after an edit at least once (else its cache was not tested);
- through nginx A, the last text's ETag in `If-None-Match` is answered `304`.

The stream is also read directly from the origin, so that a failure's table of timings
tells nginx from the server.

usage: python3 nginx_check.py FLAGS_BINARY DOC WORK_DIR
"""

import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

flags, doc, work = sys.argv[1:4]
EDITS = 6
SPACING = 2.0  # seconds between edits
AFTER = 65.0  # seconds of polling after the last edit
LIMIT = 1.0  # seconds an edit may be behind the direct relay
OUTAGE = 10.0  # seconds the origin is down, then an edit made meanwhile
RECOVERY = 5.0  # seconds after the origin's return by which every relay has that edit
children = []  # (name, process, log path)


def fail(message):
    print("nginx: " + message)
    for name, process, log in children:
        if os.path.exists(log):
            lines = open(log, errors="replace").read().splitlines()[-8:]
            print(f"--- {name} ({log}), last lines:\n" + "\n".join(lines))
    sys.exit(1)


def start(name, command, log):
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    children.append((name, process, log))
    return process


def stop_all():
    for _, process, _ in children:
        if process.poll() is None:
            process.terminate()
    for _, process, _ in children:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(name, arguments, port=0):
    """Starts `flags serve ARGUMENTS --port PORT`; returns its port, read from its first log line."""
    log = os.path.join(work, name + ".log")
    process = start(name, [flags, "serve", *arguments, "--port", str(port)], log)
    deadline = time.time() + 15
    while time.time() < deadline:
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(log, errors="replace").read())
        if found:
            return int(found.group(1))
        if process.poll() is not None:
            fail(f"{name} exited with status {process.returncode}")
        time.sleep(0.05)
    fail(f"{name} did not say where it listens within 15 s")


# The doc's three nginx blocks: the main context's settings, the http block's configuration,
# then the files' location of a 60 s CDN.
section = open(doc).read().split("## Behind a proxy or a CDN\n", 1)[-1].split("\n## ", 1)[0]
blocks = re.findall(r"```nginx\n(.*?)```", section, re.S)
if len(blocks) != 3:
    fail(f"{doc}: expected 3 nginx blocks in 'Behind a proxy or a CDN', found {len(blocks)}")
main_context, documented, cdn_location = blocks


def nginx_config(name, upstream_port, port, with_cdn):
    prefix = os.path.join(work, name)
    os.makedirs(prefix)
    text = documented
    for pattern, replacement in [(r"server 127\.0\.0\.1:\d+;", f"server 127.0.0.1:{upstream_port};"),
                                 (r"listen \d+;", f"listen 127.0.0.1:{port};"),
                                 (r"proxy_cache_path \S+", f"proxy_cache_path {prefix}/cache")]:
        text, count = re.subn(pattern, replacement, text)
        if count != 1:
            fail(f"{doc}: the nginx block has {count} '{pattern}' where 1 was expected")
    if with_cdn:  # the CDN's location goes at the end of the server block
        end = text.rstrip().rfind("}")
        text = text[:end] + "\n    " + cdn_location.strip().replace("\n", "\n    ") + "\n}\n"
    config = f"""{main_context}
error_log {prefix}/error.log info;
http {{
log_format check '$time_iso8601 "$request" $status cache=$upstream_cache_status $request_time s';
access_log {prefix}/access.log check;
client_body_temp_path {prefix}/body;
proxy_temp_path {prefix}/proxy;
fastcgi_temp_path {prefix}/fastcgi;
uwsgi_temp_path {prefix}/uwsgi;
scgi_temp_path {prefix}/scgi;
{text}}}
"""
    path = os.path.join(prefix, "nginx.conf")
    open(path, "w").write(config)
    test = subprocess.run(["nginx", "-t", "-p", prefix, "-e", f"{prefix}/error.log", "-c", path],
                          capture_output=True, text=True)
    if test.returncode != 0:
        fail(f"nginx {name} refuses its configuration ({path}):\n{test.stderr}")
    start("nginx " + name, ["nginx", "-p", prefix, "-e", f"{prefix}/error.log", "-c", path,
                            "-g", f"daemon off; pid {prefix}/nginx.pid;"], f"{prefix}/error.log")
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return port
        except OSError:
            time.sleep(0.05)
    fail(f"nginx {name} is not listening on {port}")


class Client:
    """GETs on one kept-alive connection, made again when the server closes it."""

    def __init__(self, port):
        self.port = port
        self.connection = None

    def get(self, path, headers=None):
        for attempt in range(2):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                self.connection.request("GET", path, headers=headers or {})
                response = self.connection.getresponse()
                return response.status, response.headers, response.read().decode()
            except (OSError, http.client.HTTPException):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise


def shown(client):
    """The k of `value n: int = k` a server serves as app.flags, and its generation; or (None, None)."""
    try:
        status, headers, body = client.get("/rules/app.flags")
    except (OSError, http.client.HTTPException):
        return None, None
    found = re.search(r"value n: int = (\d+)", body) if status == 200 else None
    return (int(found.group(1)), headers["X-Flags-Generation"]) if found else (None, None)


def edit(k):
    temporary = os.path.join(work, "origin", ".app.flags.new")
    open(temporary, "w").write(f"value n: int = {k}\n")
    os.rename(temporary, os.path.join(work, "origin", "app.flags"))


def read_stream(port, arrivals):
    """Reads GET /ofrep/v1/events (no query), noting when each refetchEvaluation comes (by its etag)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /ofrep/v1/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    raw = b""
    while b"\r\n\r\n" not in raw:
        raw += s.recv(65536)
    head, raw = raw.split(b"\r\n\r\n", 1)
    chunked = b"transfer-encoding: chunked" in head.lower()
    body = b""
    while True:
        while chunked and b"\r\n" in raw:  # take the whole chunks out of raw
            size_line, rest = raw.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            if len(rest) < size + 2:
                break
            body, raw = body + rest[:size], rest[size + 2:]
        if not chunked:
            body, raw = body + raw, b""
        while b"\n\n" in body:
            event, body = body.split(b"\n\n", 1)
            found = re.search(rb'"refetchEvaluation", "etag": "([^"]*)"', event)
            if found:
                arrivals[found.group(1).decode()] = time.time()
        data = s.recv(65536)
        if not data:
            return
        raw += data


signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
try:
    os.makedirs(os.path.join(work, "origin"))
    edit(0)
    origin = serve("origin", [os.path.join(work, "origin")])
    port_a = nginx_config("a", origin, free_port(), with_cdn=False)
    port_b = nginx_config("b", origin, free_port(), with_cdn=True)
    relays = {"R0 (direct)": origin, "R1 (nginx)": port_a, "R2 (nginx, 60 s cache)": port_b}
    clients = {name: Client(serve(name.split()[0], ["--source", f"http://127.0.0.1:{upstream}"]))
               for name, upstream in relays.items()}

    deadline = time.time() + 20
    while any(shown(c)[0] != 0 for c in clients.values()):
        if time.time() > deadline:
            fail("the relays do not all serve app.flags 20 s after starting: "
                 + ", ".join(f"{n} shows {shown(c)[0]}" for n, c in clients.items()))
        time.sleep(0.1)
    cdn = Client(port_b)
    if shown(cdn)[0] != 0:  # warm the 60 s cache with the first text
        fail("nginx B does not serve app.flags")
    # The event stream through nginx A, and (to tell nginx from the server on a failure) directly.
    arrivals, direct_arrivals = {}, {}
    threading.Thread(target=read_stream, args=(port_a, arrivals), daemon=True).start()
    threading.Thread(target=read_stream, args=(origin, direct_arrivals), daemon=True).start()
    time.sleep(0.5)

    # The edits, SPACING s apart, and polling every 20 ms until AFTER s past the last.
    first_seen = {name: {} for name in clients}  # k -> when the relay first showed k (or newer)
    highest = {name: 0 for name in clients}
    written, generation = {}, {}
    cdn_held_old = cdn_asked = 0
    begin = next_edit = time.time()
    while len(written) < EDITS or time.time() < written[EDITS] + AFTER:
        k = len(written) + 1
        if k <= EDITS and time.time() >= next_edit:
            written[k] = time.time()  # before the rename, so no arrival can come before it
            edit(k)
            next_edit = written[k] + SPACING  # never closer, or the server would take two at once
        for name, client in clients.items():
            (seen, seen_generation), now = shown(client), time.time()
            if seen is None:
                fail(f"{name} did not serve app.flags at {now - begin:.2f} s")
            if seen < highest[name]:
                fail(f"{name} went back: at {now - begin:.2f} s after the first edit it shows n = {seen}, "
                     f"having shown n = {highest[name]}")
            for j in range(highest[name] + 1, seen + 1):
                first_seen[name][j] = now
            if name == "R0 (direct)" and seen > highest[name]:
                generation[seen] = seen_generation
            highest[name] = max(highest[name], seen)
        # Once the direct relay shows an edit, ask the 60 s cache once: it should hold an older text.
        latest = highest["R0 (direct)"]
        if latest > cdn_asked:
            cdn_asked = latest
            cdn_held_old += (shown(cdn)[0] or 0) < latest
        time.sleep(0.02)

    # Each edit's time behind R0: through each nginx, and on the stream through nginx A.
    direct = first_seen.pop("R0 (direct)")
    first_seen["stream (nginx)"] = {k: arrivals.get(generation.get(k)) for k in written}
    first_seen["stream (direct)"] = {k: direct_arrivals.get(generation.get(k)) for k in written}

    def table():
        rows = [f"edit {k}: R0 (direct) {(direct[k] - written[k]) * 1000:.0f} ms, " + ", ".join(
            f"{name} {(seen[k] - written[k]) * 1000:.0f} ms" if seen.get(k) else f"{name} never"
            for name, seen in first_seen.items()) for k in written if k in direct]
        return "after each edit's write:\n  " + "\n  ".join(rows)

    gaps = {}
    for name in ("R1 (nginx)", "R2 (nginx, 60 s cache)", "stream (nginx)"):
        for k in written:
            if k not in direct or not first_seen[name].get(k):
                fail(f"{'R0 (direct)' if k not in direct else name} never had edit {k}; {table()}")
            gap = first_seen[name][k] - direct[k]
            if gap > LIMIT:
                fail(f"{name} had edit {k} {gap * 1000:.0f} ms after R0 (direct); {table()}")
            gaps[name] = max(gaps.get(name, 0), gap)
    if cdn_held_old == 0:
        fail("nginx B never served an older text after an edit: its 60 s cache is not in effect")

    # A conditional GET of the last text through nginx A.
    _, headers, _ = Client(origin).get("/rules/app.flags")
    status, _, _ = Client(port_a).get("/rules/app.flags", {"If-None-Match": headers["ETag"]})
    if status != 304:
        fail(f"GET /rules/app.flags through nginx A with If-None-Match: {headers['ETag']} answered {status}, not 304")

    # An outage: the origin stops for OUTAGE s (nginx answers 502 meanwhile, which the relays
    # read as an outage, not as an answer to back off from), an edit is made, and the origin
    # comes back on its port: every relay has the edit within RECOVERY s of its return.
    origin_process = next(process for name, process, _ in children if name == "origin")
    origin_process.terminate()
    origin_process.wait(timeout=10)
    time.sleep(OUTAGE)
    k = EDITS + 1
    edit(k)
    serve("origin-again", [os.path.join(work, "origin")], port=origin)
    back = time.time()
    recovered = {}
    while len(recovered) < len(clients) and time.time() < back + 30:
        for name, client in clients.items():
            if name not in recovered and (shown(client)[0] or 0) >= k:
                recovered[name] = time.time() - back
        time.sleep(0.05)
    late = {name: recovered.get(name) for name in clients if recovered.get(name) is None or recovered[name] > RECOVERY}
    if late:
        fail(f"after a {OUTAGE:.0f} s outage, relays had the edit made meanwhile late (s after the origin's return, "
             f"None: not in 30 s): {late}; all: {recovered}")

    def ms(name):
        return f"{gaps[name] * 1000:.0f} ms"

    print(f"nginx: {EDITS} edits; through nginx at most {ms('R1 (nginx)')} behind direct, "
          f"through a 60 s cache at most {ms('R2 (nginx, 60 s cache)')}; the stream through nginx at most "
          f"{ms('stream (nginx)')}; no relay went back in {AFTER:.0f} s after the last edit "
          f"(the cache held an older text after {cdn_held_old} of {EDITS} edits); after a {OUTAGE:.0f} s outage "
          f"every relay had the edit made meanwhile at most {max(recovered.values()):.2f} s after the origin's return")
finally:
    stop_all()
