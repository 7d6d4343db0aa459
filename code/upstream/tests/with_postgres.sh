#!/bin/sh
# upstream/tests/with_postgres.sh: run a test binary inside a throwaway PostgreSQL cluster
# (chapter 04).
# Role: CTest's wrapper for the tests that need a real server. pg_virtualenv (Debian's
# postgresql-common) creates a cluster in a temporary directory (-t, also as root), exports
# PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE (password login, SCRAM, over TCP), runs
# the command and drops the cluster. The port is a free one the kernel picks, so that runs
# on one machine do not collide on 5432. Without pg_virtualenv the test is skipped (exit 77,
# CTest's SKIP_RETURN_CODE), or fails where HANDOFF_REQUIRE_POSTGRES is set (CI).
set -eu
if ! command -v pg_virtualenv >/dev/null 2>&1; then
  if [ -n "${HANDOFF_REQUIRE_POSTGRES:-}" ]; then
    echo "with_postgres: pg_virtualenv not found, and HANDOFF_REQUIRE_POSTGRES is set" >&2
    exit 1
  fi
  echo "with_postgres: SKIPPED: pg_virtualenv not found (Debian package postgresql)" >&2
  exit 77
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
exec pg_virtualenv -t -c "--port=$port" "$@"
