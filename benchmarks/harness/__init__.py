"""harness: the measuring side of the book, one package (chapter 01).

Role: the package every part of the harness is imported from (``from harness.run import
runner``); nothing here puts a folder on ``sys.path`` and nothing imports from book/. The
parts, by what they are:

- ``harness.cli``: the command line (``bench.py``, beside it, runs it);
- ``harness.run``: measuring a spec: the spec file, the runner, the servers and clients it
  starts, /proc and /stats readings, the services and the machine checks;
- ``harness.records``: the measurements that are not specs, one module per record (the
  micro-benchmarks, the probes, the loop peers, the loop profile, failover, the panel);
- ``harness.results``: what is written and how it is read back: the per-cell summary, the
  results files and plots, the verdict rule and the rounds it reads, the cells the book's
  roles read (``cells``, ``seeds``, ``headline``), and the reproduce report (``book_figures``).

The book (book/conf.py) puts benchmarks/ on its path and imports ``harness.results``; the
harness reads the book's pages and tables as data only.
"""

import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
