"""A Python OFREP client following `eventStreams`, through a relay chain: an origin
`flags serve DIR`, a relay `flags serve --source ORIGIN`, and this client of the relay. The
client works as open-feature/protocol's static-context guideline and ADR-0008 describe: one
bulk evaluation, then the event stream its `eventStreams` names, and on each
`refetchEvaluation` a conditional refetch carrying `flagConfigEtag` and
`flagConfigLastModified`.

Checked:
- the bulk response's `eventStreams` and every event received validate against OFREP's
  schemas (`eventStream`, `sseEvent`, `sseEventData`): the upstream openapi.yaml when it can
  be downloaded, else the transcription in .ci/ofrep_events.schema.json (the output says
  which);
- an edit on the origin reaches the client within 5 s (the time is printed);
- the origin's restart and a broken edit leave the client with the last good values (every
  value it ever saw is one the rules gave), and an edit after them arrives.

usage: python ofrep_stream.py FLAGS_BINARY DIR
"""

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import jsonschema
import yaml

flags, source_directory = sys.argv[1:3]
UPSTREAM = ("https://raw.githubusercontent.com/open-feature/protocol/"
            "d1a63a4e84e6297599ce566126e7764c1419f80a/service/openapi.yaml")
CONTEXT = {"targetingKey": "user-42", "build": "release", "country": "US"}


def fail(message):
    print("ofrep stream: " + message)
    sys.exit(1)


def schemas():
    """OFREP's schema document: upstream when reachable, else the transcription."""
    try:
        with urllib.request.urlopen(UPSTREAM, timeout=10) as response:
            return yaml.safe_load(response.read()), "OFREP's openapi.yaml (upstream)"
    except Exception:  # noqa: BLE001 - any failure to download falls back
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ofrep_events.schema.json")
        with open(path, encoding="utf-8") as f:
            return json.load(f), "the transcription in .ci/ofrep_events.schema.json (upstream unreachable)"


document, schema_source = schemas()


def validate(instance, name, what):
    schema = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(instance))
    if errors:
        fail(f"{what} does not match OFREP's {name}: {errors[0].message}\n{json.dumps(instance)}")


def start(arguments):
    server = subprocess.Popen([flags, "serve", *arguments], stderr=subprocess.PIPE, text=True)
    line = server.stderr.readline()
    while line and "listening on" not in line:
        line = server.stderr.readline()
    if not line:
        fail(f"flags serve {' '.join(arguments)} did not start")
    threading.Thread(target=lambda: server.stderr.read(), daemon=True).start()  # keep its log moving
    return server, int(re.search(r":(\d+) \(", line).group(1))


def stop(server):
    server.terminate()
    server.wait(timeout=15)


class Client:
    """A static-context OFREP client: the values of every flag for one context."""

    def __init__(self, base):
        self.base = base
        self.changed = threading.Condition()
        self.values = {}
        self.seen = []  # (time, values) after every fetch that changed them
        self.events = 0
        self.etag = None
        self.last_event_id = None
        self.fetch({})
        streams = self.bulk.get("eventStreams")
        if not streams:
            fail("the bulk response names no eventStreams")
        for stream in streams:
            validate(stream, "eventStream", "an eventStreams entry")
        sse = next(s for s in streams if s["type"] == "sse")
        origin = (sse.get("endpoint") or {}).get("origin") or base
        self.stream_url = sse.get("url") or origin + sse["endpoint"]["requestUri"]
        threading.Thread(target=self.follow, daemon=True).start()

    def fetch(self, query):
        path = "/ofrep/v1/evaluate/flags" + ("?" + urllib.parse.urlencode(query) if query else "")
        request = urllib.request.Request(self.base + path, data=json.dumps({"context": CONTEXT}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        if self.etag:
            request.add_header("If-None-Match", self.etag)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                self.bulk = json.loads(response.read())
                self.etag = response.headers.get("ETag")
        except urllib.error.HTTPError as error:
            if error.code == 304:
                return
            raise
        values = {f["key"]: f.get("value") for f in self.bulk["flags"]}
        with self.changed:
            if values != self.values:
                self.values = values
                self.seen.append((time.monotonic(), values))
                self.changed.notify_all()

    def follow(self):
        """Reads the stream; reconnects (with Last-Event-ID) after the retry it was given."""
        retry = 1.0
        while True:
            url = urllib.parse.urlsplit(self.stream_url)
            connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
            try:
                headers = {"Accept": "text/event-stream"}
                if self.last_event_id:
                    headers["Last-Event-ID"] = self.last_event_id
                connection.request("GET", url.path + ("?" + url.query if url.query else ""), headers=headers)
                response = connection.getresponse()
                fields = {}
                while True:
                    line = response.readline()
                    if not line:
                        break
                    line = line.decode().rstrip("\r\n")
                    if line == "":
                        if "data" in fields:
                            retry = self.received(fields) or retry
                        fields = {}
                    elif not line.startswith(":"):
                        name, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value
            except (OSError, http.client.HTTPException):
                pass
            finally:
                connection.close()
            time.sleep(retry)

    def received(self, fields):
        event = dict(fields)
        if "retry" in event:
            event["retry"] = int(event["retry"])
        validate(event, "sseEvent", "an event")
        data = json.loads(event["data"])
        validate(data, "sseEventData", "an event's data")
        self.events += 1
        if "id" in event:
            self.last_event_id = event["id"]
        if data["type"] == "refetchEvaluation":
            query = {k: v for k, v in (("flagConfigEtag", data.get("etag")),
                                       ("flagConfigLastModified", data.get("lastModified"))) if v is not None}
            self.fetch(query)
        return event.get("retry", 0) / 1000 or None

    def wait_for(self, key, value, what, seconds=5):
        deadline = time.monotonic() + seconds
        with self.changed:
            while self.values.get(key) != value:
                left = deadline - time.monotonic()
                if left <= 0:
                    fail(f"waited {seconds} s for {what}: the client has {key} = {self.values.get(key)!r}")
                self.changed.wait(left)
            return next(t for t, v in self.seen if v.get(key) == value)


def metric(port, name):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


def main():
    directory = tempfile.mkdtemp(prefix="ofrep-stream-")
    shutil.copytree(source_directory, directory, dirs_exist_ok=True,
                    ignore=lambda d, names: [n for n in names if n.startswith(".") or n == "FlagsApp" or n == "FlagsService"])
    path = os.path.join(directory, "app.flags")
    original = open(path, encoding="utf-8").read()
    written = 'value logLevel: string = "warning"'
    if written not in original:
        fail(f"app.flags no longer has {written!r}, which this check edits")

    def edit(level, broken=False):
        with open(path, "w", encoding="utf-8") as out:
            out.write(original.replace(written, f'value logLevel: string = "{level}"') + ("\nflag {\n" if broken else ""))

    origin, origin_port = start([directory, "--port", "0"])
    relay = None
    try:
        relay, relay_port = start(["--source", f"http://127.0.0.1:{origin_port}", "--port", "0"])
        client = Client(f"http://127.0.0.1:{relay_port}")
        if client.values.get("logLevel") != "warning":
            fail(f"the client starts with logLevel = {client.values.get('logLevel')!r}, not 'warning'")

        edited = time.monotonic()
        edit("error")
        first = client.wait_for("logLevel", "error", "the first edit to reach the client") - edited

        stop(origin)  # the origin goes away: the relay and the client keep their rules
        origin, _ = start([directory, "--port", str(origin_port)])
        rejected = metric(origin_port, "flags_rejected_reloads_total")
        edit("error", broken=True)
        deadline = time.monotonic() + 10
        while metric(origin_port, "flags_rejected_reloads_total") == rejected:
            if time.monotonic() > deadline:
                fail("the origin did not reject the broken edit within 10 s")
            time.sleep(0.1)

        edited = time.monotonic()
        edit("notice")
        second = client.wait_for("logLevel", "notice", "an edit after the origin's restart and a broken edit") - edited
        levels = [v.get("logLevel") for _, v in client.seen]
        if levels != ["warning", "error", "notice"]:
            fail(f"the client saw logLevel {levels}, not warning, error, notice")
        print(f"ofrep stream: a Python OFREP client of a relay followed eventStreams: an edit on the origin reached it "
              f"in {first * 1000:.0f} ms, and one after the origin's restart and a rejected edit in {second * 1000:.0f} ms; "
              f"it never saw other values; {client.events} events and the eventStreams entry match {schema_source}")
    finally:
        if relay:
            stop(relay)
        stop(origin)
        shutil.rmtree(directory, ignore_errors=True)


main()
