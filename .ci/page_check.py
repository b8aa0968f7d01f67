"""The page of `flags serve`, in a real browser: headless Chromium opens it with a context in
its link (the page fills its form from it and evaluates), and every declaration's resolution
the page shows must equal `flags eval --json` for the same context. A screenshot of the last
page is kept.

usage: python page_check.py FLAGS_BINARY CHROMIUM DIR SCREENSHOT
"""

import html.parser
import json
import os
import re
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served_files import served_files  # noqa: E402

flags, chromium, directory, screenshot = sys.argv[1:5]

CONTEXTS = [
    {"build": "beta", "userId": "user-42", "appVersion": "2.4.0", "device": "tablet", "country": "US"},
    {"userId": "user-3", "country": "US", "platform": "ios", "plan": "pro", "cartTotal": 25.5},
    {"tier": "enterprise", "region": "usEast", "tenantId": "acme", "now": "2026-12-02T00:00:00Z"},
    {"groups": ["beta-testers"], "roles": ["editor"], "clientIP": "10.1.2.3", "email": "Ann@Example.com", "userId": "u-9"},
]


class Rows(html.parser.HTMLParser):
    """The `<code class="resolution">` of each `<tr data-name>`."""

    def __init__(self):
        super().__init__()
        self.name = None
        self.inside = False
        self.found = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and "data-name" in attrs:
            self.name = attrs["data-name"]
        if tag == "code" and attrs.get("class") == "resolution":
            self.inside = True

    def handle_endtag(self, tag):
        if tag == "code":
            self.inside = False

    def handle_data(self, data):
        if self.inside and self.name:
            self.found[self.name] = self.found.get(self.name, "") + data


def browser(url, *extra):
    return subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000", *extra, url],
        capture_output=True, text=True, timeout=120)


files = served_files(directory)
schemas = {}
for path in files:
    reads = set()
    for info in json.loads(subprocess.check_output([flags, "list", "--json", path])):
        reads.update(info.get("reads", {}).keys())
    schemas[path] = reads

server = subprocess.Popen([flags, "serve", directory, "--port", "0"], stderr=subprocess.PIPE, text=True)
try:
    line = server.stderr.readline()
    while line and "listening on" not in line:  # log lines before it: names declared twice
        line = server.stderr.readline()
    port = re.search(r":(\d+) \(", line).group(1)
    compared = 0
    for context in CONTEXTS:
        url = f"http://127.0.0.1:{port}/?context=" + urllib.parse.quote(json.dumps(context))
        page = browser(url, "--dump-dom")
        rows = Rows()
        rows.feed(page.stdout)
        if not rows.found:
            print("page check: the page showed no resolutions", page.stderr[-2000:])
            sys.exit(1)
        served = set()  # a name declared in two files is served from the first
        for path in files:
            file_context = {k: v for k, v in context.items() if k in schemas[path]}
            expected = json.loads(subprocess.run(
                [flags, "eval", path, "--json", "--context-json", "-"], input=json.dumps(file_context),
                capture_output=True, text=True, check=True).stdout)
            for name, resolution in expected.items():
                if name in served:
                    continue
                served.add(name)
                shown = rows.found.get(name)
                if shown is None or json.loads(shown) != resolution:
                    print(f"page check: {name} for {context}: the page shows {shown}, flags eval gives {json.dumps(resolution)}")
                    sys.exit(1)
                compared += 1
    browser(url, f"--screenshot={screenshot}", "--window-size=1200,2400")
    print(f"page check: {compared} resolutions over {len(CONTEXTS)} contexts in headless Chromium agree with flags eval --json"
          + (f"; screenshot {screenshot}" if os.path.exists(screenshot) else ""))
finally:
    server.terminate()
    server.wait(timeout=15)
