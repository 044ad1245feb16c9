//! Serving a double on 127.0.0.1 from a thread and runtime of its own, so the test that
//! started it may block (even on a current-thread runtime) without starving it.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};

use axum::Router;
use tokio::sync::oneshot;

/// A loopback port bound but not yet served, so a double knows its address (for the URLs
/// it answers with) before it builds its router.
pub struct LoopbackPort {
    pub addr: SocketAddr,
    listener: TcpListener,
}

impl LoopbackPort {
    /// Binds 127.0.0.1:`port` (0 for any free port), here rather than on the server's
    /// thread, so the address accepts connections as soon as a client has it.
    pub fn bind(port: u16) -> std::io::Result<LoopbackPort> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        Ok(LoopbackPort { addr, listener })
    }

    /// Serves `app` on a thread named `name:PORT` until the returned server is dropped.
    pub fn serve(self, name: &str, app: Router) -> std::io::Result<LoopbackServer> {
        let (shutdown, stopped) = oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let listener = self.listener;
        std::thread::Builder::new().name(format!("{name}:{}", self.addr.port())).spawn(move || {
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("adopt listener");
                let stop = async {
                    let _ = stopped.await;
                };
                let _ = axum::serve(listener, app).with_graceful_shutdown(stop).await;
            });
            // Dropping the runtime here ends any connection still open.
        })?;
        Ok(LoopbackServer { _shutdown: shutdown })
    }
}

/// A router being served on loopback; dropping it shuts the server down (dropping the
/// sender ends the server's wait for `stopped`, so nothing needs sending).
pub struct LoopbackServer {
    _shutdown: oneshot::Sender<()>,
}
