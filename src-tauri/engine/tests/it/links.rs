//! No write through a link (issue 32, findings 1 and 2): a command left running by the
//! agent swaps a directory of the working copy with a link to somewhere else
//! (`renameat2(RENAME_EXCHANGE)`, as fast as it can), while the tool loop's
//! `write_file`, `edit_file` and `read_file` and ACP's `fs/write_text_file` and
//! `fs/read_text_file` name a file in that directory thousands of times. Nothing outside
//! is ever written or read; the writes that land, land inside. Real files, real threads.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kiln_engine::testing::drivers::acp::{Client, Workdir};
use kiln_engine::testing::drivers::events::ToolStatus;
use kiln_engine::testing::drivers::tools::Toolbox;
use kiln_engine::types::CommandPolicy;
use serde_json::json;

const TRIES: usize = 3000;
const OUTSIDE_SECRET: &str = "the operator's secret";

/// `<tmp>/work/race/d` a real directory and `<tmp>/work/race/link` a link to
/// `<tmp>/outside`, each holding `file.txt` and `secret.txt`.
struct Race {
    _tmp: tempfile::TempDir,
    work: PathBuf,
    outside: PathBuf,
}

impl Race {
    fn new() -> Race {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(work.join("race/d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(work.join("race/d/file.txt"), "inside\n").unwrap();
        std::fs::write(work.join("race/d/secret.txt"), "inside\n").unwrap();
        std::fs::write(outside.join("file.txt"), "inside\n").unwrap();
        std::fs::write(outside.join("secret.txt"), OUTSIDE_SECRET).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("race/link")).unwrap();
        Race { _tmp: tmp, work, outside }
    }

    /// Swaps `race/d` and `race/link` until the guard is dropped; counts the swaps.
    fn swapper(&self) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let (a, b) = (path_c(&self.work.join("race/d")), path_c(&self.work.join("race/link")));
        let thread = {
            let (stop, swaps) = (stop.clone(), swaps.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: two NUL-terminated paths; the call only renames.
                    let r = unsafe {
                        libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE)
                    };
                    assert_eq!(r, 0, "renameat2: {}", std::io::Error::last_os_error());
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        Swapper { stop, swaps, thread: Some(thread) }
    }

    /// Puts the real directory back at `race/d` (an even number of swaps may not have).
    fn settle(&self) {
        if self.work.join("race/d").symlink_metadata().unwrap().file_type().is_symlink() {
            let (a, b) = (path_c(&self.work.join("race/d")), path_c(&self.work.join("race/link")));
            // SAFETY: as in the swapper.
            assert_eq!(
                unsafe {
                    libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE)
                },
                0
            );
        }
    }

    /// Nothing outside was written: no new file, the old ones as they were.
    fn assert_outside_untouched(&self) {
        let mut names: Vec<String> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into())
            .collect();
        names.sort();
        assert_eq!(names, ["file.txt", "secret.txt"], "a file was written outside the working copy");
        assert_eq!(std::fs::read_to_string(self.outside.join("file.txt")).unwrap(), "inside\n");
        assert_eq!(std::fs::read_to_string(self.outside.join("secret.txt")).unwrap(), OUTSIDE_SECRET);
    }
}

struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    /// Stops swapping; how many swaps there were.
    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().expect("the swapper ran");
        self.swaps.load(Ordering::Relaxed)
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn path_c(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_loop_never_writes_or_reads_through_a_swapped_link() {
    let race = Race::new();
    let toolbox =
        Toolbox::new(&race.work, &race.work.with_extension("session"), false, Duration::from_secs(30)).unwrap();
    let swapper = race.swapper();
    let (mut wrote, mut read) = (0, 0);
    for i in 0..TRIES {
        let outcome = match i % 3 {
            0 => toolbox.run("write_file", &json!({"path": "race/d/pwned.txt", "content": "pwned"})).await,
            1 => {
                toolbox
                    .run(
                        "edit_file",
                        &json!({"path": "race/d/file.txt", "old_string": "inside", "new_string": "inside"}),
                    )
                    .await
            }
            _ => toolbox.run("read_file", &json!({"path": "race/d/secret.txt"})).await,
        };
        assert!(!outcome.output.contains(OUTSIDE_SECRET), "read outside the working copy: {}", outcome.output);
        if outcome.status == ToolStatus::Completed {
            if i % 3 == 0 {
                wrote += 1;
            } else if i % 3 == 2 {
                read += 1;
            }
        }
    }
    let swaps = swapper.stop();
    race.assert_outside_untouched();
    assert!(swaps > TRIES as u64, "the swapper raced the tools ({swaps} swaps)");
    // Writes and reads still work: some landed between swaps, and all do once it stops.
    race.settle();
    let last = toolbox.run("write_file", &json!({"path": "race/d/pwned.txt", "content": "inside"})).await;
    assert_eq!(last.status, ToolStatus::Completed, "{}", last.output);
    assert_eq!(std::fs::read_to_string(race.work.join("race/d/pwned.txt")).unwrap(), "inside");
    eprintln!("{swaps} swaps; {wrote} writes and {read} reads of {TRIES} tries went through the real directory");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_fs_requests_never_write_or_read_through_a_swapped_link() {
    let race = Race::new();
    let (events, _received) = tokio::sync::mpsc::unbounded_channel();
    let client = Client::new(
        Workdir::new(&race.work),
        race.work.with_extension("session"),
        false,
        CommandPolicy::Workdir,
        events,
        None,
        Default::default(),
    );
    let swapper = race.swapper();
    for i in 0..TRIES {
        if i % 2 == 0 {
            let path = race.work.join("race/d/pwned.txt").display().to_string();
            let _ = client.request("fs/write_text_file", &json!({"path": path, "content": "pwned"})).await;
        } else {
            let path = race.work.join("race/d/secret.txt").display().to_string();
            if let Ok(answer) = client.request("fs/read_text_file", &json!({"path": path})).await {
                assert_ne!(answer["content"], OUTSIDE_SECRET, "read outside the working copy");
            }
        }
    }
    let swaps = swapper.stop();
    race.assert_outside_untouched();
    assert!(swaps > TRIES as u64 / 2, "the swapper raced the requests ({swaps} swaps)");
    race.settle();
    let path = race.work.join("race/d/pwned.txt").display().to_string();
    client.request("fs/write_text_file", &json!({"path": path, "content": "inside"})).await.expect("a write inside");
    assert_eq!(std::fs::read_to_string(race.work.join("race/d/pwned.txt")).unwrap(), "inside");
}
