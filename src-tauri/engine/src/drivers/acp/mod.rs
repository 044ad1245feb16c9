//! STAND-IN until the acp-driver branch lands (issue 18): only the shapes the presets and the
//! registry build on. The real `drivers/acp/mod.rs` (the ACP driver) replaces this file whole,
//! adding `pub mod presets;`.

pub mod presets;

use std::path::PathBuf;

use super::events::DriverEvent;
use super::{Driver, TurnFuture, TurnRequest, TurnSink};
use crate::api::types::CommandPolicy;

/// The agent's command line: what Kiln spawns for each turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpCommand {
    pub binary: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

// The stand-in runs nothing, so it reads neither.
#[allow(dead_code)]
pub struct AcpDriver {
    pub id: &'static str,
    pub command: AcpCommand,
    pub commands: CommandPolicy,
}

impl AcpDriver {
    pub fn new(id: &'static str, command: AcpCommand, commands: CommandPolicy) -> Self {
        AcpDriver { id, command, commands }
    }
}

impl Driver for AcpDriver {
    fn id(&self) -> &'static str {
        self.id
    }

    fn run(&self, _request: TurnRequest, sink: TurnSink) -> TurnFuture {
        Box::pin(async move {
            let _ = sink.events.send(DriverEvent::TurnEnded {
                is_error: true,
                stop_reason: None,
                final_text: None,
                error: Some("the ACP driver is not built into this Kiln yet".into()),
            });
            Ok(())
        })
    }
}
