// pgx v5 against `heapstore serve` (or PostgreSQL, to check the suite itself), twice: the default
// query exec mode (extended protocol, statement cache, binary formats) and
// QueryExecModeSimpleProtocol (client-side interpolation, text formats).
//
// Connection from the libpq environment variables pgx reads itself: PGHOST (a directory for the
// Unix socket, or an address), PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE. Prints one line
// per scenario and exits non-zero on the first failure (HEAPSTORE_KEEP_GOING=1: run them all,
// then exit non-zero if any failed).
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

var ctx = context.Background()

type failure struct{ msg string }

func check(cond bool, format string, args ...any) {
	if !cond {
		panic(failure{fmt.Sprintf(format, args...)})
	}
}

func must(err error, what string) {
	if err != nil {
		panic(failure{fmt.Sprintf("%s: %s", what, describe(err))})
	}
}

func must1[T any](v T, err error) func(string) T {
	return func(what string) T {
		must(err, what)
		return v
	}
}

func describe(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%v [sqlstate %s]", err, pe.Code)
	}
	return err.Error()
}

func pgErr(err error) *pgconn.PgError {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

func exec(c *pgx.Conn, sql string, args ...any) {
	_, err := c.Exec(ctx, sql, args...)
	must(err, sql)
}

func count(c *pgx.Conn, sql string, args ...any) int64 {
	var n int64
	must(c.QueryRow(ctx, sql, args...).Scan(&n), sql)
	return n
}

func num(s string) pgtype.Numeric {
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		panic(err)
	}
	return n
}

func numText(n pgtype.Numeric) string {
	if !n.Valid {
		return "NULL"
	}
	v, err := n.Value()
	if err != nil {
		return "ERR " + err.Error()
	}
	return v.(string)
}

func date(y int, m time.Month, d int) pgtype.Date {
	return pgtype.Date{Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), Valid: true}
}

func ts(y int, m time.Month, d, hh, mm, ss, us int) pgtype.Timestamp {
	return pgtype.Timestamp{Time: time.Date(y, m, d, hh, mm, ss, us*1000, time.UTC), Valid: true}
}

// One row of pgx_types, as pgtype values (Valid false is NULL).
type row struct {
	ID int32
	B  pgtype.Bool
	I2 pgtype.Int2
	I4 pgtype.Int4
	I8 pgtype.Int8
	F4 pgtype.Float4
	F8 pgtype.Float8
	N  pgtype.Numeric
	T  pgtype.Text
	VC pgtype.Text
	C  pgtype.Text
	By []byte
	D  pgtype.Date
	TS pgtype.Timestamp
}

func (r row) args() []any {
	return []any{r.ID, r.B, r.I2, r.I4, r.I8, r.F4, r.F8, r.N, r.T, r.VC, r.C, r.By, r.D, r.TS}
}

func (r *row) dest() []any {
	return []any{&r.ID, &r.B, &r.I2, &r.I4, &r.I8, &r.F4, &r.F8, &r.N, &r.T, &r.VC, &r.C, &r.By, &r.D, &r.TS}
}

func (r row) String() string {
	return fmt.Sprintf("{%d %v %v %v %v %v %v %s %q %q %q %q %v %v}", r.ID, r.B, r.I2, r.I4, r.I8, r.F4, r.F8, numText(r.N),
		r.T.String, r.VC.String, r.C.String, r.By, r.D, r.TS)
}

func text(s string) pgtype.Text { return pgtype.Text{String: s, Valid: true} }

var rows = []row{
	{1, pgtype.Bool{Bool: true, Valid: true}, pgtype.Int2{Int16: math.MinInt16, Valid: true}, pgtype.Int4{Int32: math.MinInt32, Valid: true},
		pgtype.Int8{Int64: math.MinInt64, Valid: true}, pgtype.Float4{Float32: -1.5, Valid: true}, pgtype.Float8{Float64: -math.MaxFloat64, Valid: true},
		num("-12345678901234567890.123456789012345678901234567890"), text(""), text("ñ☃😀日本"), text("ab"), []byte("\x00\\x41\\\\\x00\xff"),
		date(2024, 2, 29), ts(2024, 2, 29, 23, 59, 59, 123456)},
	{2, pgtype.Bool{Bool: false, Valid: true}, pgtype.Int2{Int16: math.MaxInt16, Valid: true}, pgtype.Int4{Int32: math.MaxInt32, Valid: true},
		pgtype.Int8{Int64: math.MaxInt64, Valid: true}, pgtype.Float4{Float32: 3.25, Valid: true}, pgtype.Float8{Float64: 0.1, Valid: true},
		num("0.000000000000000000001"), text("tab\there 'q' \"dq\" back\\slash\nnewline; -- not a comment"), text("0123456789"), text("abcde"), []byte{},
		date(1999, 12, 31), ts(1970, 1, 1, 0, 0, 0, 0)},
	{ID: 3},
	{4, pgtype.Bool{Bool: true, Valid: true}, pgtype.Int2{Int16: -1, Valid: true}, pgtype.Int4{Int32: -1, Valid: true},
		pgtype.Int8{Int64: -1, Valid: true}, pgtype.Float4{Float32: 0, Valid: true}, pgtype.Float8{Float64: 1e-300, Valid: true},
		num("100000000000000000000000000000"), text(strings.Repeat("x", 5000)), text("a"), text(""), []byte("\\"),
		date(1, 1, 1), ts(2000, 1, 1, 12, 0, 0, 1)},
	// infinity / -infinity dates and timestamps
	{ID: 5, D: pgtype.Date{InfinityModifier: pgtype.Infinity, Valid: true}, TS: pgtype.Timestamp{InfinityModifier: pgtype.NegativeInfinity, Valid: true}},
}

func want(r row) row {
	if r.C.Valid {
		r.C.String = fmt.Sprintf("%-5s", r.C.String) // char(5) pads with blanks
	}
	return r
}

func same(a, b row) bool {
	if numText(a.N) != numText(b.N) {
		return false
	}
	a.N, b.N = pgtype.Numeric{}, pgtype.Numeric{}
	if !bytes.Equal(a.By, b.By) || (a.By == nil) != (b.By == nil) {
		return false
	}
	a.By, b.By = nil, nil
	return reflect.DeepEqual(a, b)
}

const typesDDL = `CREATE TABLE %s (id int4 PRIMARY KEY, b bool, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
	n numeric, t text, vc varchar(10), c char(5), by bytea, d date, ts timestamp)`

func sTypes(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_types")
	exec(c, fmt.Sprintf(typesDDL, "pgx_types"))
	for _, r := range rows {
		exec(c, "INSERT INTO pgx_types VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)", r.args()...)
	}
	rs := must1(c.Query(ctx, "SELECT * FROM pgx_types ORDER BY id"))("SELECT *")
	i := 0
	for rs.Next() {
		var g row
		must(rs.Scan(g.dest()...), "scan")
		check(i < len(rows), "too many rows")
		check(same(g, want(rows[i])), "row %d: got %v, want %v", rows[i].ID, g, want(rows[i]))
		i++
	}
	must(rs.Err(), "rows")
	check(i == len(rows), "%d rows back", i)
	// Parameters in WHERE, compared on the server.
	r := rows[0]
	for _, p := range []struct {
		col string
		v   any
	}{{"i8", r.I8}, {"n", r.N}, {"by", r.By}, {"t", r.T}, {"vc", r.VC}, {"c", r.C}, {"d", r.D}, {"ts", r.TS}, {"f8", r.F8}, {"f4", r.F4}, {"i2", r.I2}} {
		n := count(c, "SELECT count(*) FROM pgx_types WHERE "+p.col+" = $1", p.v)
		check(n == 1, "WHERE %s = $1 (%v) matched %d rows", p.col, p.v, n)
	}
	var dt, tst string
	must(c.QueryRow(ctx, "SELECT d::text, ts::text FROM pgx_types WHERE id = 5").Scan(&dt, &tst), "infinity as text")
	check(dt == "infinity" && tst == "-infinity", "infinity stored as %q / %q", dt, tst)
	check(count(c, "SELECT count(*) FROM pgx_types WHERE b IS NULL") == 2, "IS NULL")
	// Plain Go types as parameters and destinations.
	var a int64
	var s string
	var bs []byte
	var f float64
	var tm time.Time
	var nb *bool
	must(c.QueryRow(ctx, "SELECT $1::int8, $2::text, $3::bytea, $4::float8, $5::timestamp, $6::bool", int64(-7), "ü", []byte{0, 1}, 2.5,
		time.Date(2024, 2, 29, 1, 2, 3, 0, time.UTC), nil).Scan(&a, &s, &bs, &f, &tm, &nb), "typed SELECT list")
	check(a == -7 && s == "ü" && bytes.Equal(bs, []byte{0, 1}) && f == 2.5 && tm.Equal(time.Date(2024, 2, 29, 1, 2, 3, 0, time.UTC)) && nb == nil,
		"typed SELECT list gave %v %q %v %v %v %v", a, s, bs, f, tm, nb)
}

func sPrepared(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_prep")
	exec(c, "CREATE TABLE pgx_prep (id int8 PRIMARY KEY, t text)")
	for i := 0; i < 200; i++ {
		exec(c, "INSERT INTO pgx_prep VALUES ($1, $2)", int64(i), fmt.Sprintf("v%d", i))
	}
	sd := must1(c.Prepare(ctx, "pgx_sel", "SELECT t FROM pgx_prep WHERE id = $1"))("Prepare")
	check(len(sd.ParamOIDs) == 1 && sd.ParamOIDs[0] == pgtype.Int8OID, "parameter OIDs %v", sd.ParamOIDs)
	check(len(sd.Fields) == 1 && sd.Fields[0].DataTypeOID == pgtype.TextOID, "fields %v", sd.Fields)
	for i := 0; i < 200; i += 7 {
		var s string
		must(c.QueryRow(ctx, "pgx_sel", int64(i)).Scan(&s), "prepared select")
		check(s == fmt.Sprintf("v%d", i), "prepared select %d: %q", i, s)
	}
	must(c.Deallocate(ctx, "pgx_sel"), "Deallocate")
	for i := 0; i < 50; i++ {
		check(count(c, "SELECT count(*) FROM pgx_prep WHERE id < $1", int64(i)) == int64(i), "cached statement %d", i)
	}
}

func sTransactions(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_tx")
	exec(c, "CREATE TABLE pgx_tx (id int4 PRIMARY KEY)")
	tx := must1(c.Begin(ctx))("Begin")
	_, err := tx.Exec(ctx, "INSERT INTO pgx_tx VALUES ($1)", 1)
	must(err, "insert")
	must(tx.Commit(ctx), "Commit")
	tx = must1(c.Begin(ctx))("Begin")
	_, err = tx.Exec(ctx, "INSERT INTO pgx_tx VALUES ($1)", 2)
	must(err, "insert")
	must(tx.Rollback(ctx), "Rollback")
	check(count(c, "SELECT count(*) FROM pgx_tx") == 1, "commit / rollback")
	tx = must1(c.Begin(ctx))("Begin")
	_, err = tx.Exec(ctx, "INSERT INTO pgx_tx VALUES ($1)", 1)
	check(pgErr(err) != nil && pgErr(err).Code == "23505", "duplicate in a transaction: %v", err)
	_, err = tx.Exec(ctx, "SELECT 1")
	check(pgErr(err) != nil && pgErr(err).Code == "25P02", "statement in a failed transaction: %v", err)
	must(tx.Rollback(ctx), "Rollback after error")
	check(count(c, "SELECT count(*) FROM pgx_tx") == 1, "usable after a failed transaction")
	// BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY
	tx = must1(c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}))("BeginTx")
	_, err = tx.Exec(ctx, "INSERT INTO pgx_tx VALUES ($1)", 9)
	check(pgErr(err) != nil && pgErr(err).Code == "25006", "write in a read-only transaction: %v", err)
	must(tx.Rollback(ctx), "Rollback")
}

func sShow(c *pgx.Conn) {
	tx := must1(c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}))("BeginTx")
	defer tx.Rollback(ctx)
	var lvl string
	must(tx.QueryRow(ctx, "SHOW transaction_isolation").Scan(&lvl), "SHOW transaction_isolation")
	check(lvl == "repeatable read", "isolation %q", lvl)
}

func sBatch(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_batch")
	exec(c, "CREATE TABLE pgx_batch (id int4 PRIMARY KEY, t text)")
	exec(c, "INSERT INTO pgx_batch VALUES (100, 'pre')")
	b := &pgx.Batch{}
	for i := 0; i < 10; i++ {
		b.Queue("INSERT INTO pgx_batch VALUES ($1, $2)", int32(i), fmt.Sprint(i))
	}
	b.Queue("SELECT count(*) FROM pgx_batch")
	br := c.SendBatch(ctx, b)
	for i := 0; i < 10; i++ {
		_, err := br.Exec()
		must(err, "batch insert")
	}
	var n int64
	must(br.QueryRow().Scan(&n), "batch select")
	must(br.Close(), "batch close")
	check(n == 11, "count inside the batch %d", n)
	// A batch runs in one implicit transaction (one Sync; one multi-statement Query in simple
	// protocol): a duplicate at entry 4 leaves none of it.
	b = &pgx.Batch{}
	for _, id := range []int32{20, 21, 22, 100, 23} {
		b.Queue("INSERT INTO pgx_batch VALUES ($1, $2)", id, "b")
	}
	err := c.SendBatch(ctx, b).Close()
	pe := pgErr(err)
	check(pe != nil && pe.Code == "23505" && pe.ConstraintName == "pgx_batch_pkey", "batch with a duplicate: %v", err)
	n = count(c, "SELECT count(*) FROM pgx_batch WHERE id >= 20 AND id < 30")
	check(n == 0, "batch with a duplicate left %d rows (want 0: all-or-nothing)", n)
	check(count(c, "SELECT count(*) FROM pgx_batch") == 11, "usable after a failed batch")
}

func sCopy(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_copy")
	exec(c, fmt.Sprintf(typesDDL, "pgx_copy"))
	// CopyFrom: binary COPY FROM STDIN, row by row (column types from a described SELECT).
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == 1000 {
			return nil, nil
		}
		r := rows[i%len(rows)]
		r.ID = int32(i)
		i++
		return r.args(), nil
	})
	cols := []string{"id", "b", "i2", "i4", "i8", "f4", "f8", "n", "t", "vc", "c", "by", "d", "ts"}
	n := must1(c.CopyFrom(ctx, pgx.Identifier{"pgx_copy"}, cols, src))("CopyFrom")
	check(n == 1000, "CopyFrom copied %d", n)
	rs := must1(c.Query(ctx, "SELECT * FROM pgx_copy ORDER BY id"))("SELECT")
	k := 0
	for rs.Next() {
		var g row
		must(rs.Scan(g.dest()...), "scan")
		w := want(rows[k%len(rows)])
		w.ID = int32(k)
		check(same(g, w), "copied row %d: got %v, want %v", k, g, w)
		k++
	}
	must(rs.Err(), "rows")
	check(k == 1000, "%d rows back", k)
	// COPY TO STDOUT (text) through pgconn.
	var buf bytes.Buffer
	tag := must1(c.PgConn().CopyTo(ctx, &buf, "COPY pgx_copy (id, t, by) TO STDOUT"))("CopyTo")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	check(tag.RowsAffected() == 1000 && len(lines) == 1000, "CopyTo %q, %d lines", tag, len(lines))
	check(lines[1] == "1\ttab\\there 'q' \"dq\" back\\\\slash\\nnewline; -- not a comment\t\\\\x", "COPY text line %q", lines[1])
	check(lines[3] == "3\t"+strings.Repeat("x", 5000)+"\t\\\\x5c", "COPY text line 3 %.40q", lines[3])
	// COPY FROM STDIN (text) through pgconn.
	exec(c, "DELETE FROM pgx_copy WHERE id >= 500")
	tag = must1(c.PgConn().CopyFrom(ctx, strings.NewReader(strings.Join(lines[500:], "\n")+"\n"), "COPY pgx_copy (id, t, by) FROM STDIN"))("pgconn CopyFrom")
	check(tag.RowsAffected() == 500, "text COPY FROM %q", tag)
	var t string
	var by []byte
	must(c.QueryRow(ctx, "SELECT t, by FROM pgx_copy WHERE id = 501").Scan(&t, &by), "select")
	check(t == rows[1].T.String && len(by) == 0 && by != nil, "text COPY FROM row %q %v", t, by)
}

func sUnique(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_uniq")
	exec(c, "CREATE TABLE pgx_uniq (id int4 PRIMARY KEY, t text)")
	exec(c, "INSERT INTO pgx_uniq VALUES (4, 'a')")
	_, err := c.Exec(ctx, "INSERT INTO pgx_uniq VALUES ($1, $2)", 4, "b")
	pe := pgErr(err)
	check(pe != nil, "duplicate accepted: %v", err)
	check(pe.Code == "23505", "code %s", pe.Code)
	check(pe.ConstraintName == "pgx_uniq_pkey", "constraint %q", pe.ConstraintName)
	check(pe.TableName == "pgx_uniq", "table %q", pe.TableName)
	check(pe.Detail == "Key (id)=(4) already exists.", "detail %q", pe.Detail)
	var t string
	must(c.QueryRow(ctx, "SELECT t FROM pgx_uniq WHERE id = $1", 4).Scan(&t), "usable after 23505")
	check(t == "a", "t %q", t)
}

func sQueries(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_emp")
	exec(c, "DROP TABLE IF EXISTS pgx_dept")
	exec(c, "CREATE TABLE pgx_dept (id int4 PRIMARY KEY, name text)")
	exec(c, "CREATE TABLE pgx_emp (id int4 PRIMARY KEY, dept int4, salary numeric, name varchar(20))")
	for i, n := range []string{"eng", "ops", "empty"} {
		exec(c, "INSERT INTO pgx_dept VALUES ($1, $2)", i+1, n)
	}
	for i := 1; i <= 10; i++ {
		exec(c, "INSERT INTO pgx_emp VALUES ($1, $2, $3, $4)", i, 1+i%2, num(fmt.Sprint(1000+i)), fmt.Sprintf("e%d", i))
	}
	type g struct {
		Dept int32
		N    int64
		S    string
	}
	got := must1(pgx.CollectRows(must1(c.Query(ctx, "SELECT dept, count(*), sum(salary)::text FROM pgx_emp GROUP BY dept ORDER BY dept"))("GROUP BY"),
		pgx.RowToStructByPos[g]))("collect")
	check(reflect.DeepEqual(got, []g{{1, 5, "5030"}, {2, 5, "5025"}}), "GROUP BY %v", got)
	type j struct{ D, E string }
	got2 := must1(pgx.CollectRows(must1(c.Query(ctx, "SELECT d.name, e.name FROM pgx_emp e JOIN pgx_dept d ON d.id = e.dept WHERE e.id <= $1 ORDER BY e.id", 3))("JOIN"),
		pgx.RowToStructByPos[j]))("collect")
	check(reflect.DeepEqual(got2, []j{{"ops", "e1"}, {"eng", "e2"}, {"ops", "e3"}}), "JOIN %v", got2)
	ids := must1(pgx.CollectRows(must1(c.Query(ctx, "SELECT id FROM pgx_emp ORDER BY salary DESC LIMIT $1", 3))("LIMIT"), pgx.RowTo[int32]))("collect")
	check(reflect.DeepEqual(ids, []int32{10, 9, 8}), "ORDER BY / LIMIT %v", ids)
	var one int32
	err := c.QueryRow(ctx, "SELECT id FROM pgx_emp WHERE id = $1", 999).Scan(&one)
	check(errors.Is(err, pgx.ErrNoRows), "no rows: %v", err)
}

func sSavepoints(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_sp")
	exec(c, "CREATE TABLE pgx_sp (id int4 PRIMARY KEY)")
	tx := must1(c.Begin(ctx))("Begin")
	defer tx.Rollback(ctx)
	_, err := tx.Exec(ctx, "INSERT INTO pgx_sp VALUES (1)")
	must(err, "insert")
	sp := must1(tx.Begin(ctx))("nested Begin (SAVEPOINT)")
	_, err = sp.Exec(ctx, "INSERT INTO pgx_sp VALUES (2)")
	must(err, "insert")
	_, err = sp.Exec(ctx, "INSERT INTO pgx_sp VALUES (1)")
	check(pgErr(err) != nil && pgErr(err).Code == "23505", "duplicate in a savepoint: %v", err)
	must(sp.Rollback(ctx), "ROLLBACK TO SAVEPOINT")
	sp = must1(tx.Begin(ctx))("nested Begin (SAVEPOINT)")
	_, err = sp.Exec(ctx, "INSERT INTO pgx_sp VALUES (3)")
	must(err, "insert")
	must(sp.Commit(ctx), "RELEASE SAVEPOINT")
	must(tx.Commit(ctx), "Commit")
	ids := must1(pgx.CollectRows(must1(c.Query(ctx, "SELECT id FROM pgx_sp ORDER BY id"))("select"), pgx.RowTo[int32]))("collect")
	check(reflect.DeepEqual(ids, []int32{1, 3}), "savepoints left %v", ids)
}

// Arrays: []int32, []string, []int64 with NULL elements (pgtype.FlatArray of pointers), an
// empty slice, = ANY($1), LoadType of an array type, int2vector.
func sArrays(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_arr")
	exec(c, "CREATE TABLE pgx_arr (id int4 PRIMARY KEY, ints int4[], tags text[], big int8[])")
	one, three := int32(1), int32(-3)
	a, q := "a b", `q"z`
	exec(c, "INSERT INTO pgx_arr VALUES ($1, $2, $3, $4)", 1, []*int32{&one, nil, &three}, []*string{&a, nil, &q}, []int64{math.MaxInt64})
	exec(c, "INSERT INTO pgx_arr VALUES ($1, $2, $3, $4)", 2, []int32{}, []string{}, nil)
	var ints []*int32
	var tags []*string
	var big []int64
	must(c.QueryRow(ctx, "SELECT ints, tags, big FROM pgx_arr WHERE id = $1", 1).Scan(&ints, &tags, &big), "select arrays")
	check(len(ints) == 3 && *ints[0] == 1 && ints[1] == nil && *ints[2] == -3, "int4[] %v", ints)
	check(len(tags) == 3 && *tags[0] == "a b" && tags[1] == nil && *tags[2] == `q"z`, "text[] %v", tags)
	check(reflect.DeepEqual(big, []int64{math.MaxInt64}), "int8[] %v", big)
	var empty []int32
	must(c.QueryRow(ctx, "SELECT ints FROM pgx_arr WHERE id = 2").Scan(&empty), "empty array")
	check(empty != nil && len(empty) == 0, "empty int4[] %v", empty)
	var ids []int32
	rows := must1(c.Query(ctx, "SELECT id FROM pgx_arr WHERE id = ANY($1) ORDER BY id", []int32{2, 1, 9}))("ANY")
	for rows.Next() {
		var id int32
		must(rows.Scan(&id), "scan id")
		ids = append(ids, id)
	}
	must(rows.Err(), "rows")
	check(reflect.DeepEqual(ids, []int32{1, 2}), "= ANY($1) %v", ids)
	var names []string
	must(c.QueryRow(ctx, "SELECT array_agg(relname ORDER BY relname) FROM pg_class WHERE relname = ANY($1::text[])", []string{"pgx_arr", "pgx_arr_pkey"}).Scan(&names), "name[] result")
	check(reflect.DeepEqual(names, []string{"pgx_arr", "pgx_arr_pkey"}), "array_agg of names %v", names)
	_ = must1(c.LoadType(ctx, "_int4"))("LoadType(_int4)")
	var key []int16
	must(c.QueryRow(ctx, "SELECT indkey::int2[] FROM pg_index WHERE indexrelid = 'pgx_arr_pkey'::regclass").Scan(&key), "indkey")
	check(reflect.DeepEqual(key, []int16{1}), "indkey %v", key)
	exec(c, "DROP TABLE pgx_arr")
}

func sUUID(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_uuid")
	exec(c, "CREATE TABLE pgx_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), ref uuid, n int4)")
	u1 := pgtype.UUID{Bytes: [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}, Valid: true}
	exec(c, "INSERT INTO pgx_uuid VALUES ($1, $2, 1)", u1, pgtype.UUID{})
	var gen pgtype.UUID
	must(c.QueryRow(ctx, "INSERT INTO pgx_uuid (ref, n) VALUES ($1, 2) RETURNING id", u1).Scan(&gen), "RETURNING id")
	check(gen.Valid && gen.Bytes[6]>>4 == 4 && gen.Bytes[8]>>6 == 2, "gen_random_uuid() %v", gen)
	var id, ref pgtype.UUID
	must(c.QueryRow(ctx, "SELECT id, ref FROM pgx_uuid WHERE id = $1", u1).Scan(&id, &ref), "select uuid")
	check(id == u1 && !ref.Valid, "uuid round trip %v %v", id, ref)
	var s string
	must(c.QueryRow(ctx, "SELECT ref::text FROM pgx_uuid WHERE id = $1", gen).Scan(&s), "uuid parameter")
	check(s == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "uuid text %q", s)
	n := must1(c.CopyFrom(ctx, pgx.Identifier{"pgx_uuid"}, []string{"id", "ref", "n"}, pgx.CopyFromRows([][]any{{pgtype.UUID{Bytes: [16]byte{1}, Valid: true}, u1, int32(3)}})))("CopyFrom uuid")
	check(n == 1, "CopyFrom uuid %d", n)
	check(count(c, "SELECT count(*) FROM pgx_uuid WHERE ref = $1", u1) == 2, "uuid count")
	exec(c, "DROP TABLE pgx_uuid")
}

func sInterval(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_iv")
	exec(c, "CREATE TABLE pgx_iv (id int4, d interval, t timestamp)")
	iv := pgtype.Interval{Months: 14, Days: -3, Microseconds: 3723000004, Valid: true}
	exec(c, "INSERT INTO pgx_iv VALUES (1, $1, $2), (2, NULL, NULL)", iv, ts(2020, 1, 31, 0, 0, 0, 0))
	var got, null pgtype.Interval
	var plus pgtype.Timestamp
	must(c.QueryRow(ctx, "SELECT d, t + $1 FROM pgx_iv WHERE id = 1", pgtype.Interval{Months: 1, Valid: true}).Scan(&got, &plus), "select interval")
	check(got == iv, "interval round trip %+v", got)
	check(plus.Time.Equal(time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC)), "timestamp + interval %v", plus.Time)
	must(c.QueryRow(ctx, "SELECT d FROM pgx_iv WHERE id = 2").Scan(&null), "NULL interval")
	check(!null.Valid, "NULL interval %+v", null)
	var s string
	must(c.QueryRow(ctx, "SELECT (timestamp '2020-03-01 10:00' - timestamp '2019-12-31 12:00')::text").Scan(&s), "difference")
	check(s == "60 days 22:00:00", "timestamp difference %q", s)
	exec(c, "DROP TABLE pgx_iv")
}

func sJSONB(c *pgx.Conn) {
	exec(c, "DROP TABLE IF EXISTS pgx_jsonb")
	exec(c, "CREATE TABLE pgx_jsonb (id int4 PRIMARY KEY, doc jsonb)")
	// pgx decodes jsonb (binary: a version byte, then the text) into maps; the simple protocol
	// cannot encode a map for an untyped parameter, so documents go in as strings.
	exec(c, "INSERT INTO pgx_jsonb VALUES ($1, $2), (2, NULL)", int32(1), `{"b": [1, "x"], "a": null}`)
	var doc map[string]any
	var raw string
	must(c.QueryRow(ctx, "SELECT doc, doc::text FROM pgx_jsonb WHERE id = 1").Scan(&doc, &raw), "select jsonb")
	check(fmt.Sprint(doc) == "map[a:<nil> b:[1 x]]" && raw == `{"a": null, "b": [1, "x"]}`, "jsonb round trip %v %q", doc, raw)
	var field string
	must(c.QueryRow(ctx, "SELECT doc -> 'b' ->> 1 FROM pgx_jsonb WHERE doc @> $1", `{"b": ["x"]}`).Scan(&field), "jsonb @> parameter")
	check(field == "x", "jsonb ->> %q", field)
	var null map[string]any
	must(c.QueryRow(ctx, "SELECT doc FROM pgx_jsonb WHERE id = 2").Scan(&null), "NULL jsonb")
	check(null == nil, "NULL jsonb %v", null)
	n := must1(c.CopyFrom(ctx, pgx.Identifier{"pgx_jsonb"}, []string{"id", "doc"}, pgx.CopyFromRows([][]any{{int32(3), []any{1, 2}}})))("CopyFrom jsonb")
	check(n == 1, "CopyFrom jsonb %d", n)
	check(count(c, "SELECT count(*) FROM pgx_jsonb WHERE jsonb_typeof(doc) = 'array'") == 1, "jsonb_typeof")
	exec(c, "DROP TABLE pgx_jsonb")
}

var scenarios = []struct {
	name string
	fn   func(*pgx.Conn)
}{
	{"types round trip (NULLs, edges, infinity)", sTypes},
	{"prepared statements reused", sPrepared},
	{"transactions: commit, rollback, error then rollback, read only", sTransactions},
	{"SHOW in a transaction (QueryRow)", sShow},
	{"Batch, all-or-nothing in autocommit", sBatch},
	{"COPY: CopyFrom (binary), CopyTo / pgconn CopyFrom (text)", sCopy},
	{"unique violation 23505, connection usable", sUnique},
	{"queries: GROUP BY, JOIN, ORDER BY / LIMIT", sQueries},
	{"savepoints: nested Begin", sSavepoints},
	{"arrays: []int32 / []string / []int64 with NULLs, empty, = ANY($1), LoadType, int2vector", sArrays},
	{"uuid: pgtype.UUID in and out, DEFAULT gen_random_uuid(), CopyFrom", sUUID},
	{"interval: pgtype.Interval in and out, timestamp arithmetic", sInterval},
	{"jsonb: documents in, maps out (binary), @> with a parameter, CopyFrom", sJSONB},
}

func connect(mode pgx.QueryExecMode) *pgx.Conn {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: pgx config:", err)
		os.Exit(1)
	}
	cfg.DefaultQueryExecMode = mode
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: pgx connect:", describe(err))
		os.Exit(1)
	}
	return c
}

func main() {
	keepGoing := os.Getenv("HEAPSTORE_KEEP_GOING") == "1"
	failed := 0
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		c := connect(mode)
		if mode == pgx.QueryExecModeCacheStatement {
			fmt.Printf("   pgx v5, server_version %s\n", c.PgConn().ParameterStatus("server_version"))
		}
		for _, s := range scenarios {
			ok := func() (ok bool) {
				defer func() {
					if r := recover(); r != nil {
						if f, isF := r.(failure); isF {
							fmt.Fprintf(os.Stderr, "FAIL: pgx %v: %s: %s\n", mode, s.name, f.msg)
						} else {
							fmt.Fprintf(os.Stderr, "FAIL: pgx %v: %s: panic %v\n", mode, s.name, r)
						}
						ok = false
					}
				}()
				s.fn(c)
				return true
			}()
			if ok {
				fmt.Printf("   ok   pgx %v: %s\n", mode, s.name)
				continue
			}
			failed++
			if !keepGoing {
				os.Exit(1)
			}
			c.Close(ctx)
			c = connect(mode)
		}
		for _, t := range []string{"pgx_types", "pgx_prep", "pgx_tx", "pgx_batch", "pgx_copy", "pgx_uniq", "pgx_emp", "pgx_dept", "pgx_sp", "pgx_arr", "pgx_uuid", "pgx_iv"} {
			c.Exec(ctx, "DROP TABLE IF EXISTS "+t)
		}
		c.Close(ctx)
	}
	if failed > 0 {
		os.Exit(1)
	}
	fmt.Println("   pgx passed")
}
