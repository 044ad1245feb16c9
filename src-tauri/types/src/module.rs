//! The modules of a workspace as the API names them: each unit of change with its id, its
//! directory and its toolchain (discovered by the engine's `modules`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Toolchain {
    Node,
    Rust,
    Python,
    Go,
    Generic,
}

impl Toolchain {
    pub fn as_str(self) -> &'static str {
        match self {
            Toolchain::Node => "node",
            Toolchain::Rust => "rust",
            Toolchain::Python => "python",
            Toolchain::Go => "go",
            Toolchain::Generic => "generic",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModuleInfo {
    pub id: String,
    /// Workspace-relative, `/`-separated; `.` for a whole-repository module.
    pub directory: String,
    pub toolchain: Toolchain,
    /// The `status:` line of the module's specification front matter, when it has one.
    pub spec_status: Option<String>,
}
