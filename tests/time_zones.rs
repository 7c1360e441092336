//! The session's `TimeZone`: a timestamptz is read and written on that zone's clocks, casts,
//! fields and calendar arithmetic use it, each session keeps its own zone (also two sessions
//! driven from one thread, and COPY's parallel workers), and SET / SET LOCAL / ROLLBACK treat it
//! as PostgreSQL treats a setting. The answers were checked against PostgreSQL 15 (the corpus
//! file `50_time_zones.slt` compares many more with it).

mod common;
use common::*;
use heapstore::Session;

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql).pop().unwrap_or_else(|| panic!("{sql}: no row"))
}

#[test]
fn timestamptz_text_casts_and_arithmetic_follow_the_session_zone() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    assert_eq!(one(&mut s, "SHOW TimeZone"), "UTC");
    assert_eq!(one(&mut s, "SELECT '2024-07-01 10:00'::timestamptz"), "2024-07-01 10:00:00+00");
    ok(&mut s, "SET TIME ZONE 'america/new_york'");
    assert_eq!(one(&mut s, "SHOW TIME ZONE"), "America/New_York");
    ok(&mut s, "CREATE TABLE e (id int PRIMARY KEY, t timestamptz, l timestamp, d date DEFAULT CURRENT_DATE)");
    ok(&mut s, "INSERT INTO e (id, t, l) VALUES (1, '2024-07-01 08:00', '2024-07-01 08:00'), (2, '2024-03-10 02:30', '2024-03-10 02:30'), (3, '2024-11-03 01:30', NULL)");
    // Text without an offset is New York's wall clock; a gap's time takes the offset before
    // it (02:30 EST is 03:30 EDT), a fold's the offset after it.
    assert_eq!(
        rows(&mut s, "SELECT id, t, t AT TIME ZONE 'UTC', l::timestamptz = t, t::date, extract(hour FROM t) FROM e ORDER BY id"),
        [
            "1|2024-07-01 08:00:00-04|2024-07-01 12:00:00|t|2024-07-01|8",
            "2|2024-03-10 03:30:00-04|2024-03-10 07:30:00|t|2024-03-10|3",
            "3|2024-11-03 01:30:00-05|2024-11-03 06:30:00|NULL|2024-11-03|1",
        ]
    );
    // A day is a calendar day on the session's clocks (23 hours across the spring change);
    // date_trunc to a day is local midnight.
    assert_eq!(
        one(
            &mut s,
            "SELECT t + interval '1 day', t + interval '24 hours', date_trunc('day', t), age(t + interval '1 day', t) FROM e WHERE id = 2"
        ),
        "2024-03-11 03:30:00-04|2024-03-11 03:30:00-04|2024-03-10 00:00:00-05|1 day"
    );
    assert_eq!(
        one(&mut s, "SELECT '2024-03-09 12:00'::timestamptz + interval '1 day', '2024-03-09 12:00'::timestamptz + interval '24 hours'"),
        "2024-03-10 12:00:00-04|2024-03-10 13:00:00-04"
    );
    assert_eq!(
        one(&mut s, "SELECT extract(epoch FROM t), extract(timezone FROM t), to_char(t, 'HH24:MI TZ OF'), to_json(t) FROM e WHERE id = 1"),
        "1719835200.000000|-14400|08:00 EDT -04|\"2024-07-01T08:00:00-04:00\""
    );
    // A date or timestamp beside a timestamptz is the instant New York's clocks read it.
    assert_eq!(one(&mut s, "SELECT count(*) FROM e WHERE t >= '2024-07-01'::date AND t < '2024-07-01 09:00'::timestamp"), "1");
    // CURRENT_DATE and LOCALTIMESTAMP are the session's clocks now.
    assert_eq!(one(&mut s, "SELECT d = (now() AT TIME ZONE 'America/New_York')::date, localtimestamp = now() AT TIME ZONE 'America/New_York' FROM e WHERE id = 1"), "t|t");
    // The stored instants do not change with the zone; only their text does.
    ok(&mut s, "SET TIME ZONE 'Asia/Kolkata'");
    assert_eq!(one(&mut s, "SELECT t FROM e WHERE id = 1"), "2024-07-01 17:30:00+05:30");
    assert_eq!(
        String::from_utf8(copy_out(&mut s, "COPY (SELECT t FROM e WHERE id = 1) TO STDOUT")).unwrap(),
        "2024-07-01 17:30:00+05:30\n"
    );
    ok(&mut s, "SET TIME ZONE DEFAULT");
    assert_eq!(one(&mut s, "SELECT t FROM e WHERE id = 1"), "2024-07-01 12:00:00+00");
}

#[test]
fn time_zone_values_are_read_as_postgresql_reads_them() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    // A number is hours east; a POSIX string's offset is hours west; an interval is east.
    for (set, shown, text) in [
        ("SET TIME ZONE -7", "<-07>+07", "2024-01-01 10:00:00-07"),
        ("SET timezone = '5.5'", "<+05:30>-05:30", "2024-01-01 10:00:00+05:30"),
        ("SET timezone = 'UTC+5'", "UTC+5", "2024-01-01 10:00:00-05"),
        ("SET TIME ZONE INTERVAL '-08:00' HOUR TO MINUTE", "<-08>+08", "2024-01-01 10:00:00-08"),
        ("SET TIME ZONE 'Europe/London'", "Europe/London", "2024-01-01 10:00:00+00"),
    ] {
        ok(&mut s, set);
        assert_eq!(one(&mut s, "SELECT current_setting('TimeZone'), '2024-01-01 10:00'::timestamptz"), format!("{shown}|{text}"), "{set}");
    }
    // Local mean time before the zone's first rule, as PostgreSQL prints it.
    assert_eq!(one(&mut s, "SELECT '1800-01-01 12:00'::timestamptz"), "1800-01-01 12:00:00-00:01:15");
    assert_eq!(err(&mut s, "SET TIME ZONE 'PST'").code, "22023");
    assert_eq!(
        err(&mut s, "SET timezone = 'Mars/Olympus_Mons'").message,
        "invalid value for parameter \"TimeZone\": \"Mars/Olympus_Mons\""
    );
    // A POSIX string with daylight-saving rules is refused, not read as something else.
    assert_eq!(err(&mut s, "SET TIME ZONE 'EST5EDT,M3.2.0,M11.1.0'").code, "0A000");
    assert_eq!(one(&mut s, "SHOW TimeZone"), "Europe/London");
    // SET LOCAL ends with the transaction; a rolled-back SET is undone.
    ok(&mut s, "BEGIN");
    ok(&mut s, "SET LOCAL TIME ZONE 'Asia/Tokyo'");
    assert_eq!(one(&mut s, "SELECT '2024-07-01 10:00'::timestamptz"), "2024-07-01 10:00:00+09");
    ok(&mut s, "COMMIT");
    assert_eq!(one(&mut s, "SELECT '2024-07-01 10:00'::timestamptz"), "2024-07-01 10:00:00+01");
    ok(&mut s, "BEGIN");
    ok(&mut s, "SET TIME ZONE 'Asia/Tokyo'");
    ok(&mut s, "ROLLBACK");
    assert_eq!(one(&mut s, "SHOW TimeZone"), "Europe/London");
    assert_eq!(one(&mut s, "SELECT '2024-07-01 10:00'::timestamptz"), "2024-07-01 10:00:00+01");
}

#[test]
fn sessions_driven_from_one_thread_keep_their_own_zones() {
    let (_t, _dir, db) = new_db(&[]);
    let mut paris = db.session();
    let mut tokyo = db.session();
    ok(&mut paris, "SET TIME ZONE 'Europe/Paris'");
    ok(&mut tokyo, "SET TIME ZONE 'Asia/Tokyo'");
    ok(&mut paris, "CREATE TABLE t (id int PRIMARY KEY, at timestamptz)");
    for round in 0..3 {
        // Each writes its own wall-clock time; each reads both rows on its own clocks.
        ok(&mut paris, &format!("INSERT INTO t VALUES ({}, '2024-07-01 12:00')", round * 2));
        ok(&mut tokyo, &format!("INSERT INTO t VALUES ({}, '2024-07-01 12:00')", round * 2 + 1));
        let want_paris: Vec<String> = (0..=round * 2 + 1)
            .map(|i| format!("{i}|{}", if i % 2 == 0 { "2024-07-01 12:00:00+02" } else { "2024-07-01 05:00:00+02" }))
            .collect();
        let want_tokyo: Vec<String> = (0..=round * 2 + 1)
            .map(|i| format!("{i}|{}", if i % 2 == 0 { "2024-07-01 19:00:00+09" } else { "2024-07-01 12:00:00+09" }))
            .collect();
        assert_eq!(rows(&mut paris, "SELECT id, at FROM t ORDER BY id"), want_paris);
        assert_eq!(rows(&mut tokyo, "SELECT id, at FROM t ORDER BY id"), want_tokyo);
        // The library's typed API reads the same instants.
        let r = tokyo.query("SELECT at::text FROM t WHERE id = 0", &[]).unwrap();
        assert_eq!(r[0].get::<String>(0).unwrap(), "2024-07-01 19:00:00+09");
    }
}

#[test]
fn parallel_copy_workers_read_local_times_in_the_session_zone() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "SET TIME ZONE 'America/Sao_Paulo'");
    let mut data = String::new();
    for i in 0..40_000 {
        // Times across years with and without daylight saving there.
        data.push_str(&format!("{i}\t{}-{:02}-{:02} {:02}:{:02}:00\n", 1990 + i % 30, 1 + i % 12, 1 + i % 28, i % 24, i % 60));
    }
    let mut loaded = Vec::new();
    for parallel in [1, 4] {
        ok(&mut s, "DROP TABLE IF EXISTS p");
        ok(&mut s, "CREATE TABLE p (id int PRIMARY KEY, t timestamptz)");
        copy_in(&mut s, &format!("COPY p FROM STDIN WITH (PARALLEL {parallel})"), data.as_bytes()).unwrap();
        // Every row reads back as the wall-clock time it was written as.
        assert_eq!(one(&mut s, "SELECT count(*) FROM p WHERE to_char(t, 'YYYY-MM-DD HH24:MI:SS') <> to_char(t AT TIME ZONE 'America/Sao_Paulo', 'YYYY-MM-DD HH24:MI:SS')"), "0");
        loaded.push(rows(&mut s, "SELECT id, extract(epoch FROM t) FROM p ORDER BY id"));
    }
    assert_eq!(loaded[0].len(), 40_000);
    assert!(loaded[0] == loaded[1], "the parallel load stored other instants than the serial one");
    // Against the zone's own rules: row 1 is 1991-02-02 01:01 in Sao Paulo's summer time (-02).
    assert_eq!(one(&mut s, "SELECT t AT TIME ZONE 'UTC' FROM p WHERE id = 1"), "1991-02-02 03:01:00");
}

#[test]
fn stored_definitions_keep_the_instants_they_were_made_with() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    // Made in UTC: the literals are UTC instants, whoever reads them later.
    ok(
        &mut s,
        "CREATE TABLE c (id int, t timestamptz CHECK (t >= '2024-01-01'), u timestamptz DEFAULT '2024-01-01', d date DEFAULT CURRENT_DATE)",
    );
    ok(&mut s, "CREATE VIEW v AS SELECT id FROM c WHERE t >= '2024-01-01 00:00'");
    ok(&mut s, "CREATE VIEW u AS SELECT t FROM c UNION ALL SELECT '2024-01-01 00:00'");
    ok(&mut s, "SET TIME ZONE 'America/New_York'");
    // A view over such a view is no literal of its own.
    ok(&mut s, "CREATE VIEW vv AS SELECT * FROM v");
    // A set operation makes the literal a timestamptz as the rows run: refused outside UTC,
    // rather than read on New York's clocks.
    assert_eq!(err(&mut s, "SELECT * FROM u").code, "0A000");
    ok(&mut s, "INSERT INTO c (id, t) VALUES (1, '2024-01-01 02:00+00')");
    assert_eq!(err(&mut s, "INSERT INTO c (id, t) VALUES (2, '2023-12-31 23:00+00')").code, "23514");
    // CURRENT_DATE in a DEFAULT is still the session's date as it runs.
    assert_eq!(one(&mut s, "SELECT t, u, d = current_date FROM c"), "2023-12-31 21:00:00-05|2023-12-31 19:00:00-05|t");
    assert_eq!(rows(&mut s, "SELECT id FROM v"), ["1"]);
    assert_eq!(rows(&mut s, "SELECT id FROM vv"), ["1"]);
    // 'now' and 'today' would be read at each use, where PostgreSQL fixes them: refused.
    assert_eq!(err(&mut s, "CREATE TABLE c3 (t timestamptz DEFAULT 'now')").code, "0A000");
    assert_eq!(err(&mut s, "CREATE TABLE c3 (d date CHECK (d <= 'today'))").code, "0A000");
    // Made outside UTC, such a literal would be another instant to PostgreSQL: refused.
    for sql in [
        "CREATE TABLE c2 (t timestamptz DEFAULT '2024-01-01')",
        "CREATE TABLE c2 (t timestamptz CHECK (t > '2024-01-01'::timestamptz))",
        "CREATE VIEW v2 AS SELECT id FROM c WHERE t > '2024-01-01'",
        "ALTER TABLE c ALTER COLUMN u SET DEFAULT '2024-06-01'",
        "ALTER TABLE c ADD CONSTRAINT later CHECK (u < '2030-01-01')",
    ] {
        assert_eq!(err(&mut s, sql).code, "0A000", "{sql}");
    }
    // With an offset, or without a timestamptz literal, they are made.
    ok(&mut s, "CREATE TABLE c2 (t timestamptz DEFAULT '2024-01-01 00:00+00' CHECK (t::date > '2000-01-01'::date), x timestamp DEFAULT '2024-01-01')");
    ok(&mut s, "CREATE VIEW v2 AS SELECT id FROM c WHERE t > '2024-01-01 00:00:00-05'");
    ok(&mut s, "INSERT INTO c2 DEFAULT VALUES");
    assert_eq!(one(&mut s, "SELECT t, x FROM c2"), "2023-12-31 19:00:00-05|2024-01-01 00:00:00");
    assert_eq!(rows(&mut s, "SELECT id FROM v2"), Vec::<String>::new());
    // A zone that is UTC under another name reads the literal as UTC does.
    ok(&mut s, "SET TIME ZONE 'GMT'");
    ok(&mut s, "CREATE TABLE c4 (t timestamptz DEFAULT '2024-01-01')");
}

#[test]
fn special_words_and_make_timestamptz_follow_postgresql() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "SET TIME ZONE 'Pacific/Kiritimati'"); // +14: the local date is rarely UTC's
    assert_eq!(
        one(&mut s, "SELECT abs(extract(epoch FROM 'now'::timestamptz - now())) < 60, 'today'::date = current_date, 'tomorrow'::date - 'yesterday'::date, 'now'::timestamp - localtimestamp < interval '1 minute'"),
        "t|t|2|t"
    );
    assert_eq!(one(&mut s, "SELECT '2024-01-01 allballs'::timestamptz"), "2024-01-01 14:00:00+14");
    // 'now' is the transaction's start, as now() is.
    ok(&mut s, "BEGIN");
    ok(&mut s, "SELECT pg_sleep(0.05)");
    assert_eq!(one(&mut s, "SELECT 'now'::timestamptz = now(), 'now'::timestamp = localtimestamp"), "t|t");
    ok(&mut s, "COMMIT");
    // make_timestamptz's zone reads `+2` as two hours east (PostgreSQL's own regression test).
    assert_eq!(one(&mut s, "SELECT make_timestamptz(1973, 7, 15, 8, 15, 55.33, '+2') = '1973-07-15 08:15:55.33+02'::timestamptz"), "t");
    assert_eq!(err(&mut s, "SELECT make_timestamptz(2024, 1, 1, 10, 0, 0, '2')").code, "22023");
    assert_eq!(one(&mut s, "SELECT make_timestamptz(2024, 1, 1, 10, 0, 0) AT TIME ZONE 'UTC'"), "2023-12-31 20:00:00");
}

#[test]
fn a_plan_cached_in_one_zone_is_not_reused_in_another() {
    let (_t, _dir, db) = new_db(&[]);
    let mut paris = db.session();
    let mut tokyo = db.session();
    ok(&mut paris, "CREATE TABLE t (id int PRIMARY KEY, at timestamptz)");
    ok(&mut paris, "INSERT INTO t VALUES (1, '2024-07-01 08:00+00')");
    ok(&mut paris, "SET TIME ZONE 'Europe/Paris'");
    ok(&mut tokyo, "SET TIME ZONE 'Asia/Tokyo'");
    // One prepared statement, planned with its literal folded in the zone it ran in first.
    let p = paris.prepare("SELECT count(*) FROM t WHERE at < '2024-07-01 12:00'").unwrap();
    assert_eq!(paris.execute_prepared(&p, &[]).unwrap().rows[0][0].as_deref(), Some("1")); // 10:00 UTC
    assert_eq!(tokyo.execute_prepared(&p, &[]).unwrap().rows[0][0].as_deref(), Some("0")); // 03:00 UTC
    assert_eq!(paris.execute_prepared(&p, &[]).unwrap().rows[0][0].as_deref(), Some("1"));
}

#[test]
fn joins_of_timestamp_and_timestamptz_pair_instants() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "SET TIME ZONE 'Europe/Paris'");
    ok(&mut s, "CREATE TABLE ja (id int, ts timestamp, d date)");
    ok(&mut s, "CREATE TABLE jb (id int, t timestamptz)");
    ok(&mut s, "INSERT INTO ja SELECT i, '2024-07-01'::timestamp + i * interval '1 hour', '2024-07-01'::date + i / 24 FROM generate_series(1, 2000) i");
    ok(&mut s, "INSERT INTO jb SELECT i, '2024-07-01 00:00+00'::timestamptz + i * interval '1 hour' FROM generate_series(1, 2000) i");
    ok(&mut s, "ANALYZE ja");
    ok(&mut s, "ANALYZE jb");
    // Paris is two hours ahead in July: local hour i is UTC hour i - 2 (PostgreSQL: 1998, 2, 2).
    for enable in ["on", "off"] {
        ok(&mut s, &format!("SET enable_hashjoin = {enable}"));
        assert_eq!(
            one(&mut s, "SELECT count(*), min(ja.id - jb.id), max(ja.id - jb.id) FROM ja JOIN jb ON ja.ts = jb.t"),
            "1998|2|2",
            "enable_hashjoin={enable}"
        );
        assert_eq!(one(&mut s, "SELECT count(*) FROM ja JOIN jb ON jb.t = ja.d"), "1977", "enable_hashjoin={enable}");
    }
    ok(&mut s, "SET enable_hashjoin = on");
    let plan = rows(&mut s, "EXPLAIN (COSTS OFF) SELECT count(*) FROM ja JOIN jb ON ja.ts = jb.t").join("\n");
    assert!(plan.contains("Hash Cond: ((ts)::timestamp with time zone = t)"), "{plan}");
}

#[test]
fn zones_work_without_the_systems_time_zone_database() {
    // The system's database hidden (an empty directory mounted over it in a mount namespace of
    // this process's own; where that cannot be made, e.g. not as root, the test says so and
    // checks nothing): the zones come from the copy built into heapstore.
    let t = tempfile::tempdir().unwrap();
    let (dir, empty) = (t.path().join("data"), t.path().join("empty"));
    std::fs::create_dir(&empty).unwrap();
    heapstore::Database::init(&dir, &[]).unwrap();
    let sql = "SET TIME ZONE 'Asia/Kolkata'; SELECT '2024-07-01 10:00'::timestamptz, '2024-01-01 12:00'::timestamptz AT TIME ZONE 'America/New_York'";
    let probe = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &format!("mount --bind {} /usr/share/zoneinfo && test ! -e /usr/share/zoneinfo/UTC", empty.display())])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("zones_work_without_the_systems_time_zone_database: cannot hide /usr/share/zoneinfo here (needs unshare -m as root); not checked");
        return;
    }
    let script = format!("mount --bind {} /usr/share/zoneinfo && exec \"$0\" -D \"$1\" -At -c \"$2\"", empty.display());
    let out = std::process::Command::new("unshare").args(["-m", "sh", "-c", &script, bin(), dir.to_str().unwrap(), sql]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2024-07-01 10:00:00+05:30|2024-01-01 01:30:00");
}

/// The server's `TimeZone` (heapstore.conf, `--set`): where sessions start, embedded and over
/// the protocol, what RESET and `SET TIME ZONE DEFAULT` return to and what `pg_settings`
/// shows; a client's own zone (startup packet) still wins for its session; a value
/// PostgreSQL would refuse is refused when the server starts.
#[test]
fn the_servers_time_zone_is_where_sessions_start() {
    let (_t, dir, db) = new_db(&["TimeZone=europe/paris"]);
    let mut s = db.session();
    assert_eq!(one(&mut s, "SHOW TimeZone"), "Europe/Paris");
    assert_eq!(
        one(&mut s, "SELECT '2024-07-01 12:00'::timestamptz, '12:00'::time::timetz = '12:00'::time::timetz"),
        "2024-07-01 12:00:00+02|t"
    );
    ok(&mut s, "SET TIME ZONE 'Asia/Tokyo'");
    assert_eq!(one(&mut s, "SELECT '2024-07-01 12:00'::timestamptz"), "2024-07-01 12:00:00+09");
    ok(&mut s, "RESET TimeZone");
    assert_eq!(one(&mut s, "SHOW TimeZone"), "Europe/Paris");
    ok(&mut s, "SET TIME ZONE UTC");
    ok(&mut s, "SET TIME ZONE DEFAULT");
    assert_eq!(one(&mut s, "SELECT current_setting('TimeZone'), '2024-01-01 12:00'::timestamptz"), "Europe/Paris|2024-01-01 12:00:00+01");
    drop(s);
    let db = std::sync::Arc::new(db);
    let cfg = heapstore::server::ServerConfig {
        listen_addresses: vec!["127.0.0.1".into()],
        port: 0,
        socket_dir: Some(dir.clone()),
        hba: heapstore::auth::Hba::parse("host all all 127.0.0.1/32 trust").unwrap(),
        max_connections: 4,
        tls: None,
    };
    let server = heapstore::server::Server::start(db, cfg).unwrap();
    let port = server.tcp_addrs()[0].port();
    let connect = |options: Option<&str>| {
        let mut c = postgres::Config::new();
        c.host("127.0.0.1").port(port).user("postgres").dbname("postgres");
        if let Some(o) = options {
            c.options(o);
        }
        c.connect(postgres::NoTls).unwrap()
    };
    let text = |c: &mut postgres::Client, sql: &str| -> String {
        match c.simple_query(sql).unwrap().into_iter().find_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("NULL").to_string()),
            _ => None,
        }) {
            Some(v) => v,
            None => panic!("{sql}: no row"),
        }
    };
    let mut c = connect(None);
    assert_eq!(text(&mut c, "SHOW TimeZone"), "Europe/Paris");
    assert_eq!(text(&mut c, "SELECT '2024-07-01 12:00'::timestamptz::text"), "2024-07-01 12:00:00+02");
    assert_eq!(
        text(&mut c, "SELECT concat_ws('|', setting, source, boot_val, reset_val) FROM pg_settings WHERE name = 'TimeZone'"),
        "Europe/Paris|command line|UTC|Europe/Paris"
    );
    c.simple_query("SET TIME ZONE 'Asia/Tokyo'; RESET TimeZone").unwrap();
    assert_eq!(text(&mut c, "SHOW TimeZone"), "Europe/Paris");
    let mut own = connect(Some("-c TimeZone=America/New_York"));
    assert_eq!(
        text(&mut own, "SELECT current_setting('TimeZone') || ' ' || '2024-07-01 12:00'::timestamptz::text"),
        "America/New_York 2024-07-01 12:00:00-04"
    );
    drop((c, own));
    let db = server.shutdown(std::time::Duration::from_secs(2));
    std::sync::Arc::try_unwrap(db).ok().expect("no session holds the database").close().unwrap();
    let refused = heapstore::Database::open(&dir, &["TimeZone=PST".to_string()]).err().expect("PST is not a TimeZone");
    assert_eq!((refused.code, refused.message.as_str()), ("22023", "invalid value for parameter \"TimeZone\": \"PST\""));
}
