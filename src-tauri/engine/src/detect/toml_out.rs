//! Detection as `kiln.toml` text: what `kiln detect` prints and "Save as kiln.toml"
//! writes. An existing file is edited in place (toml_edit), so its comments and every
//! key the set-up screen does not show (preview, delivery…) stay as they were.

use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{DetectedGate, Workflow};

/// One module's gates as they go into the file: `Some("")` turns a gate off.
pub(super) struct ModuleGates<'a> {
    pub id: &'a str,
    pub gates: Vec<(&'a str, Option<String>, Option<&'a str>)>,
}

impl<'a> ModuleGates<'a> {
    /// From detection: each gate's command, and its source as a comment.
    pub(super) fn detected(id: &'a str, gates: &'a [DetectedGate]) -> ModuleGates<'a> {
        let entry = |g: &'a DetectedGate| {
            let why =
                if g.command.is_some() { g.source.as_str() } else { g.hint.as_deref().unwrap_or(g.source.as_str()) };
            (g.gate.as_str(), Some(g.command.clone().unwrap_or_default()), Some(why))
        };
        ModuleGates { id, gates: gates.iter().map(entry).collect() }
    }
}

const HEADER: &str =
    "# kiln.toml: how Kiln works in this repository (see Kiln's README, \"Use Kiln on your own repository\").\n\
# Written from what Kiln detected; every key is optional, and a gate set to \"\" is not configured.\n";

/// `existing` (the current file's text, if any) with the workflow, setup and gates set.
pub(super) fn to_toml(
    existing: Option<&str>,
    workflow: Workflow,
    setup: Option<(&str, Option<&str>)>,
    modules: &[ModuleGates],
) -> Result<String> {
    let mut doc: toml_edit::Document = match existing {
        Some(text) => text.parse().map_err(|e| {
            ApiError::new(ErrorCode::ConfigInvalid, format!("the existing kiln.toml does not parse: {e}"))
        })?,
        None => toml_edit::Document::new(),
    };
    set(&mut doc, &["workflow"], "mode", toml_edit::value(workflow.as_str()))?;
    if let Some((command, source)) = setup {
        set(&mut doc, &["session"], "setup", commented(command, source))?;
    }
    for m in modules {
        for (gate, command, source) in &m.gates {
            if let Some(command) = command {
                set(&mut doc, &["modules", "overrides", m.id, "gates"], gate, commented(command, *source))?;
            }
        }
    }
    Ok(match existing {
        Some(_) => doc.to_string(),
        None => format!("{HEADER}\n{doc}"),
    })
}

/// Sets `key` in the table at `path`, making the tables on the way (the ones in between
/// without a header of their own).
fn set(doc: &mut toml_edit::Document, path: &[&str], key: &str, item: toml_edit::Item) -> Result<()> {
    let mut table: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    for (depth, part) in path.iter().enumerate() {
        let last = depth + 1 == path.len();
        let entry = table.entry(part).or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(!last);
            toml_edit::Item::Table(t)
        });
        table = entry.as_table_like_mut().ok_or_else(|| {
            ApiError::new(ErrorCode::ConfigInvalid, format!("kiln.toml: `{}` is not a table", path[..=depth].join(".")))
        })?;
    }
    table.insert(key, item);
    Ok(())
}

fn commented(command: &str, source: Option<&str>) -> toml_edit::Item {
    let mut value = toml_edit::Value::from(command);
    match source {
        Some(source) if !source.starts_with("kiln.toml") => {
            let note = if command.is_empty() { format!("not configured: {source}") } else { format!("from {source}") };
            value.decor_mut().set_suffix(format!("  # {}", note.replace('\n', " ")));
        }
        _ => {}
    }
    toml_edit::Item::Value(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_keep_what_the_user_wrote() {
        let existing = "# mine\n[preview]\ncommand = \"node server.js\" # keep me\n";
        let gates = vec![
            ("tests", Some("vitest run packages/a".to_string()), Some("vitest.config.ts at the repository root")),
            ("format", Some(String::new()), None),
        ];
        let text =
            to_toml(Some(existing), Workflow::Direct, Some(("npm ci", None)), &[ModuleGates { id: "@x/a", gates }])
                .unwrap();
        assert!(text.starts_with("# mine\n[preview]\ncommand = \"node server.js\" # keep me\n"), "{text}");
        let parsed = crate::config::Config::parse(&text, std::path::Path::new("kiln.toml")).unwrap();
        assert_eq!(parsed.workflow(), Workflow::Direct);
        assert_eq!(parsed.session.setup.as_deref(), Some("npm ci"));
        let gates = &parsed.modules.overrides["@x/a"].gates;
        assert_eq!(gates.tests.as_deref(), Some("vitest run packages/a"));
        assert_eq!(gates.format.as_deref(), Some(""));
        assert!(text.contains("# from vitest.config.ts at the repository root"), "{text}");
        assert!(text.contains("[modules.overrides.\"@x/a\".gates]\n"), "{text}");
        let fresh = to_toml(None, Workflow::Specs, None, &[]).unwrap();
        assert!(fresh.starts_with("# kiln.toml"), "{fresh}");
        assert!(fresh.contains("[workflow]\nmode = \"specs\"\n"), "{fresh}");
    }
}
