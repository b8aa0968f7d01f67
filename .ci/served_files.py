"""The .flags files `flags serve DIR` serves, in its order: recursively (not in hidden
directories), shallower files first, then by path. Shared by the OFREP and page checks."""

import os


def served_files(directory):
    found = []
    for root, dirs, names in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [os.path.join(root, n) for n in names if n.endswith(".flags")]
    return sorted(found, key=lambda p: (p.count("/"), p))
