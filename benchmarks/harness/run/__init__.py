"""harness.run: measuring one spec, and what that needs (chapter 01).

Role: the spec file (specfile), the runner of its rounds, rows and arms (runner), the
servers and load clients it starts (servers, clients, peers), what it reads around each
measured window (procfs, serverstats, stalls), the services a spec needs (postgres,
prometheus), and a resumed run's journal, progress and busy-machine check (journal,
progress, busy).
"""
