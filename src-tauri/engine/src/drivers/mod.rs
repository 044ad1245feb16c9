//! Drivers: how Kiln runs each coding agent and reads what it prints. Every driver
//! turns its agent's own output into the one `events::DriverEvent` stream, so the
//! rest of the engine never needs to know which agent did the work.

pub mod events;
pub mod claude;
pub mod codex;
