//! `kiln serve --check`: what the operator's backing stores look like before a host serves on
//! them — the records' database and its migrations, the objects' bucket — one line each.

use kiln_records::backing::Backing;
pub use kiln_records::store::check::Finding;

/// Checks what `backing` names; the defaults (beside the workspace) need no checking.
pub async fn check_backing(backing: &Backing) -> Vec<Finding> {
    let mut found = match &backing.database {
        Some(url) => kiln_records::store::check::database(url).await,
        None => vec![Finding::ok("records: SQLite in the workspace's .kiln/kiln.db (no --database): one host only")],
    };
    found.push(match &backing.objects {
        None => Finding::ok("objects: .kiln/store.git beside the workspace (no --objects)"),
        Some(_) => match kiln_records::objects::check(backing).await {
            Ok(line) => Finding::ok(line),
            Err(e) => Finding::failed(format!("objects: {} [{}]", e.message, e.code.as_str())),
        },
    });
    found
}
