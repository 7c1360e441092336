#!/usr/bin/env bash
# Real clients against `heapstore serve`: a psql script (create, \copy the PostgreSQL fixtures in
# and out, compare bytes; the bad/ files must fail with PostgreSQL-shaped errors; SCRAM over TCP)
# and a short pgbench run of concurrent server-side COPYs. Needs psql and pgbench on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
FIX=$PWD/tests/fixtures/postgres
. .ci/serve-lib.sh
init_data
start_server --set max_connections=20

export PGHOST="$WORK/data" PGPORT="$PORT" PGUSER=postgres PGDATABASE=postgres
PSQL=(psql -X -q -v ON_ERROR_STOP=1)

echo "== psql: create, \\copy in and out (Unix socket, trust)"
cols=$(cat "$FIX/types.columns")
"${PSQL[@]}" <<SQL
CREATE TABLE types ($cols);
\copy types from '$FIX/types.text'
\copy types to '$WORK/out.text'
TRUNCATE types;
\copy types from '$FIX/types.csv' with (format csv, header true)
\copy types to '$WORK/out.csv' with (format csv, header true)
TRUNCATE types;
\copy types from '$FIX/types.bin' with (format binary)
\copy types to '$WORK/out.bin' with (format binary)
SELECT count(*) FROM types;
\dt
\d types
\d+ types
\di
SQL
cmp "$FIX/types.text" "$WORK/out.text"
cmp "$FIX/types.csv" "$WORK/out.csv"
cmp "$FIX/types.bin" "$WORK/out.bin"
echo "   text, csv and binary round trips are byte-identical"

echo "== psql: catalog answers (\\di, \\d footer), current_database(), isolation"
"${PSQL[@]}" -c "CREATE TABLE ix (id integer PRIMARY KEY, name text UNIQUE, v integer)" -c "CREATE INDEX ix_v ON ix (v)"
"${PSQL[@]}" -c '\di' >"$WORK/di.out"
for ix in ix_pkey ix_name_key ix_v; do grep -q "$ix .* index .* ix" "$WORK/di.out" || { echo "FAIL: \\di misses $ix" >&2; cat "$WORK/di.out" >&2; exit 1; }; done
"${PSQL[@]}" -c '\d ix' >"$WORK/d.out"
grep -q '"ix_pkey" PRIMARY KEY, btree (id)' "$WORK/d.out" || { echo "FAIL: \\d ix footer" >&2; cat "$WORK/d.out" >&2; exit 1; }
grep -q '"ix_name_key" UNIQUE CONSTRAINT, btree (name)' "$WORK/d.out" || { echo "FAIL: \\d ix footer" >&2; cat "$WORK/d.out" >&2; exit 1; }
grep -q '"ix_v" btree (v)' "$WORK/d.out" || { echo "FAIL: \\d ix footer" >&2; cat "$WORK/d.out" >&2; exit 1; }
[ "$("${PSQL[@]}" -At -c 'SELECT current_database()')" = postgres ] || { echo "FAIL: current_database()" >&2; exit 1; }
iso=$("${PSQL[@]}" -At -c 'BEGIN ISOLATION LEVEL REPEATABLE READ' -c 'SHOW transaction_isolation' -c 'COMMIT')
[ "$iso" = "repeatable read" ] || { echo "FAIL: isolation level is '$iso'" >&2; exit 1; }
"${PSQL[@]}" -c "INSERT INTO ix VALUES (1, 'a', 7), (2, 'b', 7), (3, 'c', NULL)"
got=$("${PSQL[@]}" -At -F, -c 'SELECT v, count(*) FROM ix GROUP BY v ORDER BY v NULLS FIRST')
[ "$got" = "$(printf ',1\n7,2')" ] || { echo "FAIL: GROUP BY gave '$got'" >&2; exit 1; }
if "${PSQL[@]}" -c 'SELECT * FROM ix TABLESAMPLE SYSTEM (10)' 2>"$WORK/err3"; then echo "FAIL: TABLESAMPLE ran" >&2; exit 1; fi
grep -q 'TABLESAMPLE is not supported' "$WORK/err3"
echo "   \\di and \\d list the indexes; GROUP BY answers as PostgreSQL; TABLESAMPLE refused, not ignored"

echo "== psql: ON_ERROR_ROLLBACK (a savepoint around each statement)"
printf '%s\n' 'BEGIN;' "INSERT INTO ix VALUES (10, 'j', 1);" "INSERT INTO ix VALUES (10, 'dup', 1);" "INSERT INTO ix VALUES (11, 'k', 1);" 'COMMIT;' \
    | psql -X -q -v ON_ERROR_ROLLBACK=on 2>"$WORK/err4" >/dev/null
grep -q 'duplicate key value violates unique constraint "ix_pkey"' "$WORK/err4" || { echo "FAIL: no 23505 under ON_ERROR_ROLLBACK" >&2; exit 1; }
got=$("${PSQL[@]}" -At -c 'SELECT id FROM ix WHERE id >= 10 ORDER BY id' | tr '\n' ' ')
[ "$got" = "10 11 " ] || { echo "FAIL: ON_ERROR_ROLLBACK left '$got'" >&2; exit 1; }
echo "   the failed statement alone was rolled back; the rest committed"

echo "== psql: bad files give PostgreSQL's errors"
for f in "$FIX"/bad/*.text "$FIX"/bad/*.csv "$FIX"/bad/*.bin; do
    name=$(basename "$f")
    case "$name" in
        *.csv) opt="with (format csv, header true)" ;;
        *.bin) opt="with (format binary)" ;;
        *) opt="" ;;
    esac
    if out=$(psql -X -q -v ON_ERROR_STOP=1 -c "\\copy types from '$f' $opt" 2>&1); then
        echo "FAIL: $name was accepted" >&2
        exit 1
    fi
    expected=$(awk -v n="== $name" '$0==n {getline; print; exit}' "$FIX/bad/EXPECTED_POSTGRES_ERRORS.txt")
    got=$(printf '%s\n' "$out" | grep -m1 '^ERROR:' || true)
    echo "   $name: $got"
    [ "$got" = "$expected" ] || { echo "FAIL: $name: got '$got', PostgreSQL says '$expected'" >&2; exit 1; }
done
[ "$("${PSQL[@]}" -At -c 'SELECT count(*) FROM types')" = 5000 ] || { echo "FAIL: a failed COPY left rows" >&2; exit 1; }

echo "== psql: SCRAM over TCP"
PGPASSWORD=sekret psql -X -h 127.0.0.1 -U alice -At -c 'SELECT 1' >/dev/null
if PGPASSWORD=wrong psql -X -h 127.0.0.1 -U alice -At -c 'SELECT 1' 2>"$WORK/err"; then echo "FAIL: wrong password accepted" >&2; exit 1; fi
grep -q 'password authentication failed for user "alice"' "$WORK/err"
if PGPASSWORD=x psql -X -h 127.0.0.1 -U nobody -At -c 'SELECT 1' 2>"$WORK/err2"; then echo "FAIL: unknown user accepted" >&2; exit 1; fi
grep -q 'password authentication failed for user "nobody"' "$WORK/err2"
echo "   right password accepted; wrong password and unknown user refused alike"

echo "== pgbench: 8 clients x 20 server-side COPYs"
"${PSQL[@]}" -c "CREATE TABLE t ($cols)"
echo "COPY t FROM '$FIX/types.text';" >"$WORK/copy.sql"
pgbench -n -c 8 -j 2 -t 20 -f "$WORK/copy.sql" >"$WORK/pgbench.out"
grep -E 'number of transactions actually processed|tps' "$WORK/pgbench.out" | sed 's/^/   /'
n=$("${PSQL[@]}" -At -c 'SELECT count(*) FROM t')
[ "$n" = $((8 * 20 * 5000)) ] || { echo "FAIL: t has $n rows, expected $((8 * 20 * 5000))" >&2; exit 1; }
echo "   t holds $n rows"

echo "== psql: \\copy ... with (parallel 2) from stdin, csv, 300,000 rows"
"${PSQL[@]}" -c "CREATE TABLE par (id integer PRIMARY KEY, v text)"
seq 1 300000 | awk '{print $1 ",\"line " $1 "\nsecond, line\""}' | "${PSQL[@]}" -c "\copy par from stdin with (format csv, parallel 2)"
got=$("${PSQL[@]}" -At -c "SELECT count(*), sum(id) FROM par")
[ "$got" = "300000|45000150000" ] || { echo "FAIL: parallel copy loaded $got" >&2; exit 1; }
printf '1,again\n' | "${PSQL[@]}" -c "\copy par from stdin with (format csv, parallel 2)" 2>"$WORK/dup.err" && { echo "FAIL: duplicate accepted" >&2; exit 1; }
grep -q 'Key (id)=(1) already exists' "$WORK/dup.err" || { cat "$WORK/dup.err" >&2; exit 1; }
echo "   rows, sum and the duplicate-key error as a serial COPY"

echo "== pgbench -M prepared: random-key lookups through an index"
"${PSQL[@]}" -c "CREATE TABLE kv (k integer NOT NULL, v text)"
seq 1 10000 | awk '{print $1 "\tvalue " $1}' | "${PSQL[@]}" -c "\copy kv from stdin"
"${PSQL[@]}" -c "CREATE INDEX kv_k ON kv (k)"
printf '\\set k random(1, 10000)\nSELECT v FROM kv WHERE k = :k;\n' >"$WORK/lookup.sql"
pgbench -n -M prepared -c 4 -T 3 -f "$WORK/lookup.sql" >"$WORK/lookup.out"
grep -E 'number of failed|tps' "$WORK/lookup.out" | sed 's/^/   /'
grep -q 'number of failed transactions: 0 ' "$WORK/lookup.out" || { echo "FAIL: lookups failed" >&2; exit 1; }

# Without, then with pgbench's foreign keys (--foreign-keys: history references accounts,
# tellers and branches; tellers and accounts reference branches: 5 in all).
for keys in "" "--foreign-keys"; do
    echo "== pgbench -i -s 4 $keys, then its built-in TPC-B script (simple and prepared)"
    pgbench -i -s 4 -q $keys >"$WORK/init.out" 2>&1 || { cat "$WORK/init.out" >&2; exit 1; }
    for mode in simple prepared; do
        pgbench -n -M $mode -c 4 -j 2 -T 3 >"$WORK/tpcb.out" 2>&1 || { cat "$WORK/tpcb.out" >&2; exit 1; }
        grep -E 'processed|failed|tps' "$WORK/tpcb.out" | sed "s/^/   $mode: /"
        grep -q 'number of failed transactions: 0 ' "$WORK/tpcb.out" || { echo "FAIL: TPC-B transactions failed" >&2; exit 1; }
    done
    # The balances agree (sums through COPY TO, independent of the executor).
    sums=""
    for q in "pgbench_accounts (abalance)" "pgbench_tellers (tbalance)" "pgbench_branches (bbalance)" "pgbench_history (delta)"; do
        sums="$sums $("${PSQL[@]}" -At -c "COPY $q TO STDOUT" | awk '{s += $1} END {print s + 0}')"
    done
    echo "   sums of abalance, tbalance, bbalance, delta:$sums"
    [ "$(echo $sums | tr ' ' '\n' | sort -u | wc -l)" = 1 ] || { echo "FAIL: balances disagree:$sums" >&2; exit 1; }
done
if [ "$("${PSQL[@]}" -At -c "SELECT count(*) FROM pg_constraint WHERE contype = 'f'")" != 5 ]; then
    echo "FAIL: pgbench --foreign-keys did not make its 5 foreign keys" >&2
    exit 1
fi

kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
SERVER_PID=
grep -q 'database system is shut down' "$WORK/server.log"
echo "clients passed"
