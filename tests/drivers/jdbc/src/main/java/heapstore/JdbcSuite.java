package heapstore;

import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.UUID;

import org.postgresql.PGConnection;
import org.postgresql.PGResultSetMetaData;
import org.postgresql.copy.CopyIn;
import org.postgresql.copy.CopyManager;
import org.postgresql.copy.CopyOut;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * pgjdbc against `heapstore serve` (or PostgreSQL, to check the suite itself).
 *
 * <p>Connection from the libpq environment variables: PGHOST (a directory: the Unix socket
 * PGHOST/.s.PGSQL.PGPORT through junixsocket; otherwise an address), PGPORT, PGUSER, PGPASSWORD,
 * PGDATABASE, PGSSLMODE (TCP only). Prints one line per scenario and exits non-zero on the first
 * failure (HEAPSTORE_KEEP_GOING=1: run them all, then exit non-zero if any failed).
 */
public final class JdbcSuite {
    static final class Fail extends RuntimeException {
        Fail(String m) {
            super(m);
        }
    }

    interface Scenario {
        void run(Connection c) throws Exception;
    }

    static void check(boolean cond, String what) {
        if (!cond) {
            throw new Fail(what);
        }
    }

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? dflt : v;
    }

    static Connection connect() throws SQLException {
        String host = env("PGHOST", "localhost");
        String port = env("PGPORT", "5432");
        String db = env("PGDATABASE", env("PGUSER", "postgres"));
        Properties p = new Properties();
        p.setProperty("user", env("PGUSER", "postgres"));
        if (System.getenv("PGPASSWORD") != null) {
            p.setProperty("password", System.getenv("PGPASSWORD"));
        }
        String url;
        if (host.startsWith("/")) {
            url = "jdbc:postgresql://localhost:" + port + "/" + db;
            p.setProperty("socketFactory", "org.newsclub.net.unix.AFUNIXSocketFactory$FactoryArg");
            p.setProperty("socketFactoryArg", host + "/.s.PGSQL." + port);
            p.setProperty("sslmode", "disable");
        } else {
            url = "jdbc:postgresql://" + host + ":" + port + "/" + db;
            p.setProperty("sslmode", env("PGSSLMODE", "prefer"));
        }
        return DriverManager.getConnection(url, p);
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    static long count(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            check(r.next(), "no row from " + sql);
            return r.getLong(1);
        }
    }

    static final String TYPES_DDL = "CREATE TABLE %s (id int4 PRIMARY KEY, b bool, i2 int2, i4 int4, i8 int8, f4 float4, "
            + "f8 float8, n numeric, t text, vc varchar(10), c char(5), by bytea, d date, ts timestamp)";

    /** Rows: id, bool, short, int, long, float, double, BigDecimal, text, varchar, char, bytes, LocalDate, LocalDateTime. */
    static final Object[][] ROWS = {
        {1, true, (short) -32768, Integer.MIN_VALUE, Long.MIN_VALUE, -1.5f, -Double.MAX_VALUE,
            new BigDecimal("-12345678901234567890.123456789012345678901234567890"), "", "ñ☃😀日本", "ab",
            "\0\\x41\\\\\0".getBytes(StandardCharsets.ISO_8859_1), LocalDate.of(2024, 2, 29),
            LocalDateTime.of(2024, 2, 29, 23, 59, 59, 123456000)},
        {2, false, (short) 32767, Integer.MAX_VALUE, Long.MAX_VALUE, 3.25f, 0.1,
            new BigDecimal("0.000000000000000000001"), "tab\there 'q' \"dq\" back\\slash\nnewline", "0123456789", "abcde",
            new byte[0], LocalDate.of(1999, 12, 31), LocalDateTime.of(1970, 1, 1, 0, 0)},
        {3, null, null, null, null, null, null, null, null, null, null, null, null, null},
        {4, true, (short) 0, 0, 0L, 0f, 1e-300, new BigDecimal("100000000000000000000000000000"), "x".repeat(5000), "a", "",
            new byte[] {(byte) 0xff, '\\'}, LocalDate.of(1, 1, 1), LocalDateTime.of(2000, 1, 1, 12, 0, 0, 1000)},
        // 'infinity' / '-infinity' (pgjdbc maps LocalDate.MAX / LocalDateTime.MIN)
        {5, null, null, null, null, null, null, null, null, null, null, null, LocalDate.MAX, LocalDateTime.MIN},
    };

    static final int[] SQL_TYPES = {Types.INTEGER, Types.BOOLEAN, Types.SMALLINT, Types.INTEGER, Types.BIGINT, Types.REAL,
        Types.DOUBLE, Types.NUMERIC, Types.VARCHAR, Types.VARCHAR, Types.CHAR, Types.BINARY, Types.DATE, Types.TIMESTAMP};

    static void bind(PreparedStatement ps, Object[] row, int id) throws SQLException {
        ps.setInt(1, id);
        for (int i = 1; i < row.length; i++) {
            Object v = row[i];
            int k = i + 1;
            if (v == null) {
                ps.setNull(k, SQL_TYPES[i]);
            } else if (v instanceof Boolean) {
                ps.setBoolean(k, (Boolean) v);
            } else if (v instanceof Short) {
                ps.setShort(k, (Short) v);
            } else if (v instanceof Integer) {
                ps.setInt(k, (Integer) v);
            } else if (v instanceof Long) {
                ps.setLong(k, (Long) v);
            } else if (v instanceof Float) {
                ps.setFloat(k, (Float) v);
            } else if (v instanceof Double) {
                ps.setDouble(k, (Double) v);
            } else if (v instanceof BigDecimal) {
                ps.setBigDecimal(k, (BigDecimal) v);
            } else if (v instanceof String) {
                ps.setString(k, (String) v);
            } else if (v instanceof byte[]) {
                ps.setBytes(k, (byte[]) v);
            } else {
                ps.setObject(k, v);
            }
        }
    }

    static Object[] read(ResultSet r) throws SQLException {
        Object[] o = new Object[14];
        o[0] = r.getInt(1);
        o[1] = r.getBoolean(2);
        o[2] = r.getShort(3);
        o[3] = r.getInt(4);
        o[4] = r.getLong(5);
        o[5] = r.getFloat(6);
        o[6] = r.getDouble(7);
        o[7] = r.getBigDecimal(8);
        o[8] = r.getString(9);
        o[9] = r.getString(10);
        o[10] = r.getString(11);
        o[11] = r.getBytes(12);
        o[12] = r.getObject(13, LocalDate.class);
        o[13] = r.getObject(14, LocalDateTime.class);
        for (int i = 1; i < 8; i++) {
            if (r.getObject(i + 1) == null) {
                o[i] = null;
            }
        }
        return o;
    }

    static Object[] expected(Object[] row, int id) {
        Object[] w = row.clone();
        w[0] = id;
        if (w[10] != null) {
            w[10] = String.format("%-5s", w[10]);
        }
        return w;
    }

    static boolean same(Object[] a, Object[] b) {
        for (int i = 0; i < a.length; i++) {
            Object x = a[i], y = b[i];
            if (x instanceof BigDecimal && y instanceof BigDecimal) {
                if (((BigDecimal) x).compareTo((BigDecimal) y) != 0) {
                    return false;
                }
            } else if (x instanceof byte[] && y instanceof byte[]) {
                if (!Arrays.equals((byte[]) x, (byte[]) y)) {
                    return false;
                }
            } else if (!Objects.equals(x, y)) {
                return false;
            }
        }
        return true;
    }

    static String show(Object[] row) {
        Object[] s = row.clone();
        for (int i = 0; i < s.length; i++) {
            if (s[i] instanceof byte[]) {
                s[i] = Arrays.toString((byte[]) s[i]);
            } else if (s[i] instanceof String && ((String) s[i]).length() > 40) {
                s[i] = ((String) s[i]).substring(0, 40) + "...";
            }
        }
        return Arrays.toString(s);
    }

    static void types(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_types");
        exec(c, String.format(TYPES_DDL, "jd_types"));
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_types VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            for (Object[] row : ROWS) {
                bind(ps, row, (Integer) row[0]);
                check(ps.executeUpdate() == 1, "insert");
            }
        }
        // Seven times: past prepareThreshold (5) pgjdbc uses a named statement and binary results.
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM jd_types WHERE id >= ? ORDER BY id")) {
            for (int round = 0; round < 7; round++) {
                ps.setInt(1, 0);
                int i = 0;
                try (ResultSet r = ps.executeQuery()) {
                    while (r.next()) {
                        Object[] got = read(r);
                        Object[] want = expected(ROWS[i], (Integer) ROWS[i][0]);
                        check(same(got, want), "round " + round + " row " + want[0] + ": got " + show(got) + ", want " + show(want));
                        i++;
                    }
                }
                check(i == ROWS.length, i + " rows back");
            }
        }
        // Parameters in WHERE, compared on the server.
        String[] cols = {"i8", "n", "by", "t", "vc", "c", "d", "ts", "f8", "f4"};
        int[] idx = {4, 7, 11, 8, 9, 10, 12, 13, 6, 5};
        for (int k = 0; k < cols.length; k++) {
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM jd_types WHERE " + cols[k] + " = ?")) {
                Object v = ROWS[0][idx[k]];
                if (v instanceof byte[]) {
                    ps.setBytes(1, (byte[]) v);
                } else if (v instanceof Float) {
                    ps.setFloat(1, (Float) v);
                } else {
                    ps.setObject(1, v);
                }
                try (ResultSet r = ps.executeQuery()) {
                    r.next();
                    check(r.getLong(1) == 1, "WHERE " + cols[k] + " = ? matched " + r.getLong(1));
                }
            }
        }
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT d::text, ts::text FROM jd_types WHERE id = 5")) {
            r.next();
            check("infinity".equals(r.getString(1)) && "-infinity".equals(r.getString(2)),
                    "infinity stored as " + r.getString(1) + " / " + r.getString(2));
        }
    }

    static void prepared(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_prep");
        exec(c, "CREATE TABLE jd_prep (id int8 PRIMARY KEY, t text)");
        try (PreparedStatement ins = c.prepareStatement("INSERT INTO jd_prep VALUES (?, ?)")) {
            for (int i = 0; i < 200; i++) {
                ins.setLong(1, i);
                ins.setString(2, "v" + i);
                ins.executeUpdate();
            }
        }
        try (PreparedStatement sel = c.prepareStatement("SELECT t FROM jd_prep WHERE id = ?")) {
            for (int i = 0; i < 200; i += 7) {
                sel.setLong(1, i);
                try (ResultSet r = sel.executeQuery()) {
                    check(r.next() && ("v" + i).equals(r.getString(1)), "prepared select " + i);
                }
            }
            check(sel.getMetaData().getColumnType(1) == Types.VARCHAR, "result column type");
            check(sel.getParameterMetaData().getParameterType(1) == Types.BIGINT, "parameter type");
        }
    }

    static void resultSetMetaData(Connection c) throws Exception {
        // getColumnTypeName / isNullable / isAutoIncrement / getBaseColumnName make pgjdbc look the
        // columns up in pg_attribute (one catalog query per result).
        try (PreparedStatement ps = c.prepareStatement("SELECT id, t FROM jd_prep WHERE id = ?")) {
            ResultSetMetaData m = ps.getMetaData();
            check("int8".equals(m.getColumnTypeName(1)) && "text".equals(m.getColumnTypeName(2)),
                    "getColumnTypeName " + m.getColumnTypeName(1) + ", " + m.getColumnTypeName(2));
            check(m.isNullable(1) == ResultSetMetaData.columnNoNulls && m.isNullable(2) == ResultSetMetaData.columnNullable, "isNullable");
            check(!m.isAutoIncrement(1), "isAutoIncrement");
            PGResultSetMetaData pm = m.unwrap(PGResultSetMetaData.class);
            check("id".equals(pm.getBaseColumnName(1)) && "jd_prep".equals(pm.getBaseTableName(1)), "getBaseColumnName / getBaseTableName");
        }
    }

    static void transactions(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_tx");
        exec(c, "CREATE TABLE jd_tx (id int4 PRIMARY KEY)");
        c.setAutoCommit(false);
        try {
            exec(c, "INSERT INTO jd_tx VALUES (1)");
            c.commit();
            exec(c, "INSERT INTO jd_tx VALUES (2)");
            c.rollback();
            check(count(c, "SELECT count(*) FROM jd_tx") == 1, "commit / rollback");
            c.commit();
            try {
                exec(c, "INSERT INTO jd_tx VALUES (1)");
                check(false, "duplicate accepted");
            } catch (PSQLException e) {
                check("23505".equals(e.getSQLState()), "sqlstate " + e.getSQLState());
            }
            try {
                exec(c, "SELECT 1");
                check(false, "statement accepted in a failed transaction");
            } catch (PSQLException e) {
                check("25P02".equals(e.getSQLState()), "sqlstate " + e.getSQLState());
            }
            c.rollback();
            check(count(c, "SELECT count(*) FROM jd_tx") == 1, "usable after a failed transaction");
            c.commit();
        } finally {
            c.setAutoCommit(true);
        }
    }

    static void isolation(Connection c) throws Exception {
        // SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL ..., and BEGIN READ ONLY.
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        check(c.getTransactionIsolation() == Connection.TRANSACTION_REPEATABLE_READ, "getTransactionIsolation");
        c.setAutoCommit(false);
        try {
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SHOW transaction_isolation")) {
                check(r.next() && "repeatable read".equals(r.getString(1)), "isolation level");
            }
            c.commit();
            c.setReadOnly(true);
            try {
                exec(c, "INSERT INTO jd_tx VALUES (9)");
                check(false, "write in a read-only transaction");
            } catch (PSQLException e) {
                check("25006".equals(e.getSQLState()), "sqlstate " + e.getSQLState());
            }
            c.rollback();
        } finally {
            c.setReadOnly(false);
            c.setAutoCommit(true);
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
    }

    static void batch(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_batch");
        exec(c, "CREATE TABLE jd_batch (id int4 PRIMARY KEY, t text)");
        exec(c, "INSERT INTO jd_batch VALUES (100, 'pre')");
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_batch VALUES (?, ?)")) {
            for (int i = 0; i < 10; i++) {
                ps.setInt(1, i);
                ps.setString(2, "r" + i);
                ps.addBatch();
            }
            int[] n = ps.executeBatch();
            check(n.length == 10 && Arrays.stream(n).allMatch(x -> x == 1), "update counts " + Arrays.toString(n));
        }
        // Autocommit: pgjdbc sends the whole batch before one Sync, one implicit transaction, so a
        // duplicate at entry 4 leaves none of it.
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_batch VALUES (?, ?)")) {
            for (int id : new int[] {20, 21, 22, 100, 23}) {
                ps.setInt(1, id);
                ps.setString(2, "b");
                ps.addBatch();
            }
            try {
                ps.executeBatch();
                check(false, "duplicate in a batch not reported");
            } catch (BatchUpdateException e) {
                SQLException cause = e.getNextException();
                check(cause != null && "23505".equals(cause.getSQLState()), "batch error " + e + " / " + cause);
            }
        }
        long n = count(c, "SELECT count(*) FROM jd_batch WHERE id >= 20 AND id < 30");
        check(n == 0, "batch with a duplicate left " + n + " rows (want 0: all-or-nothing)");
        // A Statement batch (simple queries).
        try (Statement s = c.createStatement()) {
            s.addBatch("INSERT INTO jd_batch VALUES (40, 's')");
            s.addBatch("UPDATE jd_batch SET t = 'u' WHERE id < 5");
            s.addBatch("DELETE FROM jd_batch WHERE id = 9");
            int[] counts = s.executeBatch();
            check(Arrays.equals(counts, new int[] {1, 5, 1}), "statement batch counts " + Arrays.toString(counts));
        }
    }

    static void copy(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_copy");
        exec(c, "CREATE TABLE jd_copy (id int4 PRIMARY KEY, t text, by bytea, n numeric, d date)");
        CopyManager cm = c.unwrap(PGConnection.class).getCopyAPI();
        CopyIn in = cm.copyIn("COPY jd_copy FROM STDIN");
        for (int i = 0; i < 1000; i++) {
            String line = i + "\trow\\t" + i + " ü\t\\\\x00" + String.format("%02x", i % 256) + "\t" + (i % 3 == 0 ? "\\N" : "-" + i + ".5")
                    + "\t2024-02-29\n";
            byte[] b = line.getBytes(StandardCharsets.UTF_8);
            in.writeToCopy(b, 0, b.length);
        }
        check(in.endCopy() == 1000, "copyIn count");
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT t, by, n, d FROM jd_copy WHERE id = 7")) {
            check(r.next(), "row 7");
            check("row\t7 ü".equals(r.getString(1)) && Arrays.equals(r.getBytes(2), new byte[] {0, 7})
                    && new BigDecimal("-7.5").equals(r.getBigDecimal(3)) && LocalDate.of(2024, 2, 29).equals(r.getObject(4, LocalDate.class)),
                    "copied row 7: " + r.getString(1) + " " + Arrays.toString(r.getBytes(2)) + " " + r.getBigDecimal(3));
        }
        CopyOut out = cm.copyOut("COPY jd_copy (id, t, by) TO STDOUT");
        List<String> lines = new ArrayList<>();
        byte[] buf;
        while ((buf = out.readFromCopy()) != null) {
            lines.add(new String(buf, StandardCharsets.UTF_8));
        }
        check(lines.size() == 1000 && out.getHandledRowCount() == 1000, "copyOut " + lines.size() + " rows");
        check(lines.contains("7\trow\\t7 ü\t\\\\x0007\n"), "copyOut line: " + lines.get(7));
        // Reader / Writer forms.
        StringWriter w = new StringWriter();
        check(cm.copyOut("COPY jd_copy (id, n) TO STDOUT (FORMAT csv)", w) == 1000, "copyOut(Writer)");
        check(w.toString().contains("\n3,\n") && w.toString().contains("\n4,-4.5\n"), "csv out");
        exec(c, "DELETE FROM jd_copy");
        check(cm.copyIn("COPY jd_copy (id, n) FROM STDIN (FORMAT csv)", new StringReader(w.toString())) == 1000, "copyIn(Reader)");
        check(count(c, "SELECT count(*) FROM jd_copy WHERE n IS NULL") == 334, "csv in NULLs");
    }

    static void unique(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_uniq");
        exec(c, "CREATE TABLE jd_uniq (id int4 PRIMARY KEY, t text)");
        exec(c, "INSERT INTO jd_uniq VALUES (4, 'a')");
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_uniq VALUES (?, ?)")) {
            ps.setInt(1, 4);
            ps.setString(2, "b");
            ps.executeUpdate();
            check(false, "duplicate accepted");
        } catch (PSQLException e) {
            ServerErrorMessage m = e.getServerErrorMessage();
            check("23505".equals(e.getSQLState()), "sqlstate " + e.getSQLState());
            check(m != null && "jd_uniq_pkey".equals(m.getConstraint()), "constraint " + (m == null ? null : m.getConstraint()));
            check("jd_uniq".equals(m.getTable()), "table " + m.getTable());
            check("Key (id)=(4) already exists.".equals(m.getDetail()), "detail " + m.getDetail());
        }
        check(count(c, "SELECT count(*) FROM jd_uniq") == 1, "usable after 23505");
    }

    static void metaTables(Connection c) throws Exception {
        DatabaseMetaData md = c.getMetaData();
        check("PostgreSQL".equals(md.getDatabaseProductName()), "product " + md.getDatabaseProductName());
        check(md.getDatabaseMajorVersion() == 15, "major version " + md.getDatabaseMajorVersion());
        List<String> tables = new ArrayList<>();
        try (ResultSet r = md.getTables(null, "public", "jd_%", new String[] {"TABLE"})) {
            while (r.next()) {
                tables.add(r.getString("TABLE_NAME"));
                check("TABLE".equals(r.getString("TABLE_TYPE")), "TABLE_TYPE " + r.getString("TABLE_TYPE"));
            }
        }
        check(tables.contains("jd_types") && tables.contains("jd_uniq"), "getTables " + tables);
    }

    static void metaColumns(Connection c) throws Exception {
        DatabaseMetaData md = c.getMetaData();
        List<String> cols = new ArrayList<>();
        try (ResultSet r = md.getColumns(null, "public", "jd_types", "%")) {
            while (r.next()) {
                String name = r.getString("COLUMN_NAME");
                cols.add(name + ":" + r.getString("TYPE_NAME") + ":" + r.getInt("DATA_TYPE"));
                if (name.equals("vc")) {
                    check(r.getInt("COLUMN_SIZE") == 10, "varchar(10) COLUMN_SIZE " + r.getInt("COLUMN_SIZE"));
                }
                if (name.equals("id")) {
                    check(r.getInt("NULLABLE") == DatabaseMetaData.columnNoNulls, "id NULLABLE");
                }
            }
        }
        List<String> want = List.of("id:int4:4", "b:bool:-7", "i2:int2:5", "i4:int4:4", "i8:int8:-5", "f4:float4:7", "f8:float8:8",
                "n:numeric:2", "t:text:12", "vc:varchar:12", "c:bpchar:1", "by:bytea:-2", "d:date:91", "ts:timestamp:93");
        check(cols.equals(want), "getColumns " + cols);
    }

    static void metaPrimaryKeys(Connection c) throws Exception {
        try (ResultSet r = c.getMetaData().getPrimaryKeys(null, "public", "jd_types")) {
            check(r.next() && "id".equals(r.getString("COLUMN_NAME")) && "jd_types_pkey".equals(r.getString("PK_NAME"))
                    && r.getInt("KEY_SEQ") == 1, "getPrimaryKeys");
            check(!r.next(), "one key column");
        }
        // A two-column key, in key order (not column order), and the unique indexes.
        exec(c, "DROP TABLE IF EXISTS jd_keys");
        exec(c, "CREATE TABLE jd_keys (a int4, b text, c int4, PRIMARY KEY (c, a), UNIQUE (b))");
        exec(c, "CREATE INDEX jd_keys_b_c ON jd_keys (b, c)");
        List<String> pk = new ArrayList<>();
        try (ResultSet r = c.getMetaData().getPrimaryKeys(null, "public", "jd_keys")) {
            while (r.next()) {
                pk.add(r.getString("COLUMN_NAME") + ":" + r.getInt("KEY_SEQ") + ":" + r.getString("PK_NAME"));
            }
        }
        check(pk.equals(List.of("c:1:jd_keys_pkey", "a:2:jd_keys_pkey")), "getPrimaryKeys of a two-column key " + pk);
        List<String> ix = new ArrayList<>();
        try (ResultSet r = c.getMetaData().getIndexInfo(null, "public", "jd_keys", false, false)) {
            while (r.next()) {
                ix.add(r.getString("INDEX_NAME") + ":" + r.getBoolean("NON_UNIQUE") + ":" + r.getInt("ORDINAL_POSITION") + ":"
                        + r.getString("COLUMN_NAME") + ":" + r.getString("ASC_OR_DESC"));
            }
        }
        check(ix.equals(List.of("jd_keys_b_key:false:1:b:A", "jd_keys_pkey:false:1:c:A", "jd_keys_pkey:false:2:a:A",
                "jd_keys_b_c:true:1:b:A", "jd_keys_b_c:true:2:c:A")), "getIndexInfo " + ix);
        List<String> unique = new ArrayList<>();
        try (ResultSet r = c.getMetaData().getIndexInfo(null, "public", "jd_keys", true, false)) {
            while (r.next()) {
                unique.add(r.getString("INDEX_NAME") + ":" + r.getString("COLUMN_NAME"));
            }
        }
        check(unique.equals(List.of("jd_keys_b_key:b", "jd_keys_pkey:c", "jd_keys_pkey:a")), "getIndexInfo unique " + unique);
        exec(c, "DROP TABLE jd_keys");
    }

    /** Foreign keys: getImportedKeys / getExportedKeys, and 23503 with its constraint name. */
    static void foreignKeys(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_child");
        exec(c, "DROP TABLE IF EXISTS jd_parent");
        exec(c, "CREATE TABLE jd_parent (a int4, b int4, PRIMARY KEY (a, b))");
        exec(c, "CREATE TABLE jd_child (id int4 PRIMARY KEY, x int4, y int4, "
                + "CONSTRAINT jd_fk FOREIGN KEY (x, y) REFERENCES jd_parent ON DELETE CASCADE)");
        List<String> imported = new ArrayList<>();
        try (ResultSet r = c.getMetaData().getImportedKeys(null, "public", "jd_child")) {
            while (r.next()) {
                imported.add(r.getString("PKTABLE_NAME") + "." + r.getString("PKCOLUMN_NAME") + "<-" + r.getString("FKCOLUMN_NAME") + ":"
                        + r.getInt("KEY_SEQ") + ":" + r.getString("FK_NAME") + ":" + r.getString("PK_NAME") + ":" + r.getInt("DELETE_RULE"));
            }
        }
        check(imported.equals(List.of("jd_parent.a<-x:1:jd_fk:jd_parent_pkey:0", "jd_parent.b<-y:2:jd_fk:jd_parent_pkey:0")),
                "getImportedKeys " + imported);
        List<String> exported = new ArrayList<>();
        try (ResultSet r = c.getMetaData().getExportedKeys(null, "public", "jd_parent")) {
            while (r.next()) {
                exported.add(r.getString("FKTABLE_NAME") + "." + r.getString("FKCOLUMN_NAME"));
            }
        }
        check(exported.equals(List.of("jd_child.x", "jd_child.y")), "getExportedKeys " + exported);
        exec(c, "INSERT INTO jd_parent VALUES (1, 1)");
        exec(c, "INSERT INTO jd_child VALUES (1, 1, 1)");
        try {
            exec(c, "INSERT INTO jd_child VALUES (2, 1, 2)");
            check(false, "a missing key accepted");
        } catch (SQLException e) {
            check("23503".equals(e.getSQLState()), "23503, not " + e.getSQLState());
            org.postgresql.util.ServerErrorMessage m = ((org.postgresql.util.PSQLException) e).getServerErrorMessage();
            check(m != null && "jd_fk".equals(m.getConstraint()), "constraint name in the error");
        }
        exec(c, "DELETE FROM jd_parent");
        try (Statement st = c.createStatement(); ResultSet r = st.executeQuery("SELECT count(*) FROM jd_child")) {
            check(r.next() && r.getInt(1) == 0, "ON DELETE CASCADE");
        }
        exec(c, "DROP TABLE jd_child");
        exec(c, "DROP TABLE jd_parent");
    }

    /** Arrays: createArrayOf and primitive arrays as parameters (binary), getArray, = ANY(?). */
    static void arrays(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_arr");
        exec(c, "CREATE TABLE jd_arr (id int4 PRIMARY KEY, ints int4[], tags text[], big int8[], vc varchar(5)[])");
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_arr VALUES (?, ?, ?, ?, ?)")) {
            for (int i = 1; i <= 7; i++) {
                ps.setInt(1, i);
                ps.setArray(2, c.createArrayOf("int4", new Integer[] {i, null, -i}));
                ps.setArray(3, c.createArrayOf("text", new String[] {"a b", "q\"z", null, "", "NULL"}));
                ps.setObject(4, new long[] {Long.MIN_VALUE, i});
                ps.setObject(5, new String[] {"x" + i});
                ps.executeUpdate();
            }
        }
        // Read back with text results, then (after five executions) binary ones.
        try (PreparedStatement ps = c.prepareStatement("SELECT ints, tags, big, vc FROM jd_arr WHERE id = ANY(?) ORDER BY id")) {
            for (int round = 0; round < 7; round++) {
                ps.setArray(1, c.createArrayOf("int4", new Integer[] {round + 1}));
                try (ResultSet r = ps.executeQuery()) {
                    check(r.next(), "row " + round);
                    Integer[] ints = (Integer[]) r.getArray(1).getArray();
                    check(Arrays.equals(ints, new Integer[] {round + 1, null, -(round + 1)}), "int4[] " + Arrays.toString(ints));
                    String[] tags = (String[]) r.getArray(2).getArray();
                    check(Arrays.equals(tags, new String[] {"a b", "q\"z", null, "", "NULL"}), "text[] " + Arrays.toString(tags));
                    Long[] big = (Long[]) r.getArray(3).getArray();
                    check(Arrays.equals(big, new Long[] {Long.MIN_VALUE, (long) round + 1}), "int8[] " + Arrays.toString(big));
                    String[] vc = (String[]) r.getArray(4).getArray();
                    check(Arrays.equals(vc, new String[] {"x" + (round + 1)}), "varchar[] " + Arrays.toString(vc));
                    check(!r.next(), "one row");
                }
            }
        }
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT ARRAY[[1,2],[3,4]], '{}'::int4[], array_agg(id ORDER BY id) FROM jd_arr")) {
            check(r.next(), "array row");
            Integer[][] m = (Integer[][]) r.getArray(1).getArray();
            check(m.length == 2 && m[1][0] == 3, "2-D array");
            check(((Integer[]) r.getArray(2).getArray()).length == 0, "empty array");
            check(Arrays.equals((Integer[]) r.getArray(3).getArray(), new Integer[] {1, 2, 3, 4, 5, 6, 7}), "array_agg");
        }
        exec(c, "DROP TABLE jd_arr");
    }

    static void queries(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_emp");
        exec(c, "DROP TABLE IF EXISTS jd_dept");
        exec(c, "CREATE TABLE jd_dept (id int4 PRIMARY KEY, name text)");
        exec(c, "CREATE TABLE jd_emp (id int4 PRIMARY KEY, dept int4, salary numeric, name varchar(20))");
        exec(c, "INSERT INTO jd_dept VALUES (1, 'eng'), (2, 'ops'), (3, 'empty')");
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_emp VALUES (?, ?, ?, ?)")) {
            for (int i = 1; i <= 10; i++) {
                ps.setInt(1, i);
                ps.setInt(2, 1 + i % 2);
                ps.setBigDecimal(3, BigDecimal.valueOf(1000 + i));
                ps.setString(4, "e" + i);
                ps.addBatch();
            }
            ps.executeBatch();
        }
        List<String> got = new ArrayList<>();
        try (Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT dept, count(*), sum(salary) FROM jd_emp GROUP BY dept ORDER BY dept")) {
            while (r.next()) {
                got.add(r.getInt(1) + ":" + r.getLong(2) + ":" + r.getBigDecimal(3));
            }
        }
        check(got.equals(List.of("1:5:5030", "2:5:5025")), "GROUP BY " + got);
        got.clear();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT d.name, e.name FROM jd_emp e JOIN jd_dept d ON d.id = e.dept WHERE e.id <= ? ORDER BY e.id")) {
            ps.setInt(1, 3);
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) {
                    got.add(r.getString(1) + ":" + r.getString(2));
                }
            }
        }
        check(got.equals(List.of("ops:e1", "eng:e2", "ops:e3")), "JOIN " + got);
        got.clear();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT id FROM jd_emp ORDER BY salary DESC LIMIT 3")) {
            while (r.next()) {
                got.add(r.getString(1));
            }
        }
        check(got.equals(List.of("10", "9", "8")), "ORDER BY / LIMIT " + got);
    }

    static void fetchSize(Connection c) throws Exception {
        // Outside autocommit with a fetch size pgjdbc executes the portal n rows at a time.
        exec(c, "DROP TABLE IF EXISTS jd_fetch");
        exec(c, "CREATE TABLE jd_fetch (id int8 PRIMARY KEY)");
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_fetch VALUES (?)")) {
            for (int i = 0; i < 200; i++) {
                ps.setLong(1, i);
                ps.addBatch();
            }
            ps.executeBatch();
        }
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement("SELECT id FROM jd_fetch WHERE id >= ? ORDER BY id")) {
            ps.setFetchSize(7);
            ps.setLong(1, 0);
            int n = 0;
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) {
                    check(r.getLong(1) == n, "row " + n);
                    n++;
                }
            }
            check(n == 200, "fetched " + n);
            c.commit();
        } finally {
            c.setAutoCommit(true);
        }
    }

    static void savepoints(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_sp");
        exec(c, "CREATE TABLE jd_sp (id int4 PRIMARY KEY)");
        c.setAutoCommit(false);
        try {
            exec(c, "INSERT INTO jd_sp VALUES (1)");
            Savepoint sp = c.setSavepoint();
            exec(c, "INSERT INTO jd_sp VALUES (2)");
            try {
                exec(c, "INSERT INTO jd_sp VALUES (1)");
                check(false, "duplicate accepted");
            } catch (PSQLException e) {
                check("23505".equals(e.getSQLState()), "sqlstate " + e.getSQLState());
            }
            c.rollback(sp);
            Savepoint named = c.setSavepoint("keep");
            exec(c, "INSERT INTO jd_sp VALUES (3)");
            c.releaseSavepoint(named);
            c.commit();
        } finally {
            c.rollback();
            c.setAutoCommit(true);
        }
        List<Long> ids = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT id FROM jd_sp ORDER BY id")) {
            while (r.next()) {
                ids.add(r.getLong(1));
            }
        }
        check(ids.equals(List.of(1L, 3L)), "savepoints left " + ids);
    }

    static void uuids(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_uuid");
        exec(c, "CREATE TABLE jd_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), ref uuid)");
        UUID u1 = UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        // setObject(UUID) sends a uuid parameter (binary once the statement is prepared).
        for (int i = 0; i < 7; i++) {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_uuid (ref) VALUES (?) RETURNING id")) {
                ps.setObject(1, u1);
                try (ResultSet r = ps.executeQuery()) {
                    check(r.next(), "RETURNING id");
                    UUID gen = r.getObject(1, UUID.class);
                    check(gen != null && gen.version() == 4, "gen_random_uuid() " + gen);
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_uuid VALUES (?, ?)")) {
            ps.setObject(1, u1);
            ps.setNull(2, Types.OTHER);
            ps.executeUpdate();
        }
        for (int i = 0; i < 7; i++) {
            try (PreparedStatement ps = c.prepareStatement("SELECT id, ref FROM jd_uuid WHERE id = ?")) {
                ps.setObject(1, u1);
                try (ResultSet r = ps.executeQuery()) {
                    check(r.next(), "uuid row");
                    check(u1.equals(r.getObject(1)) && r.getObject(2) == null, "uuid round trip " + r.getObject(1));
                    check("uuid".equals(r.getMetaData().getColumnTypeName(1)), "type name " + r.getMetaData().getColumnTypeName(1));
                }
            }
        }
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT count(*) FROM jd_uuid WHERE ref = 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'")) {
            check(r.next() && r.getLong(1) == 7, "uuid literal comparison");
        }
        exec(c, "DROP TABLE jd_uuid");
        // interval: text in and out, parsed by pgjdbc's PGInterval.
        try (PreparedStatement ps = c.prepareStatement("SELECT interval '1 year 2 mons 3 days 04:05:06.5', ?::interval * 2")) {
            ps.setString(1, "1 day 02:00:00");
            try (ResultSet r = ps.executeQuery()) {
                check(r.next(), "interval row");
                org.postgresql.util.PGInterval a = new org.postgresql.util.PGInterval(r.getString(1));
                check(a.getYears() == 1 && a.getMonths() == 2 && a.getDays() == 3 && a.getHours() == 4 && a.getSeconds() == 6.5, "PGInterval " + a.getValue());
                check("2 days 04:00:00".equals(r.getString(2)), "interval * 2 " + r.getString(2));
                check("interval".equals(r.getMetaData().getColumnTypeName(1)), "interval type name " + r.getMetaData().getColumnTypeName(1));
            }
        }
        // jsonb: a document as a string parameter (stringtype=unspecified is not needed with a
        // cast), canonical text out, the operators, and the column's type name.
        exec(c, "DROP TABLE IF EXISTS jd_jsonb");
        exec(c, "CREATE TABLE jd_jsonb (id int PRIMARY KEY, doc jsonb)");
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_jsonb VALUES (?, ?::jsonb)")) {
            ps.setInt(1, 1);
            ps.setString(2, "{\"b\": [1, \"x\"], \"a\": null}");
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT doc, doc -> 'b' ->> 1 FROM jd_jsonb WHERE doc @> ?::jsonb")) {
            ps.setString(1, "{\"b\": [\"x\"]}");
            try (ResultSet r = ps.executeQuery()) {
                check(r.next(), "jsonb row");
                check("{\"a\": null, \"b\": [1, \"x\"]}".equals(r.getString(1)), "jsonb text " + r.getString(1));
                check("x".equals(r.getString(2)), "jsonb ->> " + r.getString(2));
                check("jsonb".equals(r.getMetaData().getColumnTypeName(1)), "jsonb type name " + r.getMetaData().getColumnTypeName(1));
            }
        }
        exec(c, "DROP TABLE jd_jsonb");
    }

    /**
     * A JVM outside UTC: pgjdbc sends the JVM's zone as TimeZone in the startup packet (a
     * connection used to be refused). Instants in and out (OffsetDateTime, Timestamp, text and
     * binary after the prepare threshold), the server's text in that zone, and casts and fields
     * on its wall clock.
     */
    static void timeZones(Connection ignored) throws Exception {
        java.util.TimeZone before = java.util.TimeZone.getDefault();
        java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("America/New_York"));
        try (Connection c = connect()) {
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SHOW TimeZone")) {
                check(r.next() && "America/New_York".equals(r.getString(1)), "TimeZone from the JVM's zone");
            }
            exec(c, "DROP TABLE IF EXISTS jd_tz");
            exec(c, "CREATE TABLE jd_tz (id int PRIMARY KEY, t timestamptz, l timestamp)");
            java.time.OffsetDateTime summer = java.time.OffsetDateTime.parse("2024-07-01T12:00:00Z");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_tz VALUES (?, ?, ?)")) {
                for (int i = 1; i <= 7; i++) {
                    ps.setInt(1, i);
                    ps.setObject(2, summer);
                    ps.setTimestamp(3, java.sql.Timestamp.valueOf("2024-07-01 08:00:00"));
                    ps.executeUpdate();
                }
            }
            for (int i = 0; i < 7; i++) {
                try (PreparedStatement ps = c.prepareStatement("SELECT t, t::text, l::timestamptz = t, extract(hour from t), t::date, l FROM jd_tz WHERE id = ?")) {
                    ps.setInt(1, i + 1);
                    try (ResultSet r = ps.executeQuery()) {
                        check(r.next(), "time zone row");
                        java.time.OffsetDateTime got = r.getObject(1, java.time.OffsetDateTime.class);
                        check(got.toInstant().equals(summer.toInstant()), "timestamptz instant " + got);
                        check(r.getTimestamp(1).toInstant().equals(summer.toInstant()), "getTimestamp instant " + r.getTimestamp(1));
                        check("2024-07-01 08:00:00-04".equals(r.getString(2)), "timestamptz text in New York " + r.getString(2));
                        check(r.getBoolean(3), "timestamp to timestamptz on the session's clocks");
                        check(r.getInt(4) == 8, "extract(hour) on the session's clocks " + r.getInt(4));
                        check(LocalDate.of(2024, 7, 1).equals(r.getObject(5, LocalDate.class)), "timestamptz::date " + r.getObject(5));
                        check(LocalDateTime.of(2024, 7, 1, 8, 0).equals(r.getObject(6, LocalDateTime.class)), "setTimestamp into timestamp " + r.getObject(6));
                    }
                }
            }
            exec(c, "DROP TABLE jd_tz");
        } finally {
            java.util.TimeZone.setDefault(before);
        }
    }

    /**
     * time and timetz: setTime / setObject(LocalTime / OffsetTime) in, getTime /
     * getObject(LocalTime / OffsetTime) and text out, before and after the prepare threshold
     * (binary results then), and the column type names.
     */
    static void times(Connection c) throws Exception {
        exec(c, "DROP TABLE IF EXISTS jd_time");
        exec(c, "CREATE TABLE jd_time (id int PRIMARY KEY, t time, tz timetz)");
        java.time.LocalTime lt = java.time.LocalTime.of(10, 30, 15, 123456000);
        java.time.OffsetTime ot = java.time.OffsetTime.of(23, 59, 59, 999999000, java.time.ZoneOffset.ofHoursMinutes(-3, -30));
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jd_time VALUES (?, ?, ?)")) {
            for (int i = 1; i <= 7; i++) {
                ps.setInt(1, i);
                if (i % 2 == 0) {
                    ps.setTime(2, java.sql.Time.valueOf("10:30:15"));
                } else {
                    ps.setObject(2, lt);
                }
                ps.setObject(3, ot);
                ps.executeUpdate();
            }
        }
        for (int i = 1; i <= 7; i++) {
            try (PreparedStatement ps = c.prepareStatement("SELECT t, tz, t::text, tz::text, t + interval '1 hour', extract(timezone_hour FROM tz) FROM jd_time WHERE id = ?")) {
                ps.setInt(1, i);
                try (ResultSet r = ps.executeQuery()) {
                    check(r.next(), "time row");
                    java.time.LocalTime want = i % 2 == 0 ? java.time.LocalTime.of(10, 30, 15) : lt;
                    check(want.equals(r.getObject(1, java.time.LocalTime.class)), "getObject(LocalTime) " + r.getObject(1, java.time.LocalTime.class));
                    check(ot.equals(r.getObject(2, java.time.OffsetTime.class)), "getObject(OffsetTime) " + r.getObject(2, java.time.OffsetTime.class));
                    check((i % 2 == 0 ? "10:30:15" : "10:30:15.123456").equals(r.getString(3)), "time text " + r.getString(3));
                    check("23:59:59.999999-03:30".equals(r.getString(4)), "timetz text " + r.getString(4));
                    check(want.plusHours(1).equals(r.getObject(5, java.time.LocalTime.class)), "time + interval " + r.getObject(5));
                    check(r.getInt(6) == -3, "timezone_hour " + r.getInt(6));
                    check("time".equals(r.getMetaData().getColumnTypeName(1)) && "timetz".equals(r.getMetaData().getColumnTypeName(2)),
                        "type names " + r.getMetaData().getColumnTypeName(1) + " " + r.getMetaData().getColumnTypeName(2));
                    check(r.getMetaData().getColumnType(1) == Types.TIME, "java.sql.Types.TIME " + r.getMetaData().getColumnType(1));
                }
            }
        }
        exec(c, "DROP TABLE jd_time");
    }

    public static void main(String[] args) throws Exception {
        boolean keepGoing = "1".equals(System.getenv("HEAPSTORE_KEEP_GOING"));
        Object[][] scenarios = {
            {"types round trip (text and binary results, NULLs, edges, infinity)", (Scenario) JdbcSuite::types},
            {"prepared statements reused (server-side prepare after 5)", (Scenario) JdbcSuite::prepared},
            {"transactions: commit, rollback, error then rollback", (Scenario) JdbcSuite::transactions},
            {"transactions: setTransactionIsolation, setReadOnly", (Scenario) JdbcSuite::isolation},
            {"executeBatch, all-or-nothing in autocommit", (Scenario) JdbcSuite::batch},
            {"CopyManager: copyIn / copyOut row by row, Reader / Writer", (Scenario) JdbcSuite::copy},
            {"unique violation 23505, connection usable", (Scenario) JdbcSuite::unique},
            {"ResultSetMetaData: getColumnTypeName, isNullable, getBaseTableName", (Scenario) JdbcSuite::resultSetMetaData},
            {"DatabaseMetaData.getTables", (Scenario) JdbcSuite::metaTables},
            {"DatabaseMetaData.getColumns", (Scenario) JdbcSuite::metaColumns},
            {"DatabaseMetaData.getPrimaryKeys, getIndexInfo", (Scenario) JdbcSuite::metaPrimaryKeys},
            {"foreign keys: getImportedKeys, getExportedKeys, 23503, ON DELETE CASCADE", (Scenario) JdbcSuite::foreignKeys},
            {"arrays: createArrayOf, primitive arrays, getArray, = ANY(?), text and binary", (Scenario) JdbcSuite::arrays},
            {"queries: GROUP BY, JOIN, ORDER BY / LIMIT", (Scenario) JdbcSuite::queries},
            {"fetch size (portal in pieces)", (Scenario) JdbcSuite::fetchSize},
            {"savepoints: setSavepoint, rollback(savepoint), releaseSavepoint", (Scenario) JdbcSuite::savepoints},
            {"uuid: setObject(UUID) / getObject, DEFAULT gen_random_uuid(), RETURNING; interval: PGInterval; jsonb", (Scenario) JdbcSuite::uuids},
            {"a JVM in America/New_York: TimeZone at startup, timestamptz instants and text", (Scenario) JdbcSuite::timeZones},
            {"time and timetz: LocalTime / OffsetTime / java.sql.Time in and out, text and binary", (Scenario) JdbcSuite::times},
        };
        int failed = 0;
        Connection c = connect();
        System.out.println("   pgjdbc " + c.getMetaData().getDriverVersion() + ", server " + c.getMetaData().getDatabaseProductVersion());
        for (Object[] s : scenarios) {
            String name = (String) s[0];
            try {
                ((Scenario) s[1]).run(c);
                System.out.println("   ok   jdbc: " + name);
            } catch (Exception e) {
                failed++;
                String what = e instanceof Fail ? e.getMessage() : e.toString();
                if (e instanceof SQLException && !(e instanceof Fail)) {
                    what += " [sqlstate " + ((SQLException) e).getSQLState() + "]";
                }
                System.err.println("FAIL: jdbc: " + name + ": " + what);
                if (!(e instanceof Fail) && !(e instanceof SQLException)) {
                    e.printStackTrace();
                }
                if (!keepGoing) {
                    System.exit(1);
                }
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // reconnect below
                }
                c = connect();
            }
        }
        for (String t : new String[] {"jd_types", "jd_prep", "jd_tx", "jd_batch", "jd_copy", "jd_uniq", "jd_emp", "jd_dept", "jd_fetch", "jd_sp", "jd_uuid", "jd_tz"}) {
            try {
                exec(c, "DROP TABLE IF EXISTS " + t);
            } catch (SQLException ignored) {
                // best effort
            }
        }
        c.close();
        if (failed > 0) {
            System.exit(1);
        }
        System.out.println("   jdbc passed");
        System.exit(0);
    }
}
