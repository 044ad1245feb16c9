//! The steps every delivery target shares: all the gates first, and the configured commands
//! (`enable`, `after`) with the module's id and directory put in. Below the run and the targets,
//! so a target never reaches back into the run that drives it.

use super::{Delivering, StepSink};
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

/// The first step of every target: every gate of every module, now. Anything but
/// `passed`, `not-configured` or `failing-before` (a failure, or a gate that was skipped)
/// stops the run, unless the operator delivers past the gate blockers (`Delivering::anyway`).
pub(crate) async fn gates_step(ctx: &Delivering, sink: &dyn StepSink) -> Result<()> {
    sink.start("gates", "Run every gate", None);
    let outcomes = crate::gates::run_all(&ctx.ws, &ctx.events, &ctx.id, &ctx.session, &ctx.session.modules).await?;
    let mut table = String::new();
    let mut bad = Vec::new();
    for o in &outcomes {
        let whom = o.module.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
        table.push_str(&format!("{}{whom}: {}\n", o.gate, gate_status_text(o.status)));
        if !matches!(o.status, GateStatus::Passed | GateStatus::NotConfigured | GateStatus::FailingBefore) {
            bad.push((format!("{}{whom}", o.gate), o));
        }
    }
    if bad.is_empty() {
        sink.pass("gates", table.trim_end());
        return Ok(());
    }
    let mut output = table;
    for (name, o) in &bad {
        output.push_str(&format!("\n{name}: {}\n{}", o.note.clone().unwrap_or_default(), o.output_start()));
    }
    if let Some(anyway) = &ctx.anyway {
        output.push_str(&format!("\nDelivered past these, as the operator decided: {}", anyway.reason));
        sink.pass("gates", &ctx.redactor.redact(output.trim_end()));
        return Ok(());
    }
    sink.fail("gates", &ctx.redactor.redact(output.trim_end()));
    let names: Vec<&str> = bad.iter().map(|(n, _)| n.as_str()).collect();
    Err(ApiError::new(ErrorCode::DeliveryBlocked, format!("gates did not pass: {}", names.join(", "))))
}

/// A gate result as the run and the pull request show it: `passed`, `failed`, `skipped`,
/// `not configured`.
pub(crate) fn gate_status_text(status: GateStatus) -> &'static str {
    match status {
        GateStatus::Passed => "passed",
        GateStatus::Failed => "failed",
        GateStatus::FailingBefore => "failing before",
        GateStatus::Skipped => "skipped",
        GateStatus::NotConfigured => "not configured",
    }
}

/// `{id}` and `{directory}` in a configured command, each quoted for `sh`.
pub(crate) fn substitute(command: &str, module: &SessionModule) -> String {
    command.replace("{id}", &quote(&module.id)).replace("{directory}", &quote(&module.directory))
}

fn quote(text: &str) -> String {
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "@/._-+".contains(c)) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
