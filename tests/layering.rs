//! The layering rules of `docs/ARCHITECTURE.md`, checked over the source: access methods take
//! narrow handles (never `Session` or `db::Shared`), and COPY never calls back into SQL.

use std::path::Path;

/// Every line of the `.rs` files under `dir` that contains one of `needles`.
fn offending(dir: &Path, needles: &[&str], out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("source directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            offending(&path, needles, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("source file");
            for (n, line) in text.lines().enumerate() {
                if needles.iter().any(|x| line.contains(x)) {
                    out.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
}

#[test]
fn access_methods_import_nothing_above_them() {
    let mut bad = Vec::new();
    offending(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/access"), &["crate::session", "crate::db"], &mut bad);
    assert!(bad.is_empty(), "src/access imports a layer above it:\n{}", bad.join("\n"));
}

#[test]
fn copy_does_not_call_back_into_sql() {
    let mut bad = Vec::new();
    offending(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/copy"), &["crate::sql"], &mut bad);
    assert!(bad.is_empty(), "src/copy imports sql:\n{}", bad.join("\n"));
}
