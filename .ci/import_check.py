"""flags import against the vendors' own SDKs: random LaunchDarkly, GrowthBook, flagd and Unleash files are
imported, then every flag is evaluated by the vendor's Python SDK and by `flags eval` on the
import, over thousands of contexts; every value must agree.

    python3 .ci/import_check.py FLAGS_BINARY [FILES_PER_VENDOR] [CONTEXTS]

IMPORT_SEED picks other random files; IMPORT_SYSTEMS (such as `growthbook,unleash`) checks
only those systems.
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

flags = sys.argv[1]
files_per_vendor = int(sys.argv[2]) if len(sys.argv) > 2 else 6
context_count = int(sys.argv[3]) if len(sys.argv) > 3 else 2000

COUNTRIES = ["US", "CA", "FR", "DE", "JP"]
PLANS = ["free", "pro", "team"]
VERSIONS = ["1.0.0", "1.2.3", "1.10.0", "2.0.0", "2.1.5", "10.0.1", "v2.1.5"]
TAGS = ["a", "b", "c", "d"]
# Times as LaunchDarkly reads them (milliseconds since 1970, RFC 3339 with an offset) and
# some it does not (a date alone, no offset, text).
SIGNUPS = [1767225600000, 1780000000000, "2026-03-01T09:30:00+02:00", "2026-07-01T00:00:00Z", "2026-07-01", "2026-07-01T00:00:00",
           "soon"]


def contexts(rng):
    out = []
    for i in range(context_count):
        c = {"key": f"user-{rng.randrange(100000)}" if i % 7 else str(i)}
        if rng.random() < 0.8: c["country"] = rng.choice(COUNTRIES)
        if rng.random() < 0.8: c["email"] = rng.choice(["a", "bob", "beta.tester", "carol"]) + rng.choice(["@example.com", "@mail.org"])
        if rng.random() < 0.8: c["age"] = rng.randrange(10, 80)
        if rng.random() < 0.8: c["version"] = rng.choice(VERSIONS)
        if rng.random() < 0.6: c["organization"] = {"key": f"org-{rng.randrange(50)}", "plan": rng.choice(PLANS)}
        if rng.random() < 0.1: c["anonymous"] = rng.random() < 0.5
        if rng.random() < 0.5: c["tags"] = rng.sample(TAGS, rng.randrange(0, 3))
        if rng.random() < 0.5: c["signup"] = rng.choice(SIGNUPS)
        if rng.random() < 0.5: c["app-version"] = rng.choice(VERSIONS)
        # (Lists of bools, of numbers and of mixed scalars, or a scalar.)
        if rng.random() < 0.4: c["answers"] = rng.choice([[True], [False, True], [1.5, 2], [2.5], [], ["b", 3], [3, "b", False], True, 1.5, "b"])
        # (Names of flagd variants, and others: a fractional entry may name its variant by it.)
        if rng.random() < 0.5: c["color"] = rng.choice(["red", "green", "blue", "on", "true", "small", "b", "x", "", 1, True, 5])
        out.append(c)
    return out


def run_import(doc, system):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        path = f.name
    p = subprocess.run([flags, "import", path, "--from", system], capture_output=True, text=True)
    names, skipped = {}, set()
    for line in p.stderr.splitlines():
        m = re.search(r"renamed: '(.*)' is (\w+) ", line)
        if m: names[m.group(1)] = m.group(2)
        m = re.search(r": (?:flags|features)\.([^.:]+)[.:].*not imported: (.*)", line) or re.search(r": features\[(\d+)\].*not imported: (.*)", line)
        # A flag that is off and serves true is imported as it evaluates: still compared.
        if m and "imported as true for everyone" not in m.group(2): skipped.add(m.group(1))
    if p.returncode not in (0, 3) or (p.returncode == 3) != bool(skipped or "not imported" in p.stderr):
        sys.exit(f"flags import --from {system} exited {p.returncode} for {path}:\n{p.stderr}")
    return p.stdout, names, path, skipped


def answer(row, name, callers_default):
    """What an app is given for `name` from a row of `flags eval --json`: its value, or the
    caller's default for a flag the import does not declare or a `fallback` rule."""
    if name not in row or row[name].get("fallback"): return callers_default
    return row[name]["value"]


def flags_eval(text, ctxs):
    with tempfile.TemporaryDirectory() as d:
        rules = os.path.join(d, "imported.flags")
        open(rules, "w").write(text)
        lines = os.path.join(d, "contexts.jsonl")
        open(lines, "w").write("".join(json.dumps(c) + "\n" for c in ctxs))
        p = subprocess.run([flags, "eval", rules, "--contexts", lines, "--json"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"flags eval failed:\n{p.stderr}\n{text}")
        return [json.loads(line) for line in p.stdout.splitlines()]


# ---------------------------------------------------------------- LaunchDarkly

def ld_clause(rng, segments):
    kind = rng.random()
    if kind < 0.1 and segments:
        # (A segment the file does not hold matches no one.)
        return {"attribute": "", "op": "segmentMatch", "values": [rng.choice(segments + ["no-such-segment"])], "negate": rng.random() < 0.3}
    attr, op, values, ctx_kind = rng.choice([
        ("country", "in", rng.sample(COUNTRIES, rng.randrange(1, 3)), None),
        ("email", "endsWith", ["@example.com"], None),
        ("email", "startsWith", [rng.choice(["a", "bob", "beta"])], None),
        ("email", "contains", ["tester"], None),
        ("email", "matches", ["^[ab]"], None),
        ("age", rng.choice(["lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"]), [rng.randrange(10, 80)], None),
        ("age", "in", [rng.randrange(10, 80) for _ in range(3)], None),
        ("version", rng.choice(["semVerLessThan", "semVerGreaterThan", "semVerEqual"]), [rng.choice(VERSIONS + ["2", "1.2"])], None),
        # Clause values that are no version, beside one that is; an operator no SDK knows.
        ("version", rng.choice(["semVerLessThan", "semVerEqual"]), rng.sample(["v2.0.0", "02.0.0", "2.0.0.0"] + VERSIONS, 2), None),
        ("email", "unsupportedOperator", ["a"], None),
        ("plan", "in", [rng.choice(PLANS)], "organization"),
        ("key", "in", [f"user-{rng.randrange(100000)}", "3", "5"], None),
        ("email", "in", [], None),
        ("age", "startsWith", [3], None),
        ("anonymous", "in", [rng.random() < 0.5], None),
        ("/plan", "in", [rng.choice(PLANS)], "organization"),
        ("tags", "in", rng.sample(TAGS, 2), None),
        ("answers", "in", rng.sample([True, False, 1.5, 2, 3, "b"], rng.randrange(1, 3)), None),
        # (On a list, LaunchDarkly tries the operator on each element.)
        (rng.choice(["tags", "email", "answers"]), rng.choice(["startsWith", "endsWith", "contains"]), [rng.choice(["a", "b", "c", "@mail.org"])], None),
        (rng.choice(["tags", "answers"]), "matches", [rng.choice(["^[ab]", "c$"])], None),
        ("answers", rng.choice(["lessThan", "greaterThanOrEqual"]), [rng.choice([2, 1.5])], None),
        ("signup", rng.choice(["before", "after"]), [rng.choice([1772000000000, "2026-05-01T00:00:00-04:00", "2026-05-01"])], None),
        ("app-version", rng.choice(["semVerLessThan", "semVerGreaterThan"]), [rng.choice(VERSIONS[:6])], None),
        ("kind", "in", rng.sample(["user", "organization", "device"], rng.randrange(1, 3)), None),
        ("/kind", "in", [rng.choice(["user", "organization"])], "organization"),
    ])
    clause = {"attribute": attr, "op": op, "values": values, "negate": rng.random() < 0.3}
    if ctx_kind: clause["contextKind"] = ctx_kind
    return clause


def ld_rollout(rng, n):
    cuts = sorted(rng.randrange(0, 100001) for _ in range(n - 1))
    weights = [b - a for a, b in zip([0] + cuts, cuts + [100000])]
    r = {"variations": [{"variation": i, "weight": w} for i, w in enumerate(weights)]}
    if rng.random() < 0.3:
        r["kind"] = "experiment"
        r["seed"] = rng.randrange(1, 10000)
    if rng.random() < 0.2:
        r["bucketBy"] = "email"
    elif rng.random() < 0.2:
        r["contextKind"] = "organization"
        if rng.random() < 0.5: r["variations"][0]["weight"], r["variations"][-1]["weight"] = 0, r["variations"][-1]["weight"] + r["variations"][0]["weight"]
        if rng.random() < 0.3: r["bucketBy"] = "plan"
    if rng.random() < 0.1:
        for v in r["variations"]: v["weight"] //= 2  # weights short of 100,000: the last takes the rest
    return r


def ld_file(rng):
    segments = {}
    count = rng.randrange(0, 4)
    for s in range(count):
        key = f"seg-{s}"
        # (A segment may read a segment listed after it, never itself.)
        others = [f"seg-{t}" for t in range(count) if t > s]
        segments[key] = {"key": key, "salt": f"salt{s}", "included": [f"user-{rng.randrange(100000)}"], "excluded": ["7"],
                         "rules": [{"clauses": [ld_clause(rng, others)], **({"weight": rng.choice([0, rng.randrange(0, 100001)])} if rng.random() < 0.5 else {}),
                                    **({"rolloutContextKind": "organization"} if rng.random() < 0.3 else {}),
                                    **({"bucketBy": "email"} if rng.random() < 0.2 else {})}]}
        if rng.random() < 0.3:
            segments[key]["includedContexts"] = [{"contextKind": "organization", "values": [f"org-{rng.randrange(50)}"]}]
            segments[key]["excludedContexts"] = [{"contextKind": "organization", "values": [f"org-{rng.randrange(50)}"]}]
    flags_ = {}
    for f in range(8):
        key = f"flag-{f}" if f % 2 else f"flag{f}"
        variations = rng.choice([[True, False], [False, True], ["control", "oneStep", "twoStep"], [10, 20, 30, 40], ["a b", "c"], ["a", "b", "a"]])
        n = len(variations)
        def vr():
            # (Neither a variation nor a rollout, now and then: an error where it applies.)
            if rng.random() < 0.03: return rng.choice([{}, {"rollout": {"variations": []}}])
            return {"variation": rng.randrange(n)} if rng.random() < 0.6 else {"rollout": ld_rollout(rng, n)}
        def clauses():
            listed = [ld_clause(rng, list(segments)) for _ in range(rng.randrange(1, 3))]
            # A malformed reference: an error once reached. (A clause with no attribute is
            # one too, by the SDK test harness's data; the Python SDK refuses the whole flag.)
            if rng.random() < 0.08:
                listed.append(rng.choice([{"attribute": "/a~b", "op": "in", "values": [True], "contextKind": "user"},
                                          {"attribute": "///", "op": "in", "values": [""], "contextKind": "organization"}]))
            return listed
        flag = {"key": key, "on": rng.random() < 0.85, "salt": f"s{f}", "offVariation": rng.randrange(n), "variations": variations,
                "targets": [{"values": [str(rng.randrange(30)), "user-1"], "variation": rng.randrange(n)}] if rng.random() < 0.5 else [],
                "rules": [{"clauses": clauses(), **vr()} for _ in range(rng.randrange(0, 4))],
                "fallthrough": vr(), "prerequisites": []}
        if rng.random() < 0.2:
            flag["contextTargets"] = [{"contextKind": "user", "values": [], "variation": rng.randrange(n)},
                                      {"contextKind": "organization", "values": [f"org-{rng.randrange(50)}"], "variation": rng.randrange(n)}]
        if rng.random() < 0.1: del flag["offVariation"]
        elif rng.random() < 0.05: flag["offVariation"] = rng.choice([-1, n])   # no such variation
        earlier = list(flags_)
        if earlier and rng.random() < 0.3:
            for p in rng.sample(earlier, min(len(earlier), rng.randrange(1, 3))):
                flag["prerequisites"].append({"key": p, "variation": rng.randrange(len(flags_[p]["variations"]))})
            if rng.random() < 0.2: flag["prerequisites"].append({"key": "no-such-flag", "variation": 0})
        flags_[key] = flag
    return {"flags": flags_, "segments": segments}


def check_launchdarkly(rng, ctxs):
    import logging
    logging.disable(logging.ERROR)  # the SDK logs each prerequisite the file lacks
    import ldclient
    from ldclient import Context
    from ldclient.config import Config
    from ldclient.integrations import Files
    compared = 0
    for n in range(files_per_vendor):
        doc = ld_file(rng)
        text, names, path, skipped = run_import(doc, "launchdarkly")
        skips[0] += len(skipped)
        client = ldclient.client.LDClient(Config("sdk-key", update_processor_class=Files.new_data_source(paths=[path]), send_events=False))
        ours = flags_eval(text, ctxs)
        for c, got in zip(ctxs, ours):
            user = Context.builder(c["key"])
            for k in ("country", "email", "age", "version", "tags", "signup", "app-version", "answers"):
                if k in c: user.set(k, c[k])
            if "anonymous" in c: user.anonymous(c["anonymous"])
            context = user.build()
            if "organization" in c:
                org = Context.builder(c["organization"]["key"]).kind("organization").set("plan", c["organization"]["plan"]).build()
                context = Context.create_multi(context, org)
            for key in doc["flags"]:
                if key in skipped: continue
                expected = client.variation(key, context, None)
                # A flag the import does not declare answers the caller's default (here None).
                # So does a `fallback` rule (an error of the SDK's: a malformed rule).
                actual = answer(got, names.get(key, key), None)
                compared += 1
                if expected != actual:
                    sys.exit(f"launchdarkly file {n} ({path}): flag {key} for {json.dumps(c)}: the SDK gives {expected!r}, flags eval {actual!r}\n{text}")
        client.close()
    print(f"launchdarkly-server-sdk and flags eval agree on {compared} evaluations ({files_per_vendor} files, {len(ctxs)} contexts; {skips[0]} flags named as not imported)")


# ---------------------------------------------------------------- GrowthBook

GB_GROUPS = ["staff", "europe", "adults", "either", "gone"]


def gb_saved_groups(rng):
    return {
        "staff": {"type": "list", "attributeKey": "email", "values": ["a@example.com", "bob@mail.org", 7]},
        "legacy": ["carol@example.com", "a@mail.org"],
        "europe": {"type": "list", "attributeKey": "country", "values": rng.sample(COUNTRIES, 2)},
        "adults": {"type": "condition", "condition": gb_condition(rng, 1)},
        "either": {"type": "condition", "condition": {"$or": [{"$savedGroup": {"id": "adults"}}, gb_condition(rng, 1)]}},
    }


def gb_condition(rng, depth=0):
    r = rng.random()
    if depth < 2 and r < 0.15:
        op = rng.choice(["$or", "$and", "$nor"])
        return {op: [gb_condition(rng, depth + 1) for _ in range(rng.randrange(1, 3))]}
    if depth < 2 and r < 0.2:
        return {"$not": gb_condition(rng, depth + 1)}
    if depth < 2 and r < 0.28:
        reference = {"id": rng.choice(GB_GROUPS)}
        if rng.random() < 0.2: reference["attributeKey"] = "organization.plan"
        return {"$savedGroup": reference}
    attr, test = rng.choice([
        ("country", rng.choice(COUNTRIES)),
        ("country", {"$ne": rng.choice(COUNTRIES)}),
        ("country", {"$in": rng.sample(COUNTRIES, 2)}),
        ("country", {"$nin": rng.sample(COUNTRIES, 2)}),
        ("age", {rng.choice(["$gt", "$gte", "$lt", "$lte"]): rng.randrange(10, 80)}),
        ("age", {"$exists": rng.random() < 0.5}),
        ("email", {"$regex": "^[ab]"}),
        ("email", {"$notRegex": "example"}),
        ("version", {rng.choice(["$vgt", "$vlt", "$vgte", "$veq", "$vne"]): rng.choice(VERSIONS)}),
        ("age", {"$exists": 0}),
        ("organization.plan", rng.choice(PLANS)),
        ("organization.plan", {"$ne": "free"}),
        ("email", {rng.choice(["$inGroup", "$notInGroup"]): rng.choice(["staff", "legacy", "adults", "gone"])}),
        ("country", {"$eq": rng.choice(COUNTRIES)}),
        ("email", {"$regexi": "^BOB"}),
        ("country", {"$not": {"$in": rng.sample(COUNTRIES, 2)}}),
        ("email", {rng.choice(["$gt", "$lte"]): rng.choice(["b", "carol"])}),
        ("country", {rng.choice(["$inGroup", "$notInGroup"]): "europe"}),
        ("tags", {rng.choice(["$in", "$nin"]): rng.sample(TAGS, 2)}),
        (rng.choice(["tags", "answers", "email"]), rng.choice([rng.sample(TAGS, rng.randrange(0, 3)), {"$ne": rng.sample(TAGS, 2)}, [False, True], ["b", 3]])),
        ("app-version", {rng.choice(["$vgt", "$vlte"]): rng.choice(VERSIONS[:6])}),
        ("tags", {"$size": rng.choice([0, 1, 2, {"$gt": 1}, {"$lte": 1}])}),
        ("tags", {"$all": rng.sample(TAGS, rng.randrange(0, 3))}),
        ("answers", {rng.choice(["$in", "$nin", "$all"]): rng.sample([True, False, 1.5, 2, 3, "b"], 2)}),
        ("answers", rng.choice([{"$elemMatch": {"$eq": rng.choice([True, 3, "b", 1.5])}}, {"$size": 2}])),
        (rng.choice(["answers", "tags", "age"]), {"$elemMatch": rng.choice([{rng.choice(["$gt", "$gte", "$lt", "$lte"]): rng.choice([1, 2.5, "b"])},
                                                                          {"$regex": rng.choice(["^[ab]", "c$"])}])}),
        ("tags", {rng.choice(["$ini", "$nini"]): [rng.choice(TAGS).upper(), rng.choice(TAGS + [3])]}),
        ("country", {rng.choice(["$ini", "$nini"]): [c.lower() for c in rng.sample(COUNTRIES, 2)]}),
        ("tags", {"$alli": [t.upper() if rng.random() < 0.5 else t for t in rng.sample(TAGS, rng.randrange(0, 3))]}),
        (rng.choice(["tags", "email"]), {"$elemMatch": rng.choice([{"$eq": rng.choice(TAGS)}, {"$in": rng.sample(TAGS, 2)}])}),
        (rng.choice(["tags", "email", "age", "anonymous", "organization"]), {"$type": rng.choice(["string", "number", "boolean", "array"])}),
    ])
    return {attr: test}


def gb_file(rng):
    features = {}
    for f in range(8):
        key = f"feature-{f}" if f % 2 else f"feature{f}"
        kind = rng.choice(["bool", "string", "int", "double"])
        pick = {"bool": lambda: rng.random() < 0.5, "string": lambda: rng.choice(["red", "green", "blue"]),
                "int": lambda: rng.randrange(100), "double": lambda: rng.randrange(100) / 4 + 0.5}[kind]
        rules = []
        for _ in range(rng.randrange(0, 4)):
            rule = {}
            if rng.random() < 0.7: rule["condition"] = gb_condition(rng)
            if rng.random() < 0.6:
                # (A null force is none to GrowthBook: the rule is skipped.)
                rule["force"] = pick() if rng.random() < 0.93 else None
                if rng.random() < 0.5: rule["coverage"] = round(rng.random(), rng.choice([1, 2, 4]))
                elif rng.random() < 0.3: rule["range"] = sorted([round(rng.random(), 3), round(rng.random(), 3)])
            else:
                values = {"bool": [False, True], "string": ["red", "green", "blue"], "int": [1, 2, 3], "double": [0.5, 1.5, 2.25]}[kind]
                rule["variations"] = values
                cuts = sorted(rng.randrange(0, 10001) for _ in range(len(values) - 1))
                rule["weights"] = [(b - a) / 10000 for a, b in zip([0] + cuts, cuts + [10000])]
                if rng.random() < 0.2: rule["weights"] = [1 / len(values)] * len(values)
                if rng.random() < 0.9: rule["key"] = f"exp-{f}"
                # (A passthrough variation: its users go on to the next rule.)
                if rng.random() < 0.15: rule["meta"] = [{"passthrough": rng.random() < 0.5} for _ in values]
                r = rng.random()
                if r < 0.25: rule["coverage"] = round(rng.random(), rng.choice([2, 4]))
                elif r < 0.35: rule["ranges"] = [sorted([round(rng.random(), 3), round(rng.random(), 3)]) for _ in values]
                elif r < 0.45: rule["namespace"] = [f"ns{rng.randrange(3)}", 0, round(rng.random(), 2)]
                elif r < 0.5:
                    rule["variations"] = values[:1]
                    rule["weights"] = [1]
            if rng.random() < 0.15:
                rule["filters"] = [{"seed": f"f{rng.randrange(3)}", "ranges": [sorted([round(rng.random(), 2), round(rng.random(), 2)])],
                                    **({"hashVersion": 1} if rng.random() < 0.3 else {}), **({"attribute": "email"} if rng.random() < 0.3 else {})}]
            if rng.random() < 0.5: rule["hashVersion"] = rng.choice([2, 2, 0, 3])
            if rng.random() < 0.1: rule["seed"] = ""
            if rng.random() < 0.05 and "variations" in rule: rule["ranges"] = []
            if rng.random() < 0.3: rule["seed"] = f"seed-{rng.randrange(100)}"
            if rng.random() < 0.2:
                rule["hashAttribute"] = "email"
                if rng.random() < 0.5: rule["fallbackAttribute"] = "key"
                if rng.random() < 0.2: rule["disableStickyBucketing"] = True
            earlier = list(features)
            if earlier and rng.random() < 0.2:
                p = rng.choice(earlier)
                rule["parentConditions"] = [{"id": p, "condition": {"value": {"$ne": features[p].get("defaultValue")}}}]
                if rng.random() < 0.4: rule["parentConditions"][0]["gate"] = True
                if rng.random() < 0.3:
                    test = rng.choice([True, "red", 3, {"$gt": 1}, {"$in": ["red", 3, False]}, {"$regex": "e"}, {"$vne": "1.0.0"},
                                       {"$exists": rng.random() < 0.5}, {"$ne": None}, {"$nin": [3, None]}, None])
                    rule["parentConditions"][0]["condition"] = {"value": test}
                # (A feature the payload lacks: null to GrowthBook.)
                if rng.random() < 0.1: rule["parentConditions"][0]["id"] = "gone"
            rules.append(rule)
        features[key] = {"defaultValue": pick(), "rules": rules}
        # No default value: null where no rule gives one.
        if rng.random() < 0.1: del features[key]["defaultValue"]
    return {"features": features, "savedGroups": gb_saved_groups(rng)}


def check_growthbook(rng, ctxs):
    import logging
    from growthbook import GrowthBook
    logging.disable(logging.WARNING)  # GrowthBook logs each experiment it skips
    compared = 0
    for n in range(files_per_vendor):
        doc = gb_file(rng)
        text, names, path, skipped = run_import(doc, "growthbook")
        skips[1] += len(skipped)
        ours = flags_eval(text, [dict(c, id=c["key"]) for c in ctxs])
        for c, got in zip(ctxs, ours):
            attributes = dict(c, id=c["key"])
            gb = GrowthBook(attributes=attributes, features=doc["features"], saved_groups=doc["savedGroups"])
            for key in doc["features"]:
                if key in skipped: continue
                expected = gb.eval_feature(key).value
                # (No value, as a failing gate gives: the caller's default, here None.)
                actual = answer(got, names.get(key, key), None)
                compared += 1
                if expected != actual or type(expected) != type(actual):
                    sys.exit(f"growthbook file {n} ({path}): feature {key} for {json.dumps(attributes)}: the SDK gives {expected!r}, flags eval {actual!r}\n{json.dumps(doc['features'][key])}\n{text}")
            gb.destroy()
    print(f"growthbook and flags eval agree on {compared} evaluations ({files_per_vendor} files, {len(ctxs)} contexts; {skips[1]} features with a rule named as not imported)")


# ---------------------------------------------------------------- flagd

def fd_condition(rng, depth=0):
    r = rng.random()
    if depth < 2 and r < 0.15:
        return {rng.choice(["and", "or"]): [fd_condition(rng, depth + 1) for _ in range(rng.randrange(1, 3))]}
    if depth < 2 and r < 0.22:
        return {"!": fd_condition(rng, depth + 1)}
    return rng.choice([
        {"==": [{"var": "country"}, rng.choice(COUNTRIES)]},
        {"!=": [{"var": "country"}, rng.choice(COUNTRIES)]},
        {"in": [{"var": "country"}, rng.sample(COUNTRIES, 2)]},
        {"in": ["tester", {"var": "email"}]},
        {rng.choice(["<", "<=", ">", ">="]): [{"var": "age"}, rng.randrange(10, 80)]},
        {"<": [20, {"var": "age"}, 60]},
        {"starts_with": [{"var": "email"}, rng.choice(["a", "bob", "beta"])]},
        {"ends_with": [{"var": "email"}, "@example.com"]},
        {"sem_ver": [{"var": "version"}, rng.choice(["=", "!=", "<", "<=", ">", ">="]), rng.choice(VERSIONS + ["2", "1.2"])]},
        {"==": [{"var": "organization.plan"}, rng.choice(PLANS)]},
        {rng.choice(["==", "!="]): [{"var": "age"}, 0]},
        # (The seconds now, against a time long past or far ahead.)
        {rng.choice(["<", "<=", ">", ">="]): [{"var": "$flagd.timestamp"}, rng.choice([1700000000, 1700000000.5, 4133980802])]},
        {"<": [rng.choice([-5, 20]), {"var": "age"}, 60]},
        {"in": [{"var": "country"}, [None, "FR"]]},
        {rng.choice([">", "<"]): [{"var": "email"}, rng.choice(["m", "b"])]},
        {"$ref": "staff"},
        {"$ref": "european"},
        {rng.choice(["===", "!=="]): [{"var": "country"}, rng.choice(COUNTRIES)]},
        {"sem_ver": [{"var": "version"}, rng.choice(["^", "~"]), rng.choice(VERSIONS)]},
        {"sem_ver": [{"var": "app-version"}, ">=", "2.0.0"]},
        {"!": {rng.choice(["starts_with", "ends_with"]): [{"var": rng.choice(["age", "email", "tags"])}, rng.choice(["1", "a", "@example.com"])]}},
        {"!": {"sem_ver": [{"var": rng.choice(["version", "email", "age"])}, rng.choice(["<", ">=", "^"]), rng.choice(VERSIONS)]}},
    ])


def fd_target(rng, names, depth=0):
    r = rng.random()
    if depth < 2 and r < 0.5:
        parts = []
        for _ in range(rng.randrange(1, 3)):
            parts += [fd_condition(rng), fd_target(rng, names, depth + 1)]
        if rng.random() < 0.6: parts.append(fd_target(rng, names, depth + 1))
        return {rng.choice(["if", "if", "?:"]): parts}
    if r < 0.75:
        entries = [[n, rng.randrange(0, 100)] for n in rng.sample(names, rng.randrange(1, len(names) + 1))]
        if all(w == 0 for _, w in entries): entries[0][1] = 1
        if rng.random() < 0.15: entries = [[n] for n, _ in entries]  # no weights: equal shares
        if rng.random() < 0.2:   # an entry's variant or weight chosen by an if
            e = rng.choice(entries)
            if len(e) == 2 and rng.random() < 0.5: e[1] = {"if": [fd_condition(rng), rng.randrange(0, 100), rng.randrange(0, 100)]}
            else: e[0] = {rng.choice(["if", "?:"]): [fd_condition(rng), rng.choice(names), rng.choice(names)]}
        elif rng.random() < 0.15:   # an entry's variant read from an attribute
            rng.choice(entries)[0] = {"var": rng.choice(["color", "color", "country", "missing"])}
        r2 = rng.random()
        first = [] if r2 < 0.6 else [{"var": "email"}] if r2 < 0.8 else [
            {"cat": [rng.choice(["shared-seed", {"var": "$flagd.flagKey"}, ""]), {"var": rng.choice(["email", "age", "tags", "country", "organization", "missing"])}]}]
        return {"fractional": first + entries}
    if r < 0.78:   # fractional as the condition of an if: its entries' truthiness chooses
        entries = [[rng.choice([True, False, 0, 1, "", "x", None]), rng.randrange(0, 100)] for _ in range(rng.randrange(1, 4))]
        if all(w == 0 for _, w in entries): entries[0][1] = 1
        first = [] if rng.random() < 0.6 else [{"var": "email"}]
        return {"if": [{"fractional": first + entries}, rng.choice(names), rng.choice(names)]}
    if r < 0.8 and "true" in names:
        return rng.choice([{"sem_ver": [{"var": rng.choice(["version", "email"])}, rng.choice([">=", "~"]), rng.choice(VERSIONS)]},
                           {"starts_with": [{"var": rng.choice(["email", "age"])}, rng.choice(["a", "b"])]}])
    return rng.choice(names + [None])


def fd_file(rng):
    flags_ = {}
    for f in range(8):
        key = f"flag-{f}" if f % 2 else f"flag{f}"
        variants = rng.choice([{"on": True, "off": False}, {"red": "red", "green": "green", "blue": "blue"},
                               {"true": "yes", "false": "no", "unknown": "maybe"},
                               {"small": 1, "medium": 5, "large": 10}, {"a": "first value", "b": "second value"}])
        names = list(variants)
        flag = {"state": "ENABLED" if rng.random() < 0.9 else "DISABLED", "variants": variants, "defaultVariant": rng.choice(names)}
        r = rng.random()
        if r < 0.1: flag["defaultVariant"] = rng.choice([None, ""])
        elif r < 0.15: del flag["defaultVariant"]
        if rng.random() < 0.9:
            target = fd_target(rng, names)
            flag["targeting"] = target if isinstance(target, dict) else {"if": [fd_condition(rng), target]}
        flags_[key] = flag
    # (An evaluator may read one listed after it: flagd-core fills that $ref in.)
    return {"flags": flags_, "$evaluators": {"european": {"or": [{"in": [{"var": "country"}, ["FR", "DE"]]}, {"$ref": "staff"}]},
                                            "staff": {"starts_with": [{"var": "email"}, "a"]}}}


def check_flagd(rng, ctxs):
    import logging
    logging.disable(logging.ERROR)  # flagd-core logs each fractional without a key
    from openfeature.contrib.tools.flagd.core import FlagdCore
    from openfeature.evaluation_context import EvaluationContext
    from openfeature.exception import OpenFeatureError
    compared = 0
    for n in range(files_per_vendor):
        doc = fd_file(rng)
        text, names, path, skipped = run_import(doc, "flagd")
        skips[2] += len(skipped)
        core = FlagdCore()
        core.set_flags(json.dumps(doc))
        ours = flags_eval(text, [dict(c, targetingKey=c["key"]) for c in ctxs])
        for c, got in zip(ctxs, ours):
            attributes = {k: v for k, v in c.items() if k != "key"}
            context = EvaluationContext(targeting_key=c["key"], attributes=attributes)
            for key, flag in doc["flags"].items():
                if key in skipped: continue
                value = next(iter(flag["variants"].values()))
                resolve = {bool: core.resolve_boolean_value, str: core.resolve_string_value, int: core.resolve_integer_value}[type(value)]
                try:
                    expected = resolve(key, value, context).value
                except OpenFeatureError:
                    expected = value   # (an error: the OpenFeature client gives the caller's default)
                # A flag the import does not declare answers the caller's default (`value`).
                actual = answer(got, names.get(key, key), value)
                compared += 1
                if expected != actual or type(expected) != type(actual):
                    sys.exit(f"flagd file {n} ({path}): flag {key} for {json.dumps(c)}: flagd-core gives {expected!r}, flags eval {actual!r}\n{json.dumps(flag)}\n{text}")
    print(f"openfeature-flagd-core and flags eval agree on {compared} evaluations ({files_per_vendor} files, {len(ctxs)} contexts; {skips[2]} flags named as not imported)")


# ---------------------------------------------------------------- Unleash

def un_time(rng):
    """A time in 2026 to the millisecond, in UTC or at +02:00."""
    import datetime
    t = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=rng.randrange(365 * 86400000))
    if rng.random() < 0.3: t = t.astimezone(datetime.timezone(datetime.timedelta(hours=2)))
    text = t.isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z") if rng.random() < 0.7 else text


def un_constraint(rng):
    c = rng.choice([
        {"contextName": "country", "operator": rng.choice(["IN", "NOT_IN"]), "values": rng.sample(COUNTRIES, 2)},
        {"contextName": "email", "operator": rng.choice(["STR_CONTAINS", "STR_STARTS_WITH", "STR_ENDS_WITH"]),
         "values": [rng.choice(["a", "Bob", "tester", "@Example.com", "@mail.org"])], "caseInsensitive": rng.random() < 0.5},
        {"contextName": "age", "operator": rng.choice(["NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE"]), "value": str(rng.randrange(10, 80))},
        {"contextName": "version", "operator": rng.choice(["SEMVER_EQ", "SEMVER_GT", "SEMVER_LT"]), "value": rng.choice(VERSIONS)},
        {"contextName": "currentTime", "operator": rng.choice(["DATE_AFTER", "DATE_BEFORE"]), "value": un_time(rng)},
        {"contextName": "userId", "operator": rng.choice(["IN", "NOT_IN"]), "values": ["3", "user-1", "12"]},
        {"contextName": "country", "operator": rng.choice(["IN", "NOT_IN"]), "values": ["fr", "us"], "caseInsensitive": True},
        {"contextName": "age", "operator": rng.choice(["NUM_GT", "NUM_LTE"]), "value": f"{rng.randrange(10, 80)}.5"},
        {"contextName": "version", "operator": rng.choice(["SEMVER_EQ", "SEMVER_GT", "SEMVER_LT"]), "value": rng.choice(["2.0.0-beta.1", "1.10.0-rc.2"])},
        {"contextName": "version", "operator": rng.choice(["SEMVER_GTE", "SEMVER_LTE"]), "value": rng.choice(VERSIONS[:6])},
        {"contextName": "email", "operator": "REGEX", "value": rng.choice(["^[ab]", "example\\.com$", "^(bob|carol)@"]),
         "caseInsensitive": rng.random() < 0.3},
        {"contextName": "remoteAddress", "operator": "IN_CIDR", "values": rng.choice([["10.0.0.0/8"], ["192.168.1.0/24", "bogus"], ["2001:db8::/32"]])},
        {"contextName": "app-version", "operator": "SEMVER_GT", "value": "1.2.3"},
        {"contextName": "email", "operator": "REGEX", "value": rng.choice(["(bob", "^(?=b)", "^(b)\\1"])},
    ] + ([{"contextName": "email", "operator": "NOT_A_VALID_OPERATOR", "value": "x"}] if rng.random() < 0.2 else []))
    c["inverted"] = rng.random() < 0.25
    return c


def un_file(rng):
    features = []
    segments = [{"id": 1, "name": "s1", "constraints": [un_constraint(rng)]}]
    for f in range(8):
        name = f"feature-{f}" if f % 2 else f"feature{f}"
        strategies = []
        for _ in range(rng.randrange(0, 3)):
            kind = rng.choice(["default", "flexibleRollout", "flexibleRollout", "userWithId", "gradualRolloutUserId", "gradualRolloutSessionId",
                               "remoteAddress"])
            params = {}
            if kind == "flexibleRollout":
                params = {"rollout": str(rng.randrange(0, 101)), "stickiness": rng.choice(["default", "userId", "sessionId"]), "groupId": rng.choice([name, "group-x"])}
            elif kind in ("gradualRolloutUserId", "gradualRolloutSessionId"):
                params = {"percentage": str(rng.randrange(0, 101)), "groupId": name}
            elif kind == "remoteAddress":
                params = {"IPs": rng.choice(["10.0.0.0/8", "10.1.0.0/16, 192.168.1.7", "2001:db8::/32, bogus", "192.168.0.0/16"])}
            elif kind == "userWithId":
                params = {"userIds": ", ".join(f"user-{rng.randrange(100000)}" for _ in range(2)) + ", 3"}
            strategy = {"name": kind, "parameters": params, "constraints": [un_constraint(rng) for _ in range(rng.randrange(0, 3))]}
            if rng.random() < 0.25:
                names = rng.sample(["blue", "green", "red", "variant-a"], 2)
                strategy["variants"] = [{"name": n, "weight": w, "weightType": "variable", "stickiness": rng.choice(["default", "sessionId"]),
                                         **({"payload": {"type": "string", "value": f"{n} text"}} if rng.random() < 0.5 else {})}
                                        for n, w in zip(names, [300, 700])]
            if rng.random() < 0.2: strategy["segments"] = [rng.choice([1, 1, 1, 404])]
            if rng.random() < 0.15: strategy["disabled"] = True
            strategies.append(strategy)
        feature = {"name": name, "enabled": rng.random() < 0.85, "strategies": strategies}
        if rng.random() < 0.5:
            names = rng.sample(["blue", "green", "red", "variant-a", "child.variant"], rng.randrange(2, 4))
            cuts = sorted(rng.randrange(1, 1000) for _ in range(len(names) - 1))
            weights = [b - a for a, b in zip([0] + cuts, cuts + [1000])]
            feature["variants"] = [{"name": n, "weight": w, "weightType": "variable", "stickiness": "default"} for n, w in zip(names, weights)]
            for v in feature["variants"]:
                if rng.random() < 0.5:
                    v["payload"] = rng.choice([{"type": "string", "value": f"{v['name']} text"}, {"type": "json", "value": '{"size": 2}'},
                                               {"type": "number", "value": "1.5"}])
            if rng.random() < 0.3: feature["variants"][0]["overrides"] = [{"contextName": "userId", "values": ["3", "user-1"]}]
            if rng.random() < 0.15:  # a variant of weight 0, given by no one
                feature["variants"].append({"name": "gray", "weight": 0, "weightType": "variable", "stickiness": "default",
                                            "payload": {"type": "string", "value": "gray text"}})
            if rng.random() < 0.2: feature["variants"][-1]["overrides"] = [{"contextName": "country", "values": ["JP"]}]
            if rng.random() < 0.2:
                for v in feature["variants"]: v["weightType"] = "variable"
                feature["variants"][0]["weightType"] = "fix"
        if features and rng.random() < 0.2:
            parent = rng.choice(features)
            feature["dependencies"] = [{"feature": parent["name"], "enabled": rng.random() < 0.7}]
            if parent.get("variants") and feature["dependencies"][0]["enabled"] and rng.random() < 0.5:
                feature["dependencies"][0]["variants"] = [parent["variants"][0]["name"]]
        features.append(feature)
    return {"version": 2, "features": features, "segments": segments}


def check_unleash(rng, ctxs):
    import logging
    from UnleashClient import UnleashClient
    from UnleashClient.cache import FileCache
    logging.disable(logging.ERROR)
    compared = 0
    # Unleash's fields are strings; a user id most of the time, a session id always (with
    # neither, default stickiness is random).
    ours_ctxs = []
    for i, c in enumerate(ctxs):
        o = {k: v for k, v in c.items() if k in ("country", "email", "age", "version", "app-version")}
        if i % 6: o["userId"] = c["key"]
        o["sessionId"] = f"session-{i}"
        o["now"] = un_time(rng)
        if i % 3: o["remoteAddress"] = rng.choice(["10.2.3.4", "10.1.9.9", "192.168.1.7", "172.16.0.1", "2001:db8::5"])
        ours_ctxs.append(o)
    for n in range(files_per_vendor):
        doc = un_file(rng)
        text, names, path, skipped = run_import(doc, "unleash")
        # (Unleash's notes name a feature by its place in the list.)
        skipped = {doc["features"][int(s)]["name"] if s.isdigit() else s for s in skipped}
        skips[3] += len(skipped)
        with tempfile.TemporaryDirectory() as d:
            cache = FileCache("import-check", directory=d)
            cache.bootstrap_from_dict(doc)
            client = UnleashClient(url="http://127.0.0.1:9/api", app_name="import-check", disable_metrics=True,
                                   disable_registration=True, cache=cache, refresh_interval=3600)
            client.initialize_client(fetch_toggles=False)
            ours = flags_eval(text, ours_ctxs)
            for c, got in zip(ours_ctxs, ours):
                context = {k: c[k] for k in ("userId", "sessionId", "remoteAddress") if k in c}
                context["currentTime"] = c["now"]
                context["properties"] = {k: str(v) for k, v in c.items() if k not in ("userId", "sessionId", "now", "remoteAddress")}
                for feature in doc["features"]:
                    key = feature["name"]
                    if key in skipped: continue
                    flag = names.get(key, key)
                    expected, actual = client.is_enabled(key, context), got[flag]["value"]
                    compared += 1
                    if expected != actual:
                        sys.exit(f"unleash file {n} ({path}): feature {key} for {json.dumps(context)}: the SDK gives {expected!r}, flags eval {actual!r}\n{json.dumps(feature)}\n{text}")
                    if "variants" in feature:
                        variant = client.get_variant(key, context)
                        expected, actual = variant["name"], got[flag + "Variant"]["value"]
                        compared += 1
                        if expected != actual:
                            sys.exit(f"unleash file {n} ({path}): variant of {key} for {json.dumps(context)}: the SDK gives {expected!r}, flags eval {actual!r}\n{json.dumps(feature)}\n{text}")
                        if flag + "Payload" in got:
                            expected, actual = (variant.get("payload") or {}).get("value", ""), got[flag + "Payload"]["value"]
                            compared += 1
                            if expected != actual:
                                sys.exit(f"unleash file {n} ({path}): payload of {key} for {json.dumps(context)}: the SDK gives {expected!r}, flags eval {actual!r}\n{json.dumps(feature)}\n{text}")
            client.destroy()
    print(f"UnleashClient and flags eval agree on {compared} evaluations ({files_per_vendor} files, {len(ctxs)} contexts; {skips[3]} features named as not imported)")


skips = [0, 0, 0, 0]
rng = random.Random(int(os.environ.get("IMPORT_SEED", "20261127")))
ctxs = contexts(rng)
# IMPORT_SYSTEMS=growthbook,unleash checks only those.
systems = os.environ.get("IMPORT_SYSTEMS", "launchdarkly,growthbook,flagd,unleash").split(",")
for system, check in [("launchdarkly", check_launchdarkly), ("growthbook", check_growthbook), ("flagd", check_flagd),
                      ("unleash", check_unleash)]:
    if system in systems: check(rng, ctxs)
