//! Delivery (SPEC §12, "eject"): the targets that land a session's change as code the
//! user owns (into the workspace, or as a pull request) will live here. `git` is the
//! layer the `git-pr` target uses to run the git CLI safely.

pub mod git;
