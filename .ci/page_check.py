"""The page of `flags serve`, in a real browser: headless Chromium, driven over the DevTools
protocol (on a pipe, so nothing but the standard library is needed), opens the page of a
server that asks for an API key, and checks

- that the page asks for the key, and loads once it is given;
- each declaration's state, shown without evaluating, against `flags list --json`,
  `flags stale --json` and the file's text: kind, default, variants, `@disabled`, owner,
  expiry, each split's and rollout's shares (bars), each ramp's course (chart), why it is
  stale, and its rules as written;
- that the page follows the event stream: an edit is shown as a reload at once, a broken
  edit as a rejected update while the last good rules stay, the last good text restored
  clears it, and so does a fix;
- every declaration's resolution, for contexts given in the page's link, against
  `flags eval --json`.

A screenshot of the page is kept.

usage: python page_check.py FLAGS_BINARY CHROMIUM DIR SCREENSHOT
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served_files import served_files  # noqa: E402

flags, chromium, source_directory, screenshot = sys.argv[1:5]
KEY = "page-check-key"

CONTEXTS = [
    {"build": "beta", "userId": "user-42", "appVersion": "2.4.0", "device": "tablet", "country": "US"},
    {"userId": "user-3", "country": "US", "platform": "ios", "plan": "pro", "cartTotal": 25.5},
    {"tier": "enterprise", "region": "usEast", "tenantId": "acme", "now": "2026-12-02T00:00:00Z"},
    {"groups": ["beta-testers"], "roles": ["editor"], "clientIP": "10.1.2.3", "email": "Ann@Example.com", "userId": "u-9"},
]


def fail(message):
    print("page check: " + message)
    sys.exit(1)


class Browser:
    """Headless Chromium over the DevTools protocol on fds 3 and 4 (`--remote-debugging-pipe`)."""

    def __init__(self):
        commands_read, self.commands = os.pipe()
        self.replies, replies_write = os.pipe()

        def child():
            a, b = os.dup(commands_read), os.dup(replies_write)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.profile = tempfile.mkdtemp(prefix="page-check-profile-")
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={self.profile}", "about:blank"],
            preexec_fn=child, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_read)
        os.close(replies_write)
        self.buffer = b""
        self.next_id = 0
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1400, "height": 2600, "deviceScaleFactor": 1, "mobile": False}, page=True)

    def call(self, method, params=None, page=False):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if page:
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.replies, 1 << 16)
                if not chunk:
                    fail(f"Chromium closed its pipe during {method}")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\0", 1)
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    fail(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True, "awaitPromise": True}, page=True)
        if "exceptionDetails" in result:
            fail(f"the page's script failed on {expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, what, seconds=30):
        """Polls the page until `expression` is true (the page's own state, not a sleep)."""
        deadline = time.monotonic() + seconds
        guarded = f"(() => {{ try {{ return !!({expression}); }} catch (e) {{ return false; }} }})()"
        while time.monotonic() < deadline:
            if self.evaluate(guarded):  # false while a page is still loading
                return
            time.sleep(0.1)
        fail(f"waited {seconds} s for {what}; the page shows: "
             + str(self.evaluate("document.body.innerText.slice(0, 1500)")))

    def navigate(self, url):
        self.call("Page.navigate", {"url": url}, page=True)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"}, page=True)["data"]
        with open(path, "wb") as out:
            out.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close")
        except SystemExit:
            pass
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


# What the page shows of each declaration, read from its DOM.
ROWS = """
[...document.querySelectorAll('#results tbody tr')].map(row => ({
  name: row.dataset.name, kind: row.dataset.kind, default: JSON.parse(row.dataset.default),
  disabled: row.dataset.disabled === 'true', disabledBadge: !!row.querySelector('.badge.disabled'),
  everyone: row.querySelector('td.state strong.everyone')?.textContent ?? null,
  variants: row.dataset.variants ? JSON.parse(row.dataset.variants) : null,
  owner: row.querySelector('.badge.owner')?.dataset.owner ?? null,
  expires: row.querySelector('.badge.expires')?.dataset.expires ?? null,
  expired: !!row.querySelector('.badge.expired'),
  stale: [...row.querySelectorAll('.badge.stale')].map(b => b.dataset.code),
  splits: [...row.querySelectorAll('.bar.split')].map(b => ({rule: Number(b.dataset.rule),
    shares: [...b.querySelectorAll('.share')].map(s => ({outcome: JSON.parse(s.dataset.outcome),
      percent: Number(s.dataset.percent), width: parseFloat(s.style.width)}))})),
  rollouts: [...row.querySelectorAll('.bar.rollout')].map(b => ({rule: Number(b.dataset.rule),
    percent: Number(b.querySelector('.share').dataset.percent)})),
  ramps: [...row.querySelectorAll('svg.ramp')].map(c => ({rule: Number(c.dataset.rule), from: c.dataset.from,
    to: c.dataset.to, start: Number(c.dataset.start), end: Number(c.dataset.end), now: Number(c.dataset.now),
    points: c.querySelector('polyline').getAttribute('points').split(' ').length})),
  source: row.querySelector('pre.source').textContent,
  about: row.cells[3].textContent,
  resolution: row.querySelector('code.resolution')?.textContent ?? null,
}))
"""


def js_stringify(value):
    """A value as the page's JSON.stringify writes it (a whole double without its '.0')."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def close_enough(a, b):
    return abs(a - b) < 1e-6


def check_state(browser, files):
    """Every declaration's state on the page against `flags list --json`, `flags stale --json`
    and the file's text. Returns the count of each view checked."""
    rows = {row["name"]: row for row in browser.evaluate(ROWS)}
    expected, stale, texts = {}, {}, {}
    for path in files:
        texts[path] = open(path, encoding="utf-8").read().split("\n")
        for d in json.loads(subprocess.check_output([flags, "list", "--json", path])):
            if d["kind"] != "segment" and d["name"] not in expected:
                expected[d["name"]] = d
        for s in json.loads(subprocess.check_output([flags, "stale", path, "--json"])):
            stale.setdefault((s["file"], s["name"]), [r["code"] for r in s["reasons"]])
    if set(rows) != set(expected):
        fail(f"the page shows {sorted(rows)}, flags list --json gives {sorted(expected)}")
    seen = {"split": 0, "rollout": 0, "ramp": 0, "disabled": 0, "owner": 0, "expires": 0, "stale": 0}
    today = time.strftime("%Y-%m-%d", time.gmtime())
    for name, d in expected.items():
        row = rows[name]
        where = f"{name} ({d['file']}:{d['line']})"
        for field in ("kind", "default", "disabled"):
            if row[field] != d[field]:
                fail(f"{where}: the page shows {field} {row[field]!r}, flags list gives {d[field]!r}")
        if row["disabledBadge"] != d["disabled"] or row["variants"] != d.get("variants"):
            fail(f"{where}: @disabled badge {row['disabledBadge']} / variants {row['variants']} against {d}")
        # The state column says what everyone gets when that is decided: a @disabled flag is
        # off, anything else @disabled or without rules gets its default.
        shown_default = d["default"] if d["kind"] == "variant" else js_stringify(d["default"])
        everyone = ("false" if d["kind"] == "flag" else shown_default) if d["disabled"] else (
            shown_default if d["rules"] == 0 else None)
        if row["everyone"] != everyone:
            fail(f"{where}: the state column says everyone gets {row['everyone']!r}, expected {everyone!r}")
        if row["owner"] != d.get("owner") or row["expires"] != d.get("expires"):
            fail(f"{where}: owner {row['owner']!r}, expires {row['expires']!r}; flags list gives "
                 f"{d.get('owner')!r}, {d.get('expires')!r}")
        if d.get("expires") and row["expired"] != (d["expires"] <= today):
            fail(f"{where}: expires {d['expires']} shown as {'expired' if row['expired'] else 'not expired'}")
        splits = d.get("splits", [])
        if len(row["splits"]) != len(splits):
            fail(f"{where}: {len(row['splits'])} split bars, flags list gives {len(splits)} splits")
        for shown, split in zip(row["splits"], splits):
            if shown["rule"] != split["rule"] or len(shown["shares"]) != len(split["shares"]):
                fail(f"{where}: split bar {shown} against {split}")
            for part, share in zip(shown["shares"], split["shares"]):
                if part["outcome"] != share["outcome"] or not close_enough(part["percent"], share["percent"]) \
                        or abs(part["width"] - share["percent"]) > 0.01:
                    fail(f"{where}, rule {split['rule']}: the bar shows {part}, flags list gives {share}")
        rollouts = d.get("rollouts", [])
        if [(r["rule"], r["percent"]) for r in row["rollouts"]] != [(r["rule"], r["percent"]) for r in rollouts]:
            fail(f"{where}: rollout bars {row['rollouts']}, flags list gives {rollouts}")
        ramps = d.get("ramps", [])
        if len(row["ramps"]) != len(ramps):
            fail(f"{where}: {len(row['ramps'])} ramp charts, flags list gives {len(ramps)}")
        for chart, ramp in zip(row["ramps"], ramps):
            for field in ("rule", "from", "to", "start", "end"):
                if chart[field] != ramp[field]:
                    fail(f"{where}: the ramp chart's {field} is {chart[field]!r}, flags list gives {ramp[field]!r}")
            if not min(ramp["start"], ramp["end"]) <= chart["now"] <= max(ramp["start"], ramp["end"]) or chart["points"] != 4:
                fail(f"{where}: the ramp chart {chart}")
        codes = stale.get((d["file"], name), [])
        if row["stale"] != codes:
            fail(f"{where}: the page shows stale {row['stale']}, flags stale --json gives {codes}")
        written = "\n".join(texts[d["file"]][d["line"] - 1:d["endLine"]])
        if row["source"] != written:
            fail(f"{where}: the page shows the rules\n{row['source']}\nthe file has\n{written}")
        seen["split"] += len(splits)
        seen["rollout"] += len(rollouts)
        seen["ramp"] += len(ramps)
        seen["disabled"] += d["disabled"]
        seen["owner"] += "owner" in d
        seen["expires"] += "expires" in d
        seen["stale"] += len(codes)
    missing = [view for view, count in seen.items() if count == 0]
    if missing:
        fail(f"the examples exercise no {', '.join(missing)}: the check would not see those views")
    return len(expected), seen


def check_resolutions(browser, port, files):
    schemas = {path: set() for path in files}
    for path in files:
        for info in json.loads(subprocess.check_output([flags, "list", "--json", path])):
            schemas[path].update(info.get("reads", {}).keys())
    compared = 0
    for context in CONTEXTS:
        browser.navigate(f"http://127.0.0.1:{port}/?context=" + urllib.parse.quote(json.dumps(context)))
        browser.wait_for("document.body.dataset.loaded === 'true' && document.body.dataset.evaluated === 'true'",
                         f"the page to evaluate {context}")
        rows = {row["name"]: row["resolution"] for row in browser.evaluate(ROWS)}
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
                shown = rows.get(name)
                if shown is None or json.loads(shown) != resolution:
                    fail(f"{name} for {context}: the page shows {shown}, flags eval gives {json.dumps(resolution)}")
                compared += 1
    return compared


def check_stream(browser, directory):
    """An edit, a broken edit and a fix of one served file, each seen on the open page."""
    path = os.path.join(directory, "app.flags")
    original = open(path, encoding="utf-8").read()
    marker = "How many photos the picker loads per page."
    if marker not in original:
        fail(f"app.flags no longer has the doc comment {marker!r} this check edits")
    reloads = "document.querySelectorAll('#notices .notice.reload').length"
    before = browser.evaluate(reloads)
    with open(path, "w", encoding="utf-8") as out:
        out.write(original.replace(marker, marker + " (edited once)"))
    browser.wait_for(f"{reloads} > {before} && document.querySelector('tr[data-name=pageSize]').cells[3]"
                     ".textContent.includes('(edited once)')", "the edit to show as a reload")
    with open(path, "w", encoding="utf-8") as out:
        out.write(original.replace(marker, marker + " (edited once)") + "\nflag {\n")
    browser.wait_for("[...document.querySelectorAll('#notices .notice.rejected')].some(p => p.dataset.file.endsWith('app.flags'))"
                     " && document.querySelectorAll('#rejected .standing').length === 1", "the broken edit to show as rejected")
    if "(edited once)" not in browser.evaluate("document.querySelector('tr[data-name=pageSize]').cells[3].textContent"):
        fail("after the rejected edit the page no longer shows the last good rules")
    # The last good text restored: the rules do not change, and the notice clears all the same.
    with open(path, "w", encoding="utf-8") as out:
        out.write(original.replace(marker, marker + " (edited once)"))
    browser.wait_for("document.querySelectorAll('#rejected .standing').length === 0 && "
                     "[...document.querySelectorAll('#notices .notice.accepted')].some(p => p.dataset.file.endsWith('app.flags'))",
                     "the last good text restored to clear the rejection")
    with open(path, "w", encoding="utf-8") as out:
        out.write(original.replace(marker, marker + " (edited once)") + "\nflag {\n")
    browser.wait_for("document.querySelectorAll('#rejected .standing').length === 1", "the broken edit again to show as rejected")
    with open(path, "w", encoding="utf-8") as out:
        out.write(original.replace(marker, marker + " (edited twice)"))
    browser.wait_for("document.querySelectorAll('#rejected .standing').length === 0 && "
                     "document.querySelector('tr[data-name=pageSize]').cells[3].textContent.includes('(edited twice)')",
                     "the fix to clear the rejection")
    with open(path, "w", encoding="utf-8") as out:
        out.write(original)
    browser.wait_for("!document.querySelector('tr[data-name=pageSize]').cells[3].textContent.includes('edited')",
                     "the original text to be back")


def main():
    directory = tempfile.mkdtemp(prefix="page-check-")
    for path in served_files(source_directory):
        target = os.path.join(directory, os.path.relpath(path, source_directory))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy(path, target)
    server = subprocess.Popen([flags, "serve", directory, "--port", "0", "--api-key", KEY],
                              stderr=subprocess.PIPE, text=True)
    browser = None
    try:
        line = server.stderr.readline()
        while line and "listening on" not in line:  # log lines before it: names declared twice
            line = server.stderr.readline()
        port = re.search(r":(\d+) \(", line).group(1)
        browser = Browser()
        browser.navigate(f"http://127.0.0.1:{port}/")
        browser.wait_for("document.body.dataset.askingForKey === 'true'", "the page to ask for the API key")
        browser.evaluate(f"document.getElementById('key').value = {json.dumps(KEY)}; "
                         "document.getElementById('use-key').click(); true")
        browser.wait_for("document.body.dataset.loaded === 'true' && document.body.dataset.following === 'true'",
                         "the page to load with the key and follow the event stream")
        files = served_files(directory)
        declarations, seen = check_state(browser, files)
        check_stream(browser, directory)
        compared = check_resolutions(browser, port, files)
        browser.navigate(f"http://127.0.0.1:{port}/")
        browser.wait_for("document.body.dataset.loaded === 'true'", "the page to load for the screenshot")
        browser.screenshot(screenshot)
        views = ", ".join(f"{count} {view}" for view, count in seen.items())
        print(f"page check: in headless Chromium the page asked for the API key; the state of {declarations} "
              f"declarations ({views}) agrees with flags list --json, flags stale --json and the files; "
              "an edit, a rejected edit and its fix showed from the event stream; "
              f"{compared} resolutions over {len(CONTEXTS)} contexts agree with flags eval --json; screenshot {screenshot}")
    finally:
        if browser:
            browser.close()
        server.terminate()
        server.wait(timeout=15)
        shutil.rmtree(directory, ignore_errors=True)


main()
