"""asyncpg against `heapstore serve` (or PostgreSQL, to check the suite itself).

Connection from the libpq environment variables asyncpg reads itself: PGHOST (a directory for the
Unix socket, or an address), PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE. Prints one line
per scenario and exits non-zero on the first failure (HEAPSTORE_KEEP_GOING=1: run them all, then
exit non-zero if any failed).
"""
import asyncio
import datetime
import decimal
import io
import os
import sys
import traceback
import uuid

import asyncpg

KEEP_GOING = os.environ.get("HEAPSTORE_KEEP_GOING") == "1"
D = decimal.Decimal


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


async def connect():
    return await asyncpg.connect()


TYPES_DDL = """CREATE TABLE ap_types (id int4 PRIMARY KEY, b bool, i2 int2, i4 int4, i8 int8, f4 float4,
    f8 float8, n numeric, t text, vc varchar(10), c char(5), by bytea, d date, ts timestamp)"""
ROWS = [
    (1, True, -32768, -2147483648, -9223372036854775808, -1.5, -1.7976931348623157e308,
     D("-12345678901234567890.123456789012345678901234567890"), "", "ñ☃😀日本", "ab", b"\x00\\x41\\\\\x00\xff",
     datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 23, 59, 59, 123456)),
    (2, False, 32767, 2147483647, 9223372036854775807, 3.25, 0.1,
     D("0.000000000000000000001"), "tab\there 'q' \"dq\" back\\slash\nnewline", "0123456789", "abcde", b"",
     datetime.date(1999, 12, 31), datetime.datetime(1970, 1, 1, 0, 0, 0)),
    (3, None, None, None, None, None, None, None, None, None, None, None, None, None),
    (4, True, 0, 0, 0, 0.0, 1e-300, D("100000000000000000000000000000"), "x" * 5000, "a", "", b"\\",
     datetime.date(1, 1, 1), datetime.datetime(2000, 1, 1, 12, 0, 0, 1)),
]


def expected(row):
    # char(n) pads with blanks up to n.
    r = list(row)
    if r[10] is not None:
        r[10] = r[10].ljust(5)
    return tuple(r)


async def s_types(c):
    await c.execute("DROP TABLE IF EXISTS ap_types")
    await c.execute(TYPES_DDL)
    ins = "INSERT INTO ap_types VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
    for row in ROWS:
        await c.execute(ins, *row)
    got = [tuple(r) for r in await c.fetch("SELECT * FROM ap_types ORDER BY id")]
    for g, want in zip(got, map(expected, ROWS)):
        check(g == want, f"row {want[0]}: got {g!r}, want {want!r}")
    check(len(got) == len(ROWS), f"{len(got)} rows back")
    # Parameters in WHERE, compared on the server.
    for col, i in (("i8", 4), ("n", 7), ("by", 11), ("t", 8), ("d", 12), ("ts", 13), ("c", 10), ("f8", 6)):
        n = await c.fetchval(f"SELECT count(*) FROM ap_types WHERE {col} = $1", ROWS[0][i])
        check(n == 1, f"WHERE {col} = $1 ({ROWS[0][i]!r}) matched {n} rows")
    check(await c.fetchval("SELECT count(*) FROM ap_types WHERE b IS NULL") == 1, "IS NULL")
    # Infinity: asyncpg maps date.max / datetime.max to 'infinity'.
    await c.execute(ins, 5, None, None, None, None, None, None, None, None, None, None, None,
                    datetime.date.max, datetime.datetime.max)
    row = await c.fetchrow("SELECT d, ts, d::text AS dt, ts::text AS tst FROM ap_types WHERE id = 5")
    check(row["d"] == datetime.date.max and row["ts"] == datetime.datetime.max, f"infinity round trip {row!r}")
    check(row["dt"] == "infinity" and row["tst"] == "infinity", f"infinity stored as {row['dt']!r} / {row['tst']!r}")
    # Literals and typed parameters in a SELECT list.
    row = await c.fetchrow("SELECT $1::int8 AS a, $2::numeric AS b, $3::text AS c, $4::bytea AS d, $5::bool AS e",
                           -1, D("3.14159265358979323846264338327950288"), "ü", b"\x00", None)
    check(tuple(row) == (-1, D("3.14159265358979323846264338327950288"), "ü", b"\x00", None), f"typed params {row!r}")


async def s_prepared(c):
    await c.execute("DROP TABLE IF EXISTS ap_prep")
    await c.execute("CREATE TABLE ap_prep (id int8 PRIMARY KEY, t text)")
    ins = await c.prepare("INSERT INTO ap_prep VALUES ($1, $2)")
    for i in range(200):
        await ins.fetch(i, f"v{i}")
    sel = await c.prepare("SELECT t FROM ap_prep WHERE id = $1")
    for i in range(0, 200, 7):
        check(await sel.fetchval(i) == f"v{i}", f"prepared select {i}")
    # The implicit statement cache: the same text many times.
    for i in range(50):
        check(await c.fetchval("SELECT count(*) FROM ap_prep WHERE id < $1", i) == i, f"cached statement {i}")
    check(sel.get_parameters()[0].name == "int8", f"parameter type {sel.get_parameters()!r}")
    check([a.name for a in sel.get_attributes()] == ["t"], "attributes")


async def s_transactions(c):
    await c.execute("DROP TABLE IF EXISTS ap_tx")
    await c.execute("CREATE TABLE ap_tx (id int4 PRIMARY KEY)")
    async with c.transaction():
        await c.execute("INSERT INTO ap_tx VALUES (1)")
    try:
        async with c.transaction():
            await c.execute("INSERT INTO ap_tx VALUES (2)")
            raise KeyError("roll back")
    except KeyError:
        pass
    check([r[0] for r in await c.fetch("SELECT id FROM ap_tx")] == [1], "commit / rollback")
    tr = c.transaction()
    await tr.start()
    try:
        await c.execute("INSERT INTO ap_tx VALUES (1)")
        check(False, "duplicate accepted")
    except asyncpg.UniqueViolationError:
        pass
    try:
        await c.execute("SELECT 1")
        check(False, "statement accepted in a failed transaction")
    except asyncpg.InFailedSQLTransactionError:
        pass
    await tr.rollback()
    check(await c.fetchval("SELECT count(*) FROM ap_tx") == 1, "usable after a failed transaction")


async def s_isolation(c):
    # BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY, then SHOW through the extended protocol.
    async with c.transaction(isolation="repeatable_read", readonly=True):
        try:
            await c.execute("INSERT INTO ap_tx VALUES (9)")
            check(False, "write in a read-only transaction")
        except asyncpg.ReadOnlySQLTransactionError:
            pass
    async with c.transaction(isolation="repeatable_read"):
        check(await c.fetchval("SHOW transaction_isolation") == "repeatable read", "isolation")
    check(not c.is_in_transaction(), "still in a transaction")


async def s_batch(c):
    # executemany is atomic (asyncpg >= 0.22): one pipeline, one Sync, so in autocommit a duplicate
    # at entry 4 leaves none of the batch.
    await c.execute("DROP TABLE IF EXISTS ap_batch")
    await c.execute("CREATE TABLE ap_batch (id int4 PRIMARY KEY, t text)")
    await c.execute("INSERT INTO ap_batch VALUES (100, 'pre')")
    await c.executemany("INSERT INTO ap_batch VALUES ($1, $2)", [(i, str(i)) for i in range(10)])
    check(await c.fetchval("SELECT count(*) FROM ap_batch") == 11, "executemany inserted")
    try:
        await c.executemany("INSERT INTO ap_batch VALUES ($1, $2)", [(20, "a"), (21, "b"), (22, "c"), (100, "dup"), (23, "e")])
        check(False, "duplicate in a batch not reported")
    except asyncpg.UniqueViolationError as e:
        check(e.constraint_name == "ap_batch_pkey", f"constraint {e.constraint_name!r}")
    n = await c.fetchval("SELECT count(*) FROM ap_batch WHERE id >= 20 AND id < 30")
    check(n == 0, f"batch with a duplicate left {n} rows (want 0: all-or-nothing)")


async def s_copy_in(c):
    await c.execute("DROP TABLE IF EXISTS ap_copy")
    await c.execute(TYPES_DDL.replace("ap_types", "ap_copy"))
    # Binary COPY FROM STDIN, record by record.
    recs = [(i,) + ROWS[i % 3][1:] for i in range(1000)]
    res = await c.copy_records_to_table("ap_copy", records=recs)
    check(res == "COPY 1000", f"copy_records_to_table: {res!r}")
    got = [tuple(r) for r in await c.fetch("SELECT * FROM ap_copy ORDER BY id")]
    check(got == [expected(r) for r in recs], "binary COPY FROM round trip")
    await c.execute("DROP TABLE IF EXISTS ap_copy2")
    await c.execute("CREATE TABLE ap_copy2 (id int4 PRIMARY KEY, t text, by bytea)")
    res = await c.copy_records_to_table("ap_copy2", records=[(i, f"row\t{i}\\", bytes([i % 256, 0])) for i in range(500)],
                                        columns=["id", "t", "by"])
    check(res == "COPY 500", f"copy_records_to_table with columns: {res!r}")
    # Text COPY FROM STDIN from a file-like source.
    src = io.BytesIO(b"1000\tfrom file\t\\\\x41\n1001\t\\N\t\\N\n")
    res = await c.copy_to_table("ap_copy2", source=src, columns=["id", "t", "by"])
    row = await c.fetchrow("SELECT t, by FROM ap_copy2 WHERE id = 1000")
    check(res == "COPY 2" and tuple(row) == ("from file", b"A"), f"copy_to_table {res!r} {row!r}")


async def s_copy_out(c):
    # COPY ... TO STDOUT (text), from a table and from a query without and with arguments.
    buf = io.BytesIO()
    res = await c.copy_from_table("ap_copy2", output=buf, columns=["id", "t"])
    lines = buf.getvalue().decode().splitlines()
    check(res == "COPY 502" and len(lines) == 502, f"copy_from_table {res!r}, {len(lines)} lines")
    check("7\trow\\t7\\\\" in lines, f"COPY text escaping: {lines[:3]!r}")
    buf = io.BytesIO()
    res = await c.copy_from_query("SELECT id, by FROM ap_copy2 WHERE id < 3 ORDER BY id", output=buf)
    check(buf.getvalue() == b"0\t\\\\x0000\n1\t\\\\x0100\n2\t\\\\x0200\n", f"copy_from_query {res!r} {buf.getvalue()!r}")


async def s_copy_out_args(c):
    # With arguments asyncpg inlines them as literals: SELECT quote_literal($1::"pg_catalog"."int4"::text).
    buf = io.BytesIO()
    res = await c.copy_from_query("SELECT id FROM ap_copy2 WHERE id < $1 ORDER BY id", 3, output=buf)
    check(buf.getvalue() == b"0\n1\n2\n", f"copy_from_query with an argument {res!r} {buf.getvalue()!r}")


async def s_unique(c):
    await c.execute("DROP TABLE IF EXISTS ap_uniq")
    await c.execute("CREATE TABLE ap_uniq (id int4 PRIMARY KEY, t text)")
    await c.execute("INSERT INTO ap_uniq VALUES (4, 'a')")
    try:
        await c.execute("INSERT INTO ap_uniq VALUES ($1, $2)", 4, "b")
        check(False, "duplicate accepted")
    except asyncpg.UniqueViolationError as e:
        check(e.sqlstate == "23505", f"sqlstate {e.sqlstate}")
        check(e.constraint_name == "ap_uniq_pkey", f"constraint_name {e.constraint_name!r}")
        check(e.table_name == "ap_uniq", f"table_name {e.table_name!r}")
        check(e.detail == "Key (id)=(4) already exists.", f"detail {e.detail!r}")
    check(await c.fetchval("SELECT t FROM ap_uniq WHERE id = 4") == "a", "usable after 23505")


async def s_queries(c):
    await c.execute("DROP TABLE IF EXISTS ap_emp")
    await c.execute("DROP TABLE IF EXISTS ap_dept")
    await c.execute("CREATE TABLE ap_dept (id int4 PRIMARY KEY, name text)")
    await c.execute("CREATE TABLE ap_emp (id int4 PRIMARY KEY, dept int4, salary numeric, name varchar(20))")
    await c.executemany("INSERT INTO ap_dept VALUES ($1, $2)", [(1, "eng"), (2, "ops"), (3, "empty")])
    await c.executemany("INSERT INTO ap_emp VALUES ($1, $2, $3, $4)",
                        [(i, 1 + i % 2, D(1000 + i), f"e{i}") for i in range(1, 11)])
    got = await c.fetch("SELECT dept, count(*) AS n, sum(salary) AS s FROM ap_emp GROUP BY dept ORDER BY dept")
    check([tuple(r) for r in got] == [(1, 5, D(5030)), (2, 5, D(5025))], f"GROUP BY {got!r}")
    got = await c.fetch("SELECT d.name, e.name FROM ap_emp e JOIN ap_dept d ON d.id = e.dept "
                        "WHERE e.id <= $1 ORDER BY e.id", 3)
    check([tuple(r) for r in got] == [("ops", "e1"), ("eng", "e2"), ("ops", "e3")], f"JOIN {got!r}")
    got = await c.fetch("SELECT id FROM ap_emp ORDER BY salary DESC LIMIT 3")
    check([r[0] for r in got] == [10, 9, 8], f"ORDER BY / LIMIT {got!r}")
    got = await c.fetch("SELECT d.name, count(e.id) FROM ap_dept d LEFT JOIN ap_emp e ON e.dept = d.id "
                        "GROUP BY d.name ORDER BY d.name")
    check([tuple(r) for r in got] == [("empty", 0), ("eng", 5), ("ops", 5)], f"LEFT JOIN / GROUP BY {got!r}")


async def s_cursor(c):
    # A portal fetched a few rows at a time (Execute with a row limit, PortalSuspended).
    await c.execute("DROP TABLE IF EXISTS ap_cur")
    await c.execute("CREATE TABLE ap_cur (id int4 PRIMARY KEY)")
    await c.executemany("INSERT INTO ap_cur VALUES ($1)", [(i,) for i in range(100)])
    async with c.transaction():
        ids = [r[0] async for r in c.cursor("SELECT id FROM ap_cur ORDER BY id", prefetch=7)]
        check(ids == list(range(100)), f"cursor iteration gave {len(ids)} rows")


async def s_cursor_move(c):
    # Cursor.forward() sends MOVE FORWARD n <portal> as a simple query.
    async with c.transaction():
        cur = await c.cursor("SELECT id FROM ap_cur WHERE id >= $1 ORDER BY id", 50)
        first = await cur.fetch(5)
        await cur.forward(10)
        row = await cur.fetchrow()
        check([r[0] for r in first] == [50, 51, 52, 53, 54] and row[0] == 65, f"cursor fetch/forward {first!r} {row!r}")


async def s_pool(c):
    # A pool resets each connection on release (RESET ALL, UNLISTEN *, CLOSE ALL, advisory unlock:
    # what it sends depends on the server's reported version).
    pool = await asyncpg.create_pool(min_size=1, max_size=2)
    try:
        for i in range(5):
            async with pool.acquire() as pc:
                check(await pc.fetchval("SELECT $1::int4 + 1", i) == i + 1, "pool query")
    finally:
        await pool.close()
    # Type introspection (pg_type queries) only runs for types outside asyncpg's builtin table
    # (enums, domains, composites, extensions): nothing in heapstore's types triggers it.


async def s_savepoints(c):
    await c.execute("DROP TABLE IF EXISTS ap_sp")
    await c.execute("CREATE TABLE ap_sp (id int4 PRIMARY KEY)")
    async with c.transaction():
        await c.execute("INSERT INTO ap_sp VALUES (1)")
        try:
            async with c.transaction():  # SAVEPOINT
                await c.execute("INSERT INTO ap_sp VALUES (2)")
                await c.execute("INSERT INTO ap_sp VALUES (1)")
        except asyncpg.UniqueViolationError:
            pass  # ROLLBACK TO SAVEPOINT
        async with c.transaction():
            await c.execute("INSERT INTO ap_sp VALUES (3)")  # RELEASE SAVEPOINT
    got = [r[0] for r in await c.fetch("SELECT id FROM ap_sp ORDER BY id")]
    check(got == [1, 3], f"savepoints left {got!r}")


async def s_arrays(c):
    # asyncpg introspects each array type the first time it meets one (a WITH RECURSIVE query
    # over pg_type with a binary oid[] parameter), then sends and reads arrays in binary.
    await c.execute("DROP TABLE IF EXISTS ap_arr")
    await c.execute("CREATE TABLE ap_arr (id int4 PRIMARY KEY, ints int4[], tags text[], big int8[], grid int4[], flags bool[])")
    rows = [(1, [1, None, -3], ["a b", "", None, "NULL", 'q"z'], [2**63 - 1], [[1, 2], [3, 4]], [True, None]),
            (2, [], [], None, None, [])]
    await c.executemany("INSERT INTO ap_arr VALUES ($1, $2, $3, $4, $5, $6)", rows)
    got = await c.fetch("SELECT id, ints, tags, big, grid, flags FROM ap_arr ORDER BY id")
    check([tuple(r) for r in got] == rows, f"arrays round trip {got!r}")
    ids = await c.fetch("SELECT id FROM ap_arr WHERE id = ANY($1) ORDER BY id", [2, 1, 7])
    check([r[0] for r in ids] == [1, 2], f"= ANY($1) {ids!r}")
    check(await c.fetchval("SELECT $1::int8[] || 3::int8", [1, None]) == [1, None, 3], "int8[] parameter and ||")
    check(await c.fetchval("SELECT tags[1] FROM ap_arr WHERE 'a b' = ANY(tags)") == "a b", "subscript and ANY")
    check(await c.fetchval("SELECT array_agg(id ORDER BY id DESC) FROM ap_arr") == [2, 1], "array_agg")
    check(await c.fetchval("SELECT indkey FROM pg_index WHERE indexrelid = 'ap_arr_pkey'::regclass") == [1], "int2vector")
    await c.execute("DROP TABLE ap_arr")


async def s_uuid(c):
    u1, u2 = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), uuid.uuid4()
    await c.execute("DROP TABLE IF EXISTS ap_uuid")
    await c.execute("CREATE TABLE ap_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), ref uuid, tags uuid[])")
    await c.execute("INSERT INTO ap_uuid VALUES ($1, $2, $3)", u1, None, [u2, None])
    gen = await c.fetchval("INSERT INTO ap_uuid (ref) VALUES ($1) RETURNING id", u2)
    check(isinstance(gen, uuid.UUID) and gen.version == 4, f"gen_random_uuid() default {gen!r}")
    row = await c.fetchrow("SELECT id, ref, tags FROM ap_uuid WHERE id = $1", u1)
    check(tuple(row) == (u1, None, [u2, None]), f"uuid binary round trip {tuple(row)!r}")
    check(await c.fetchval("SELECT ref FROM ap_uuid WHERE id = $1", gen) == u2, "uuid parameter")
    res = await c.copy_records_to_table("ap_uuid", records=[(u2, u1, None)], columns=["id", "ref", "tags"])
    check(res == "COPY 1", f"uuid copy_records_to_table {res!r}")
    check(await c.fetchval("SELECT count(*) FROM ap_uuid WHERE ref = ANY($1)", [u1, u2]) == 2, "uuid = ANY($1)")
    await c.execute("DROP TABLE ap_uuid")


async def s_interval(c):
    td = datetime.timedelta(days=3, hours=4, minutes=5, seconds=6, microseconds=789)
    await c.execute("DROP TABLE IF EXISTS ap_iv")
    await c.execute("CREATE TABLE ap_iv (id int, d interval, t timestamp)")
    await c.execute("INSERT INTO ap_iv VALUES ($1, $2, $3)", 1, td, datetime.datetime(2020, 1, 31))
    await c.execute("INSERT INTO ap_iv VALUES ($1, $2, $3)", 2, None, None)
    row = await c.fetchrow("SELECT d, t + $1, t - d FROM ap_iv WHERE id = 1", datetime.timedelta(days=1))
    check(tuple(row) == (td, datetime.datetime(2020, 2, 1), datetime.datetime(2020, 1, 27, 19, 54, 53, 999211)), f"interval binary {tuple(row)!r}")
    check(await c.fetchval("SELECT d FROM ap_iv WHERE id = 2") is None, "NULL interval")
    check(await c.fetchval("SELECT count(*) FROM ap_iv WHERE d > $1", datetime.timedelta(days=1)) == 1, "interval parameter")
    res = await c.copy_records_to_table("ap_iv", records=[(3, datetime.timedelta(hours=-5), None)])
    check(res == "COPY 1", f"interval copy_records_to_table {res!r}")
    check(await c.fetchval("SELECT sum(d) FROM ap_iv") == td - datetime.timedelta(hours=5), "sum(interval)")
    await c.execute("DROP TABLE ap_iv")


async def s_jsonb(c):
    # asyncpg reads and writes jsonb in binary (a version byte, then the text) as str.
    await c.execute("DROP TABLE IF EXISTS ap_jsonb")
    await c.execute("CREATE TABLE ap_jsonb (id int PRIMARY KEY, doc jsonb, docs jsonb[])")
    await c.execute("INSERT INTO ap_jsonb VALUES ($1, $2, $3)", 1, '{"b": [1, 2.50], "a": "\u00e9"}', ['{"x": 1}', None])
    await c.execute("INSERT INTO ap_jsonb VALUES ($1, $2, $3)", 2, None, None)
    row = await c.fetchrow("SELECT doc, docs, doc -> 'b', doc ->> 'a' FROM ap_jsonb WHERE id = 1")
    check(tuple(row) == ('{"a": "é", "b": [1, 2.50]}', ['{"x": 1}', None], "[1, 2.50]", "é"), f"jsonb binary {tuple(row)!r}")
    check(await c.fetchval("SELECT doc FROM ap_jsonb WHERE id = 2") is None, "NULL jsonb")
    check(await c.fetchval("SELECT id FROM ap_jsonb WHERE doc @> $1", '{"b": [2.5]}') == 1, "jsonb parameter in @>")
    res = await c.copy_records_to_table("ap_jsonb", records=[(3, '[1, {"k": null}]', None)], columns=["id", "doc", "docs"])
    check(res == "COPY 1", f"jsonb copy_records_to_table {res!r}")
    check(await c.fetchval("SELECT jsonb_agg(doc ORDER BY id) FROM ap_jsonb") == '[{"a": "é", "b": [1, 2.50]}, null, [1, {"k": null}]]', "jsonb_agg")
    await c.execute("DROP TABLE ap_jsonb")


SCENARIOS = [
    ("types round trip (binary params and results, NULLs, edges, infinity)", s_types),
    ("prepared statements reused", s_prepared),
    ("transactions: commit, rollback, error then rollback", s_transactions),
    ("transactions: isolation level, read only, SHOW in a prepared statement", s_isolation),
    ("executemany all-or-nothing in autocommit", s_batch),
    ("COPY in: binary records, text file", s_copy_in),
    ("COPY out: table, query", s_copy_out),
    ("COPY out: query with arguments", s_copy_out_args),
    ("unique violation 23505, connection usable", s_unique),
    ("queries: GROUP BY, JOIN, ORDER BY / LIMIT", s_queries),
    ("cursor: portal fetched in pieces", s_cursor),
    ("cursor: forward() (MOVE)", s_cursor_move),
    ("pool acquire / release (reset query)", s_pool),
    ("savepoints: nested transaction()", s_savepoints),
    ("arrays: type introspection, binary int4[]/text[]/int8[]/bool[], 2-D, = ANY($1), int2vector", s_arrays),
    ("uuid: binary in and out, uuid[], DEFAULT gen_random_uuid(), COPY binary, = ANY($1)", s_uuid),
    ("interval: timedelta in and out (binary), timestamp arithmetic, COPY binary, sum", s_interval),
    ("jsonb: binary in and out, jsonb[], @> with a parameter, COPY binary, jsonb_agg", s_jsonb),
]


async def main():
    failed = 0
    c = await connect()
    print(f"   asyncpg {asyncpg.__version__}, server {c.get_server_version()}")
    for name, fn in SCENARIOS:
        try:
            await fn(c)
            print(f"   ok   asyncpg: {name}")
        except Exception as e:
            failed += 1
            what = str(e) if isinstance(e, Fail) else f"{type(e).__name__}: {e}"
            extra = ""
            if isinstance(e, asyncpg.PostgresError):
                extra = f" [sqlstate {e.sqlstate}]"
            print(f"FAIL: asyncpg: {name}: {what}{extra}", file=sys.stderr)
            if not isinstance(e, (Fail, asyncpg.PostgresError)):
                traceback.print_exc()
            if not KEEP_GOING:
                sys.exit(1)
            try:
                await c.close(timeout=2)
            except Exception:
                c.terminate()
            c = await connect()
    for t in ("ap_types", "ap_prep", "ap_tx", "ap_batch", "ap_copy", "ap_copy2", "ap_uniq", "ap_emp", "ap_dept", "ap_cur", "ap_sp"):
        try:
            await c.execute(f"DROP TABLE IF EXISTS {t}")
        except Exception:
            pass
    await c.close()
    if failed:
        sys.exit(1)
    print("   asyncpg passed")


asyncio.run(main())
