//! What the engine's integration tests (`tests/it`), its benches and the workspace's
//! root tests reach beyond the public surface. Not part of the API (hidden from the
//! docs): each group mirrors the engine module it comes from, so a test names
//! `kiln_engine::testing::snapshot::materialize` where the engine says
//! `crate::snapshot::materialize`, and when an item moves only its line here changes.

/// tests/it: attachments.
pub mod attachments {
    pub use crate::attachments::{check, safe_name, Kind, MAX_BYTES, MAX_NAME_CHARS, MAX_PER_SESSION};
}

/// tests/it: checkpoints; benches/checkpoints.
pub mod checkpoint {
    pub use crate::checkpoint::take;
}

/// tests/it: planner, roles.
pub mod config {
    pub use crate::config::{Config, Workflow};
}

/// tests/it: sandbox; benches/checkpoints.
pub mod confine {
    pub use crate::confine::snapshot_workdir;
}

/// tests/it: delivery, delivery_direct, delivery_git, delivery_git_pr, delivery_links.
pub mod delivery {
    pub use crate::delivery::StepSink;

    pub mod git {
        pub use crate::delivery::git::{allowlisted_env, Git, GitErrorKind, Redactor, KEPT_VARIABLES};
    }

    pub mod git_pr {
        pub use crate::delivery::git_pr::{available, deliver, GateRow, GitPrBody, GitPrInput, GitPrModule};
    }
}

/// tests/it: detect.
pub mod detect {
    pub use crate::detect::detect_path;
}

/// tests/it: driver_health, driver_parsers, openai_driver, sandbox, turns, live.
pub mod drivers {
    pub use crate::drivers::{Driver, TurnFuture, TurnRequest, TurnSink};

    pub mod claude {
        pub use crate::drivers::claude::{command, ClaudeDriver, ClaudeOptions, ClaudeParser};
    }

    pub mod codex {
        pub use crate::drivers::codex::{command, CodexDriver, CodexOptions, CodexParser};
    }

    pub mod events {
        pub use crate::drivers::events::{DriverEvent, FileChangeKind, ToolKind, ToolStatus, Usage};
    }

    pub mod health {
        pub use crate::drivers::health::{claude_signed_in, cli_env, codex_signed_in, first_line, version};
    }

    pub mod openai {
        pub use crate::drivers::openai::OpenAiDriver;
    }

    pub mod registry {
        pub use crate::drivers::registry::resolve;
    }

    pub mod runner {
        pub use crate::drivers::runner::{run, CliRun};
    }

    pub mod tools {
        pub use crate::drivers::tools::{Toolbox, NO_COMMANDS};
    }
}

/// tests/it: gates.
pub mod gates {
    pub use crate::gates::{module_schema, run_module_gate, spec_schema};
}

/// tests/it: handoff's tests in turns.
pub mod handoff {
    pub use crate::handoff::{parse, Target};
}

/// tests/it: many; benches/checkpoints.
pub mod ids {
    pub use crate::ids::SessionId;
}

/// tests/it: detect, gates.
pub mod modules {
    pub use crate::modules::{ModuleInfo, Toolchain};
}

/// tests/it: planner.
pub mod planner {
    pub use crate::planner::Rules;
}

/// tests/it: planner.
pub mod planner_agent {
    pub use crate::planner_agent::start;
}

/// tests/it: gateway.
pub mod preview {
    pub mod gateway {
        pub use crate::preview::gateway::{Activity, BridgeTarget, Gateway, GatewayOptions, Upstream};
    }
}

/// tests/it: gates, sandbox.
pub mod process {
    pub use crate::process::{run_confined, run_scoped, Running};
}

/// tests/it: delivery tests (a passing review stored directly).
pub mod review {
    pub use crate::review::store;
}

/// tests/it: roles.
pub mod roles {
    pub use crate::roles::{find, load, Role, Scope, BUNDLED};
}

/// tests/it: planner.
pub mod routing {
    pub use crate::routing::{route, ModuleState, Route};
}

/// tests/it: sandbox, scope.
pub mod sandbox {
    pub use crate::sandbox::{hidden, kernel_abi, support, Confinement, Enforcement, Scope, DISABLE_ENV};
}

/// tests/it: settings; root tests/hostile.rs.
pub mod secrets {
    pub use crate::secrets::{fingerprint, Sealer};
}

/// tests/it: settings, turns.
pub mod settings {
    pub use crate::settings::{command_policy, openai_key};
}

/// tests/it: snapshot, checkpoints, diff.
pub mod snapshot {
    pub use crate::snapshot::{commit, materialize, open_store, put_path, snapshot, snapshot_cached, Source};
}

/// tests/it: settings, turns.
pub mod store {
    pub mod turns {
        pub use crate::store::turns::{get_setting, set_setting};
    }
}

/// tests/it: turns.
pub mod turn {
    pub use crate::turn::{lost_resume, start, TurnPlan};
}

/// benches/checkpoints.
pub mod workspace {
    pub use crate::workspace::Workspace;
}
