//! `heapstore -D DIR serve` and `heapstore -D DIR user add NAME`.
//!
//! `serve` opens the data directory (taking its lock file `heapstore.pid`, which names the
//! server's pid, as for every command), starts [`crate::server::Server`], and waits for SIGINT
//! or SIGTERM; then it stops accepting, gives sessions `--grace-secs` to finish, cancels and
//! disconnects the rest, and closes the database (shutdown checkpoint). The Unix socket file is
//! removed on the way out.
//!
//! `user add` reads the password from the terminal (twice, without echo) or, when stdin is not
//! a terminal, from its first line; never from the command line. Roles are read by the server
//! at each connection, so `user add` works while a server runs.

use crate::db::Database;
use crate::error::{sqlstate, PgError, Result};
use crate::server::{Server, ServerConfig};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// `serve`'s options (each overrides the setting named in its help).
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// TCP addresses to listen on, comma-separated ('' = none, '*' = all) [listen_addresses].
    #[arg(long)]
    pub listen: Option<String>,
    /// TCP port, also the number in the socket's name .s.PGSQL.PORT [port].
    #[arg(long)]
    pub port: Option<u16>,
    /// Directory for the Unix socket (default: the data directory) [unix_socket_directories].
    #[arg(long)]
    pub socket_dir: Option<std::path::PathBuf>,
    /// Seconds sessions get to finish at shutdown before they are cancelled.
    #[arg(long, default_value_t = 5)]
    pub grace_secs: u64,
}

/// `user` subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum UserCmd {
    /// Add a role with a password, or set an existing role's password (SCRAM-SHA-256).
    Add {
        /// Role name.
        name: String,
    },
}

pub fn serve(dir: &Path, set: &[String], a: &ServeArgs) -> Result<i32> {
    let mut set = set.to_vec();
    if let Some(l) = &a.listen {
        set.push(format!("listen_addresses={l}"));
    }
    if let Some(p) = a.port {
        set.push(format!("port={p}"));
    }
    if let Some(d) = &a.socket_dir {
        set.push(format!("unix_socket_directories={}", d.display()));
    }
    let db = Arc::new(Database::open(dir, &set)?);
    for m in &db.shared().startup_messages {
        eprintln!("{m}");
    }
    let cfg = ServerConfig::from_settings(&db)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| PgError::new(sqlstate::IO_ERROR, format!("could not install signal handler: {e}")))?;
    }
    let server = Server::start(db, cfg)?;
    for a in server.tcp_addrs() {
        eprintln!("LOG:  listening on {} address \"{}\", port {}", if a.is_ipv4() { "IPv4" } else { "IPv6" }, a.ip(), a.port());
    }
    if let Some(p) = server.socket_path() {
        eprintln!("LOG:  listening on Unix socket \"{}\"", p.display());
    }
    eprintln!("LOG:  database system is ready to accept connections");
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("LOG:  received shutdown request; {} session(s) open", server.connections());
    let db = server.shutdown(Duration::from_secs(a.grace_secs));
    let db = Arc::try_unwrap(db).map_err(|_| PgError::internal("sessions still hold the database at shutdown"))?;
    db.close()?;
    eprintln!("LOG:  database system is shut down");
    Ok(0)
}

pub fn user(dir: &Path, cmd: &UserCmd) -> Result<i32> {
    let UserCmd::Add { name } = cmd;
    if !dir.join("global").exists() {
        return Err(PgError::new(sqlstate::UNDEFINED_FILE, format!("\"{}\" is not a heapstore data directory", dir.display())));
    }
    let password = read_password()?;
    let new = crate::auth::set_password(dir, name, &password)?;
    println!("{} role \"{name}\"", if new { "created" } else { "changed password of" });
    Ok(0)
}

fn read_password() -> Result<String> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let mut line = String::new();
        stdin.lock().read_line(&mut line).map_err(|e| PgError::new(sqlstate::IO_ERROR, format!("could not read password: {e}")))?;
        return Ok(line.trim_end_matches(['\n', '\r']).to_string());
    }
    let a = prompt("Enter password for new role: ")?;
    let b = prompt("Enter it again: ")?;
    if a != b {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "passwords didn't match"));
    }
    Ok(a)
}

/// Reads a line from the terminal with echo off.
fn prompt(text: &str) -> Result<String> {
    eprint!("{text}");
    let _ = std::io::stderr().flush();
    let fd = libc::STDIN_FILENO;
    // SAFETY: termios is plain old data; tcgetattr fills it for a valid fd (stdin is a terminal).
    let mut old: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is stdin, `old` is a valid termios to fill.
    let have_tty = unsafe { libc::tcgetattr(fd, &mut old) } == 0;
    if have_tty {
        let mut quiet = old;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: sets attributes of stdin from a copy of its own settings.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) };
    }
    let mut line = String::new();
    let r = std::io::stdin().lock().read_line(&mut line);
    if have_tty {
        // SAFETY: restores the settings read above.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &old) };
    }
    eprintln!();
    r.map_err(|e| PgError::new(sqlstate::IO_ERROR, format!("could not read password: {e}")))?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}
