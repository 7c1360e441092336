"""psycopg 3 and psycopg2 against `heapstore serve`: the scenarios the drivers issue lists.

Run by .ci/drivers.sh with HEAPSTORE_DSN set (a libpq connection string). Exits non-zero on the
first scenario that fails, printing which.
"""
import os
import sys

import datetime
import decimal
import uuid
import psycopg
import psycopg2
import psycopg2.extras

DSN = os.environ["HEAPSTORE_DSN"]


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)


def psycopg3():
    with psycopg.connect(DSN, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS p3")
        c.execute("CREATE TABLE p3 (id integer PRIMARY KEY, b bytea, t text, f double precision, d date)")
        # COPY in and out row by row.
        with c.cursor() as cur:
            with cur.copy("COPY p3 (id, t) FROM STDIN") as cp:
                for i in range(1000):
                    cp.write_row((i, f"row {i}"))
            with cur.copy("COPY p3 (id, t) TO STDOUT") as cp:
                got = list(cp.rows())
            check(len(got) == 1000, f"copy.rows() gave {len(got)} rows, not 1000")
            check(got[7] == ("7", "row 7"), f"copy.rows()[7] = {got[7]!r}")
            with cur.copy("COPY p3 (id, t) TO STDOUT (FORMAT BINARY)") as cp:
                cp.set_types(["int4", "text"])
                got = list(cp.rows())
            check(len(got) == 1000 and got[3] == (3, "row 3"), "binary copy.rows()")
        c.execute("TRUNCATE p3")
        # Parameters of every supported type, text and binary, NULLs included.
        for binary in (False, True):
            with c.cursor(binary=binary) as cur:
                vals = (1, b"\\x41\x00\xff", "a\\b", 1.5, None)
                cur.execute("INSERT INTO p3 VALUES (%s, %s, %s, %s, %s)", vals)
                cur.execute("SELECT id, b, t, f, d FROM p3 WHERE id = %s", (1,))
                row = cur.fetchone()
                check(row == vals, f"round trip (binary={binary}): {row!r} != {vals!r}")
                cur.execute("DELETE FROM p3 WHERE id = %s", (1,))
        # Prepared statements reused; DEALLOCATE ALL after, then rollback() still works.
        for i in range(10):
            c.execute("INSERT INTO p3 (id, t) VALUES (%s, %s)", (100 + i, "x"), prepare=True)
        with c.transaction():
            c.execute("INSERT INTO p3 (id) VALUES (200)")
        c.autocommit = False
        c.execute("INSERT INTO p3 (id) VALUES (201)")
        c.rollback()
        c.autocommit = True
        check(c.execute("SELECT count(*) FROM p3 WHERE id >= 200").fetchone()[0] == 1, "transaction / rollback")
        # A batch is all-or-nothing in autocommit (executemany pipelines up to one Sync).
        c.execute("DELETE FROM p3")
        c.execute("INSERT INTO p3 (id) VALUES (4)")
        try:
            with c.cursor() as cur:
                cur.executemany("INSERT INTO p3 (id) VALUES (%s)", [(i,) for i in range(1, 6)])
            check(False, "duplicate in a batch not reported")
        except psycopg.errors.UniqueViolation as e:
            check(e.diag.constraint_name == "p3_pkey", f"constraint_name {e.diag.constraint_name!r}")
            check(e.diag.table_name == "p3", f"table_name {e.diag.table_name!r}")
        check(c.execute("SELECT count(*) FROM p3").fetchone()[0] == 1, "batch with a duplicate left rows")
        # 23505 with DETAIL; the connection stays usable.
        try:
            c.execute("INSERT INTO p3 (id) VALUES (4)")
            check(False, "duplicate accepted")
        except psycopg.errors.UniqueViolation as e:
            check(e.diag.message_detail == "Key (id)=(4) already exists.", f"detail {e.diag.message_detail!r}")
        check(c.execute("SELECT 1").fetchone()[0] == 1, "connection usable after an error")
        # Isolation: REPEATABLE READ honoured, SERIALIZABLE refused, READ ONLY enforced.
        c.autocommit = False
        c.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        check(c.execute("SHOW transaction_isolation").fetchone()[0] == "repeatable read", "isolation level")
        c.rollback()
        c.isolation_level = psycopg.IsolationLevel.SERIALIZABLE
        try:
            c.execute("SELECT 1")
            check(False, "SERIALIZABLE accepted")
        except psycopg.errors.FeatureNotSupported:
            c.rollback()
        c.isolation_level = None
        c.read_only = True
        try:
            c.execute("INSERT INTO p3 (id) VALUES (9)")
            check(False, "write in a READ ONLY transaction")
        except psycopg.errors.ReadOnlySqlTransaction:
            c.rollback()
        c.read_only = None
        c.autocommit = True
        # Queries: grouped, joined, ordered, with PostgreSQL's result types.
        got = c.execute("SELECT t IS NULL, count(*), sum(id), avg(id) FROM p3 GROUP BY 1 ORDER BY 1").fetchall()
        check(all(isinstance(r[3], decimal.Decimal) for r in got if r[3] is not None), "avg(int) is numeric: %r" % (got,))
        n = c.execute("SELECT count(*) FROM p3 a JOIN p3 b ON a.id = b.id").fetchone()[0]
        check(n == c.execute("SELECT count(*) FROM p3").fetchone()[0], "self join on the key")
        # psycopg 3 declares a Decimal parameter numeric and a date date: the parameter has
        # that type (round(numeric) rounds half away from zero; numeric division keeps the
        # fraction; to_char(date) is chosen among the to_char functions).
        got = c.execute("SELECT round(%s), %s / 2, to_char(%s, 'YYYY-MM')",
                        [decimal.Decimal("2.5"), decimal.Decimal("5"), datetime.date(2024, 3, 5)]).fetchone()
        check(got == (decimal.Decimal("3"), decimal.Decimal("2.5000000000000000"), "2024-03"), f"typed parameters {got!r}")
        # Clauses heapstore does not run are refused, never ignored.
        try:
            c.execute("SELECT * FROM p3 TABLESAMPLE SYSTEM (10)")
            check(False, "TABLESAMPLE ran")
        except psycopg.errors.FeatureNotSupported:
            pass
        check(c.execute("SELECT current_database()").fetchone()[0] == c.info.dbname, "current_database()")
        # A server-side (named) cursor: DECLARE, FETCH FORWARD n, CLOSE.
        c.autocommit = False
        with c.cursor(name="big") as cur:
            cur.itersize = 7
            cur.execute("SELECT id FROM p3")
            ids = [r[0] for r in cur]
        c.commit()
        c.autocommit = True
        check(sorted(ids) == sorted(r[0] for r in c.execute("SELECT id FROM p3").fetchall()), f"named cursor gave {ids!r}")
        # With parameters (DECLARE through the extended protocol), and WITH HOLD: it outlives
        # the commit.
        want = [r[0] for r in c.execute("SELECT id FROM p3 WHERE id > %s ORDER BY id", (2,)).fetchall()]
        c.autocommit = False
        with c.cursor(name="params") as cur:
            cur.execute("SELECT id FROM p3 WHERE id > %s ORDER BY id", (2,))
            check([r[0] for r in cur.fetchmany(2)] + [r[0] for r in cur.fetchall()] == want, "named cursor with parameters")
        c.commit()
        held = c.cursor(name="held", withhold=True)
        held.execute("SELECT id FROM p3 WHERE id > %s ORDER BY id", (2,))
        first = held.fetchone()[0]
        c.commit()
        check([first] + [r[0] for r in held.fetchall()] == want, "WITH HOLD cursor after commit")
        held.close()
        c.commit()
        c.autocommit = True
        # SQL-level PREPARE / EXECUTE.
        c.execute("PREPARE q (integer) AS SELECT count(*) FROM p3 WHERE id = $1")
        check(c.execute("EXECUTE q (4)").fetchone()[0] == 1, "EXECUTE")
        c.execute("DEALLOCATE q")
        c.execute("DROP TABLE p3")
        # Generated keys: serial, identity, defaults; RETURNING through the extended protocol
        # (described before it runs), and ON CONFLICT.
        c.execute("CREATE TABLE p3g (id serial PRIMARY KEY, g bigint GENERATED ALWAYS AS IDENTITY, v text DEFAULT 'dflt', n int CHECK (n > 0))")
        got = c.execute("INSERT INTO p3g (n) VALUES (%s), (%s) RETURNING id, g, v", (5, 6)).fetchall()
        check(got == [(1, 1, "dflt"), (2, 2, "dflt")], f"INSERT RETURNING {got!r}")
        cur = c.execute("UPDATE p3g SET v = %s WHERE id = %s RETURNING v, n", ("new", 2))
        check([d.name for d in cur.description] == ["v", "n"] and cur.fetchall() == [("new", 6)], "UPDATE RETURNING")
        got = c.execute("INSERT INTO p3g (id, n) VALUES (%s, %s) ON CONFLICT (id) DO UPDATE SET n = excluded.n RETURNING n", (1, 9)).fetchone()
        check(got == (9,), f"ON CONFLICT DO UPDATE {got!r}")
        try:
            c.execute("INSERT INTO p3g (n) VALUES (%s)", (0,))
            check(False, "CHECK violated")
        except psycopg.errors.CheckViolation as e:
            check(e.diag.constraint_name == "p3g_n_check", f"check constraint name {e.diag.constraint_name!r}")
        check(c.execute("SELECT nextval('p3g_id_seq'), currval('p3g_id_seq')").fetchone() == (4, 4), "nextval after a failed insert")
        c.execute("DROP TABLE p3g")
        # Arrays: lists as parameters in text (%s) and binary (%b), small ints sent as int2[],
        # NULL elements, 2-D; binary results; COPY in text and binary with array fields.
        c.execute("DROP TABLE IF EXISTS p3a")
        c.execute("CREATE TABLE p3a (id int PRIMARY KEY, ints int[], tags text[], big bigint[], grid int[])")
        rows = [(1, [1, None, -3], ["a b", "", None, 'q"z', "NULL"], [2**63 - 1], [[1, 2], [3, 4]]), (2, [], [], None, None)]
        c.execute("INSERT INTO p3a VALUES (%s, %s, %s, %s, %s)", rows[0])
        c.execute("INSERT INTO p3a VALUES (%b, %b, %b, %b, %b)", rows[1])
        check(c.execute("SELECT * FROM p3a ORDER BY id").fetchall() == rows, "arrays round trip (text results)")
        check(c.cursor(binary=True).execute("SELECT * FROM p3a ORDER BY id").fetchall() == rows, "arrays (binary results)")
        check([r[0] for r in c.execute("SELECT id FROM p3a WHERE id = ANY(%s) ORDER BY id", ([2, 1, 9],))] == [1, 2], "= ANY(int2[])")
        with c.cursor().copy("COPY p3a (id, ints, tags) FROM STDIN") as cp:
            cp.write_row((3, [7, None], ["x y", None]))
        with c.cursor().copy("COPY p3a (id, ints, tags) FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["int4", "int4[]", "text[]"])
            cp.write_row((4, [8], []))
        got = c.execute("SELECT ints, tags FROM p3a WHERE id >= 3 ORDER BY id").fetchall()
        check(got == [([7, None], ["x y", None]), ([8], [])], f"COPY with arrays {got!r}")
        with c.cursor().copy("COPY (SELECT ints, tags FROM p3a WHERE id = 1) TO STDOUT (FORMAT BINARY)") as cp:
            cp.set_types(["int4[]", "text[]"])
            out = list(cp.rows())
        check(out == [([1, None, -3], ["a b", "", None, 'q"z', "NULL"])], f"binary COPY out of arrays {out!r}")
        c.execute("DROP TABLE p3a")
        # Settings are transactional: ROLLBACK undoes a SET and the server reports the value it
        # put back (ParameterStatus, which psycopg keeps); SET LOCAL ends with its transaction.
        c.execute("SET application_name = 'suite'")
        c.autocommit = False
        c.execute("SET application_name = 'rolled back'")
        check(c.info.parameter_status("application_name") == "rolled back", "SET reported")
        c.rollback()
        check(c.info.parameter_status("application_name") == "suite", "ROLLBACK reported the restored value")
        check(c.execute("SHOW application_name").fetchone()[0] == "suite", "ROLLBACK undid SET")
        c.execute("SET LOCAL work_mem = '1MB'")
        check(c.execute("SHOW work_mem").fetchone()[0] == "1MB", "SET LOCAL")
        c.commit()
        check(c.execute("SHOW work_mem").fetchone()[0] == "4MB", "SET LOCAL ended at COMMIT")
        c.rollback()
        c.autocommit = True
    print("   psycopg", psycopg.__version__, "passed")


def psycopg2_suite():
    c = psycopg2.connect(DSN)
    c.autocommit = True
    cur = c.cursor()
    cur.execute("DROP TABLE IF EXISTS p2")
    cur.execute("CREATE TABLE p2 (id integer PRIMARY KEY, b bytea, d date, t text)")
    # psycopg2 interpolates literals with casts: '...'::date, '\x..'::bytea.
    import datetime
    cur.execute("INSERT INTO p2 VALUES (%s, %s, %s, %s)", (1, psycopg2.Binary(b"\x00AB\xff"), datetime.date(2024, 2, 29), None))
    cur.execute("SELECT id, b, d, t FROM p2 WHERE id = %s", (1,))
    row = cur.fetchone()
    check(row[0] == 1 and bytes(row[1]) == b"\x00AB\xff" and row[2] == datetime.date(2024, 2, 29) and row[3] is None, f"psycopg2 round trip {row!r}")
    c.autocommit = False
    cur.execute("INSERT INTO p2 (id) VALUES (2)")
    c.rollback()
    cur.execute("SELECT count(*) FROM p2")
    check(cur.fetchone()[0] == 1, "psycopg2 rollback")
    c.rollback()
    c.autocommit = True
    try:
        cur.execute("INSERT INTO p2 (id) VALUES (1)")
        check(False, "duplicate accepted")
    except psycopg2.errors.UniqueViolation as e:
        check(e.diag.constraint_name == "p2_pkey", "psycopg2 constraint_name")
    # A named (server-side) cursor.
    c.autocommit = False
    named = c.cursor("p2cur")
    named.itersize = 1
    named.execute("SELECT id FROM p2")
    check([r[0] for r in named] == [1], "psycopg2 named cursor")
    named.close()
    c.commit()
    c.autocommit = True
    cur.execute("DROP TABLE p2")
    # Lists become ARRAY[...] literals; arrays are parsed back from their text form.
    cur.execute("DROP TABLE IF EXISTS p2a")
    cur.execute("CREATE TABLE p2a (id int, ints int[], tags text[], nums numeric[])")
    cur.execute("INSERT INTO p2a VALUES (%s, %s, %s, %s)", (1, [1, None, 3], ["x", "it's", None], [None, decimal.Decimal("1.5")]))
    cur.execute("INSERT INTO p2a VALUES (%s, %s, %s, %s)", (2, [[1, 2], [3, 4]], [], []))
    cur.execute("SELECT ints, tags, nums FROM p2a ORDER BY id")
    got = cur.fetchall()
    check(got == [([1, None, 3], ["x", "it's", None], [None, decimal.Decimal("1.5")]), ([[1, 2], [3, 4]], [], [])], f"psycopg2 arrays {got!r}")
    cur.execute("SELECT count(*) FROM p2a WHERE 3 = ANY(ints)")
    check(cur.fetchone()[0] == 2, "psycopg2 = ANY(array column), multidimensional too")
    cur.execute("DROP TABLE p2a")
    c.close()
    print("   psycopg2", psycopg2.__version__, "passed")


def uuids():
    """uuid columns: Python UUIDs in and out in text and binary, COPY binary, the primary key,
    gen_random_uuid() as a DEFAULT, and the input error."""
    u1, u2 = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), uuid.uuid4()
    with psycopg.connect(DSN, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS pu")
        c.execute("CREATE TABLE pu (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), ref uuid, n int)")
        for binary in (False, True):
            with c.cursor(binary=binary) as cur:
                cur.execute("INSERT INTO pu VALUES (%s, %s, %s)", (u1, None, 1))
                cur.execute("INSERT INTO pu (ref, n) VALUES (%s, %s) RETURNING id", (u2, 2))
                gen = cur.fetchone()[0]
                check(isinstance(gen, uuid.UUID) and gen.version == 4, f"gen_random_uuid() default (binary={binary}): {gen!r}")
                cur.execute("SELECT id, ref, n FROM pu WHERE id = %s", (u1,))
                check(cur.fetchone() == (u1, None, 1), f"uuid round trip (binary={binary})")
                cur.execute("SELECT ref FROM pu WHERE id = %s", (gen,))
                check(cur.fetchone()[0] == u2, f"uuid parameter (binary={binary})")
                cur.execute("DELETE FROM pu")
        with c.cursor() as cur:
            with cur.copy("COPY pu (id, ref, n) FROM STDIN (FORMAT BINARY)") as cp:
                cp.set_types(["uuid", "uuid", "int4"])
                cp.write_row((u1, u2, 7))
                cp.write_row((u2, None, 8))
            with cur.copy("COPY pu (id, ref, n) TO STDOUT (FORMAT BINARY)") as cp:
                cp.set_types(["uuid", "uuid", "int4"])
                got = sorted(cp.rows(), key=lambda r: r[2])
            check(got == [(u1, u2, 7), (u2, None, 8)], f"uuid COPY binary {got!r}")
        try:
            c.execute("SELECT 'a0eebc99'::uuid")
            check(False, "bad uuid accepted")
        except psycopg.errors.InvalidTextRepresentation as e:
            check(str(e).startswith('invalid input syntax for type uuid: "a0eebc99"'), f"uuid error {e}")
        c.execute("DROP TABLE pu")
    c2 = psycopg2.connect(DSN)
    psycopg2.extras.register_uuid()
    cur = c2.cursor()
    cur.execute("SELECT %s::uuid, gen_random_uuid()", (u1,))
    a, b = cur.fetchone()
    check(a == u1 and isinstance(b, uuid.UUID), f"psycopg2 uuid {a!r} {b!r}")
    c2.close()
    print("   psycopg / psycopg2 uuid passed")


def intervals():
    """interval columns: timedelta in and out in text and binary (psycopg 3), psycopg2's text
    parsing, and arithmetic with timestamps."""
    td = datetime.timedelta(days=3, hours=4, minutes=5, seconds=6, microseconds=789)
    neg = datetime.timedelta(days=-1, hours=2)
    with psycopg.connect(DSN, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS pi")
        c.execute("CREATE TABLE pi (id int, d interval, t timestamp)")
        for binary in (False, True):
            with c.cursor(binary=binary) as cur:
                cur.execute("INSERT INTO pi VALUES (1, %s, %s), (2, %s, NULL), (3, NULL, NULL)", (td, datetime.datetime(2020, 1, 31), neg))
                cur.execute("SELECT d, t + %s, t + d FROM pi ORDER BY id", (datetime.timedelta(days=1),))
                got = cur.fetchall()
                check(got[0] == (td, datetime.datetime(2020, 2, 1), datetime.datetime(2020, 2, 3, 4, 5, 6, 789)) and got[1][0] == neg
                      and got[2] == (None, None, None), f"interval round trip (binary={binary}) {got!r}")
                cur.execute("SELECT timestamp '2020-03-01' - timestamp '2020-01-01', sum(d) FROM pi")
                check(cur.fetchone() == (datetime.timedelta(days=60), td + neg), f"interval results (binary={binary})")
                cur.execute("DELETE FROM pi")
        c.execute("DROP TABLE pi")
    c2 = psycopg2.connect(DSN)
    cur = c2.cursor()
    cur.execute("SELECT %s::interval, interval '1 day 02:00:00.5' * 2", (td,))
    a, b = cur.fetchone()
    check(a == td and b == datetime.timedelta(days=2, hours=4, seconds=1), f"psycopg2 interval {a!r} {b!r}")
    c2.close()
    print("   psycopg / psycopg2 interval passed")


def jsonbs():
    """jsonb columns: Python dicts and lists in and out through psycopg's Jsonb adapter in text
    and binary, COPY binary, operators with parameters, and psycopg2's json parsing."""
    from psycopg.types.json import Jsonb
    doc = {"b": [1, 2.5, None], "a": "\u00e9", "n": {"x": True}}
    with psycopg.connect(DSN, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS pj")
        c.execute("CREATE TABLE pj (id int PRIMARY KEY, doc jsonb)")
        for binary in (False, True):
            with c.cursor(binary=binary) as cur:
                cur.execute("INSERT INTO pj VALUES (1, %s), (2, NULL)", (Jsonb(doc),))
                cur.execute("SELECT doc, doc -> 'n', doc ->> 'a', doc::text FROM pj ORDER BY id")
                got = cur.fetchall()
                check(got[0] == (doc, {"x": True}, "\u00e9", '{"a": "\u00e9", "b": [1, 2.5, null], "n": {"x": true}}') and got[1] == (None, None, None, None),
                      f"jsonb round trip (binary={binary}) {got!r}")
                cur.execute("SELECT id FROM pj WHERE doc @> %s", (Jsonb({"n": {"x": True}}),))
                check(cur.fetchall() == [(1,)], f"jsonb @> parameter (binary={binary})")
                cur.execute("DELETE FROM pj")
        with c.cursor() as cur:
            with cur.copy("COPY pj (id, doc) FROM STDIN (FORMAT BINARY)") as cp:
                cp.set_types(["int4", "jsonb"])
                cp.write_row((1, Jsonb([1, {"k": "v"}])))
                cp.write_row((2, None))
            with cur.copy("COPY pj (id, doc) TO STDOUT (FORMAT BINARY)") as cp:
                cp.set_types(["int4", "jsonb"])
                got = sorted(cp.rows())
            check(got == [(1, [1, {"k": "v"}]), (2, None)], f"jsonb COPY binary {got!r}")
        try:
            c.execute("SELECT '{a}'::jsonb")
            check(False, "bad jsonb accepted")
        except psycopg.errors.InvalidTextRepresentation as e:
            check(str(e).startswith("invalid input syntax for type json"), f"jsonb error {e}")
        c.execute("DROP TABLE pj")
    c2 = psycopg2.connect(DSN)
    cur = c2.cursor()
    cur.execute("SELECT %s::jsonb -> 'b', jsonb_build_object('k', 1)", ('{"b": [1, "x"]}',))
    a, b = cur.fetchone()
    check(a == [1, "x"] and b == {"k": 1}, f"psycopg2 jsonb {a!r} {b!r}")
    c2.close()
    print("   psycopg / psycopg2 jsonb passed")


def time_zones():
    """TimeZone other than UTC: psycopg 3 sets it from the connection string (`options`) and
    reads timestamptz text with the zone's offsets; an aware datetime goes in as the same
    instant in text and binary; SET TIME ZONE changes what the server prints, not the instants;
    psycopg2 parses the offsets into fixed-offset datetimes."""
    from zoneinfo import ZoneInfo
    ny = ZoneInfo("America/New_York")
    summer = datetime.datetime(2024, 7, 1, 12, 0, tzinfo=datetime.timezone.utc)
    winter = datetime.datetime(2024, 1, 15, 12, 0, tzinfo=datetime.timezone.utc)
    with psycopg.connect(DSN + " options='-c TimeZone=America/New_York'", autocommit=True) as c:
        check(c.execute("SHOW TimeZone").fetchone() == ("America/New_York",), "TimeZone from options")
        check(str(c.info.timezone) == "America/New_York", f"psycopg's connection time zone {c.info.timezone}")
        c.execute("DROP TABLE IF EXISTS ptz")
        c.execute("CREATE TABLE ptz (id int PRIMARY KEY, t timestamptz, l timestamp)")
        for binary in (False, True):
            with c.cursor(binary=binary) as cur:
                cur.execute("INSERT INTO ptz VALUES (1, %s, %s), (2, %s, %s)", (summer, datetime.datetime(2024, 7, 1, 8, 0), winter, None))
                cur.execute("SELECT t, t::text, l::timestamptz = t, t::date, extract(hour from t) FROM ptz ORDER BY id")
                got = cur.fetchall()
                check(got[0][0] == summer and got[0][0].utcoffset() == datetime.timedelta(hours=-4)
                      and got[0][1] == "2024-07-01 08:00:00-04" and got[0][2] is True and got[0][3] == datetime.date(2024, 7, 1)
                      and got[0][4] == 8 and got[1][1] == "2024-01-15 07:00:00-05", f"timestamptz in New York (binary={binary}) {got!r}")
                cur.execute("DELETE FROM ptz")
        with c.cursor() as cur:
            with cur.copy("COPY ptz (id, t) FROM STDIN") as cp:
                cp.write(b"1\t2024-03-10 01:30\n2\t2024-03-10 03:30\n")
            cur.execute("SELECT t FROM ptz ORDER BY id")
            got = [r[0] for r in cur.fetchall()]
            check(got == [datetime.datetime(2024, 3, 10, 6, 30, tzinfo=datetime.timezone.utc),
                          datetime.datetime(2024, 3, 10, 7, 30, tzinfo=datetime.timezone.utc)], f"COPY text across the DST change {got!r}")
            cur.execute("SELECT t + interval '1 day', date_trunc('day', t) FROM ptz WHERE id = 1")
            a, b = cur.fetchone()
            check(a.astimezone(ny).hour == 1 and b == datetime.datetime(2024, 3, 10, 0, 0, tzinfo=ny), f"interval and date_trunc on local time {a!r} {b!r}")
        c.execute("SET TIME ZONE 'Asia/Kolkata'")
        check(c.execute("SELECT t::text FROM ptz WHERE id = 1").fetchone() == ("2024-03-10 12:00:00+05:30",), "SET TIME ZONE")
        c.execute("DROP TABLE ptz")
    c2 = psycopg2.connect(DSN)
    cur = c2.cursor()
    cur.execute("SET TIME ZONE 'Europe/Paris'")
    cur.execute("SELECT %s::timestamptz, now() - now()", (summer,))
    a, b = cur.fetchone()
    check(a == summer and a.utcoffset() == datetime.timedelta(hours=2), f"psycopg2 timestamptz in Paris {a!r}")
    c2.close()
    print("   psycopg / psycopg2 time zones passed")


def times():
    """time and timetz: datetime.time values in (text and binary parameters) and out (binary
    and text results), with their offsets; 24:00:00, which Python cannot hold, as text; COPY
    binary out; psycopg2's parsing."""
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    minus0330 = datetime.timezone(-datetime.timedelta(hours=3, minutes=30))
    with psycopg.connect(DSN, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS ptimes")
        c.execute("CREATE TABLE ptimes (id int PRIMARY KEY, t time, tz timetz, t0 time(0))")
        for binary in (False, True):
            with c.cursor(binary=binary) as cur:
                cur.execute("INSERT INTO ptimes VALUES (1, %s, %s, %s), (2, %s, %s, %s)",
                            (datetime.time(10, 30, 15, 123456), datetime.time(10, 30, tzinfo=plus2), datetime.time(10, 30, 15, 500000),
                             datetime.time(0, 0), datetime.time(23, 59, 59, 999999, tzinfo=minus0330), None))
                cur.execute("SELECT t, tz, t0, t::text, tz::text, t + interval '90 minutes', extract(epoch FROM tz) FROM ptimes ORDER BY id")
                got = cur.fetchall()
                check(got[0][0] == datetime.time(10, 30, 15, 123456) and got[0][1] == datetime.time(10, 30, tzinfo=plus2)
                      and got[0][2] == datetime.time(10, 30, 16) and got[0][3] == "10:30:15.123456" and got[0][4] == "10:30:00+02"
                      and got[0][5] == datetime.time(12, 0, 15, 123456) and float(got[0][6]) == 30600.0
                      and got[1][1] == datetime.time(23, 59, 59, 999999, tzinfo=minus0330) and got[1][1].utcoffset() == -datetime.timedelta(hours=3, minutes=30)
                      and got[1][2] is None, f"time and timetz round trip (binary={binary}) {got!r}")
                cur.execute("SELECT '24:00'::time::text, %s::time < '12:00', pg_typeof(%s)::text", (datetime.time(11, 0), datetime.time(1, 2)))
                got = cur.fetchone()
                check(got == ("24:00:00", True, "time without time zone"), f"24:00 and typed parameters (binary={binary}) {got!r}")
                cur.execute("DELETE FROM ptimes")
        with c.cursor() as cur:
            cur.execute("INSERT INTO ptimes VALUES (1, '04:05:06.789', '04:05:06-08', '04:05:06')")
            out = b""
            with cur.copy("COPY ptimes TO STDOUT (FORMAT binary)") as cp:
                for chunk in cp:
                    out += bytes(chunk)
            want = (bytes.fromhex("00000008") + (((4 * 60 + 5) * 60 + 6) * 1_000_000 + 789_000).to_bytes(8, "big"))
            want_tz = bytes.fromhex("0000000c") + (((4 * 60 + 5) * 60 + 6) * 1_000_000).to_bytes(8, "big") + (8 * 3600).to_bytes(4, "big")
            check(want in out and want_tz in out, f"COPY binary time / timetz {out.hex()}")
        c.execute("DROP TABLE ptimes")
    c2 = psycopg2.connect(DSN)
    cur = c2.cursor()
    cur.execute("SELECT '10:30:15.5'::time, '10:30+05:30'::timetz, %s::time", (datetime.time(1, 2, 3),))
    a, b, d = cur.fetchone()
    check(a == datetime.time(10, 30, 15, 500000) and b.utcoffset() == datetime.timedelta(hours=5, minutes=30) and d == datetime.time(1, 2, 3),
          f"psycopg2 time / timetz {a!r} {b!r} {d!r}")
    c2.close()
    print("   psycopg / psycopg2 time and timetz passed")


psycopg3()
psycopg2_suite()
uuids()
intervals()
jsonbs()
time_zones()
times()
