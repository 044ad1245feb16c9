//! The engine's operations as Tauri commands, generated from the engine's operation table so
//! the desktop and `kiln serve` expose exactly the same API; plus `subscribe`, which
//! streams events over a Tauri channel, and `attach_terminal`, which streams a terminal's
//! output over one.

use std::sync::Arc;

use kiln_engine::types::{KilnEvent, TerminalChunk};
use kiln_engine::{ApiError, Engine};
use tauri::ipc::Channel;
use tauri::State;

macro_rules! tauri_commands {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident($args:ty) -> $ret:ty $({ $($policy:tt)* })? $(=> $($function:ident)::+)?;
    )*) => {
        $(
            $(#[doc = $doc])*
            #[tauri::command]
            pub async fn $name(engine: State<'_, Arc<Engine>>, args: Option<serde_json::Value>) -> Result<serde_json::Value, ApiError> {
                engine.dispatch(stringify!($name), args.unwrap_or(serde_json::Value::Null)).await
            }
        )*

        /// The invoke handler with every command, for any runtime: the app's, or the mock
        /// runtime the tests use (so the release build needs no `tauri/test`).
        pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$($name,)* subscribe, attach_terminal]
        }

        /// The command names this handler serves, engine operations first.
        pub const COMMANDS: &[&str] = &[$(stringify!($name),)* "subscribe", "attach_terminal"];
    };
}

kiln_engine::for_each_operation!(tauri_commands);

/// Streams every event after `since` (or from now) to the window's channel until the
/// channel closes.
#[tauri::command]
pub async fn subscribe(
    engine: State<'_, Arc<Engine>>,
    channel: Channel<KilnEvent>,
    since: Option<u64>,
) -> Result<(), ApiError> {
    let mut sub = engine.subscribe(since);
    for event in sub.backlog.drain(..) {
        if channel.send(event).is_err() {
            return Ok(());
        }
    }
    tauri::async_runtime::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            let event = match sub.receiver.recv().await {
                Ok(event) => event,
                Err(RecvError::Lagged(_)) => {
                    KilnEvent { id: 0, at: kiln_engine::now(), body: kiln_engine::types::EventBody::Resync }
                }
                Err(RecvError::Closed) => break,
            };
            if channel.send(event).is_err() {
                break;
            }
        }
    });
    Ok(())
}

/// Streams a terminal's output to the view's channel: the replay of what it kept, then its
/// output as it comes, then its `exit`, until the channel closes. The terminal runs on when
/// the channel closes (the view detached, the window closed).
#[tauri::command]
pub async fn attach_terminal(
    engine: State<'_, Arc<Engine>>,
    terminal_id: String,
    channel: Channel<TerminalChunk>,
) -> Result<(), ApiError> {
    let mut attachment = engine.attach_terminal(&terminal_id)?;
    let forwarding = tauri::async_runtime::spawn(async move {
        while let Some(chunk) = attachment.next().await {
            if channel.send(chunk).is_err() {
                break;
            }
        }
    });
    // The window has one view of a terminal at a time, and a channel its page dropped still
    // accepts sends: the view attaching now ends the one before, which would otherwise feed a
    // detached screen until the terminal exits.
    let mut all = FORWARDING.lock().unwrap();
    // Forwarding ends with its terminal: those entries go, so the map holds live ones only.
    all.retain(|_, task| !task.inner().is_finished());
    if let Some(before) = all.insert(terminal_id, forwarding) {
        before.abort();
    }
    Ok(())
}

/// The task forwarding each terminal's output to the window, by terminal id.
static FORWARDING: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, tauri::async_runtime::JoinHandle<()>>>,
> = std::sync::LazyLock::new(Default::default);
