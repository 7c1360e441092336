//! The differential test: heapstore's answers to a corpus of analytics queries, compared with
//! PostgreSQL 15's.
//!
//! # The corpus
//!
//! Every `*.slt` file in `tests/corpus/`, read in file-name order (one file per feature area;
//! `00_setup.slt` holds the schema and the data). A file is a list of records separated by blank
//! lines; lines starting with `#` are comments. A record is a header line and one SQL statement
//! on the lines after it, up to the next blank line (a trailing `;` is optional). The corpus
//! holds no expected results: each statement runs on both systems and the answers are compared.
//!
//! ```text
//! statement ok            setup, run on both in order; must succeed on both
//! query rowsort           compare rows as multisets, and the column count
//! query ordered           compare rows in order (the ORDER BY must fix the order, ties included)
//! query error SQLSTATE    PostgreSQL must fail with SQLSTATE; heapstore must fail with it too
//! ```
//!
//! # What it does
//!
//! Finds PostgreSQL at `$HEAPSTORE_PG_BIN` (which must hold it) or else
//! `/usr/lib/postgresql/15/bin` (absent: a loud message on stderr, and the test passes without
//! running anything), runs `initdb` into a temporary directory and starts the
//! server on a private Unix socket (no TCP) with `fsync=off`, `TimeZone=UTC`,
//! `DateStyle='ISO, MDY'`, LC_COLLATE C and LC_CTYPE C.UTF-8; as root, the server runs as the `postgres` user
//! through `runuser` (PostgreSQL refuses to run as root), as `heapstore bench --vs-postgres`
//! does. A drop guard stops it, on panic too. All statements go to PostgreSQL through one `psql`
//! process (unaligned output, fields separated by 0x1F, rows by 0x1E, a NULL marker, each
//! statement framed by `\echo` markers that carry psql's `:SQLSTATE`); the server is stopped,
//! and the same statements go to heapstore through the library (`Session::execute`), in-process
//! (a statement still running after 60 s ends the test process).
//!
//! Each query is classified:
//! - `match`: same column count and rows (multiset or ordered), or the same error SQLSTATE;
//! - `refused`: heapstore answered 0A000 (feature not supported) and PostgreSQL did not;
//! - `wrong`: both answered, with different rows or column counts;
//! - `error-mismatch`: different SQLSTATEs, or only one of the two failed (a heapstore panic
//!   counts here too).
//!
//! The summary, and every non-match with both answers (truncated), is printed and written to
//! `target/differential-report.txt`. The test fails on any `wrong` or `error-mismatch` (never a
//! silently wrong answer), and on a corpus bug (PostgreSQL failing a `query rowsort/ordered`
//! record, or a `query error` record not failing with its SQLSTATE there); refusals are only
//! counted.
//!
//! ```sh
//! cargo test --profile tests --test differential -- --nocapture
//! HEAPSTORE_DIFF_FILTER=string_agg cargo test --profile tests --test differential   # queries whose SQL or file:line contains it
//! HEAPSTORE_DIFF_STRICT=1 cargo test --profile tests --test differential            # refusals fail too
//! ```

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// psql prints this for NULL; no value in the corpus contains it.
const NULL_MARK: &str = "<<hs-diff-null-7f3a>>";
const FIELD_SEP: char = '\u{1f}';
const RECORD_SEP: char = '\u{1e}';
/// A heapstore statement running longer than this aborts the test (after stopping PostgreSQL).
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

type Rows = Vec<Vec<Option<String>>>;

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Statement,
    Query { ordered: bool },
    QueryError(String),
}

#[derive(Clone, Debug)]
struct Record {
    file: String,
    line: usize,
    kind: Kind,
    sql: String,
}

impl Record {
    fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Answer {
    Rows { ncols: usize, rows: Rows },
    Error { code: String, message: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Match,
    Refused,
    Wrong,
    ErrorMismatch,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Match => "match",
            Class::Refused => "refused",
            Class::Wrong => "wrong",
            Class::ErrorMismatch => "error-mismatch",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The corpus.

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn parse_file(name: &str, text: &str) -> Vec<Record> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_end_matches('\r');
        if l.trim().is_empty() || l.starts_with('#') {
            i += 1;
            continue;
        }
        let line = i + 1;
        let words: Vec<&str> = l.split_whitespace().collect();
        let kind = match words.as_slice() {
            ["statement", "ok"] => Kind::Statement,
            ["query", "rowsort"] => Kind::Query { ordered: false },
            ["query", "ordered"] => Kind::Query { ordered: true },
            ["query", "error", code] if code.len() == 5 => Kind::QueryError(code.to_string()),
            _ => panic!("{name}:{line}: unknown record header {l:?} (see the format in tests/differential.rs)"),
        };
        i += 1;
        let mut sql = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() {
            if !lines[i].starts_with('#') {
                sql.push(lines[i].trim_end_matches('\r'));
            }
            i += 1;
        }
        let sql = sql.join("\n");
        let sql = sql.trim_end().trim_end_matches(';').trim_end().to_string();
        assert!(!sql.is_empty(), "{name}:{line}: a record without SQL");
        out.push(Record { file: name.to_string(), line, kind, sql });
    }
    out
}

fn load_corpus() -> Vec<Record> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "slt"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        out.extend(parse_file(&f.file_name().unwrap().to_string_lossy(), &text));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL.

use heapstore::bench::postgres::user_ids;

fn skip(why: &str) {
    let bar = "!".repeat(100);
    eprintln!("\n{bar}\n!!! SKIPPED: the differential test against PostgreSQL did not run.\n!!! {why}\n{bar}\n");
}

/// A throwaway PostgreSQL server; dropping it stops the server and removes its directory.
struct PgServer {
    bin: PathBuf,
    data: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    run_as: Option<String>,
    started: bool,
    version: String,
    /// LC_CTYPE of the cluster: C.UTF-8, or C where that locale is missing.
    ctype: &'static str,
    _dir: tempfile::TempDir,
}

impl PgServer {
    fn start(bin: &Path, run_as: Option<String>) -> PgServer {
        let dir = tempfile::Builder::new().prefix("hsdiff").tempdir().expect("temp dir");
        let socket_dir = dir.path().to_path_buf();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&socket_dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        if let Some(u) = &run_as {
            let (uid, gid) = user_ids(u).expect("checked");
            std::os::unix::fs::chown(&socket_dir, Some(uid), Some(gid)).expect("chown the PostgreSQL directory");
        }
        let data = socket_dir.join("pgdata");
        let port = 55000 + (std::process::id() % 1000) as u16;
        let mut pg = PgServer {
            bin: bin.to_path_buf(),
            data: data.clone(),
            socket_dir: socket_dir.clone(),
            port,
            run_as,
            started: false,
            version: String::new(),
            ctype: "C.UTF-8",
            _dir: dir,
        };
        let d = data.to_string_lossy().into_owned();
        // The C collation (heapstore compares text byte by byte) with a UTF-8 character
        // classification (upper('ü') is 'Ü'); plain C where the C.UTF-8 locale is missing.
        let initdb = |pg: &PgServer, ctype: &str| {
            let args = ["-D", &d, "-A", "trust", "-U", "postgres", "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C"];
            pg.command("initdb").args(args).arg(format!("--lc-ctype={ctype}")).output().expect("run initdb")
        };
        let mut out = initdb(&pg, "C.UTF-8");
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(&data);
            pg.ctype = "C";
            out = initdb(&pg, "C");
        }
        assert!(out.status.success(), "initdb failed: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        // Settings go in postgresql.conf (no shell quoting); heapstore's session settings.
        let conf = format!(
            "\n# tests/differential.rs\nlisten_addresses = ''\nunix_socket_directories = '{}'\nport = {port}\nfsync = off\n\
             synchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\nmax_connections = 10\n\
             TimeZone = 'UTC'\nDateStyle = 'ISO, MDY'\nlc_messages = 'C'\nextra_float_digits = 1\n",
            socket_dir.display()
        );
        let conf_path = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf_path).expect("postgresql.conf");
        text.push_str(&conf);
        std::fs::write(&conf_path, text).expect("write postgresql.conf");
        let log = socket_dir.join("postgres.log");
        let l = log.to_string_lossy().into_owned();
        pg.started = true; // from here on, Drop tries to stop it
        let out =
            pg.command("pg_ctl").args(["-D", &d, "-l", &l, "-o", "-c fsync=off", "-w", "-t", "60", "start"]).output().expect("run pg_ctl");
        if !out.status.success() {
            panic!(
                "pg_ctl start failed: {}{}\nserver log:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        let (out, _) = pg.psql_script("SELECT version();\n");
        pg.version = out.split(RECORD_SEP).nth(1).unwrap_or("?").trim().to_string();
        pg
    }

    /// Server programs run as `run_as` when set; psql runs as we do.
    fn command(&self, tool: &str) -> Command {
        let path = self.bin.join(tool);
        match &self.run_as {
            Some(u) if tool != "psql" => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(path);
                c
            }
            _ => Command::new(path),
        }
    }

    /// Runs a script through one psql session (continuing after errors): (stdout, stderr).
    fn psql_script(&self, script: &str) -> (String, String) {
        let f = self.socket_dir.join("script.sql");
        std::fs::write(&f, script).expect("write the psql script");
        let out = self
            .command("psql")
            .args(["-X", "-q", "-A", "-h"])
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=0"])
            .args(["-F", &FIELD_SEP.to_string(), "-R", &RECORD_SEP.to_string()])
            .args(["-P", &format!("null={NULL_MARK}"), "-P", "footer=off", "-f"])
            .arg(&f)
            .env("PGCLIENTENCODING", "UTF8")
            .env_remove("PGOPTIONS")
            .env_remove("PGSERVICE")
            .env_remove("PGSERVICEFILE")
            .output()
            .expect("run psql");
        assert!(out.status.success(), "psql failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
        (String::from_utf8(out.stdout).expect("psql output is UTF-8"), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    /// Runs the statements in order in one session: their answers.
    fn run_all(&self, sqls: &[&str]) -> Vec<Answer> {
        let mut script = String::new();
        for (i, sql) in sqls.iter().enumerate() {
            writeln!(script, "\\echo @@hsdiff-begin {i}@@\n{sql};\n\\echo @@hsdiff-end {i}@@ :SQLSTATE :LAST_ERROR_MESSAGE").unwrap();
        }
        let (out, err) = self.psql_script(&script);
        let mut answers = Vec::with_capacity(sqls.len());
        let mut rest = out.as_str();
        for (i, sql) in sqls.iter().enumerate() {
            let begin = format!("@@hsdiff-begin {i}@@\n");
            let end = format!("@@hsdiff-end {i}@@ ");
            let lost = |what: &str| -> ! {
                panic!("psql output lost the {what} of statement {i} (an unbalanced quote in the corpus?):\n{sql}\nstderr:\n{err}")
            };
            let b = rest.find(&begin).unwrap_or_else(|| lost("start"));
            rest = &rest[b + begin.len()..];
            let e = rest.find(&end).unwrap_or_else(|| lost("end"));
            let body = &rest[..e];
            rest = &rest[e + end.len()..];
            let tail_end = rest.find("\n@@hsdiff-begin ").unwrap_or(rest.len());
            let tail = rest[..tail_end].trim_end_matches('\n');
            rest = &rest[tail_end..];
            let (code, message) = tail.split_once(' ').unwrap_or((tail, ""));
            if code != "00000" {
                answers.push(Answer::Error { code: code.to_string(), message: message.to_string() });
                continue;
            }
            let body = body.strip_suffix('\n').unwrap_or(body);
            if body.is_empty() {
                answers.push(Answer::Rows { ncols: 0, rows: Vec::new() });
                continue;
            }
            let mut recs = body.split(RECORD_SEP);
            let ncols = recs.next().unwrap().split(FIELD_SEP).count();
            let rows =
                recs.map(|r| r.split(FIELD_SEP).map(|v| if v == NULL_MARK { None } else { Some(v.to_string()) }).collect()).collect();
            answers.push(Answer::Rows { ncols, rows });
        }
        answers
    }

    fn stop(&mut self) {
        if self.started {
            self.started = false;
            let _ = self.command("pg_ctl").args(["-D", &self.data.to_string_lossy(), "-m", "immediate", "-w", "stop"]).output();
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

// ---------------------------------------------------------------------------------------------
// heapstore.

fn heapstore_answer(s: &mut heapstore::Session, sql: &str) -> Answer {
    match s.execute(sql) {
        Ok(results) => match results.into_iter().rev().find(|r| r.returns_rows) {
            Some(r) => Answer::Rows { ncols: r.columns.len(), rows: r.rows },
            None => Answer::Rows { ncols: 0, rows: Vec::new() },
        },
        Err(e) => Answer::Error { code: e.code.to_string(), message: e.message.clone() },
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison and report.

fn same_rows(a: &Rows, b: &Rows, ordered: bool) -> bool {
    if ordered {
        return a == b;
    }
    let mut a = a.clone();
    let mut b = b.clone();
    a.sort();
    b.sort();
    a == b
}

fn classify(ordered: bool, pg: &Answer, hs: &Answer) -> Class {
    match (pg, hs) {
        (Answer::Error { code: p, .. }, Answer::Error { code: h, .. }) if p == h => Class::Match,
        (_, Answer::Error { code, .. }) if code == "0A000" => Class::Refused,
        (Answer::Rows { ncols: pc, rows: pr }, Answer::Rows { ncols: hc, rows: hr }) => {
            if pc == hc && same_rows(pr, hr, ordered) {
                Class::Match
            } else {
                Class::Wrong
            }
        }
        _ => Class::ErrorMismatch,
    }
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate(&flat, max)
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let t: String = s.chars().take(max).collect();
        format!("{t}…")
    }
}

fn show_row(r: &[Option<String>]) -> String {
    let cells: Vec<String> = r.iter().map(|v| v.as_ref().map_or("NULL".to_string(), |s| format!("{s:?}"))).collect();
    format!("({})", cells.join(", "))
}

fn show(a: &Answer, max_rows: usize) -> String {
    match a {
        Answer::Error { code, message } => format!("ERROR {code}: {}", one_line(message, 200)),
        Answer::Rows { ncols, rows } => {
            let mut s = format!("{} row(s), {ncols} column(s)", rows.len());
            for r in rows.iter().take(max_rows) {
                write!(s, "\n        {}", truncate(&show_row(r), 200)).unwrap();
            }
            if rows.len() > max_rows {
                write!(s, "\n        … {} more", rows.len() - max_rows).unwrap();
            }
            s
        }
    }
}

/// For `wrong` answers: the rows only one side has (as multisets), a short list of each.
fn row_diff(pg: &Rows, hs: &Rows) -> String {
    let mut count: BTreeMap<&Vec<Option<String>>, i64> = BTreeMap::new();
    for r in pg {
        *count.entry(r).or_default() += 1;
    }
    for r in hs {
        *count.entry(r).or_default() -= 1;
    }
    let only_pg: Vec<String> = count.iter().filter(|(_, n)| **n > 0).take(5).map(|(r, n)| format!("{} ×{n}", show_row(r))).collect();
    let only_hs: Vec<String> = count.iter().filter(|(_, n)| **n < 0).take(5).map(|(r, n)| format!("{} ×{}", show_row(r), -n)).collect();
    if only_pg.is_empty() && only_hs.is_empty() {
        return "    same rows, different order\n".to_string();
    }
    format!("    only in postgres: {}\n    only in heapstore: {}\n", truncate(&only_pg.join(" "), 600), truncate(&only_hs.join(" "), 600))
}

/// Ends the test process if a heapstore statement runs past [`STATEMENT_TIMEOUT`] (a hung
/// executor must not hang CI); PostgreSQL has been stopped by then.
struct Watchdog {
    epoch: Instant,
    /// Milliseconds since `epoch` at which the running statement started, plus one; 0 = none.
    started_ms: Arc<AtomicU64>,
    current: Arc<Mutex<String>>,
    done: Arc<AtomicBool>,
}

impl Watchdog {
    fn spawn() -> Watchdog {
        let w = Watchdog {
            epoch: Instant::now(),
            started_ms: Arc::new(AtomicU64::new(0)),
            current: Arc::new(Mutex::new(String::new())),
            done: Arc::new(AtomicBool::new(false)),
        };
        let (epoch, started, current, done) = (w.epoch, w.started_ms.clone(), w.current.clone(), w.done.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(250));
            if done.load(Ordering::Relaxed) {
                return;
            }
            let s = started.load(Ordering::Relaxed);
            if s != 0 && epoch.elapsed().as_millis() as u64 > s + STATEMENT_TIMEOUT.as_millis() as u64 {
                eprintln!("\ndifferential: heapstore ran past {STATEMENT_TIMEOUT:?} on {}; giving up", current.lock().unwrap());
                std::process::exit(101);
            }
        });
        w
    }

    fn begin(&self, what: String) {
        *self.current.lock().unwrap() = what;
        self.started_ms.store(self.epoch.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
    }

    fn end(&self) {
        self.started_ms.store(0, Ordering::Relaxed);
    }
}

#[test]
fn differential_vs_postgres() {
    let given = std::env::var_os("HEAPSTORE_PG_BIN").filter(|v| !v.is_empty()).map(PathBuf::from);
    let bin = given.clone().unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"));
    let missing: Vec<&str> = ["initdb", "pg_ctl", "postgres", "psql"].into_iter().filter(|t| !bin.join(t).is_file()).collect();
    // A directory named explicitly must hold PostgreSQL; only the default may be absent.
    assert!(given.is_none() || missing.is_empty(), "HEAPSTORE_PG_BIN={} lacks {}", bin.display(), missing.join(", "));
    if !missing.is_empty() {
        skip(&format!(
            "PostgreSQL 15 not found: {} lacks {} (install postgresql-15, or set HEAPSTORE_PG_BIN=DIR)",
            bin.display(),
            missing.join(", ")
        ));
        return;
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let run_as = if root {
        if user_ids("postgres").is_none() {
            skip("running as root, and PostgreSQL refuses to run as root: there is no \"postgres\" user to run it as");
            return;
        }
        Some("postgres".to_string())
    } else {
        None
    };
    let filter = std::env::var("HEAPSTORE_DIFF_FILTER").ok().filter(|f| !f.is_empty());
    let strict = std::env::var("HEAPSTORE_DIFF_STRICT").is_ok_and(|v| !v.is_empty() && v != "0");

    let corpus = load_corpus();
    let records: Vec<Record> = corpus
        .into_iter()
        .filter(|r| {
            r.kind == Kind::Statement || filter.as_ref().is_none_or(|f| r.sql.contains(f.as_str()) || r.location().contains(f.as_str()))
        })
        .collect();
    let t0 = Instant::now();

    // PostgreSQL first, every record in one psql session; then the server is stopped.
    let pg = PgServer::start(&bin, run_as);
    let sqls: Vec<&str> = records.iter().map(|r| r.sql.as_str()).collect();
    let pg_answers = pg.run_all(&sqls);
    let pg_version = format!("{} (LC_COLLATE C, LC_CTYPE {})", pg.version, pg.ctype);
    drop(pg);
    let pg_secs = t0.elapsed().as_secs_f64();

    // heapstore: the same, in-process.
    let t1 = Instant::now();
    let (_tmp, _dir, db) = common::new_db(&[]);
    let mut s = db.session();
    let watchdog = Watchdog::spawn();
    let mut hs_answers = Vec::with_capacity(records.len());
    for r in &records {
        watchdog.begin(format!("{}: {}", r.location(), one_line(&r.sql, 200)));
        let sql = r.sql.clone();
        let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| heapstore_answer(&mut s, &sql)));
        watchdog.end();
        hs_answers.push(match got {
            Ok(a) => a,
            Err(p) => {
                let msg =
                    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                s = db.session();
                Answer::Error { code: "PANIC".into(), message: format!("heapstore panicked: {msg}") }
            }
        });
    }
    watchdog.done.store(true, Ordering::Relaxed);
    let hs_secs = t1.elapsed().as_secs_f64();

    // Setup must succeed on both; the corpus must agree with PostgreSQL.
    let mut setup_failures = Vec::new();
    let mut corpus_bugs = Vec::new();
    for ((r, p), h) in records.iter().zip(&pg_answers).zip(&hs_answers) {
        match &r.kind {
            Kind::Statement => {
                for (who, a) in [("postgres", p), ("heapstore", h)] {
                    if let Answer::Error { .. } = a {
                        setup_failures.push(format!("{} ({who}): {}\n    {}", r.location(), one_line(&r.sql, 160), show(a, 0)));
                    }
                }
            }
            Kind::Query { .. } => {
                if let Answer::Error { .. } = p {
                    corpus_bugs.push(format!(
                        "{}: PostgreSQL fails a `query` record (mark it `query error CODE`): {}\n    {}",
                        r.location(),
                        one_line(&r.sql, 160),
                        show(p, 0)
                    ));
                }
            }
            Kind::QueryError(code) => {
                let ok = matches!(p, Answer::Error { code: c, .. } if c == code);
                if !ok {
                    corpus_bugs.push(format!(
                        "{}: `query error {code}` but PostgreSQL gives: {}\n    {}",
                        r.location(),
                        show(p, 3),
                        one_line(&r.sql, 160)
                    ));
                }
            }
        }
    }

    // Classify and report.
    let mut counts: BTreeMap<Class, usize> = BTreeMap::new();
    let mut per_file: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut refusal_reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut details = String::new();
    let mut nqueries = 0;
    for ((r, p), h) in records.iter().zip(&pg_answers).zip(&hs_answers) {
        let ordered = match &r.kind {
            Kind::Statement => continue,
            Kind::Query { ordered } => *ordered,
            Kind::QueryError(_) => false,
        };
        nqueries += 1;
        let c = classify(ordered, p, h);
        *counts.entry(c).or_default() += 1;
        per_file.entry(r.file.as_str()).or_default()[c as usize] += 1;
        if c == Class::Refused {
            if let Answer::Error { message, .. } = h {
                // Grouped by the message up to its first ": " (which names the construct).
                let reason = message.split(": ").next().unwrap_or(message);
                *refusal_reasons.entry(reason.to_string()).or_default() += 1;
            }
        }
        if c == Class::Match {
            continue;
        }
        let max_rows = if c == Class::Refused { 3 } else { 12 };
        write!(
            details,
            "--- {} [{}] {}\n    sql: {}\n    postgres:  {}\n    heapstore: {}\n",
            c.name().to_uppercase(),
            if ordered { "ordered" } else { "rowsort" },
            r.location(),
            if c == Class::Refused { one_line(&r.sql, 300) } else { r.sql.replace('\n', "\n         ") },
            show(p, max_rows),
            show(h, max_rows),
        )
        .unwrap();
        if let (Class::Wrong, Answer::Rows { rows: pr, .. }, Answer::Rows { rows: hr, .. }) = (c, p, h) {
            details.push_str(&row_diff(pr, hr));
        }
    }

    let n = |c: Class| counts.get(&c).copied().unwrap_or(0);
    let mut report = String::new();
    writeln!(report, "heapstore differential test vs {}", pg_version).unwrap();
    writeln!(
        report,
        "{nqueries} queries{}: {} match, {} refused, {} wrong, {} error-mismatch  (postgres {pg_secs:.1} s incl. start, heapstore {hs_secs:.1} s)",
        filter.as_ref().map(|f| format!(" (filter {f:?})")).unwrap_or_default(),
        n(Class::Match),
        n(Class::Refused),
        n(Class::Wrong),
        n(Class::ErrorMismatch)
    )
    .unwrap();
    writeln!(report, "\n{:<28} {:>6} {:>8} {:>6} {:>15}", "file", "match", "refused", "wrong", "error-mismatch").unwrap();
    for (f, c) in &per_file {
        writeln!(report, "{f:<28} {:>6} {:>8} {:>6} {:>15}", c[0], c[1], c[2], c[3]).unwrap();
    }
    if !setup_failures.is_empty() {
        writeln!(report, "\nSETUP FAILURES ({}):\n{}", setup_failures.len(), setup_failures.join("\n")).unwrap();
    }
    if !corpus_bugs.is_empty() {
        writeln!(report, "\nCORPUS BUGS ({}):\n{}", corpus_bugs.len(), corpus_bugs.join("\n")).unwrap();
    }
    if !refusal_reasons.is_empty() {
        let mut reasons: Vec<(&String, &usize)> = refusal_reasons.iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        writeln!(report, "\nrefusal reasons (heapstore's 0A000 messages):").unwrap();
        for (m, k) in reasons {
            writeln!(report, "{k:>6}  {}", one_line(m, 150)).unwrap();
        }
    }
    if !details.is_empty() {
        writeln!(report, "\nnon-matches:\n{details}").unwrap();
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let _ = std::fs::create_dir_all(&target);
    let report_path = target.join("differential-report.txt");
    std::fs::write(&report_path, &report).unwrap_or_else(|e| panic!("write {}: {e}", report_path.display()));
    println!("{report}");
    println!("report written to {}", report_path.display());

    assert!(setup_failures.is_empty(), "{} setup statement(s) failed (see the report above)", setup_failures.len());
    assert!(corpus_bugs.is_empty(), "{} corpus bug(s): the corpus disagrees with PostgreSQL (see the report above)", corpus_bugs.len());
    assert!(
        n(Class::Wrong) + n(Class::ErrorMismatch) == 0,
        "heapstore disagrees with PostgreSQL: {} wrong, {} error-mismatch (see the report above, or {})",
        n(Class::Wrong),
        n(Class::ErrorMismatch),
        report_path.display()
    );
    if strict {
        assert!(n(Class::Refused) == 0, "HEAPSTORE_DIFF_STRICT: {} queries refused", n(Class::Refused));
    }
}
