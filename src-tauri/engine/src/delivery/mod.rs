//! Delivery (SPEC §12, "eject"): the targets that land a session's change as code the
//! user owns (into the workspace, or as a pull request). `git` is the layer the
//! `git-pr` target uses to run the git CLI safely; `StepSink` is how every target
//! reports its steps as they start, pass, fail or are skipped.

pub mod git;

/// Where a target reports its steps while it applies a delivery. The run records each
/// call (persisted and sent as `EventBody::Delivery`), so a target never touches the
/// store or the event bus itself. Object-safe so targets take `&dyn StepSink`.
pub trait StepSink: Send + Sync {
    /// A step began; `module` names the module it is about, if it is per module.
    fn start(&self, id: &str, title: &str, module: Option<&str>);
    /// The step finished successfully with its (already redacted) output.
    fn pass(&self, id: &str, output: &str);
    /// The step failed; the target stops after reporting this.
    fn fail(&self, id: &str, output: &str);
    /// The step was not needed (e.g. no `build` command), with the reason.
    fn skip(&self, id: &str, why: &str);
}
