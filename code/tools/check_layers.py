#!/usr/bin/env python3
"""code/tools/check_layers: the library's include arrows run down the layers (chapter 02).

Role: keep code/ layered, lowest first:

    config  net  http  stats  sync  stack  reactor  pool  evloop  upstream  app  server

A file in one area may include its own area and any area listed before it, never one after
it: pool/ and app/ must not include server/, so a type both need lives below both. Tests
(<area>/tests/), fuzz/ (the fuzz targets) and testkit/ (the helpers tests use) are outside
the layering.

    check_layers.py CODE_DIR          exit 1 and name each upward include
    check_layers.py --self-test       show that an upward include is caught
"""
import os
import re
import sys
import tempfile

LAYERS = ["config", "net", "http", "stats", "sync", "stack", "reactor", "pool", "evloop", "upstream", "app", "server"]
OUTSIDE = {"tests"}  # directories inside an area whose files the layering does not bind
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def upward_includes(code_dir):
    found = []
    for area in LAYERS:
        rank = LAYERS.index(area)
        for root, dirs, files in os.walk(os.path.join(code_dir, area)):
            dirs[:] = [d for d in dirs if d not in OUTSIDE]
            for name in files:
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in LAYERS and LAYERS.index(m.group(1)) > rank:
                            found.append(f"{os.path.relpath(path, code_dir)}:{number}: {area}/ includes "
                                         f"{m.group(1)}/, a layer above it")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "pool", "tests"))
        os.makedirs(os.path.join(tmp, "server"))
        with open(os.path.join(tmp, "pool", "job.h"), "w") as f:
            f.write('#include "http/request.h"\n#include "server/handler.h"\n')
        with open(os.path.join(tmp, "pool", "tests", "rig.h"), "w") as f:
            f.write('#include "server/worker.h"\n')  # tests are outside the layering
        with open(os.path.join(tmp, "server", "worker.h"), "w") as f:
            f.write('#include "pool/job.h"\n')
        found = upward_includes(tmp)
        expected = ["pool/job.h:2: pool/ includes server/, a layer above it"]
        if found != expected:
            print(f"self-test: expected {expected}, got {found}")
            return 1
    print("self-test: an upward include is caught; downward ones and tests are not")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    found = upward_includes(argv[1])
    for line in found:
        print(line)
    if found:
        return 1
    print(f"layers: every include in {argv[1]} runs down ({' < '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
