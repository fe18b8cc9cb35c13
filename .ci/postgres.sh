#!/usr/bin/env bash
# Installs PostgreSQL from Debian's packages (if missing), starts it, and
# creates a `platform` database; prints the URL to use as E2E_DATABASE_URL.
set -euo pipefail
if ! command -v pg_ctlcluster >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends postgresql >&2
fi
version=$(ls /etc/postgresql | sort -n | tail -1)
if ! pg_lsclusters -h | grep -q "^$version main"; then
  pg_createcluster "$version" main >&2
fi
pg_ctlcluster "$version" main start >&2 || true
for _ in $(seq 50); do
  pg_isready -q && break
  sleep 0.2
done
su postgres -c "psql -q -c \"DO \\\$\\\$ BEGIN CREATE ROLE platform LOGIN PASSWORD 'platform'; EXCEPTION WHEN duplicate_object THEN NULL; END \\\$\\\$;\"" >&2
# Tests that need an empty database create (and drop) one of their own.
su postgres -c "psql -q -c 'ALTER ROLE platform CREATEDB'" >&2
su postgres -c "psql -q -tc \"SELECT 1 FROM pg_database WHERE datname = 'platform'\" | grep -q 1 || createdb -O platform platform" >&2
echo "postgres://platform:platform@127.0.0.1:5432/platform"
