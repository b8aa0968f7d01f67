"""flags import against the vendors' own conformance suites: Unleash's client-specification,
GrowthBook's cases.json, flagd's testbed (evaluator testkit and provider gherkin) and
LaunchDarkly's sdk-test-harness server-side-eval data, each file imported with `flags import`
and every case evaluated with `flags eval` on the import; each case agrees or not.

    python3 .ci/import_suites.py FLAGS_BINARY [--suites DIR] [--allowed FILE] [--report FILE.json] [--only SUITE]

DIR (default ../shared/suites from the repository) is described by its README.md. A case is
`agree`, `disagree` (the suite expects another value), `left out` (`flags import` named the
flag as not imported) or `not run` (this harness cannot express the case). A case whose
vendor answers the caller's default (an error, an unknown flag, no value) agrees when the
import holds no such flag (`flags` then answers FLAG_NOT_FOUND, and the caller its default,
so an app sees the same value) or answers by a `fallback` rule; the report counts these
apart. A disagreement,
left-out or not-run case whose id is a line of the allow-list FILE
(`CASE-ID<TAB>reason`, default .ci/import-suites-allowed) is `allowed`. Exit 1 when a
case is neither agreeing nor allowed, or when an import or eval fails; 0 otherwise.
"""
import argparse
import glob
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Case:
    id: str
    key: str                      # the flag's key in the imported file
    context: dict = None          # the `flags eval` context
    expected: object = None
    source: object = None         # the flag as the suite gives it (shown when it disagrees)
    read: object = None           # (row, name) -> the value got; default row[name]["value"]
    loose: bool = False           # numbers compare by value (LaunchDarkly's one number type)
    unread: str = ""              # notes at paths matching this leave the case's value alone
    status: str = ""              # agree, disagree, left out, not run
    caller_default: str = ""      # why the vendor answers the caller's default (an error, an unknown flag)
    default: object = None        # the caller's default the case passes, when it says (see has_default)
    has_default: bool = False
    reason: str = ""
    got: object = None
    allowed: str = ""
    text: str = ""                # the imported .flags text of the flag


@dataclass
class Batch:
    suite: str
    label: str                    # names the suite file in failures
    system: str
    doc: dict
    cases: list
    heads: dict = field(default_factory=dict)   # a note's JSON path head ("flags.x") -> key


def not_run(case, reason):
    case.status, case.reason = "not run", reason
    return case


# ---------------------------------------------------------------- running and comparing

def same(a, b, loose=False):
    """JSON equality with types: true is no number, and 1 is no 1.0 unless loose."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b and (loose or type(a) is type(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, loose) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], loose) for k in a)
    return type(a) is type(b) and a == b


def parse_notes(stderr, path, heads):
    """Renames (key -> name) and flags named as not imported (key -> [(path, reason)]) from the import's notes."""
    names, skipped = {}, {}
    for line in stderr.splitlines():
        line = line[len(path) + 2:] if line.startswith(path + ": ") else line
        m = re.search(r"renamed: '(.*)' is (\w+) ", line)
        if m: names[m.group(1)] = m.group(2)
        m = re.match(r"(.*?): not imported: (.*)", line)
        # A flag that is off and serves true is imported as it evaluates: still compared.
        if not m or "imported as true for everyone" in m.group(2): continue
        where, reason = m.groups()
        head = max((h for h in heads if where == h or where.startswith((h + ".", h + "["))), key=len, default=None)
        if head is not None: skipped.setdefault(heads[head], []).append((where, re.sub(r"--p\d+", "", reason)))
    return names, skipped


def declaration(text, name, depth=1, optional=False):
    """The declaration `name` in .flags text, its comments, and the segments it reads."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"(@\S+\s+)*(flag|variant|value|segment)\s+{re.escape(name)}\b", line):
            start, end = i, i
            while start > 0 and lines[start - 1].startswith(("#", "///", "@")): start -= 1
            while end + 1 < len(lines) and lines[end + 1].strip(): end += 1
            block = "\n".join(lines[start:end + 1])
            if depth:
                for seg in re.findall(r"^segment (\w+)", text, re.M):
                    if seg != name and re.search(rf"\b{seg}\b", "\n".join(lines[i:end + 1])):
                        block += "\n" + declaration(text, seg, depth - 1)
            return block
    return "" if optional else f"(no declaration '{name}' in the import)"


def exited(rc):
    return f"was killed by signal {-rc}" if rc < 0 else f"exited {rc}"


def run_batch(flags, batch, tmp, failures):
    cases = [c for c in batch.cases if not c.status]
    if not cases: return
    stem = os.path.join(tmp, re.sub(r"[^\w.-]+", "_", batch.label))
    path = stem + ".json"
    with open(path, "w") as f: json.dump(batch.doc, f, ensure_ascii=False)
    p = subprocess.run([flags, "import", path, "--from", batch.system], capture_output=True, text=True)
    if p.returncode not in (0, 3):
        failures.append(f"{batch.label}: flags import --from {batch.system} {exited(p.returncode)}:\n{p.stderr.strip()[:2000]}")
        for c in cases: not_run(c, f"flags import {exited(p.returncode)}")
        return
    names, skipped = parse_notes(p.stderr, path, batch.heads)
    if (p.returncode == 3) != ("not imported" in p.stderr):
        failures.append(f"{batch.label}: flags import exited {p.returncode}, and 'not imported' is {'' if p.returncode == 0 else 'not '}in its notes")
    for c in cases:
        reasons = [r for where, r in skipped.get(c.key, []) if not (c.unread and re.match(c.unread, where))]
        if reasons: c.status, c.reason = "left out", reasons[0]
    # A case whose vendor answers the caller's default is evaluated though its flag was left
    # out: a flag the import does not hold answers FLAG_NOT_FOUND, so the caller's default.
    cases = [c for c in cases if not c.status or (c.status == "left out" and c.caller_default)]
    if not cases: return
    with open(stem + ".flags", "w") as f: f.write(p.stdout)
    with open(stem + ".jsonl", "w") as f: f.write("".join(json.dumps(c.context, ensure_ascii=False) + "\n" for c in cases))
    e = subprocess.run([flags, "eval", stem + ".flags", "--contexts", stem + ".jsonl", "--json"], capture_output=True, text=True)
    rows = e.stdout.splitlines()
    if e.returncode != 0 or len(rows) != len(cases):
        failures.append(f"{batch.label}: flags eval {exited(e.returncode)} with {len(rows)} lines for {len(cases)} contexts:\n{e.stderr.strip()[:2000]}")
        for c in cases: not_run(c, f"flags eval {exited(e.returncode)}")
        return
    for c, row in zip(cases, rows):
        name = names.get(c.key, c.key)
        row = json.loads(row)
        # (Not in the row, and no declaration of the file: `flags eval` leaves segments out
        # of its rows, and a segment of that name would answer the app.)
        if name not in row and c.caller_default and not declaration(p.stdout, name, 0, optional=True):
            c.got, c.status = "(the caller's default: the import has no such flag)", "agree"
            c.reason = f"both answer the caller's default ({c.caller_default})"
            continue
        if c.status == "left out": continue   # a rule of it left out: its flag still answers
        # A `fallback` rule answers the caller's default: it agrees with a vendor that does.
        if isinstance(row.get(name), dict) and row[name].get("fallback"):
            c.got = "(fallback: the caller's default)"
            c.status = "agree" if c.caller_default else "disagree"
            if c.caller_default: c.reason = f"both answer the caller's default ({c.caller_default}; a fallback rule)"
            elif c.has_default:
                # (The app then gets the default the case passes.)
                c.got = c.default
                c.status = "agree" if same(c.expected, c.got, c.loose) else "disagree"
                if c.status == "agree": c.reason = "a fallback rule: the caller's default, which the case passes"
            continue
        try:
            c.got = c.read(row, name) if c.read else row[name]["value"]
        except KeyError:
            c.got = f"(no declaration '{name}' in the import)"
        c.status = "agree" if same(c.expected, c.got, c.loose) else "disagree"
        if c.status == "disagree":   # (with Unleash's nameVariant and namePayload)
            c.text = "\n".join(filter(None, [declaration(p.stdout, n, 1, n != name) for n in (name, name + "Variant", name + "Payload")]))


# ---------------------------------------------------------------- Unleash

def unleash_state(spec):
    """The features payload of a spec; 19 and 20 give delta events, applied in order."""
    state = spec["state"]
    if "events" not in state: return state
    features, segments = {}, {}
    for ev in state["events"]:
        if ev["type"] == "hydration":
            features = {f["name"]: f for f in ev["features"]}
            segments = {s["id"]: s for s in ev.get("segments", [])}
        elif ev["type"] == "feature-updated": features[ev["feature"]["name"]] = ev["feature"]
        elif ev["type"] == "feature-removed": features.pop(ev["featureName"], None)
        elif ev["type"] == "segment-updated": segments[ev["segment"]["id"]] = ev["segment"]
        elif ev["type"] == "segment-removed": segments.pop(ev["segmentId"], None)
    return {"version": 2, "features": list(features.values()), "segments": list(segments.values())}


def unleash_context(ctx, numeric):
    """Unleash's fields (userId, sessionId, remoteAddress, appName, environment) and properties
    at the top, currentTime as `now`, as .ci/import_check.py gives them: there a property that
    NUM_* constraints read is a number, its text in Unleash. A null property is none."""
    out = {k: v for k, v in ctx.items() if k not in ("properties", "currentTime") and v is not None}
    for k, v in (ctx.get("properties") or {}).items():
        if k in numeric and isinstance(v, str) and re.fullmatch(r"\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", v):
            v = int(v) if re.fullmatch(r"\s*-?\d+\s*", v) else float(v)
        if v is not None: out[k] = v
    if "currentTime" in ctx: out["now"] = ctx["currentTime"]
    return out


def unleash_numeric(obj, out):
    """The context fields that NUM_* constraints read."""
    if isinstance(obj, dict):
        if str(obj.get("operator", "")).startswith("NUM_"): out.add(obj.get("contextName"))
        obj = list(obj.values())
    for v in obj if isinstance(obj, list) else []: unleash_numeric(v, out)
    return out


def unleash_variant(row, name):
    """What getVariant answers, from the flag, its variant and its payload declarations."""
    payload = row.get(name + "Payload", {}).get("value") or None
    return {"name": row.get(name + "Variant", {"value": "disabled"})["value"], "payload": payload,
            "feature_enabled": row[name]["value"]}


def unleash_batches(root):
    folder = os.path.join(root, "unleash", "specifications")
    for file in json.load(open(os.path.join(folder, "index.json"))):
        spec = json.load(open(os.path.join(folder, file)))
        doc = unleash_state(spec)
        features = {f["name"]: f for f in doc["features"]}
        numeric = unleash_numeric(doc, set())
        batch = Batch("unleash", f"unleash/{file}", "unleash", doc, [],
                      {f"features[{i}]": f["name"] for i, f in enumerate(doc["features"])})
        for kind in ("tests", "variantTests"):
            for n, t in enumerate(spec.get(kind, []), 1):
                label = "test" if kind == "tests" else "variantTest"
                case = Case(f"unleash/{file}#{label} {n}: {t['description']}", t["toggleName"],
                            unleash_context(t["context"], numeric), t["expectedResult"], features.get(t["toggleName"]),
                            unread=r"features\[\d+\](\.strategies\[\d+\])?\.variants")   # variants alone: isEnabled is whole
                if kind == "variantTests":
                    e = t["expectedResult"]
                    case.expected = {"name": e["name"], "payload": (e.get("payload") or {}).get("value"),
                                     "feature_enabled": e["feature_enabled"]}
                    case.read, case.unread = unleash_variant, ""
                if t["toggleName"] not in features:
                    case.caller_default = "an unknown toggle"
                batch.cases.append(case)
        yield batch


# ---------------------------------------------------------------- GrowthBook

def gb_refs(obj, out):
    """Saved groups and parent features a condition, rule or feature reads."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("$inGroup", "$notInGroup") and isinstance(v, str): out.add(("group", v))
            elif k == "$savedGroup": out.add(("group", v.get("id") if isinstance(v, dict) else v))
            elif k == "parentConditions" and isinstance(v, list):
                out.update(("feature", p.get("id")) for p in v if isinstance(p, dict))
            gb_refs(v, out)
    elif isinstance(obj, list):
        for v in obj: gb_refs(v, out)
    return out


def gb_pack(suite, items):
    """Cases share one import when the features and saved groups they define or read agree
    (a feature or group one case lacks is one another may not define)."""
    batches = []
    for case, features, groups in items:
        world = {("feature", k): json.dumps(v, sort_keys=True) for k, v in features.items()}
        world.update({("group", k): json.dumps(v, sort_keys=True) for k, v in groups.items()})
        for ref in gb_refs([features, groups], set()):
            world.setdefault(ref, None)
        for known, batch in batches:
            if all(known.get(k, v) == v for k, v in world.items()):
                known.update(world)
                break
        else:
            known, batch = dict(world), Batch(suite, f"growthbook/cases.json {suite[11:]} (part {len(batches) + 1})", "growthbook", None, [])
            batches.append((known, batch))
        batch.cases.append(case)
    for known, batch in batches:
        batch.doc = {"features": {k: json.loads(v) for (kind, k), v in known.items() if kind == "feature" and v},
                     "savedGroups": {k: json.loads(v) for (kind, k), v in known.items() if kind == "group" and v}}
        batch.heads = {f"features.{k}": k for k in batch.doc["features"]}
        yield batch


def gb_unexpressed(case, ctx):
    """Settings of the SDK rather than the payload."""
    for k, why in {"forcedVariations": "forced variations of the SDK's context", "url": "a URL forcing a variation",
                   "qaMode": "QA mode", "enabled": "the SDK turned off"}.items():
        if k in ctx: not_run(case, f"the case sets {why}, which a payload cannot")


def growthbook_batches(root):
    cases = json.load(open(os.path.join(root, "growthbook", "cases.json")))
    items = []
    for n, (name, ctx, key, result) in enumerate(cases["feature"]):
        features = ctx.get("features", {})
        case = Case(f"growthbook/feature#{n}: {name}", key, ctx.get("attributes", {}), result["value"], features.get(key))
        if key not in features: case.caller_default = "an unknown feature"
        elif result.get("value") is None and result.get("source") == "prerequisite":
            case.caller_default = "GrowthBook gives no value: a gate prerequisite failed"
        elif result.get("value") is None:
            # (get_feature_value(key, fallback) gives the fallback for a null value.)
            case.caller_default = "GrowthBook gives no value (null)"
        gb_unexpressed(case, ctx)
        items.append((case, features, ctx.get("savedGroups", {})))
    yield from gb_pack("growthbook/feature", items)

    # Each experiment is a feature's one rule, its first variation the default (the value
    # GrowthBook gives a user not in the experiment).
    items = []
    for n, (name, ctx, exp, value, *_) in enumerate(cases["run"]):
        key = f"run{n}"
        # An inactive experiment, or one forcing a variation it does not have, puts no one
        # in it (GrowthBook's run gives everyone the first variation): a feature of no rules.
        rule = {k: v for k, v in exp.items() if k != "active"}
        force = exp.get("force")
        never_runs = exp.get("active") is False or (isinstance(force, int) and not 0 <= force < len(exp["variations"]))
        feature = {"defaultValue": exp["variations"][0], "rules": [] if never_runs else [rule]}
        case = Case(f"growthbook/run#{n}: {name}", key, ctx.get("attributes", {}), value, exp)
        if force is not None and not never_runs:
            not_run(case, "the experiment forces a variation ('force' of a rule is a force rule)")
        gb_unexpressed(case, ctx)
        items.append((case, {**ctx.get("features", {}), key: feature}, ctx.get("savedGroups", {})))
    yield from gb_pack("growthbook/run", items)

    # Each condition is a force rule: true when it holds, else the default false.
    items = []
    for n, (name, cond, attrs, expected, *groups) in enumerate(cases["evalCondition"]):
        key = f"cond{n}"
        feature = {"defaultValue": False, "rules": [{"condition": cond, "force": True}]}
        items.append((Case(f"growthbook/evalCondition#{n}: {name}", key, attrs, expected, cond),
                      {key: feature}, groups[0] if groups else {}))
    yield from gb_pack("growthbook/evalCondition", items)


# ---------------------------------------------------------------- flagd

def gherkin_examples(path):
    """(line, scenario, tags, steps) for each example row of each scenario, Background steps first."""
    feature_tags, tags, background, scenario, steps, header, table_tags = [], [], [], None, [], None, []
    for number, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.strip()
        if not line or line.startswith("#"): continue
        if line.startswith("@"):
            tags += line.split()
        elif line.startswith("Feature:"):
            feature_tags, tags = tags, []
        elif line.startswith("Background:"):
            scenario, steps, tags = "Background", background, []
        elif re.match(r"Scenario( Outline| Template)?:", line):
            scenario, steps, header = line.split(":", 1)[1].strip(), list(background), None
            scenario_tags, tags = feature_tags + tags, []
            if not line.startswith(("Scenario Outline", "Scenario Template")):
                yield number, scenario, scenario_tags, steps   # (its steps follow: the list fills in)
        elif line.startswith("Examples:"):
            header, table_tags, tags = None, scenario_tags + tags, []
        elif line.startswith("|"):
            cells = [c.strip().replace("\\|", "|").replace("\\n", "\n").replace("\\\\", "\\") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if header is None: header = cells
            else:
                row = dict(zip(header, cells))
                yield number, scenario, table_tags, [re.sub(r"<([^>]+)>", lambda m: row.get(m.group(1), m.group(0)), s) for s in steps]
        elif re.match(r"(Given|When|Then|And|But)\b", line):
            steps.append(line.split(None, 1)[1])


def flagd_typed(text, kind):
    """A gherkin cell as the value of the step's type (a String cell as it is: `\\u0000` is six characters)."""
    if kind == "Boolean": return text == "true"
    if kind == "Integer": return int(text)
    if kind == "Float": return float(text)
    if kind == "Object": return json.loads(text.replace('\\"', '"'))
    return text


def flagd_cases(doc, gherkin_files, name):
    cases = []
    for path in sorted(gherkin_files):
        for line, scenario, tags, steps in list(gherkin_examples(path)):
            # Older bucketing, and the scenarios @no-default-variant replaces.
            if {"@fractional-v1", "@fractional-v2", "@deprecated"} & set(tags): continue
            flag_type = key = expected = error = reason = given_default = None
            ctx, blocker = {}, None
            for step in steps:
                if m := re.match(r'an? (\w+)-flag with key "(.*)" and a (?:default|fallback) value "(.*)"', step): flag_type, key, given_default = m.group(1), m.group(2), m.group(3)
                elif m := re.match(r'a context containing a key "(.*)", with type "(.*)" and with value "(.*)"', step): ctx[m.group(1)] = flagd_typed(m.group(3), m.group(2))
                elif m := re.match(r'a context containing a targeting key with value "(.*)"', step): ctx["targetingKey"] = m.group(1)
                elif m := re.match(r'a context containing a nested property with outer key "(.*)" and inner key "(.*)", with value "(.*)"', step): ctx.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
                elif m := re.match(r'the resolved details value should be "(.*)"', step): expected = m.group(1)
                elif m := re.match(r'the error-code should be "(.*)"', step): error = m.group(1)
                elif m := re.match(r'the reason should be "(.*)"', step): reason = m.group(1)
                elif m := re.match(r'an option "selector"', step): blocker = "a flag-set selector of the provider"
            case = Case(f"{name}/{os.path.basename(path)}#L{line} {scenario} ({key})", key, ctx, None, doc["flags"].get(key))
            if expected is not None: case.expected = flagd_typed(expected, flag_type)
            if given_default is not None and flag_type in ("Boolean", "Integer", "Float", "String"):
                case.default, case.has_default = flagd_typed(given_default, flag_type), True
            flag = doc["flags"].get(key) or {}
            if error and error != "TYPE_MISMATCH": case.caller_default = f"flagd answers {error}"
            elif reason == "DISABLED" or flag.get("state") == "DISABLED": case.caller_default = "flagd answers a disabled flag so"
            elif reason == "DEFAULT" and flag.get("defaultVariant") is None: case.caller_default = "the flag has no default variant"
            if blocker: not_run(case, f"the case needs {blocker}")
            elif error == "TYPE_MISMATCH": not_run(case, "a typed evaluation of another type (TYPE_MISMATCH)")
            elif expected is None and not case.caller_default: not_run(case, f"the case checks only the error code {error}")
            cases.append(case)
    return cases


def flagd_batches(root):
    folder = os.path.join(root, "flagd")
    doc = json.load(open(os.path.join(folder, "evaluator", "flags", "testkit-flags.json")))
    cases = flagd_cases(doc, glob.glob(os.path.join(folder, "evaluator", "gherkin", "*.feature")), "flagd/evaluator")
    yield Batch("flagd/evaluator", "flagd/evaluator/flags/testkit-flags.json", "flagd", doc, cases, {f"flags.{k}": k for k in doc["flags"]})
    doc = {"flags": {}, "$evaluators": {}}
    for path in sorted(glob.glob(os.path.join(folder, "flags", "*.json"))):
        part = json.load(open(path))
        doc["flags"].update(part.get("flags", {}))
        doc["$evaluators"].update(part.get("$evaluators", {}))
    cases = flagd_cases(doc, glob.glob(os.path.join(folder, "gherkin", "*.feature")), "flagd/provider")
    yield Batch("flagd/provider", "flagd/flags/*.json (merged)", "flagd", doc, cases, {f"flags.{k}": k for k in doc["flags"]})


# ---------------------------------------------------------------- YAML (the subset the harness files use)

def yaml_strip_comment(line):
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote and not (quote == '"' and line[i - 1] == "\\"): quote = None
        elif ch in "\"'" and (i == 0 or line[i - 1] in " [{,:"): quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"): return line[:i]
    return line


def yaml_scalar(text):
    """A plain scalar by YAML 1.2's core schema, as yaml.v3 reads it (`on` is a string)."""
    if text in ("", "~", "null", "Null", "NULL"): return None
    if text in ("true", "True", "TRUE"): return True
    if text in ("false", "False", "FALSE"): return False
    if re.fullmatch(r"[-+]?[0-9]+", text): return int(text)
    if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", text): return float(text)
    return text


class YamlFlow:
    """Flow collections, quoted strings and aliases on one line."""
    def __init__(self, text, anchors):
        self.s, self.i, self.anchors = text, 0, anchors

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t": self.i += 1

    def value(self, in_flow):
        self.ws()
        ch = self.s[self.i:self.i + 1]
        if ch in ("{", "["):
            out, self.i, end = ({} if ch == "{" else []), self.i + 1, "}" if ch == "{" else "]"
            while self.ws() or self.s[self.i] != end:
                item = self.value(True)
                if ch == "[": out.append(item)
                else:
                    self.ws()
                    colon = self.s[self.i] == ":"
                    self.i += colon
                    out[item] = self.value(True) if colon else None
                self.ws()
                if self.s[self.i] == ",": self.i += 1
            self.i += 1
            return out
        if ch == '"':
            j = self.i + 1
            while self.s[j] != '"': j += 2 if self.s[j] == "\\" else 1
            text, self.i = self.s[self.i + 1:j], j + 1
            return json.loads('"' + re.sub(r"\\x([0-9a-fA-F]{2})", r"\\u00\1", text).replace("\\/", "/") + '"')
        if ch == "'":
            m = re.match(r"'((?:[^']|'')*)'", self.s[self.i:])
            self.i += m.end()
            return m.group(1).replace("''", "'")
        if ch == "*":
            m = re.match(r"\*([^\s,\]}]+)", self.s[self.i:])
            self.i += m.end()
            return json.loads(json.dumps(self.anchors[m.group(1)]))
        # A plain scalar ends at ': ' and, in a flow, at , ] } too.
        m = re.match(r"(?:[^,\]}:]|:(?![\s,\]}]))*" if in_flow else r".*", self.s[self.i:])
        self.i += m.end()
        return yaml_scalar(m.group(0).strip())


def yaml_load(text):
    lines = []
    for raw in text.splitlines():
        line = yaml_strip_comment(raw).rstrip()
        if line.strip() and line.strip() not in ("---", "..."):
            lines.append([len(line) - len(line.lstrip(" ")), line.strip()])
    anchors = {}

    def is_item(i, indent):
        return i < len(lines) and lines[i][0] == indent and (lines[i][1] == "-" or lines[i][1].startswith("- "))

    def key_split(content):
        if content[0] in "\"'":
            flow = YamlFlow(content, anchors)
            key = flow.value(True)
            rest = content[flow.i:].lstrip()
            return (key, rest[1:].strip()) if rest.startswith(":") else (None, None)
        m = re.match(r"([^\s\[\]{},\"'#&*!|>][^:]*?|<<)\s*:(?:\s+(.*)|$)", content)
        return (m.group(1), (m.group(2) or "").strip()) if m else (None, None)

    def node(i, indent):
        return seq(i, indent) if is_item(i, indent) else mapping(i, indent)

    def inline(i, indent, rest):
        """The value after 'key:' or '- ': on the line, or the block below it."""
        anchor = None
        if m := re.match(r"&(\S+)\s*", rest): anchor, rest = m.group(1), rest[m.end():]
        if rest:
            value, i = YamlFlow(rest, anchors).value(False), i + 1
        elif i + 1 < len(lines) and (lines[i + 1][0] > indent or is_item(i + 1, indent)):
            value, i = node(i + 1, lines[i + 1][0])
        else:
            value, i = None, i + 1
        if anchor: anchors[anchor] = value
        return value, i

    def seq(i, indent):
        out = []
        while is_item(i, indent):
            rest = lines[i][1][1:].lstrip()
            if rest and (rest.startswith("- ") or key_split(rest)[0] is not None):
                lines[i] = [indent + len(lines[i][1]) - len(rest), rest]   # an item that opens a block
                value, i = node(i, lines[i][0])
            else:
                value, i = inline(i, indent, rest)
            out.append(value)
        return out, i

    def mapping(i, indent):
        out, merges = {}, []
        while i < len(lines) and lines[i][0] == indent and not is_item(i, indent):
            key, rest = key_split(lines[i][1])
            if key is None: raise ValueError(f"YAML line not understood: {lines[i][1]}")
            value, i = inline(i, indent, rest)
            if key == "<<": merges += value if isinstance(value, list) else [value]
            else: out[key] = value
        for m in merges:
            for k, v in m.items(): out.setdefault(k, json.loads(json.dumps(v)))
        return out, i

    return node(0, lines[0][0])[0] if lines else None


# ---------------------------------------------------------------- LaunchDarkly

def go_json(value):
    """A value as the harness writes it in a substitution (ldvalue: numbers are float64, so 1.0 is 1)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21: return str(int(value))
    if isinstance(value, dict): return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{go_json(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list): return "[" + ",".join(go_json(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def ld_expand(text):
    """The harness's data/substitutions.go: constants, then each parameter set (the product of
    lists of lists), then constants again, replaced in the text before it is read."""
    head = yaml_load(text) or {}
    constants, params = head.get("constants") or {}, head.get("parameters") or []

    def replace(s, subs):
        s = s.replace("\\u003c", "<").replace("\\u003e", ">")
        for name, value in subs.items():
            s = s.replace(f'"<{name}>"', go_json(value))
            s = s.replace(f"<{name}>", value if isinstance(value, str) else go_json(value))
        return s
    if params and isinstance(params[0], list):   # the first list varies fastest
        params = [dict(kv for part in reversed(combo) for kv in part.items())
                  for combo in itertools.product(*reversed(params))]
    if not params:
        return [(yaml_load(replace(text, constants)), {})]
    return [(yaml_load(replace(replace(replace(text, constants), p), constants)), p) for p in params]


def ld_context(ctx):
    """A user's attributes at the top (an old-style user's `custom` too), another kind's in an
    object named by the kind, as .ci/import_check.py gives them."""
    if "kind" not in ctx:
        out = {k: v for k, v in ctx.items() if k not in ("custom", "privateAttributeNames", "_meta")}
        return {**out, **(ctx.get("custom") or {})}
    kinds = {k: v for k, v in ctx.items() if k != "kind"} if ctx["kind"] == "multi" else {ctx["kind"]: ctx}
    out = {}
    for kind, attrs in kinds.items():
        attrs = {k: v for k, v in attrs.items() if k not in ("kind", "_meta")}
        if kind == "user": out.update(attrs)
        else: out[kind] = attrs
    return out


def ld_rename(data, suffix):
    """Flags and segments keyed apart for one shared import, where no bucketing reads the key."""
    flags, segments = data.get("flags") or {}, data.get("segments") or {}
    if "rollout" in json.dumps(flags) or any("weight" in json.dumps(s.get("rules", [])) for s in segments.values()):
        return None

    def walk(obj):
        if isinstance(obj, dict):
            out = {k: walk(v) for k, v in obj.items()}
            if obj.get("op") == "segmentMatch" and isinstance(obj.get("values"), list):
                out["values"] = [v + suffix if isinstance(v, str) else v for v in obj["values"]]
            if isinstance(obj.get("key"), str) and "variation" in obj and "clauses" not in obj:
                out["key"] = obj["key"] + suffix   # a prerequisite
            return out
        return [walk(v) for v in obj] if isinstance(obj, list) else obj
    return {"flags": {k + suffix: walk(v) for k, v in flags.items()}, "segments": {k + suffix: walk(v) for k, v in segments.items()}}


def ld_batches(root):
    for path in sorted(glob.glob(os.path.join(root, "launchdarkly", "server-side-eval", "*.yml"))):
        file = os.path.basename(path)
        shared = Batch("launchdarkly", f"launchdarkly/{file}", "launchdarkly", {"flags": {}, "segments": {}}, [])
        batches, made = [shared], []
        sets = ld_expand(open(path, encoding="utf-8").read())
        for n, (suite, params) in enumerate(sets):
            data = suite.get("sdkData") or {}
            suffix = f"--p{n}" if len(sets) > 1 else ""
            renamed = ld_rename(data, suffix)
            if renamed is None:   # its own import, keys as they are
                renamed, suffix = {"flags": data.get("flags") or {}, "segments": data.get("segments") or {}}, ""
                batch = Batch("launchdarkly", f"launchdarkly/{file} (parameters {n + 1})", "launchdarkly", renamed, [])
                batches.append(batch)
            else:
                batch = shared
                for kind in ("flags", "segments"): batch.doc[kind].update(renamed[kind])
            for item in list(renamed["flags"].items()) + list(renamed["segments"].items()):
                item[1]["key"] = item[0]
                item[1].setdefault("version", 1)
            batch.heads.update({f"flags.{k}": k for k in renamed["flags"]})
            for ev in suite.get("evaluations") or []:
                ctx, key = ev.get("context") or {}, ev["flagKey"]
                name, who = ev.get("name") or key, ",".join(f"{k}:{v.get('key')}" for k, v in ctx.items() if k != "kind") \
                    if ctx.get("kind") == "multi" else ctx.get("key")
                extra = params.get("NAME") if params.get("NAME") not in (None, name) else ",".join(
                    f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(params.items()) if isinstance(v, (str, int, float)) and k != "NAME")
                case = Case(f"launchdarkly/{file}#{key}/{who}: {name}", key + suffix, ld_context(ctx), (ev.get("expect") or {}).get("value"),
                            (data.get("flags") or {}).get(key), loose=True)
                why = ((ev.get("expect") or {}).get("reason") or {})
                if why.get("kind") == "ERROR": case.caller_default = f"LaunchDarkly answers {why.get('errorKind', 'an error')}"
                # An off flag without an off variation answers the caller's default (reason OFF).
                flag = (data.get("flags") or {}).get(key) or {}
                off = flag.get("offVariation")
                if why.get("kind") == "OFF" and not (isinstance(off, int) and 0 <= off < len(flag.get("variations") or [])):
                    case.caller_default = "LaunchDarkly answers an off flag without an off variation so"
                if suite.get("requireCapability"):
                    not_run(case, f"needs the SDK capability '{suite['requireCapability']}' (a typed variation call)")
                batch.cases.append(case)
                made.append((case, extra or f"parameters {n + 1}"))
        # An id that parameter sets share names the set's parameters.
        ids = [c.id for c, _ in made]
        for c, extra in made:
            if ids.count(c.id) > 1: c.id += f" [{extra}]"
        yield from (b for b in batches if b.cases)


# ---------------------------------------------------------------- report

SUITES = ["unleash", "growthbook/feature", "growthbook/run", "growthbook/evalCondition", "flagd/evaluator", "flagd/provider", "launchdarkly"]
COLUMNS = ["agree", "disagree", "left out", "not run", "allowed"]


def trimmed(value, limit=700):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + " …"


def grouped(cases):
    groups = {}
    for c in cases:
        reason = re.sub(r"(flag|feature|segment|group|evaluator) '[^']*'", r"\1 '…'", c.reason)
        groups.setdefault(reason, []).append(c)
    return sorted(groups.items(), key=lambda g: (-len(g[1]), g[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("flags")
    ap.add_argument("--suites", default=os.path.join(ROOT, "..", "shared", "suites"))
    ap.add_argument("--allowed", default=os.path.join(ROOT, ".ci", "import-suites-allowed"))
    ap.add_argument("--report")
    ap.add_argument("--only", help="a suite (or its start): " + ", ".join(SUITES))
    args = ap.parse_args()
    if not os.path.isdir(args.suites):
        print(f"vendor suites: skipped ({args.suites} not found)")
        return 0
    if not os.access(args.flags, os.X_OK): sys.exit(f"import_suites.py: {args.flags} is no program to run")
    lines = open(args.allowed, encoding="utf-8").read().splitlines() if os.path.exists(args.allowed) else []
    allowed = {case: why.strip() for case, _, why in (l.partition("\t") for l in lines if l.strip() and not l.startswith("#"))}

    failures, batches = [], []
    for system, make in [("unleash", unleash_batches), ("growthbook", growthbook_batches), ("flagd", flagd_batches), ("launchdarkly", ld_batches)]:
        if args.only and not (system.startswith(args.only) or args.only.startswith(system)): continue
        try:
            batches += [b for b in make(args.suites) if not args.only or b.suite.startswith(args.only)]
        except (OSError, ValueError, KeyError, IndexError) as e:
            failures.append(f"{system}: the suite files could not be read: {type(e).__name__}: {e}")
    # (IMPORT_SUITES_KEEP=DIR keeps each batch's import, .flags and contexts there, to read.)
    keep = os.environ.get("IMPORT_SUITES_KEEP")
    if keep: os.makedirs(keep, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for b in batches: run_batch(args.flags, b, keep or tmp, failures)
    cases = [(b.suite, c) for b in batches for c in b.cases]
    for _, c in cases:
        if c.status != "agree" and c.id in allowed:
            c.allowed = allowed[c.id] or "allowed"
    # An entry for a case that now agrees, or that no suite has, is stale: the list names
    # exactly what is knowingly not run.
    if not args.only:
        listed = {c.id for _, c in cases if c.allowed}
        failures += [f"stale allow-list entry (the case agrees, or no suite has it): {case}" for case in allowed if case not in listed]
    report(cases, failures)
    if args.report:
        with open(args.report, "w") as f:
            json.dump([{"suite": s, "id": c.id, "status": c.status, "allowed": c.allowed, "reason": c.reason,
                        "expected": c.expected, "got": c.got} for s, c in cases], f, indent=1, ensure_ascii=False)
    return 1 if failures or any(c.status != "agree" and not c.allowed for _, c in cases) else 0


def report(cases, failures):
    """The table per suite, every disagreement, the left-out and not-run reasons, the failures."""
    def column(c):
        return "allowed" if c.allowed else c.status
    print(f"{'suite':26}{'cases':>7}" + "".join(f"{h:>10}" for h in COLUMNS))
    totals = [0] * (len(COLUMNS) + 1)
    for suite in SUITES:
        mine = [c for s, c in cases if s == suite]
        if not mine: continue
        row = [len(mine)] + [sum(column(c) == h for c in mine) for h in COLUMNS]
        totals = [a + b for a, b in zip(totals, row)]
        print(f"{suite:26}{row[0]:>7}" + "".join(f"{n:>10}" for n in row[1:]))
    print(f"{'all':26}{totals[0]:>7}" + "".join(f"{n:>10}" for n in totals[1:]))
    defaults = [c for _, c in cases if c.status == "agree" and c.reason.startswith("both answer the caller's default")]
    if defaults: print(f"({len(defaults)} of the agreements are both answering the caller's default: the vendor an error, an unknown flag or no value; the import no such flag, or a fallback rule)")
    loose = [c for _, c in cases if c.status == "agree" and not same(c.expected, c.got) and not c.reason]
    if loose: print(f"({len(loose)} LaunchDarkly agreements compare an int with a double: ldvalue has one number type, as the harness compares)")

    bad = [c for _, c in cases if c.status == "disagree" and not c.allowed]
    if bad: print(f"\n{len(bad)} disagreements:")
    shown = {}
    for c in bad:
        print(f"\n{c.id}\n  expected {json.dumps(c.expected, ensure_ascii=False)}, got {json.dumps(c.got, ensure_ascii=False)}"
              f"\n  context {trimmed(c.context, 300)}")
        flag = (trimmed(c.source), c.text)
        if flag in shown:
            print(f"  source and import as for {shown[flag]}")
            continue
        shown[flag] = c.id
        print(f"  source  {flag[0]}\n  imported:\n" + "\n".join("    " + line for line in c.text.splitlines()))
    for status in ("left out", "not run"):
        mine = [c for _, c in cases if c.status == status and not c.allowed]
        if not mine: continue
        print(f"\n{len(mine)} {status}, by reason:")
        for reason, group in grouped(mine):
            print(f"  {len(group):5}  {reason}\n         e.g. {group[0].id}")
    for f in failures: print(f"\nFAILED: {f}")


if __name__ == "__main__":
    sys.exit(main())
