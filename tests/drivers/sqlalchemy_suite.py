"""SQLAlchemy 2 (Core and ORM) against `heapstore serve` (or PostgreSQL, to check the suite itself).

Dialect postgresql+psycopg (psycopg 3), and postgresql+asyncpg for a smaller async part. The
connection comes from the libpq environment variables (PGHOST, a directory for the Unix socket or
an address; PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE): the URLs name no host, and both
psycopg (libpq) and asyncpg read those variables. Prints one line per scenario and exits non-zero
on the first failure (HEAPSTORE_KEEP_GOING=1: run them all, then exit non-zero if any failed).
"""
import asyncio
import datetime
import decimal
import logging
import os
import sys
import traceback
import uuid

import sqlalchemy
from sqlalchemy import (BigInteger, Boolean, CHAR, Column, Date, DateTime, Float, ForeignKey, Integer, LargeBinary,
                        MetaData, Numeric, REAL, SmallInteger, String, Table, Text, create_engine, delete,
                        Uuid, func, insert, inspect, select, text, update)
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, foreign, mapped_column, relationship

# psycopg logs "error ignored terminating <Pipeline>: pipeline aborted" after a failed batch.
logging.getLogger("psycopg").setLevel(logging.ERROR)
KEEP_GOING = os.environ.get("HEAPSTORE_KEEP_GOING") == "1"
D = decimal.Decimal


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def sqlstate(e):
    return getattr(getattr(e, "orig", None), "sqlstate", None)


engine = None
ENGINE_ARGS = {}  # e.g. use_native_hstore=False skips the dialect's TypeInfo.fetch("hstore") at first connect
metadata = MetaData()
types_t = Table(
    "sa_types", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("b", Boolean), Column("i2", SmallInteger), Column("i4", Integer), Column("i8", BigInteger),
    Column("f4", REAL), Column("f8", Float(53)), Column("n", Numeric), Column("t", Text),
    Column("vc", String(10)), Column("c", CHAR(5)), Column("by", LargeBinary), Column("d", Date),
    Column("ts", DateTime),
)
ROWS = [
    dict(id=1, b=True, i2=-32768, i4=-2147483648, i8=-9223372036854775808, f4=-1.5, f8=-1.7976931348623157e308,
         n=D("-12345678901234567890.123456789012345678901234567890"), t="", vc="ñ☃😀日本", c="ab",
         by=b"\x00\\x41\\\\\x00\xff", d=datetime.date(2024, 2, 29), ts=datetime.datetime(2024, 2, 29, 23, 59, 59, 123456)),
    dict(id=2, b=False, i2=32767, i4=2147483647, i8=9223372036854775807, f4=3.25, f8=0.1,
         n=D("0.000000000000000000001"), t="tab\there 'q' \"dq\" back\\slash\nnewline", vc="0123456789", c="abcde",
         by=b"", d=datetime.date(1999, 12, 31), ts=datetime.datetime(1970, 1, 1)),
    dict(id=3, b=None, i2=None, i4=None, i8=None, f4=None, f8=None, n=None, t=None, vc=None, c=None, by=None, d=None, ts=None),
]


def expected(row):
    r = dict(row)
    if r["c"] is not None:
        r["c"] = r["c"].ljust(5)
    return r


def s_connect():
    # The dialect's first connect: version(), current_schema(), SHOW standard_conforming_strings,
    # SHOW transaction isolation level, and psycopg's hstore lookup (pg_type).
    with engine.connect() as conn:
        check(conn.execute(text("SELECT 1")).scalar() == 1, "SELECT 1")
        check(conn.dialect.server_version_info[0] == 15, f"server_version_info {conn.dialect.server_version_info}")
        check(conn.dialect.default_schema_name == "public", f"default schema {conn.dialect.default_schema_name!r}")


def drop_create(md):
    # CREATE TABLE compiled by the dialect; no catalog query (checkfirst=False).
    with engine.begin() as conn:
        for t in reversed(md.sorted_tables):
            conn.execute(text(f"DROP TABLE IF EXISTS {t.name}"))
        md.create_all(conn, checkfirst=False)


def s_create():
    drop_create(metadata)
    # create_all / drop_all with checkfirst (the default) ask has_table() (a pg_catalog query) first.
    metadata.create_all(engine)
    check(inspect(engine).has_table("sa_types"), "has_table after create_all")


def s_types():
    with engine.begin() as conn:
        conn.execute(delete(types_t))
        for row in ROWS:
            conn.execute(insert(types_t), row)
    with engine.connect() as conn:
        got = [dict(r._mapping) for r in conn.execute(select(types_t).order_by(types_t.c.id))]
    for g, want in zip(got, map(expected, ROWS)):
        check(g == want, f"row {want['id']}: got {g!r}, want {want!r}")
    check(len(got) == len(ROWS), f"{len(got)} rows")
    with engine.connect() as conn:
        for col in ("i8", "n", "by", "t", "d", "ts", "c", "vc", "f8"):
            n = conn.execute(select(func.count()).select_from(types_t).where(types_t.c[col] == ROWS[0][col])).scalar()
            check(n == 1, f"WHERE {col} = %s matched {n}")


def s_executemany():
    # A list of parameter sets: cursor.executemany (psycopg pipelines it).
    with engine.begin() as conn:
        conn.execute(delete(types_t))
        conn.execute(insert(types_t), [dict(ROWS[i % 3], id=100 + i) for i in range(300)])
    with engine.connect() as conn:
        check(conn.execute(select(func.count()).select_from(types_t)).scalar() == 300, "executemany count")
        got = dict(conn.execute(select(types_t).where(types_t.c.id == 101)).one()._mapping)
        check(got == expected(dict(ROWS[1], id=101)), f"executemany row {got!r}")


def s_prepared():
    # psycopg prepares a statement server-side after it ran prepare_threshold (5) times.
    with engine.connect() as conn:
        stmt = select(types_t.c.i8).where(types_t.c.id == sqlalchemy.bindparam("x"))
        for i in range(30):
            check(conn.execute(stmt, {"x": 100 + i}).scalar() == ROWS[i % 3]["i8"], f"execution {i}")


def s_transactions():
    with engine.begin() as conn:
        conn.execute(delete(types_t))
        conn.execute(insert(types_t), {"id": 1})
    with engine.connect() as conn:
        tx = conn.begin()
        conn.execute(insert(types_t), {"id": 2})
        tx.rollback()
        tx = conn.begin()
        try:
            conn.execute(insert(types_t), {"id": 1})
            check(False, "duplicate accepted")
        except IntegrityError as e:
            check(sqlstate(e) == "23505", f"sqlstate {sqlstate(e)}")
        try:
            conn.execute(text("SELECT 1"))
            check(False, "statement accepted in a failed transaction")
        except DBAPIError as e:
            check(sqlstate(e) == "25P02", f"sqlstate {sqlstate(e)}")
        tx.rollback()
        check(conn.execute(select(types_t.c.id)).scalars().all() == [1], "commit / rollback")
    ro = engine.execution_options(isolation_level="REPEATABLE READ")
    with ro.connect() as conn:
        check(conn.execute(text("SHOW transaction_isolation")).scalar() == "repeatable read", "isolation level")
        conn.rollback()


def s_batch():
    # executemany in AUTOCOMMIT: psycopg pipelines the batch up to one Sync, so it is one implicit
    # transaction: a duplicate at entry 4 leaves none of it.
    auto = engine.execution_options(isolation_level="AUTOCOMMIT")
    with auto.connect() as conn:
        conn.execute(delete(types_t))
        conn.execute(insert(types_t), {"id": 100})
        try:
            conn.execute(insert(types_t), [{"id": 20}, {"id": 21}, {"id": 22}, {"id": 100}, {"id": 23}])
            check(False, "duplicate in a batch not reported")
        except IntegrityError as e:
            check(e.orig.diag.constraint_name == "sa_types_pkey", f"constraint {e.orig.diag.constraint_name!r}")
        n = conn.execute(select(func.count()).select_from(types_t)).scalar()
        check(n == 1, f"batch with a duplicate left {n - 1} rows (want 0: all-or-nothing)")


def s_unique():
    with engine.connect() as conn:
        try:
            conn.execute(insert(types_t), {"id": 100})
            check(False, "duplicate accepted")
        except IntegrityError as e:
            diag = e.orig.diag
            check(sqlstate(e) == "23505", f"sqlstate {sqlstate(e)}")
            check(diag.constraint_name == "sa_types_pkey", f"constraint_name {diag.constraint_name!r}")
            check(diag.message_detail == "Key (id)=(100) already exists.", f"detail {diag.message_detail!r}")
        conn.rollback()
        check(conn.execute(text("SELECT 1")).scalar() == 1, "usable after 23505")


def s_inspect():
    insp = inspect(engine)
    check(insp.has_table("sa_types"), "has_table(sa_types)")
    check(not insp.has_table("sa_no_such_table"), "has_table(missing)")
    names = insp.get_table_names()
    check("sa_types" in names, f"get_table_names {names!r}")
    cols = {c["name"]: c for c in insp.get_columns("sa_types")}
    check(list(cols) == [c.name for c in types_t.columns], f"get_columns names {list(cols)!r}")
    want = {"id": "INTEGER", "b": "BOOLEAN", "i2": "SMALLINT", "i4": "INTEGER", "i8": "BIGINT", "f4": "REAL",
            "f8": "DOUBLE PRECISION", "n": "NUMERIC", "t": "TEXT", "vc": "VARCHAR(10)", "c": "CHAR(5)",
            "by": "BYTEA", "d": "DATE", "ts": "TIMESTAMP"}
    for name, typ in want.items():
        got = str(cols[name]["type"])
        check(got == typ, f"get_columns type of {name}: {got!r}, want {typ!r}")
    check(cols["id"]["nullable"] is False and cols["t"]["nullable"] is True, "get_columns nullable")
    pk = insp.get_pk_constraint("sa_types")
    check(pk["constrained_columns"] == ["id"] and pk["name"] == "sa_types_pkey", f"get_pk_constraint {pk!r}")
    # Keys, indexes, checks, defaults and identity of a second table; the reflection of a whole
    # table; sequences and views.
    with engine.begin() as conn:
        conn.execute(text("DROP VIEW IF EXISTS sa_refl_v"))
        conn.execute(text("DROP TABLE IF EXISTS sa_refl"))
        conn.execute(text("CREATE TABLE sa_refl (id serial, g bigint GENERATED ALWAYS AS IDENTITY (INCREMENT BY 2 START WITH 5), "
                          "a int NOT NULL, b varchar(20) DEFAULT 'x', tags text[], c int CHECK (c > 0), "
                          "PRIMARY KEY (a, id), UNIQUE (b))"))
        conn.execute(text("CREATE INDEX sa_refl_c_a ON sa_refl (c, a)"))
        conn.execute(text("CREATE VIEW sa_refl_v AS SELECT a, b FROM sa_refl"))
    insp = inspect(engine)
    cols = {c["name"]: c for c in insp.get_columns("sa_refl")}
    tags_t = cols["tags"]["type"]
    check(isinstance(tags_t, sqlalchemy.ARRAY) and str(tags_t.item_type) == "TEXT", f"array column type {tags_t!r}")
    check(cols["b"]["default"] == "'x'::character varying", f"default {cols['b']['default']!r}")
    check(cols["id"]["autoincrement"] is True and "nextval('sa_refl_id_seq'" in cols["id"]["default"], f"serial {cols['id']!r}")
    ident = cols["g"].get("identity") or {}
    check(ident.get("always") is True and ident.get("start") == 5 and ident.get("increment") == 2, f"identity {ident!r}")
    pk = insp.get_pk_constraint("sa_refl")
    check(pk["constrained_columns"] == ["a", "id"] and pk["name"] == "sa_refl_pkey", f"two-column key {pk!r}")
    uq = insp.get_unique_constraints("sa_refl")
    check([(u["name"], u["column_names"]) for u in uq] == [("sa_refl_b_key", ["b"])], f"get_unique_constraints {uq!r}")
    ix = {i["name"]: i for i in insp.get_indexes("sa_refl")}
    check(ix["sa_refl_c_a"]["column_names"] == ["c", "a"] and not ix["sa_refl_c_a"]["unique"], f"get_indexes {ix!r}")
    ck = insp.get_check_constraints("sa_refl")
    check([c["name"] for c in ck] == ["sa_refl_c_check"] and "c > 0" in ck[0]["sqltext"], f"get_check_constraints {ck!r}")
    check(insp.get_foreign_keys("sa_refl") == [], "get_foreign_keys")
    check("sa_refl_v" in insp.get_view_names() and "sa_refl_id_seq" in insp.get_sequence_names(), "views and sequences")
    reflected = Table("sa_refl", MetaData(), autoload_with=engine)
    check([c.name for c in reflected.columns] == ["id", "g", "a", "b", "tags", "c"], f"autoload {reflected.columns.keys()!r}")
    check([c.name for c in reflected.primary_key.columns] == ["a", "id"], "autoload primary key")
    with engine.begin() as conn:
        conn.execute(text("DROP VIEW sa_refl_v"))
        conn.execute(text("DROP TABLE sa_refl"))


def s_indexes_and_comments():
    # Index(func.lower(...)), postgresql_include / postgresql_where, comment= on tables and
    # columns (COMMENT ON), reflected back; on_conflict_do_update over an expression index.
    from sqlalchemy import Index
    from sqlalchemy.dialects.postgresql import insert as pg_insert
    md = MetaData()
    t = Table("sa_ix", md, Column("id", Integer, primary_key=True, comment="the key"), Column("email", Text, comment="login"),
              Column("n", Integer), comment="indexed table")
    Index("sa_ix_lower", func.lower(t.c.email), unique=True)
    Index("sa_ix_n", t.c.n, postgresql_include=["email"], postgresql_where=t.c.n > 0)
    drop_create(md)
    insp = inspect(engine)
    check(insp.get_table_comment("sa_ix") == {"text": "indexed table"}, f"get_table_comment {insp.get_table_comment('sa_ix')!r}")
    comments = [(c["name"], c.get("comment")) for c in insp.get_columns("sa_ix")]
    check(comments == [("id", "the key"), ("email", "login"), ("n", None)], f"column comments {comments!r}")
    ix = {i["name"]: i for i in insp.get_indexes("sa_ix")}
    lower = ix["sa_ix_lower"]
    check(lower["unique"] and lower["expressions"] == ["lower(email)"], f"expression index {lower!r}")
    n = ix["sa_ix_n"]
    opts = n["dialect_options"]
    check(n["column_names"] == ["n"] and opts.get("postgresql_include") == ["email"] and opts.get("postgresql_where") == "(n > 0)",
          f"INCLUDE / WHERE index {n!r}")
    with engine.begin() as conn:
        conn.execute(insert(t).values(id=1, email="A@x", n=1))
        st = pg_insert(t).values(id=2, email="a@X", n=5)
        conn.execute(st.on_conflict_do_update(index_elements=[func.lower(t.c.email)], set_={"n": st.excluded.n}))
        got = conn.execute(select(t.c.id, t.c.n)).all()
        check([tuple(r) for r in got] == [(1, 5)], f"on_conflict_do_update over lower(email): {got!r}")
        try:
            with conn.begin_nested():
                conn.execute(insert(t).values(id=3, email="A@X", n=0))
            raise Fail("a duplicate lower(email) was accepted")
        except IntegrityError as e:
            check(sqlstate(e) == "23505", f"unique expression index: {sqlstate(e)}")
    md.drop_all(engine)


def s_arrays():
    from sqlalchemy.dialects.postgresql import ARRAY
    t = Table("sa_arr", MetaData(), Column("id", Integer, primary_key=True, autoincrement=False),
              Column("ints", ARRAY(Integer)), Column("tags", ARRAY(String(10))), Column("grid", ARRAY(Integer, dimensions=2)))
    t.drop(engine, checkfirst=True)
    t.create(engine)
    with engine.begin() as c:
        c.execute(insert(t), [dict(id=1, ints=[1, None, 3], tags=["a b", "", None], grid=[[1, 2], [3, 4]]),
                              dict(id=2, ints=[], tags=["q\"z"], grid=None)])
        rows = c.execute(select(t).order_by(t.c.id)).all()
        check(rows[0].ints == [1, None, 3] and rows[0].tags == ["a b", "", None] and rows[0].grid == [[1, 2], [3, 4]], f"arrays {rows[0]!r}")
        check(rows[1].ints == [] and rows[1].tags == ["q\"z"] and rows[1].grid is None, f"arrays {rows[1]!r}")
        check(c.execute(select(t.c.id).where(t.c.ints.contains([3]))).scalars().all() == [1], "ARRAY.contains (@>)")
        check(c.execute(select(t.c.id).where(sqlalchemy.literal("a b") == sqlalchemy.any_(t.c.tags))).scalars().all() == [1], "any_ (= ANY)")
        check(c.execute(select(t.c.ints[1])).scalars().all() == [1, None], "subscript")
        check(c.execute(select(func.array_agg(t.c.id))).scalar_one() == [1, 2], "array_agg")
    t.drop(engine)


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "sa_author"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(40))
    books: Mapped[list["Book"]] = relationship(order_by="Book.id", back_populates="author", passive_deletes=True)


class Book(Base):
    __tablename__ = "sa_book"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    author_id: Mapped[int] = mapped_column(ForeignKey("sa_author.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(Text)
    price: Mapped[decimal.Decimal] = mapped_column(Numeric(10, 2))
    published: Mapped[datetime.date | None] = mapped_column(Date)
    author: Mapped[Author] = relationship(back_populates="books")


def s_orm():
    drop_create(Base.metadata)
    with Session(engine) as s:
        a1, a2 = Author(id=1, name="Ann"), Author(id=2, name="Bob")
        a1.books = [Book(id=i, title=f"A{i}", price=D(f"{i}.50"), published=datetime.date(2020, 1, i)) for i in range(1, 4)]
        a2.books = [Book(id=10, title="B10", price=D("99.99"), published=None)]
        s.add_all([a1, a2])
        s.commit()
    with Session(engine) as s:
        a = s.get(Author, 1)
        check([b.title for b in a.books] == ["A1", "A2", "A3"], f"lazy load {[b.title for b in a.books]!r}")
        s.execute(update(Book).where(Book.id == 2).values(title="A2 revised"))
        s.delete(s.get(Book, 3))
        s.commit()
    with Session(engine) as s:
        rows = s.execute(select(Author.name, func.count(Book.id), func.sum(Book.price))
                         .join(Author.books).group_by(Author.name).order_by(Author.name)).all()
        check([tuple(r) for r in rows] == [("Ann", 2, D("4.00")), ("Bob", 1, D("99.99"))], f"ORM GROUP BY {rows!r}")
        titles = s.scalars(select(Book.title).order_by(Book.price.desc()).limit(2)).all()
        check(titles == ["B10", "A2 revised"], f"ORDER BY / LIMIT {titles!r}")
        b = s.scalars(select(Book).where(Book.published.is_(None))).one()
        check(b.author.name == "Bob", "many-to-one")
        # Duplicate primary key: IntegrityError at flush, session usable after rollback().
        s.add(Book(id=1, author_id=1, title="dup", price=D(1)))
        try:
            s.commit()
            check(False, "duplicate accepted")
        except IntegrityError as e:
            check(e.orig.diag.constraint_name == "sa_book_pkey", f"constraint {e.orig.diag.constraint_name!r}")
            s.rollback()
        check(s.scalar(select(func.count(Book.id))) == 3, "count after rollback")
        # The foreign key: a book of no author fails with 23503; deleting an author deletes
        # its books (ON DELETE CASCADE, passive_deletes leaves it to the database).
        s.add(Book(id=50, author_id=99, title="orphan", price=D(1)))
        try:
            s.commit()
            check(False, "a book of a missing author accepted")
        except IntegrityError as e:
            check(sqlstate(e) == "23503" and e.orig.diag.constraint_name == "sa_book_author_id_fkey", f"23503 {e.orig.diag.constraint_name!r}")
            s.rollback()
        s.add(Author(id=3, name="Cid", books=[Book(id=30, title="C30", price=D(3))]))
        s.commit()
        s.delete(s.get(Author, 3))
        s.commit()
        check(s.scalar(select(func.count(Book.id))) == 3, "ON DELETE CASCADE")
    fks = inspect(engine).get_foreign_keys("sa_book")
    check([(f["name"], f["constrained_columns"], f["referred_table"], f["referred_columns"], f["options"]) for f in fks]
          == [("sa_book_author_id_fkey", ["author_id"], "sa_author", ["id"], {"ondelete": "CASCADE"})], f"get_foreign_keys {fks!r}")


class Note(Base):
    """Generated keys: SERIAL primary key, a server default, ids read back with RETURNING."""
    __tablename__ = "sa_notes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    body: Mapped[str] = mapped_column(Text, server_default="empty")


def s_generated():
    notes = Note.__table__
    notes.drop(engine, checkfirst=True)
    notes.create(engine)
    with Session(engine) as s:
        a, b = Note(body="a"), Note()
        s.add_all([a, b])
        s.commit()
        check((a.id, b.id) == (1, 2), f"ORM ids from RETURNING {(a.id, b.id)!r}")
        check(b.body == "empty", f"server default {b.body!r}")
    with engine.begin() as c:
        one = c.execute(insert(notes).values(body="c").returning(notes.c.id)).scalar_one()
        check(one == 3, f"insert().returning() {one!r}")
        many = c.execute(insert(notes).returning(notes.c.id, sort_by_parameter_order=True),
                         [{"body": "d"}, {"body": "e"}, {"body": "f"}]).scalars().all()
        check(many == [4, 5, 6], f"executemany with RETURNING {many!r}")
        from sqlalchemy.dialects.postgresql import insert as pg_insert
        up = pg_insert(notes).values(id=1, body="x")
        up = up.on_conflict_do_update(index_elements=["id"], set_={"body": up.excluded.body + "!"}).returning(notes.c.body)
        check(c.execute(up).scalar_one() == "x!", "on_conflict_do_update")
        skip = pg_insert(notes).values(id=2, body="y").on_conflict_do_nothing()
        c.execute(skip)  # SQLAlchemy 2.1 reports rowcount -1 here, against PostgreSQL too
        check(c.execute(select(notes.c.body).where(notes.c.id == 2)).scalar_one() == "empty", "on_conflict_do_nothing")
        gone = c.execute(delete(notes).where(notes.c.id > 4).returning(notes.c.body)).scalars().all()
        check(sorted(gone) == ["e", "f"], f"delete().returning() {gone!r}")
        check(c.execute(text("SELECT currval('sa_notes_id_seq')")).scalar_one() == 6, "currval")


class Token(Base):
    """A UUID primary key made by the database (server_default gen_random_uuid())."""
    __tablename__ = "sa_token"
    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, server_default=func.gen_random_uuid())
    owner: Mapped[uuid.UUID | None] = mapped_column(Uuid)


def s_uuid():
    tokens = Token.__table__
    tokens.drop(engine, checkfirst=True)
    tokens.create(engine)
    u = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    with Session(engine) as s:
        a, b = Token(owner=u), Token(id=u, owner=None)
        s.add_all([a, b])
        s.commit()
        check(isinstance(a.id, uuid.UUID) and a.id.version == 4, f"server-generated uuid key {a.id!r}")
        check(s.get(Token, u).owner is None, "get by uuid key")
        check(s.scalars(select(Token.id).where(Token.owner == u)).one() == a.id, "uuid in WHERE")
    cols = {c["name"]: c["type"] for c in inspect(engine).get_columns("sa_token")}
    check(type(cols["id"]).__name__ == "UUID", f"reflected uuid column {cols!r}")
    tokens.drop(engine)


def s_queries():
    with engine.connect() as conn:
        r = conn.execute(text("SELECT a.name, b.title FROM sa_author a JOIN sa_book b ON b.author_id = a.id "
                              "WHERE b.price > :p ORDER BY b.id LIMIT 2"), {"p": D("2")}).all()
        check([tuple(x) for x in r] == [("Ann", "A2 revised"), ("Bob", "B10")], f"JOIN / LIMIT {r!r}")
        r = conn.execute(text("SELECT author_id, count(*), max(price) FROM sa_book GROUP BY author_id ORDER BY author_id")).all()
        check([tuple(x) for x in r] == [(1, 2, D("2.50")), (2, 1, D("99.99"))], f"GROUP BY {r!r}")



def s_stream_results():
    # stream_results / yield_per: psycopg's server-side cursor, its parameters bound through the
    # extended protocol (DECLARE ... $1), fetched in batches.
    q = select(Book.id).where(Book.price > D("1")).order_by(Book.id)
    with engine.connect() as conn:
        want = conn.execute(q).scalars().all()
        got = [x for part in conn.execution_options(stream_results=True, max_row_buffer=1).execute(q).scalars().partitions(1)
               for x in part]
        check(got == want and len(want) > 1, f"stream_results gave {got!r}, not {want!r}")
    with Session(engine) as s:
        got = [b.id for b in s.scalars(select(Book).where(Book.price > D("1")).order_by(Book.id).execution_options(yield_per=1))]
        check(got == want, f"yield_per gave {got!r}")

def s_savepoints():
    with Session(engine) as s:
        s.add(Author(id=50, name="outer"))
        s.flush()
        nested = s.begin_nested()  # SAVEPOINT
        s.add(Author(id=51, name="inner"))
        s.flush()
        nested.rollback()  # ROLLBACK TO SAVEPOINT
        with s.begin_nested():  # SAVEPOINT ... RELEASE SAVEPOINT
            s.add(Author(id=52, name="inner kept"))
        s.commit()
    with Session(engine) as s:
        ids = s.scalars(select(Author.id).where(Author.id >= 50).order_by(Author.id)).all()
        check(ids == [50, 52], f"savepoints left {ids!r}")


def s_asyncpg():
    # postgresql+asyncpg: on connect the dialect registers json/jsonb codecs (asyncpg introspects
    # pg_type for them); then Core and ORM through AsyncConnection / AsyncSession.
    from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

    async def run():
        aeng = create_async_engine("postgresql+asyncpg://")
        try:
            async with aeng.begin() as conn:
                await conn.execute(delete(types_t))
                await conn.execute(insert(types_t), ROWS)
            async with aeng.connect() as conn:
                got = [dict(r._mapping) for r in await conn.execute(select(types_t).order_by(types_t.c.id))]
            check(got == [expected(r) for r in ROWS], f"asyncpg dialect round trip {got!r}")
            async with AsyncSession(aeng) as s:
                s.add(Author(id=70, name="async"))
                await s.commit()
                check(await s.scalar(select(Author.name).where(Author.id == 70)) == "async", "AsyncSession")
        finally:
            await aeng.dispose()

    asyncio.run(run())


def s_row_locks():
    # with_for_update(): a worker per session taking the next row with SKIP LOCKED, NOWAIT on a
    # taken row (55P03), FOR NO KEY UPDATE (key_share) letting FOR KEY SHARE through, OF.
    with Session(engine) as s:
        for i in range(80, 84):
            s.add(Author(id=i, name=f"job{i}"))
        s.commit()
    q = select(Author).where(Author.id >= 80).order_by(Author.id).limit(1)
    with Session(engine) as s1, Session(engine) as s2:
        a = s1.scalars(q.with_for_update(key_share=True, skip_locked=True)).one()
        b = s2.scalars(q.with_for_update(skip_locked=True)).one()
        check((a.id, b.id) == (80, 81), f"SKIP LOCKED gave {a.id}, {b.id}")
        try:
            s2.scalars(select(Author).where(Author.id == 80).with_for_update(of=Author, nowait=True)).all()
            check(False, "NOWAIT on a locked row returned")
        except DBAPIError as e:
            check(sqlstate(e) == "55P03", f"NOWAIT sqlstate {sqlstate(e)}")
        s2.rollback()
        got = s2.scalars(select(Author.id).where(Author.id == 80).with_for_update(read=True, key_share=True, nowait=True)).all()
        check(got == [80], f"FOR KEY SHARE beside FOR NO KEY UPDATE {got!r}")
        a.name = "taken"
        s1.commit()
        s2.commit()
    with Session(engine) as s:
        check(s.scalar(select(Author.name).where(Author.id == 80)) == "taken", "update under the lock")
        s.execute(delete(Author).where(Author.id >= 80))
        s.commit()


def s_temp_tables():
    # A staging table made with prefixes=['TEMPORARY'], seen by inspect() as temporary and
    # only by its own connection, dropped by DISCARD TEMP.
    md = MetaData()
    stage = Table("sa_stage", md, Column("id", Integer, primary_key=True), Column("v", String(20)), prefixes=["TEMPORARY"])
    with engine.connect() as c:
        md.create_all(c)
        c.execute(stage.insert(), [{"id": i, "v": f"v{i}"} for i in range(1, 6)])
        insp = sqlalchemy.inspect(c)
        check(insp.get_temp_table_names() == ["sa_stage"], f"temp tables {insp.get_temp_table_names()!r}")
        check("sa_stage" not in insp.get_table_names(), "a temporary table among the permanent ones")
        check([x["name"] for x in insp.get_columns("sa_stage")] == ["id", "v"], "temp table columns")
        check(c.execute(select(func.count()).select_from(stage)).scalar() == 5, "rows in the temp table")
        with engine.connect() as other:
            check(not sqlalchemy.inspect(other).has_table("sa_stage"), "another connection sees the temp table")
        c.commit()
        check(c.execute(select(func.count()).select_from(stage)).scalar() == 5, "rows after commit")
        c.exec_driver_sql("DISCARD TEMP")
        c.commit()
        check(not sqlalchemy.inspect(c).has_table("sa_stage"), "DISCARD TEMP kept the temp table")


SCENARIOS = [
    ("psycopg: connect (dialect initialisation)", s_connect),
    ("psycopg: CREATE TABLE; metadata.create_all(checkfirst) (has_table)", s_create),
    ("psycopg: Core types round trip (NULLs, edges)", s_types),
    ("psycopg: Core executemany", s_executemany),
    ("psycopg: statement executed many times (server-side prepare)", s_prepared),
    ("psycopg: transactions: commit, rollback, error then rollback, isolation", s_transactions),
    ("psycopg: executemany all-or-nothing in AUTOCOMMIT", s_batch),
    ("psycopg: unique violation 23505, connection usable", s_unique),
    ("psycopg: inspect(): tables, columns, keys, indexes, checks, identity, views, sequences, autoload", s_inspect),
    ("psycopg: ORM: add, lazy load, update, delete, join, IntegrityError, foreign key", s_orm),
    ("psycopg: expression, INCLUDE and partial indexes, comments: create, reflect, on_conflict_do_update", s_indexes_and_comments),
    ("psycopg: generated keys: SERIAL, server_default, RETURNING, ON CONFLICT", s_generated),
    ("psycopg: ARRAY columns: lists, NULL elements, 2-D, contains, any, subscripts, array_agg", s_arrays),
    ("psycopg: uuid primary key from gen_random_uuid(), Uuid columns, reflection", s_uuid),
    ("psycopg: queries: GROUP BY, JOIN, ORDER BY / LIMIT", s_queries),
    ("psycopg: ORM savepoints: session.begin_nested()", s_savepoints),
    ("psycopg: stream_results and yield_per (server-side cursors with parameters)", s_stream_results),
    ("psycopg: row locks: with_for_update(skip_locked, nowait, key_share, read, of)", s_row_locks),
    ("psycopg: temporary tables: prefixes=['TEMPORARY'], get_temp_table_names, DISCARD TEMP", s_temp_tables),
    ("asyncpg: create_async_engine, Core and AsyncSession", s_asyncpg),
]


def main():
    global engine
    engine = create_engine("postgresql+psycopg://", **ENGINE_ARGS)
    print(f"   SQLAlchemy {sqlalchemy.__version__}")
    failed = 0
    for name, fn in SCENARIOS:
        try:
            fn()
            print(f"   ok   sqlalchemy {name}")
        except Exception as e:
            failed += 1
            if isinstance(e, Fail):
                what = str(e)
            else:
                what = f"{type(e).__name__}: {e}".strip()
                state = sqlstate(e) or getattr(e, "sqlstate", None)
                if state:
                    what += f" [sqlstate {state}]"
            print(f"FAIL: sqlalchemy {name}: {what}", file=sys.stderr)
            if not isinstance(e, (Fail, DBAPIError)):
                traceback.print_exc()
            if not KEEP_GOING:
                sys.exit(1)
            engine.dispose()
    try:
        with engine.execution_options(isolation_level="AUTOCOMMIT").connect() as conn:
            for t in ("sa_types", "sa_author", "sa_book", "sa_token"):
                conn.execute(text(f"DROP TABLE IF EXISTS {t}"))
    except Exception:
        pass
    engine.dispose()
    if failed:
        sys.exit(1)
    print("   sqlalchemy passed")


main()
