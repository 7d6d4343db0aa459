#!/usr/bin/python3
"""harness/bench: the command `python3 benchmarks/harness/bench.py SUBCOMMAND ...` (chapter 01).

Role: the harness's one entry point. Run as a file, Python sees this folder as a script's
folder, not as the package ``harness`` it is; so the package is loaded here from this
folder by its location (importlib, as ``python3 -m`` would find it with benchmarks/ as the
working directory) and its command line, ``harness.cli``, is run. Every module of the
package imports the others as ``harness.*``; nothing puts a folder on ``sys.path``.
The subcommands are listed in harness/cli.py.
"""

import importlib
import importlib.util
import os
import sys


def load_package() -> None:
    """Import the package ``harness`` from this file's folder, once."""
    if "harness" in sys.modules:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("harness", os.path.join(here, "__init__.py"),
                                                  submodule_search_locations=[here])
    package = importlib.util.module_from_spec(spec)
    sys.modules["harness"] = package
    spec.loader.exec_module(package)


if __name__ == "__main__":
    load_package()
    sys.exit(importlib.import_module("harness.cli").main(sys.argv))
