//! The preview as evidence in a pull request: a one-module repository with a static
//! preview, pushed to a real bare remote whose clone is the workspace; a scripted turn makes
//! its page red, so the session holds a "before" (checkpoint 0) and an "after" screenshot;
//! delivered as git-pr against the GitHub double. `upload` (the default) puts both PNGs on
//! the `kiln/evidence` branch through the Contents API and the body shows them; `commit`
//! commits them into the pull request's branch under `[delivery] screenshots_path`, which
//! the guardrail allows, and uploads nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use crate::screenshots::{fill, image, red_button, say, system_lines, turn_shots};
use kiln_engine::types::*;
use kiln_engine::Engine;
use kiln_github_double::{Config, GithubDouble, RepoConfig};
use kiln_model_server::ModelServer;

struct World {
    _tmp: tempfile::TempDir,
    remote: PathBuf,
    engine: Arc<Engine>,
    github: GithubDouble,
    _server: ModelServer,
    id: String,
    /// The before and after screenshots' PNGs.
    before: Vec<u8>,
    after: Vec<u8>,
}

/// A session whose turn made the page red, its review passed, ready to deliver.
async fn world(delivery: &str) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let preview =
        format!("root = \"modules/app/site\"\n\n[delivery]\ntargets = [\"workspace\", \"git-pr\"]\n{delivery}");
    let remote = bare_remote(&root, "host", "the page", |seed| fill(seed, &preview));
    let token = format!("ghp_kilnshots{}", uuid::Uuid::new_v4().simple());
    let github =
        GithubDouble::spawn(Config::new(token.clone()).repo(RepoConfig::new("kiln-test", "fx").git_dir(&remote)));
    let engine = engine(&root.join("config"));
    open(&engine, &root.join("host")).await;
    engine
        .update_settings(UpdateSettingsArgs {
            delivery_repository: Some("kiln-test/fx".into()),
            delivery_api_url: Some(github.base_url()),
            delivery_token: Some(token),
            ..Default::default()
        })
        .await
        .unwrap();
    let server = ModelServer::start(red_button()).await;
    use_scripted_model(&engine, &server, false).await;
    let s = create(&engine, "In app make the page red").await;
    wait_setup(&engine, &s.id).await;
    say(&engine, &s.id, "Make the page red").await;
    let settled = wait_settled(&engine, &s.id, Duration::from_secs(90)).await;
    assert_eq!(settled.state, SessionState::Review, "{:#?}", system_lines(&engine, &s.id).await);
    let shots = turn_shots(&engine, &s.id, 2, Duration::from_secs(60)).await;
    let before = image(&engine, &s.id, shots[0].id).await;
    let after = image(&engine, &s.id, shots[1].id).await;
    assert_ne!(before, after);
    World { _tmp: tmp, remote, engine, github, _server: server, id: s.id, before, after }
}

impl World {
    /// Plans and runs the git-pr delivery; answers the run and the created pull request's body.
    async fn deliver(&self) -> (DeliveryRun, String) {
        let plan = self
            .engine
            .plan_delivery(PlanDeliveryArgs { session_id: self.id.clone(), target: Some(DeliveryTarget::GitPr) })
            .await
            .unwrap();
        assert!(plan.blockers.is_empty(), "{:#?}", plan.blockers);
        self.engine
            .deliver(DeliverArgs {
                session_id: self.id.clone(),
                target: plan.target,
                plan_id: plan.plan_id.clone(),
                anyway: None,
            })
            .await
            .unwrap();
        let run = delivery_finished(&self.engine, &self.id, Duration::from_secs(120)).await;
        assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");
        let created = self.github.requests_to("POST", "/repos/kiln-test/fx/pulls");
        assert_eq!(created.len(), 1);
        (run, created[0].body["body"].as_str().unwrap().to_string())
    }

    fn branch(&self) -> String {
        format!("kiln/app-{}", &self.id[..8])
    }
}

#[tokio::test]
async fn upload_puts_the_before_and_after_on_their_own_branch_and_the_body_shows_them() {
    let w = world("").await;
    let (run, body) = w.deliver().await;
    let pr = run.steps.iter().find(|s| s.id == "pull-request").unwrap();
    assert!(pr.output.contains("2 screenshot(s) on the branch kiln/evidence"), "{}", pr.output);

    let files = w.github.files("kiln-test", "fx", "kiln/evidence");
    let before = format!("{}/before-0.png", w.id);
    let after = files.iter().find(|f| f.contains("/after-")).expect("the after screenshot was uploaded").clone();
    assert_eq!(files.len(), 2, "{files:?}");
    let (png, message) = w.github.file("kiln-test", "fx", "kiln/evidence", &before).unwrap();
    assert_eq!(png, w.before);
    assert!(message.contains(&w.id), "{message}");
    assert_eq!(w.github.file("kiln-test", "fx", "kiln/evidence", &after).unwrap().0, w.after);
    // Made from main's tip, once.
    let refs = w.github.requests_to("POST", "/repos/kiln-test/fx/git/refs");
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].body["ref"], "refs/heads/kiln/evidence");
    assert_eq!(refs[0].body["sha"].as_str(), rev(&w.remote, "refs/heads/main").as_deref());

    let base = w.github.base_url();
    assert!(body.contains("## Screenshots"), "{body}");
    assert!(
        body.contains(&format!("![before (checkpoint 0)]({base}/kiln-test/fx/blob/kiln/evidence/{before}?raw=true)")),
        "{body}"
    );
    assert!(body.contains(&format!("/kiln-test/fx/blob/kiln/evidence/{after}?raw=true)")), "{body}");
    // The pull request's branch holds the change only.
    let sha = rev(&w.remote, &format!("refs/heads/{}", w.branch())).expect("pushed");
    let main = rev(&w.remote, "refs/heads/main").unwrap();
    assert_eq!(sh_git(&w.remote, &["diff", "--name-only", &main, &sha]), "modules/app/site/index.html");
}

#[tokio::test]
async fn commit_puts_them_in_the_pull_requests_branch_under_the_chosen_path() {
    let w = world("screenshots = \"commit\"\nscreenshots_path = \"docs/shots\"\n").await;
    let (run, body) = w.deliver().await;
    let guardrail = run.steps.iter().find(|s| s.id == "guardrail").unwrap();
    let before = format!("docs/shots/{}/before.png", w.id);
    let after = format!("docs/shots/{}/after.png", w.id);
    assert!(guardrail.output.contains(&format!("{before} (screenshot of the preview)")), "{}", guardrail.output);

    let sha = rev(&w.remote, &format!("refs/heads/{}", w.branch())).expect("pushed");
    let main = rev(&w.remote, "refs/heads/main").unwrap();
    assert_eq!(
        sh_git(&w.remote, &["diff", "--name-only", &main, &sha]),
        format!("{after}\n{before}\nmodules/app/site/index.html")
    );
    let committed = std::process::Command::new("git")
        .args(["show", &format!("{sha}:{before}")])
        .current_dir(&w.remote)
        .output()
        .unwrap();
    assert_eq!(committed.stdout, w.before);
    assert!(body.contains(&format!("/kiln-test/fx/raw/{}/{before})", w.branch())), "{body}");
    assert!(w.github.requests().iter().all(|r| !r.path.contains("/contents/")), "nothing is uploaded");
}
