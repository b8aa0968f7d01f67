"""The OpenFeature Python SDK with its OFREP provider, against `flags serve`.

Starts `flags serve DIR --port 0`, generates contexts from the attributes the files'
declarations read (one in ten without a targeting key), and checks that every declaration's value, reason and variant through
the SDK equal what `flags eval --json --contexts` gives for the same context. Exits 1 on any
difference, printing the first ones.

usage: python ofrep_oracle.py FLAGS_BINARY DIR [CONTEXTS]
"""

import json
import os
import random
import re
import subprocess
import sys

from openfeature import api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served_files import served_files  # noqa: E402

flags, directory = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
rng = random.Random(20261125)

files = served_files(directory)
declarations = {}  # name -> (file, info)
for path in files:
    for info in json.loads(subprocess.check_output([flags, "list", "--json", path])):
        if info["kind"] != "segment" and info["name"] not in declarations:
            declarations[info["name"]] = (path, info)

attributes = {}
for path, info in declarations.values():
    for name, type_ in info.get("reads", {}).items():
        attributes.setdefault(name, type_)

WORDS = ["US", "CA", "GB", "DE", "AT", "FR", "JP", "qa", "staff", "editor", "beta-testers", "admin", "x"]
EMAILS = ["ann@example.com", "qa+checkout@example.org", "bob@gmail.com", "eve@partner.example", "x@y.z"]
ADDRESSES = ["10.1.2.3", "10.200.0.9", "192.168.1.20", "172.16.4.4", "8.8.8.8", "2001:db8::1", "::ffff:10.1.2.3", "203.0.113.7"]


def cases(type_):
    match = re.search(r"enum\(([^)]*)\)", type_)
    return [c.strip() for c in match.group(1).split(",")] if match else None


def value(name, type_):
    if type_.startswith("["):
        pool = cases(type_) or WORDS
        return rng.sample(pool, rng.randint(0, min(3, len(pool))))
    if cases(type_):
        return rng.choice(cases(type_))
    if type_ == "bool":
        return rng.choice([True, False])
    if type_ == "int":
        return rng.randint(0, 100_000)
    if type_ == "double":
        return round(rng.uniform(0, 200), 2)
    if type_ == "version":
        return f"{rng.randint(1, 3)}.{rng.randint(0, 12)}.{rng.randint(0, 3)}"
    if type_ == "ip":
        return rng.choice(ADDRESSES)
    if type_ == "datetime":
        return f"20{rng.randint(26, 27)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
    if "mail" in name.lower():
        return rng.choice(EMAILS)
    if name in ("userId", "tenantId"):
        return f"user-{rng.randint(0, 10_000)}"
    return rng.choice(WORDS)


server = subprocess.Popen([flags, "serve", directory, "--port", "0"], stderr=subprocess.PIPE, text=True)
try:
    line = server.stderr.readline()
    while line and "listening on" not in line:  # log lines before it: names declared twice
        line = server.stderr.readline()
    port = re.search(r":(\d+) \(", line).group(1)
    api.set_provider(OFREPProvider(base_url=f"http://127.0.0.1:{port}"))
    client = api.get_client()
    mismatches = []
    compared = 0
    contexts = []
    for _ in range(count):
        context = {name: value(name, type_) for name, type_ in attributes.items() if rng.random() < 0.9}
        # One context in ten has no targeting key: a rollout or split then does not match,
        # over OFREP as in `flags eval` (and the answer is no error).
        if rng.random() < 0.9:
            context["userId"] = f"user-{rng.randint(0, 1_000_000)}"
        else:
            context.pop("userId", None)
        contexts.append(context)
    # One `flags eval --contexts -` a file: a line of contexts in, a line of results out.
    expected_by_file = {}
    for path in files:
        schema_reads = set()
        for p, info in declarations.values():
            if p == path:
                schema_reads.update(info.get("reads", {}).keys())
        lines = "".join(json.dumps({k: v for k, v in c.items() if k in schema_reads}) + "\n" for c in contexts)
        out = subprocess.run(
            [flags, "eval", path, "--json", "--contexts", "-"], input=lines, capture_output=True, text=True, check=True)
        expected_by_file[path] = [json.loads(line) for line in out.stdout.splitlines()]
        assert len(expected_by_file[path]) == count, f"{path}: {len(expected_by_file[path])} results for {count} contexts"
    for i, context in enumerate(contexts):
        by_file = {path: results[i] for path, results in expected_by_file.items()}
        attributes_only = {k: v for k, v in context.items() if k != "userId"}
        ctx = EvaluationContext(targeting_key=context.get("userId"), attributes=attributes_only)
        for name, (path, info) in declarations.items():
            expected = by_file[path][name]
            kind = info["type"]
            if kind == "bool":
                details = client.get_boolean_details(name, False, ctx)
            elif kind == "int":
                details = client.get_integer_details(name, 0, ctx)
            elif kind == "double":
                details = client.get_float_details(name, 0.0, ctx)
            else:
                details = client.get_string_details(name, "", ctx)
            want_variant = expected.get("variant") or (f"rule{expected['rule']}" if "rule" in expected else expected["reason"].lower())
            got = (details.value, str(details.reason.value if hasattr(details.reason, "value") else details.reason), details.variant)
            want = (expected["value"], expected["reason"], want_variant)
            compared += 1
            if got != want or details.error_code is not None:
                mismatches.append((name, context, got, want, details.error_code, details.error_message))
    if mismatches:
        for m in mismatches[:10]:
            print("MISMATCH", m)
        print(f"ofrep oracle: {len(mismatches)} of {compared} evaluations differ")
        sys.exit(1)
    keyless = sum(1 for c in contexts if "userId" not in c)
    print(f"ofrep oracle: {compared} evaluations over {count} contexts ({keyless} without a targeting key) agree with flags eval --json")
finally:
    server.terminate()
    server.wait(timeout=15)
