//! What the engine's integration tests (`tests/it`), its bench and the workspace's root
//! tests reach beyond the public surface; not part of the API (hidden from the docs).
//! Each group mirrors the engine module its items come from, so a test names
//! `kiln_engine::testing::snapshot::materialize` where the engine says
//! `kiln_records::snapshot::materialize`; when an item moves, only its line here changes. (The
//! modules are `pub(crate)`, so they cannot be re-exported whole: items are listed.)

/// tests/it: attachments.
pub mod attachments {
    pub use crate::attachment_rules::{check, safe_name, Kind, IN_WORKDIR, MAX_BYTES, MAX_NAME_CHARS, MAX_PER_SESSION};
}

/// tests/it: checkpoints, diff, paths; benches/checkpoints.rs.
pub mod checkpoint {
    pub use crate::checkpoint::{take, upload};
}

/// tests/it: objects.
pub mod recover {
    pub use crate::recover::bucket::present;
}

/// tests/it: detect, roles.
pub mod config {
    pub use crate::config::{Config, Workflow};
    pub use crate::mcp_config::{McpServer, McpServerConfig};
}

/// tests/it: checkpoints, diff, paths; benches/checkpoints.rs.
pub mod working_copy {
    pub use crate::working_copy::{snapshot_workdir, NOT_SNAPSHOTTED};
}

/// tests/it: delivery_git (git), delivery_git_pr and delivery_links (git_pr, StepSink).
pub mod delivery {
    pub use crate::delivery::StepSink;

    pub mod git {
        pub use crate::delivery::git::{Git, GitErrorKind, Redactor};
        pub use kiln_runtime::process::{allowlisted_env, KEPT_VARIABLES};
    }

    pub mod git_pr {
        pub use crate::delivery::git_pr::{available, deliver, GateRow, GitPrBody, GitPrInput, GitPrModule};
    }
}

/// tests/it: detect.
pub mod detect {
    pub use crate::detect::detect_path;
}

/// tests/it: contract_cli, driver_health (health), driver_parsers (claude, codex, events),
/// live, openai_driver, sandbox (runner, tools), scope, settings (registry, tools), acp_protocol (acp).
pub mod drivers {
    pub use crate::drivers::{agent_config, Driver, TurnFuture, TurnRequest, TurnSink};

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

    /// tests/it: permissions.
    pub mod permission {
        pub use crate::drivers::permission::{Operator, PermissionAsk, PermissionChoice};
    }

    pub mod registry {
        pub use crate::drivers::registry::resolve;
    }

    /// tests/it: acp_settings, contract_acp.
    pub mod acp_presets {
        pub use crate::drivers::acp::presets::{command, find_binary, preset_env, state_dirs, PRESETS};
    }

    pub mod runner {
        pub use crate::drivers::runner::{run, CliRun};
    }

    pub mod tools {
        pub use crate::drivers::tools::{Toolbox, NO_COMMANDS};
    }

    /// tests/it: acp_protocol (the driver, and the operator's seat a test takes), links (the
    /// client's `fs/*`).
    pub mod acp {
        pub use crate::drivers::acp::{AcpCommand, AcpDriver, Client, Workdir};
        pub use crate::drivers::permission::{AskFuture, Operator, PermissionAsk};
    }
}

/// benches/checkpoints.rs: the bus a checkpoint is announced on.
pub mod events {
    pub use crate::events::EventBus;
}

/// tests/it: paths.
pub mod gates {
    pub use crate::gates::{module_schema, run_module_gate, spec_schema};
}

/// tests/it: roles.
pub mod handoff {
    pub use crate::handoff::{parse, Target};
}

/// tests/it: checkpoints, contract_cli, delivery, delivery_direct, delivery_links,
/// delivery_pr, diff, live, paths; benches/checkpoints.rs.
pub mod ids {
    pub use crate::ids::SessionId;
}

/// tests/it: materialize; benches/checkpoints.rs.
pub mod materialize {
    pub use kiln_records::materialize::{reflink_supported, working_copy, HostFiles, Materialized};
}

/// tests/it: paths, planner.
pub mod modules {
    pub use crate::modules::{ModuleInfo, Toolchain};
}

/// tests/it: paths, planner.
pub mod planner {
    pub use crate::planner::Rules;
}

/// tests/it: contract_cli, live.
pub mod planner_agent {
    pub use crate::planner_agent::start;
}

/// tests/it: gateway.
pub mod preview {
    pub mod gateway {
        pub use crate::preview::gateway::{Activity, BridgeTarget, Gateway, GatewayOptions, Upstream};
    }
}

/// tests/it: materialize.
pub mod prime {
    pub use kiln_records::prime::stat_cache;
}

/// tests/it: contract_cli, sandbox, scope.
pub mod process {
    pub use kiln_runtime::process::{run_confined, run_scoped, Running};
}

/// tests/it: delivery, delivery_direct, delivery_links, delivery_pr (a passing review
/// stored directly).
pub mod review {
    pub use crate::review::{covered, store};
}

/// tests/it: roles.
pub mod roles {
    pub use crate::roles::{find, load, Role, Scope, BUNDLED};
}

/// tests/it: roles.
pub mod routing {
    pub use crate::routing::{route, ModuleState, Route};
}

/// tests/it: sandbox, scope, settings.
pub mod sandbox {
    pub use kiln_runtime::sandbox::{hidden, kernel_abi, support, Confinement, Enforcement, Scope, DISABLE_ENV};
}

/// tests/it: settings; the root tests/hostile.rs.
pub mod secrets {
    pub use kiln_runtime::secrets::{fingerprint, Sealer};
}

/// tests/it: scope, settings.
pub mod settings {
    pub use crate::settings::{command_policy, openai_key};
}

/// tests/it: checkpoints, crash, paths, snapshot.
pub mod snapshot {
    // Materializing moved to its own module; the tests that call it here are unchanged.
    pub use kiln_records::materialize::materialize;
    pub use kiln_records::snapshot::{commit, open_store, put_path, snapshot, snapshot_cached, Source};
}

/// tests/it: settings.
pub mod store {
    /// tests/it: store_schema (both schemas, compared).
    pub use kiln_records::store::postgres::PG_MIGRATOR;
    pub use kiln_records::store::MIGRATOR;

    pub mod settings {
        pub use kiln_records::store::settings::{get_setting, set_setting};
    }
}

/// tests/it: contract_cli, live.
pub mod turn {
    pub use crate::turn::{lost_resume, TurnPlan};

    /// Starts a turn alone, in the background, with no chain after it.
    pub async fn start(
        ws: std::sync::Arc<crate::workspace::Workspace>,
        events: std::sync::Arc<crate::events::EventBus>,
        plan: TurnPlan,
    ) -> kiln_types::error::Result<()> {
        let started = crate::turn::begin(&ws, &events, plan).await?;
        tokio::spawn(async move {
            crate::turn::run_to_end(&ws, &events, started).await;
        });
        Ok(())
    }
}

/// benches/checkpoints.rs.
pub mod workspace {
    pub use crate::workspace::Workspace;
}

/// tests/it: watch (the watcher's test hooks).
pub mod watch {
    pub use crate::watch::{doubts, drop_events, stop, trusted, trusted_snapshots, Doubt};
}
