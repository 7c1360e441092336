#!/usr/bin/env bash
# Real drivers against `heapstore serve`, installed from the package registries here (nothing
# installed by hand): psycopg 3, psycopg2, asyncpg and SQLAlchemy 2 (PyPI), node-postgres (npm),
# pgx v5 (the Go module proxy) and pgjdbc (Maven Central). Each runs over the Unix socket and
# over TCP with SCRAM and TLS. A driver that cannot be installed fails this script loudly; it
# never passes silently.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/serve-lib.sh
loud() {
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
    echo "!! DRIVERS: $*" >&2
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
    exit 1
}

echo "== installing drivers from the registries"
python3 -m venv "$WORK/venv" || loud "cannot create a Python virtual environment"
"$WORK/venv/bin/pip" install -q "psycopg[binary]>=3.1" "psycopg2-binary>=2.9" asyncpg "sqlalchemy[asyncio]>=2" \
    || loud "pip could not install psycopg / psycopg2 / asyncpg / SQLAlchemy"
mkdir -p "$WORK/node"
(cd "$WORK/node" && npm install --silent --no-audit --no-fund pg >/dev/null) || loud "npm could not install pg (node-postgres)"
command -v go >/dev/null 2>&1 || loud "go is not installed (needed for pgx)"
(cd tests/drivers/pgx && go build -o "$WORK/pgx-suite" .) || loud "go could not fetch pgx v5 and build its suite"
command -v mvn >/dev/null 2>&1 || loud "maven is not installed (needed for pgjdbc)"
mvn -B -q -f tests/drivers/jdbc/pom.xml -Djdbc.suite.build="$WORK/jdbc" compile || loud "maven could not fetch pgjdbc and build its suite"
echo "   asyncpg $("$WORK/venv/bin/python" -c 'import asyncpg; print(asyncpg.__version__)'), SQLAlchemy $("$WORK/venv/bin/python" -c 'import sqlalchemy; print(sqlalchemy.__version__)'), pgx $(sed -n 's/^require github.com\/jackc\/pgx\/v5 v//p' tests/drivers/pgx/go.mod), pgjdbc $(grep -A1 "<artifactId>postgresql</artifactId>" tests/drivers/jdbc/pom.xml | sed -n "s:.*<version>\(.*\)</version>.*:\1:p")"
echo "   psycopg $("$WORK/venv/bin/python" -c 'import psycopg; print(psycopg.__version__)'), psycopg2 $("$WORK/venv/bin/python" -c 'import psycopg2; print(psycopg2.__version__.split()[0])'), node-postgres $(node -p "require('$WORK/node/node_modules/pg/package.json').version")"

init_data
# TLS (ssl = on) with a self-signed certificate: TCP clients below use sslmode=require.
openssl req -new -x509 -days 2 -nodes -subj "/CN=localhost" -keyout "$WORK/data/server.key" -out "$WORK/data/server.crt" >/dev/null 2>&1 \
    || loud "openssl could not make a test certificate"
start_server --set ssl=on

echo "== psycopg 3, psycopg2 (Unix socket)"
HEAPSTORE_DSN="host=$WORK/data port=$PORT user=postgres dbname=postgres" "$WORK/venv/bin/python" tests/drivers/psycopg_suite.py
echo "== psql over TLS (sslmode=require)"
PGPASSWORD=sekret psql -X "host=127.0.0.1 port=$PORT user=alice dbname=postgres sslmode=require" -c '\conninfo' | grep -q 'SSL connection' \
    || { echo "FAIL: psql did not connect over TLS" >&2; exit 1; }
echo "   psql: SSL connection"
echo "== psycopg 3, psycopg2 (TCP, SCRAM, TLS)"
HEAPSTORE_DSN="host=127.0.0.1 port=$PORT user=alice password=sekret dbname=postgres sslmode=require" "$WORK/venv/bin/python" tests/drivers/psycopg_suite.py
echo "== node-postgres (Unix socket, then TCP with SCRAM and TLS)"
PGHOST="$WORK/data" PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres NODE_PATH="$WORK/node/node_modules" node tests/drivers/node_pg_suite.js
PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=alice PGPASSWORD=sekret PGDATABASE=postgres PGSSLMODE=no-verify NODE_PATH="$WORK/node/node_modules" node tests/drivers/node_pg_suite.js
unix() { env PGHOST="$WORK/data" PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres "$@"; }
tcp() { env PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=alice PGPASSWORD=sekret PGDATABASE=postgres PGSSLMODE=require "$@"; }
for via in unix tcp; do
    echo "== asyncpg, SQLAlchemy (psycopg and asyncpg dialects), pgx, pgjdbc ($via)"
    $via "$WORK/venv/bin/python" tests/drivers/asyncpg_suite.py
    $via "$WORK/venv/bin/python" tests/drivers/sqlalchemy_suite.py
    $via "$WORK/pgx-suite"
    $via mvn -B -q -f tests/drivers/jdbc/pom.xml -Djdbc.suite.build="$WORK/jdbc" exec:java
done
echo "drivers passed"
