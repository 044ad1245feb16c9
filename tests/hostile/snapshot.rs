//! What "nothing changed" means in the hostile-input suite: a digest of every row of
//! every table in `.kiln/kiln.db` (read-only, in a fixed order), and of the `.kiln`
//! tree, the workspace around it and the directories outside it (paths, file types,
//! modes, contents, symbolic-link targets). Two snapshots compare entry by entry, so a
//! failure names the table or path that changed.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Row};

/// One runtime for the suite's few async calls (sqlx, binding a client address).
pub(crate) fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap())
}

pub(crate) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Snapshot(pub BTreeMap<String, String>);

impl Snapshot {
    /// Every key whose value differs, was added or went away, with both values.
    pub(crate) fn changes(&self, after: &Snapshot) -> Vec<String> {
        let mut out = Vec::new();
        for (k, v) in &self.0 {
            match after.0.get(k) {
                None => out.push(format!("removed {k}")),
                Some(w) if w != v => out.push(format!("changed {k}")),
                _ => {}
            }
        }
        for k in after.0.keys() {
            if !self.0.contains_key(k) {
                out.push(format!("added {k}"));
            }
        }
        out
    }
}

/// The directories a snapshot covers, each under a label.
pub(crate) struct Scope {
    pub workspace: PathBuf,
    /// Directories outside the workspace that no request may touch.
    pub outside: Vec<(String, PathBuf)>,
}

pub(crate) fn take(scope: &Scope) -> Snapshot {
    let mut map = BTreeMap::new();
    let kiln = scope.workspace.join(".kiln");
    for (table, digest) in db_rows(&kiln.join("kiln.db")) {
        map.insert(format!("db:{table}"), digest);
    }
    tree(&kiln, "kiln:", &mut map, &|rel: &str| {
        // The rows stand for the database file; SQLite's side files come and go.
        rel.starts_with("kiln.db") || rel.ends_with("-wal") || rel.ends_with("-shm") || rel.ends_with("-journal")
    });
    tree(&scope.workspace, "ws:", &mut map, &|rel: &str| rel == ".kiln" || rel.starts_with(".kiln/"));
    for (label, dir) in &scope.outside {
        tree(dir, &format!("{label}:"), &mut map, &|_| false);
    }
    map.insert("exists:kiln.db".into(), kiln.join("kiln.db").exists().to_string());
    Snapshot(map)
}

/// Per table: the row count and the SHA-256 of its rows, each row rendered by
/// SQLite's `quote()` and the rows sorted.
pub(crate) fn db_rows(db: &Path) -> BTreeMap<String, String> {
    if !db.exists() {
        return BTreeMap::new();
    }
    rt().block_on(async {
        let mut conn =
            SqliteConnectOptions::new().filename(db).read_only(true).connect().await.expect("open kiln.db read-only");
        let tables: Vec<String> =
            sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        let mut out = BTreeMap::new();
        for table in tables {
            let columns: Vec<String> = sqlx::query(&format!("PRAGMA table_info(\"{table}\")"))
                .fetch_all(&mut conn)
                .await
                .unwrap()
                .iter()
                .map(|r| r.get::<String, _>("name"))
                .collect();
            let select = columns.iter().map(|c| format!("quote(\"{c}\")")).collect::<Vec<_>>().join(" || '|' || ");
            let mut rows: Vec<String> =
                sqlx::query_scalar(&format!("SELECT {select} FROM \"{table}\"")).fetch_all(&mut conn).await.unwrap();
            rows.sort();
            out.insert(table, format!("{} rows {}", rows.len(), sha256(rows.join("\n").as_bytes())));
        }
        conn.close().await.ok();
        out
    })
}

/// The rows of one table, rendered as in `db_rows` (for messages and value checks).
pub(crate) fn query_strings(db: &Path, sql: &str) -> Vec<String> {
    rt().block_on(async {
        let mut conn = SqliteConnectOptions::new()
            .filename(db)
            .read_only(true)
            .connect()
            .await
            .expect("open the database read-only");
        let rows: Vec<String> = sqlx::query_scalar(sql).fetch_all(&mut conn).await.unwrap();
        conn.close().await.ok();
        rows
    })
}

/// Every entry under `root` as `prefix + relative path` → its type, mode and content
/// digest or link target. Never follows a link.
pub(crate) fn tree(root: &Path, prefix: &str, out: &mut BTreeMap<String, String>, skip: &dyn Fn(&str) -> bool) {
    fn walk(root: &Path, dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>, skip: &dyn Fn(&str) -> bool) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if skip(&rel) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            let mode = meta.permissions().mode() & 0o7777;
            let value = if meta.file_type().is_symlink() {
                format!("link -> {}", std::fs::read_link(&path).map(|t| t.display().to_string()).unwrap_or_default())
            } else if meta.is_dir() {
                walk(root, &path, prefix, out, skip);
                format!("dir {mode:o}")
            } else if meta.is_file() {
                format!("file {mode:o} {}", sha256(&std::fs::read(&path).unwrap_or_default()))
            } else {
                format!("other {mode:o}")
            };
            out.insert(format!("{prefix}{rel}"), value);
        }
    }
    if std::fs::symlink_metadata(root).is_ok() {
        out.insert(format!("{prefix}."), "root".into());
    }
    walk(root, root, prefix, out, skip);
}

/// Files under `dir` (links not followed) whose bytes contain `needle`.
pub(crate) fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                let bytes = std::fs::read(&path).unwrap_or_default();
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    found.push(path);
                }
            }
        }
    }
    found
}
