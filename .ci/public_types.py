"""Counts the public types of a module's symbol graph (nested ones included) and fails above
a limit: the embedding library holds what an app uses, and no more.

    python3 .ci/public_types.py GRAPH.symbols.json LIMIT
"""
import json
import sys

graph, limit = sys.argv[1], int(sys.argv[2])
kinds = {"swift.struct", "swift.enum", "swift.class", "swift.protocol", "swift.typealias", "swift.actor"}
symbols = json.load(open(graph))["symbols"]
names = sorted(".".join(s["pathComponents"]) for s in symbols if s["kind"]["identifier"] in kinds and s.get("accessLevel") == "public")
print(f"{len(names)} public types (at most {limit}): {', '.join(names)}")
if len(names) > limit:
    sys.exit(f"{graph}: {len(names)} public types, more than {limit}")
