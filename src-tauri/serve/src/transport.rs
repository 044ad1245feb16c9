//! The connections under `kiln serve`: hyper's HTTP/1 server with the limits every Kiln
//! listener shares (`kiln_runtime::listening`: a header read timeout, a cap on open
//! connections), and a shutdown that cannot hang. On a stop signal the listener closes,
//! every event stream ends, and requests in flight get `SHUTDOWN_GRACE` to finish before
//! their connections are dropped.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use kiln_runtime::listening::{self, ConnectionSlots};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tower::ServiceExt;

use crate::streams::Streams;

/// How long requests in flight may take to finish once the server is told to stop.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `stop` resolves, then shuts down as the module says.
pub(crate) async fn run(listener: TcpListener, app: Router, streams: Arc<Streams>, stop: impl Future<Output = ()>) {
    let slots = ConnectionSlots::new();
    let (closing, closing_seen) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stop => break,
            // Reaps finished connections so the set does not grow.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::debug!("kiln serve accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some(slot) = slots.take() else {
            tracing::debug!("kiln serve: {} connections open, closing one from {peer}", listening::max_connections());
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            // What `into_make_service_with_connect_info` would add: the rate limit reads it.
            request.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            app.clone().oneshot(request.map(axum::body::Body::new))
        });
        let mut closing = closing_seen.clone();
        connections.spawn(async move {
            let connection = listening::http1_builder().serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let served = tokio::select! {
                served = connection.as_mut() => served,
                _ = crate::streams::raised(&mut closing) => {
                    // Finish the request in flight, if any, then close.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = served {
                tracing::debug!("kiln serve connection from {peer}: {e}");
            }
            drop(slot);
        });
    }
    drop(listener);
    // Streams never finish by themselves: end them, or the connections holding them
    // would keep the server up for as long as a page stays open.
    streams.stop_all();
    closing.send_replace(true);
    let drained =
        tokio::time::timeout(SHUTDOWN_GRACE, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::info!(
            "kiln serve: {} connection(s) still busy after {SHUTDOWN_GRACE:?}, closing them",
            connections.len()
        );
    }
    connections.shutdown().await;
}
