//! The hostile suite's transport half (issue 14): the real `kiln serve`, in both modes,
//! against clients that hold connections or come all at once rather than send odd
//! requests. Concurrent wrong guesses meet the connect rate limit. Traffic goes to
//! 127.0.0.1 only.

#[allow(dead_code)]
#[path = "hostile/api.rs"]
mod api;
#[allow(dead_code)]
#[path = "hostile/http.rs"]
mod http;
#[allow(dead_code)]
#[path = "hostile/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "hostile/snapshot.rs"]
mod snapshot;

use std::sync::{Arc, Barrier};

use api::connect_req;
use server::{fixture, Server};

const MODES: [&str; 2] = ["loopback", "self-hosted"];

/// 150 wrong guesses sent at once: the limit holds (at most 5 are checked, the rest get
/// 429 with `Retry-After`), however the requests interleave.
#[test]
fn concurrent_wrong_guesses_meet_the_rate_limit() {
    const GUESSES: usize = 150;
    for mode in MODES {
        let fx = fixture();
        let server = Server::start(&fx, mode);
        let port = server.port;
        let barrier = Arc::new(Barrier::new(GUESSES));
        let guesses: Vec<_> = (0..GUESSES)
            .map(|i| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    let req = connect_req(port, Some(&format!("kiln_{:0>43}", i)));
                    barrier.wait();
                    req.send(port)
                })
            })
            .collect();
        let answers: Vec<http::Resp> = guesses.into_iter().map(|g| g.join().unwrap().unwrap()).collect();
        let checked = answers.iter().filter(|r| r.status == 401 && r.code().as_deref() == Some("TOKEN_INVALID")).count();
        let limited: Vec<&http::Resp> = answers.iter().filter(|r| r.status == 429 && r.code().as_deref() == Some("RATE_LIMITED")).collect();
        assert!(checked <= 5, "[{mode}] {checked} of {GUESSES} concurrent wrong guesses were checked; the limit is 5");
        assert_eq!(checked + limited.len(), GUESSES, "[{mode}] other answers: {:?}", answers.iter().map(|r| r.status).collect::<Vec<_>>());
        assert!(limited.iter().all(|r| r.header("retry-after").is_some_and(|v| v.parse::<u64>().is_ok_and(|s| (1..=60).contains(&s)))));
    }
}
