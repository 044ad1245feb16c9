//! The git-pr delivery target end to end through the engine's API (`plan_delivery`,
//! `deliver`, `get_delivery`), as a user runs it: a real bare remote whose `main` holds
//! examples/shop, the workspace a clone of it (origin = the bare repository), delivery
//! settings (repository, API URL of the GitHub double, sealed token, reviewers) saved
//! through `update_settings`, a session edited directly in its working copy, gates run by
//! `check_modules` and a passing review stored through `review::store`. Covers the
//! pull request (branch, commit message, body, reviewers), the second delivery that
//! updates the branch and keeps the pull request, an API error that removes the newly
//! pushed branch and a retry, git-pr unavailable outside a git repository, and the token
//! never leaving the `Authorization` header: not in the stored run, an event, the
//! transcript, `kiln.db` (and its WAL) or any git argv or environment (a recording `git`
//! put first on PATH, which the git layer's allowlisted environment keeps).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use kiln_engine::testing::ids::SessionId;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};
use kiln_github_double::{Config, Fault, GithubDouble, RepoConfig};
use sha2::{Digest, Sha256};

// ---------------------------------------------------------------------------------------
// The world: bare remote, the user's clone opened as the workspace, the GitHub double.

struct World {
    _tmp: tempfile::TempDir,
    remote: PathBuf,
    host: PathBuf,
    config: PathBuf,
    engine: Arc<Engine>,
    github: GithubDouble,
    token: String,
    events: Arc<Mutex<Vec<String>>>,
}

/// The shop's kiln.toml with quick gates and delivery hooks (no npm, no network).
pub(crate) fn quick_config(toml_path: &Path) {
    let text = std::fs::read_to_string(toml_path).unwrap();
    let text = text[..text.find("[delivery]").unwrap()]
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"")
        .replace("[gates.node]\ntests = \"npm test\"\ntypecheck = \"node ../../scripts/check.mjs syntax\"\nformat = \"node ../../scripts/check.mjs format\"", "[gates.node]\ndependencies = \"true\"\ntypecheck = \"true\"\ntests = \"test ! -e FAIL\"\nformat = \"true\"");
    let delivery = "[delivery]\ndefault = \"workspace\"\ntargets = [\"workspace\", \"git-pr\"]\ninstall = \"echo install ok\"\nenable = \"node scripts/enable-module.js {id}\"\ntypecheck = \"echo typecheck ok\"\nmax_changed_files = 18\nmax_new_dependencies = 3\n";
    std::fs::write(toml_path, format!("{text}\n{delivery}")).unwrap();
}

async fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let remote = bare_remote(&root, "host", "the shop", |seed| {
        copy_tracked_shop(seed);
        quick_config(&seed.join("kiln.toml"));
    });
    let host = root.join("host");

    let token = format!("ghp_kilnpr{}", uuid::Uuid::new_v4().simple());
    let github =
        GithubDouble::spawn(Config::new(token.clone()).repo(RepoConfig::new("kiln-test", "shop").git_dir(&remote)));
    let config = root.join("config");
    let engine = engine(&config);
    // Every event from the start, kept as JSON to search for the token.
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut sub = engine.subscribe(None);
    let sink = events.clone();
    tokio::spawn(async move {
        loop {
            match sub.receiver.recv().await {
                Ok(event) => sink.lock().unwrap().push(serde_json::to_string(&event).unwrap()),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    sink.lock().unwrap().push(format!("LAGGED {n}"))
                }
                Err(_) => break,
            }
        }
    });
    open(&engine, &host).await;
    World { _tmp: tmp, remote, host, config, engine, github, token, events }
}

impl World {
    async fn settings(&self) {
        let view = self
            .engine
            .update_settings(UpdateSettingsArgs {
                planner_agent: Some(false),
                delivery_repository: Some("kiln-test/shop".into()),
                delivery_api_url: Some(self.github.base_url()),
                delivery_token: Some(self.token.clone()),
                delivery_reviewers: Some(vec!["alice".into(), "kiln-test/web".into()]),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(!serde_json::to_string(&view).unwrap().contains(&self.token), "the settings answer shows the token");
    }

    fn workdir(&self, id: &str) -> PathBuf {
        self.host.join(".kiln/sessions").join(id).join("workspace")
    }

    async fn session(&self, id: &str) -> SessionView {
        self.engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap()
    }

    /// Runs every gate and stores a passing review of every module as its files are now.
    async fn check_and_review(&self, id: &str) -> Vec<GateResultView> {
        let gates = self.engine.check_modules(SessionIdArgs { session_id: id.into() }).await.unwrap();
        assert!(
            !gates.is_empty()
                && gates.iter().all(|g| matches!(g.status, GateStatus::Passed | GateStatus::NotConfigured)),
            "{gates:#?}"
        );
        let ws = self.engine.workspace().unwrap();
        let sid = SessionId::parse(id).unwrap();
        for m in self.session(id).await.modules {
            kiln_engine::testing::review::store(&ws, &sid, &m, true, "ready", "REVIEW: pass - ready").await.unwrap();
        }
        gates
    }

    async fn plan(&self, id: &str) -> DeliveryPlan {
        self.engine
            .plan_delivery(PlanDeliveryArgs { session_id: id.into(), target: Some(DeliveryTarget::GitPr) })
            .await
            .unwrap()
    }

    async fn deliver(&self, plan: &DeliveryPlan) -> kiln_engine::Result<DeliveryRun> {
        self.engine
            .deliver(DeliverArgs {
                session_id: plan.session_id.clone(),
                target: plan.target,
                plan_id: plan.plan_id.clone(),
                anyway: None,
            })
            .await
    }

    /// Plans (no blockers, git-pr available), delivers and waits for the run to end.
    async fn plan_and_deliver(&self, id: &str) -> (DeliveryPlan, DeliveryRun) {
        let p = self.plan(id).await;
        assert_eq!(p.target, DeliveryTarget::GitPr);
        assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
        let option = p.available_targets.iter().find(|t| t.target == DeliveryTarget::GitPr).unwrap();
        assert!(option.available, "{option:?}");
        // The previous run's task lets go of the session just after its last note.
        let mut tries = 0;
        let started = loop {
            match self.deliver(&p).await {
                Err(e) if e.code == ErrorCode::SessionRunning && tries < 50 => tries += 1,
                other => break other.unwrap(),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!((started.state, started.target), (DeliveryState::Running, DeliveryTarget::GitPr));
        let run = self.finished(id).await;
        (p, run)
    }

    async fn finished(&self, id: &str) -> DeliveryRun {
        delivery_finished(&self.engine, id, Duration::from_secs(120)).await
    }

    /// Waits for the system note the run writes to the transcript after it ended.
    async fn note(&self, id: &str, wanted: impl Fn(&str) -> bool) -> String {
        for _ in 0..200 {
            let entries = self
                .engine
                .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
                .await
                .unwrap();
            if let Some(e) = entries.iter().rev().find(|e| e.kind == EntryKind::System && wanted(&e.text)) {
                return e.text.clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no such transcript note");
    }

    fn remote_sha(&self, branch: &str) -> Option<String> {
        rev(&self.remote, &format!("refs/heads/{branch}"))
    }

    fn worktree(&self, id: &str) -> PathBuf {
        self.host.join(".kiln/worktrees").join(id)
    }

    /// The token appears nowhere but in the double's `Authorization` headers.
    async fn assert_token_nowhere(&self, id: &str) {
        self.github.assert_token_only_in_authorization(&self.token);
        let authorized = self
            .github
            .requests()
            .iter()
            .filter(|r| r.header("authorization") == Some(format!("Bearer {}", self.token).as_str()))
            .count();
        assert!(authorized > 0, "the double never saw the token: the check above proved nothing");

        let run = self.engine.get_delivery(SessionIdArgs { session_id: id.into() }).await.unwrap().unwrap();
        let run = serde_json::to_string(&run).unwrap();
        assert!(!run.contains(&self.token), "token in the stored run: {run}");
        let plan = serde_json::to_string(&self.plan(id).await).unwrap();
        assert!(!plan.contains(&self.token), "token in the plan");
        let settings = serde_json::to_string(&self.engine.get_settings(EmptyArgs {}).await.unwrap()).unwrap();
        assert!(!settings.contains(&self.token), "token in the settings view");

        let events = self.events.lock().unwrap().clone();
        assert!(
            events.iter().any(|e| e.contains("\"delivery\"") || e.contains("Delivery")),
            "no delivery event was seen"
        );
        assert!(!events.iter().any(|e| e.starts_with("LAGGED")), "the event collector lagged");
        for e in &events {
            assert!(!e.contains(&self.token), "token in an event: {e}");
        }

        let entries = self
            .engine
            .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
            .await
            .unwrap();
        for e in &entries {
            assert!(!e.text.contains(&self.token), "token in the transcript: {}", e.text);
        }

        // kiln.db, its WAL and everything else Kiln keeps, as bytes: the token is sealed.
        let kiln = self.host.join(".kiln");
        assert!(kiln.join("kiln.db").exists());
        // The engine alone writes nothing in the app's config directory (its recent workspaces
        // are the app's file): there, only what exists is read.
        for dir in [&kiln, &self.config].into_iter().filter(|dir| dir.exists()) {
            for (path, bytes) in files(dir, &["sessions"]) {
                assert!(
                    !contains(&bytes, self.token.as_bytes()),
                    "token in plain text in {}",
                    dir.join(path).display()
                );
            }
        }

        // Every run of this binary's tests, not only this one's.
        let runs = recorded_git_runs(&git_recorder().record);
        assert!(
            runs.iter().any(|(argv, _)| argv.starts_with("push ") || argv.contains(" push ")),
            "the recording git saw no push: PATH was not used"
        );
        for (argv, env) in &runs {
            assert!(!argv.contains(&self.token), "token in a git argv: {argv}");
            assert!(!env.contains(&self.token), "token in a git environment ({argv})");
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn step<'a>(run: &'a DeliveryRun, id: &str) -> &'a DeliveryStep {
    run.steps.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("no step {id} in {:#?}", run.steps))
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A session that edits `@shop/catalog`: one file changed, one added.
async fn catalog_session(w: &World) -> String {
    let s = create(&w.engine, "Show ratings on the @shop/catalog screen").await;
    let wd = w.workdir(&s.id);
    write(&wd.join("modules/catalog/src/client/screen.js"), "export const screen = 'catalog with ratings';\n");
    write(&wd.join("modules/catalog/src/client/ratings.js"), "export const ratings = [];\n");
    s.id
}

// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_session_is_delivered_as_a_pull_request_and_a_second_delivery_keeps_it() {
    let w = world().await;
    let id = catalog_session(&w).await;
    let gates = w.check_and_review(&id).await;
    // Before the settings: the remote is a path, so git-pr cannot tell the repository.
    let early = w.plan(&id).await;
    let option = early.available_targets.iter().find(|t| t.target == DeliveryTarget::GitPr).unwrap();
    assert!(!option.available && option.reason.as_deref().unwrap_or("").contains("owner/name"), "{option:?}");
    let err = w.deliver(&early).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::TargetUnavailable, "{err:?}");
    assert!(w.engine.get_delivery(SessionIdArgs { session_id: id.clone() }).await.unwrap().is_none());
    w.settings().await;
    let main_before = w.remote_sha("main").unwrap();

    let (p, run) = w.plan_and_deliver(&id).await;
    let branch = format!("kiln/catalog-{}", &id[..8]);
    assert_eq!(p.branch.as_deref(), Some(branch.as_str()), "the plan names the branch");
    assert_eq!(p.steps.first().map(String::as_str), Some("Run every gate"));
    assert!(p.steps.iter().any(|s| s == "Pull request"), "{:?}", p.steps);
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");
    assert_eq!(run.error, None);

    // Every step passed (enable: no new module, skipped), in order, gates first.
    let ids: Vec<&str> = run.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "gates",
            "access",
            "fetch",
            "worktree",
            "copy",
            "install",
            "enable",
            "typecheck",
            "guardrail",
            "commit",
            "push",
            "pull-request",
            "cleanup"
        ],
        "{:#?}",
        run.steps
    );
    for s in &run.steps {
        let expected = if s.id == "enable" { StepState::Skipped } else { StepState::Passed };
        assert_eq!(s.state, expected, "{s:#?}");
    }
    assert!(step(&run, "install").output.contains("install ok"));
    assert!(step(&run, "typecheck").output.contains("typecheck ok"));

    // The pull request view: the double's page, number 1, the branch, created through the API.
    let pr = run.pull_request.clone().expect("a pull request");
    assert_eq!(pr.url, format!("{}/kiln-test/shop/pull/1", w.github.base_url()));
    assert_eq!((pr.number, pr.branch.as_str(), pr.via.as_str(), pr.created), (Some(1), branch.as_str(), "api", true));
    assert_eq!(run.landed, ["modules/catalog/src/client/ratings.js", "modules/catalog/src/client/screen.js"]);

    // A pull request is not the workspace's code yet: the session stays open for updates
    // (ARCHITECTURE.md: Delivery: a second delivery updates the branch), the workspace is untouched.
    let s = w.session(&id).await;
    assert_ne!(s.state, SessionState::Delivered);
    assert!(s.delivered_at.is_none());
    assert!(!w.host.join("modules/catalog/src/client/ratings.js").exists());
    let text = w.note(&id, |t| t.starts_with("Delivered as a pull request")).await;
    assert!(text.contains(&pr.url) && text.contains(&branch), "{text}");

    // The remote branch: one commit on main with the session's title (the history is
    // plain: `the shop`; the brief is the title, so it is not said twice), naming the
    // session and the gate summary (the shop's `lint` is not configured).
    let sha = w.remote_sha(&branch).expect("the branch was pushed");
    assert_eq!(sh_git(&w.remote, &["rev-parse", &format!("{sha}^")]), main_before);
    let message = sh_git(&w.remote, &["log", "-1", "--format=%B", &sha]);
    assert!(
        message.starts_with(&format!(
            "Show ratings on the @shop/catalog screen\n\nDelivered by Kiln from session {id}.\n"
        )),
        "{message}"
    );
    let count = |status: GateStatus| gates.iter().filter(|g| g.status == status).count();
    let not_configured = count(GateStatus::NotConfigured);
    let summary = format!("Gates: {} passed, 0 failed, 0 skipped", count(GateStatus::Passed));
    let summary = if not_configured > 0 {
        format!("{summary}, {not_configured} not configured\n")
    } else {
        format!("{summary}\n")
    };
    assert!(message.contains(&summary), "{message}\n{gates:#?}");
    assert!(message.contains("- @shop/catalog tests: passed"), "{message}");
    assert!(message.trim_end().ends_with(&format!("Kiln-Session: {id}")), "{message}");
    let changed = sh_git(&w.remote, &["diff", "--name-status", &main_before, &sha]);
    assert_eq!(changed, "A\tmodules/catalog/src/client/ratings.js\nM\tmodules/catalog/src/client/screen.js");

    // The double: one pull request with the body the session's evidence makes.
    let created = w.github.requests_to("POST", "/repos/kiln-test/shop/pulls");
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].status, 201);
    assert_eq!(created[0].body["head"], branch.as_str());
    assert_eq!(created[0].body["base"], "main");
    assert_eq!(created[0].body["title"], "Show ratings on the @shop/catalog screen");
    let body = created[0].body["body"].as_str().unwrap().to_string();
    let spec = sha256(&std::fs::read(w.workdir(&id).join("modules/catalog/SPEC.md")).unwrap());
    for needle in [
        "Show ratings on the @shop/catalog screen".to_string(),
        "| Module | Gate | Result | Time |".into(),
        "| @shop/catalog | tests | passed |".into(),
        "**Added** (1)".into(),
        "- `modules/catalog/src/client/ratings.js`".into(),
        "**Modified** (1)".into(),
        "- `modules/catalog/src/client/screen.js`".into(),
        "**Removed** (0)".into(),
        format!("| @shop/catalog | `{spec}` |"),
        format!("Kiln session `{id}`"),
    ] {
        assert!(body.contains(&needle), "{needle:?} missing from the body:\n{body}");
    }
    let reviewers = w.github.requests_to("POST", "/repos/kiln-test/shop/pulls/1/requested_reviewers");
    assert_eq!(reviewers.len(), 1);
    assert_eq!(reviewers[0].body["reviewers"], serde_json::json!(["alice"]));
    assert_eq!(reviewers[0].body["team_reviewers"], serde_json::json!(["web"]));
    assert!(!w.worktree(&id).exists(), "the worktree is removed");
    w.assert_token_nowhere(&id).await;

    // The second delivery: another edit (and a removal), reviewed and checked again.
    let wd = w.workdir(&id);
    write(&wd.join("modules/catalog/src/client/ratings.js"), "export const ratings = [5, 4];\n");
    std::fs::remove_file(wd.join("modules/catalog/test/routes.test.js")).unwrap();
    w.check_and_review(&id).await;
    let (p2, run2) = w.plan_and_deliver(&id).await;
    assert_eq!(p2.branch.as_deref(), Some(branch.as_str()));
    assert_eq!(run2.state, DeliveryState::Delivered, "{run2:#?}");
    assert_ne!(run2.id, run.id);
    let pr2 = run2.pull_request.clone().unwrap();
    assert_eq!(
        (pr2.url.as_str(), pr2.number, pr2.branch.as_str(), pr2.via.as_str(), pr2.created),
        (pr.url.as_str(), Some(1), branch.as_str(), "api", false)
    );
    let sha2 = w.remote_sha(&branch).unwrap();
    assert_ne!(sha2, sha, "the branch was updated");
    assert_eq!(sh_git(&w.remote, &["rev-parse", &format!("{sha2}^")]), main_before, "rebuilt on main");
    assert_eq!(
        sh_git(&w.remote, &["show", &format!("{sha2}:modules/catalog/src/client/ratings.js")]),
        "export const ratings = [5, 4];"
    );
    let changed = sh_git(&w.remote, &["diff", "--name-status", &main_before, &sha2]);
    assert!(changed.lines().any(|l| l == "D\tmodules/catalog/test/routes.test.js"), "{changed}");
    assert_eq!(w.github.requests_to("POST", "/repos/kiln-test/shop/pulls").len(), 1, "no second pull request");
    let patched = w.github.requests_to("PATCH", "/repos/kiln-test/shop/pulls/1");
    assert_eq!(patched.len(), 1);
    assert!(patched[0].body["body"].as_str().unwrap().contains("- `modules/catalog/test/routes.test.js`"));
    assert_eq!(w.github.pulls("kiln-test", "shop").len(), 1);
    assert!(w.session(&id).await.delivered_at.is_none());
    assert!(!w.worktree(&id).exists());
    w.assert_token_nowhere(&id).await;
}

#[tokio::test]
async fn an_api_error_fails_the_run_at_the_pull_request_removes_the_new_branch_and_a_retry_succeeds() {
    let w = world().await;
    w.settings().await;
    let id = catalog_session(&w).await;
    w.check_and_review(&id).await;
    let branch = format!("kiln/catalog-{}", &id[..8]);
    w.github.fail_next_create(Fault::ServerError);

    let (_, run) = w.plan_and_deliver(&id).await;
    assert_eq!(run.state, DeliveryState::Failed, "{run:#?}");
    assert_eq!(run.pull_request, None);
    let error = run.error.clone().expect("the run's error");
    assert_eq!(error.code, ErrorCode::TargetUnavailable, "{error:?}");
    assert!(error.message.contains("500"), "{}", error.message);
    assert_eq!(step(&run, "push").state, StepState::Passed);
    assert_eq!(step(&run, "cleanup").state, StepState::Passed);
    assert!(
        run.steps.iter().all(|s| s.state != StepState::Pending && s.state != StepState::Running),
        "a step never ran: {:#?}",
        run.steps
    );
    let failed = step(&run, "pull-request");
    assert_eq!(failed.state, StepState::Failed);
    assert!(failed.output.contains("removed the branch"), "{}", failed.output);
    assert_eq!(w.github.requests_to("POST", "/repos/kiln-test/shop/pulls")[0].status, 500);
    assert_eq!(w.remote_sha(&branch), None, "the newly pushed branch is deleted again");
    assert_eq!(sh_git(&w.remote, &["for-each-ref", "--format=%(refname)", "refs/heads"]), "refs/heads/main");
    assert!(!w.worktree(&id).exists(), "the worktree is removed");
    assert_eq!(sh_git(&w.host, &["worktree", "list", "--porcelain"]).matches("worktree ").count(), 1);
    assert_eq!(rev(&w.host, &format!("refs/heads/{branch}")), None, "the local branch is removed");
    let text = w.note(&id, |t| t.starts_with("Delivery stopped")).await;
    assert!(text.contains("500"), "{text}");
    w.assert_token_nowhere(&id).await;

    // A retry (a fresh plan) succeeds and creates the pull request.
    let (_, retry) = w.plan_and_deliver(&id).await;
    assert_eq!(retry.state, DeliveryState::Delivered, "{retry:#?}");
    let pr = retry.pull_request.unwrap();
    assert!(pr.created && pr.via == "api" && pr.branch == branch, "{pr:?}");
    assert!(w.remote_sha(&branch).is_some());
    assert_eq!(w.github.pulls("kiln-test", "shop").len(), 1);
    assert!(!w.worktree(&id).exists());
    w.assert_token_nowhere(&id).await;
}

#[tokio::test]
async fn git_pr_is_unavailable_with_a_reason_outside_a_git_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let root = shop_copy(tmp.path());
    quick_config(&root.join("kiln.toml"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    engine
        .update_settings(UpdateSettingsArgs {
            planner_agent: Some(false),
            delivery_repository: Some("kiln-test/shop".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let s = create(&engine, "Tidy @shop/catalog").await;
    write(
        &root.join(".kiln/sessions").join(&s.id).join("workspace/modules/catalog/src/client/screen.js"),
        "export const screen = 1;\n",
    );
    engine.check_modules(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let p = engine.plan_delivery(PlanDeliveryArgs { session_id: s.id.clone(), target: None }).await.unwrap();
    assert_eq!(p.target, DeliveryTarget::Workspace, "the usable target is chosen");
    let pr = p.available_targets.iter().find(|t| t.target == DeliveryTarget::GitPr).unwrap();
    assert!(!pr.available, "{pr:?}");
    assert!(pr.reason.as_deref().unwrap_or("").contains("not in a git repository"), "{pr:?}");
    let asked = engine
        .plan_delivery(PlanDeliveryArgs { session_id: s.id.clone(), target: Some(DeliveryTarget::GitPr) })
        .await
        .unwrap();
    let err = engine
        .deliver(DeliverArgs {
            session_id: s.id.clone(),
            target: DeliveryTarget::GitPr,
            plan_id: asked.plan_id,
            anyway: None,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::TargetUnavailable, "{err:?}");
    assert!(err.message.contains("not in a git repository"), "{}", err.message);
    assert!(engine.get_delivery(SessionIdArgs { session_id: s.id.clone() }).await.unwrap().is_none());
}
