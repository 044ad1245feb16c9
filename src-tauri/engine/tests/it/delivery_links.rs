//! Workspace delivery and symbolic links (issue 14, findings 2, 5 and 11), through the
//! engine's API on an `examples/shop` workspace kept in git, with the links committed:
//! nothing is ever written through a link of the workspace. A committed link to a
//! directory that the session replaced with a real one blocks the plan, naming it, and
//! nothing lands where it leads; a link committed at the name the copy once used for its
//! temp file is never opened; a link the agent left in its working copy is a blocker
//! naming it, not an error; a link in a file's own place is replaced (or removed) itself,
//! and a copy that fails halfway puts it back as the link it was. Every test checks that
//! nothing outside the workspace was written and that the workspace holds exactly what
//! it should. The git-pr target (`git_pr::deliver`, on a bare remote whose `main` holds
//! the shop and the links) refuses the same directory link at its copy step, and removes
//! a link the session deleted rather than the file it points to.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kiln_engine::testing::delivery::git_pr::{self, GitPrInput, GitPrModule};
use kiln_engine::testing::delivery::StepSink;
use kiln_engine::testing::ids::SessionId;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    /// A directory beside the workspace: nothing may ever land here.
    outside: PathBuf,
    engine: Arc<Engine>,
}

/// The shop in git with quick gates (`tests` removes the session's
/// `src/server/routes.js` when `node_modules/.arm` exists, so a test can make the copy
/// fail after the plan), delivery into the workspace with no hooks, and whatever
/// `prepare` adds (links) committed with it.
async fn shop(prepare: impl FnOnce(&Path, &Path)) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = shop_copy(&base);
    let outside = base.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let toml = root.join("kiln.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let text = text[..text.find("[delivery]").unwrap()]
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"")
        .replace(
            "[gates.node]\ntests = \"npm test\"\ntypecheck = \"node ../../scripts/check.mjs syntax\"\nformat = \"node ../../scripts/check.mjs format\"",
            "[gates.node]\ndependencies = \"true\"\ntypecheck = \"true\"\ntests = \"if [ -e node_modules/.arm ]; then rm src/server/routes.js; fi\"\nformat = \"true\"",
        );
    std::fs::write(&toml, format!("{text}\n[delivery]\ndefault = \"workspace\"\ntargets = [\"workspace\"]\n")).unwrap();
    prepare(&root, &outside);
    sh_git(&root, &["init", "--quiet", "-b", "main"]);
    sh_git(&root, &["add", "-A"]);
    sh_git(&root, &["commit", "--quiet", "-m", "the shop"]);
    let engine = engine(&base.join("config"));
    open(&engine, &root).await;
    engine.update_settings(UpdateSettingsArgs { planner_agent: Some(false), ..Default::default() }).await.unwrap();
    World { _tmp: tmp, root, outside, engine }
}

impl World {
    fn workdir(&self, id: &str) -> PathBuf {
        self.root.join(".kiln/sessions").join(id).join("workspace")
    }

    /// The workspace's files and links, Kiln's own state and git's left out.
    fn workspace(&self) -> BTreeMap<String, Vec<u8>> {
        files(&self.root, &[".kiln", ".git"])
    }

    fn outside(&self) -> BTreeMap<String, Vec<u8>> {
        files(&self.outside, &[])
    }

    /// A session on `module` (its setup finished).
    async fn create(&self, module: &str) -> String {
        let s = create(&self.engine, &format!("Tidy {module}")).await;
        wait_setup(&self.engine, &s.id).await.id
    }

    /// Runs every gate (each must pass) and stores a passing review of every module.
    async fn check_and_review(&self, id: &str) {
        let gates = self.engine.check_modules(SessionIdArgs { session_id: id.into() }).await.unwrap();
        assert!(gates.iter().all(|g| matches!(g.status, GateStatus::Passed | GateStatus::NotConfigured)), "{gates:#?}");
        let ws = self.engine.workspace().unwrap();
        let sid = SessionId::parse(id).unwrap();
        let session = self.engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap();
        for m in session.modules {
            kiln_engine::testing::review::store(&ws, &sid, &m, true, "ready", "REVIEW: pass - ready").await.unwrap();
        }
    }

    async fn plan(&self, id: &str, target: DeliveryTarget) -> DeliveryPlan {
        self.engine.plan_delivery(PlanDeliveryArgs { session_id: id.into(), target: Some(target) }).await.unwrap()
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

    async fn finished(&self, id: &str) -> DeliveryRun {
        delivery_finished(&self.engine, id, Duration::from_secs(60)).await
    }
}

/// Tree `a` is tree `b`, or the paths that differ.
#[track_caller]
fn assert_same(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>, what: &str) {
    let differ: Vec<(&String, String, String)> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            (
                k,
                a.get(k).map(|v| String::from_utf8_lossy(v).into_owned()).unwrap_or("(none)".into()),
                b.get(k).map(|v| String::from_utf8_lossy(v).into_owned()).unwrap_or("(none)".into()),
            )
        })
        .collect();
    assert!(differ.is_empty(), "{what}: {differ:#?}");
}

fn step<'a>(run: &'a DeliveryRun, id: &str) -> &'a DeliveryStep {
    run.steps.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("no step {id} in {:#?}", run.steps))
}

/// The link of finding 5: cart's `shared` is the shell's `lib`, outside the module.
const SHARED: &str = "modules/cart/src/client/shared";

#[tokio::test]
async fn a_committed_directory_link_the_session_replaced_with_a_directory_blocks_and_nothing_lands_where_it_leads() {
    let w = shop(|root, _| symlink("../../../../shell/lib", root.join(SHARED)).unwrap()).await;
    let id = w.create("@shop/cart").await;
    // The agent replaced the link with a real directory holding a new file.
    let wd = w.workdir(&id);
    std::fs::remove_file(wd.join(SHARED)).unwrap();
    write(&wd.join(SHARED).join("evil.js"), "export const evil = true;\n");
    w.check_and_review(&id).await;
    let before = w.workspace();
    assert!(before.contains_key(SHARED), "the committed link is in the workspace");

    let p = w.plan(&id, DeliveryTarget::Workspace).await;
    assert_eq!(p.blockers.len(), 1, "{:#?}", p.blockers);
    let b = &p.blockers[0];
    assert_eq!(b.code, ErrorCode::PathNotAllowed);
    assert_eq!(b.paths, [format!("{SHARED}/evil.js")]);
    assert!(b.message.starts_with(&format!("`{SHARED}` is a symbolic link in the workspace")), "{}", b.message);
    assert_eq!(b.module_id.as_deref(), Some("@shop/cart"));

    let err = w.deliver(&p).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DeliveryBlocked);
    assert!(err.message.contains(&format!("{SHARED}/evil.js")), "{}", err.message);
    assert!(w.engine.get_delivery(SessionIdArgs { session_id: id.clone() }).await.unwrap().is_none(), "no run started");
    assert!(!w.root.join("shell/lib/evil.js").exists(), "nothing landed where the link leads");
    assert_same(&w.workspace(), &before, "the workspace is unchanged, the link included");
    assert!(w.outside().is_empty());
}

#[tokio::test]
async fn a_link_committed_at_the_old_temp_name_is_never_written_through() {
    let planted = |root: &Path, outside: &Path| {
        // Where the copy once put `screen.js` before renaming it into place.
        symlink(outside.join("stolen.js"), root.join("modules/catalog/src/client/.screen.js.kiln-tmp")).unwrap();
    };
    let w = shop(planted).await;
    let id = w.create("@shop/catalog").await;
    let screen = "modules/catalog/src/client/screen.js";
    write(&w.workdir(&id).join(screen), "export const screen = 'session';\n");
    w.check_and_review(&id).await;
    let mut expected = w.workspace();
    expected.insert(screen.into(), b"export const screen = 'session';\n".to_vec());

    let p = w.plan(&id, DeliveryTarget::Workspace).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    w.deliver(&p).await.unwrap();
    let run = w.finished(&id).await;
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");

    assert!(w.outside().is_empty(), "the session's file was written outside the workspace: {:?}", w.outside());
    let meta = w.root.join(screen).symlink_metadata().unwrap();
    assert!(meta.is_file(), "screen.js is a regular file, not the planted link");
    assert_same(
        &w.workspace(),
        &expected,
        "exactly the one file changed; the planted link is as it was, no temp file is left",
    );
}

#[tokio::test]
async fn a_link_the_agent_left_to_a_directory_is_a_blocker_naming_it() {
    let w = shop(|_, _| {}).await;
    let id = w.create("@shop/cart").await;
    symlink("../../../../shell/lib", w.workdir(&id).join(SHARED)).unwrap();
    w.check_and_review(&id).await;
    let before = w.workspace();

    // Whatever the target, the plan answers, and says what is wrong.
    for target in [DeliveryTarget::Workspace, DeliveryTarget::GitPr] {
        let p = w.plan(&id, target).await;
        assert_eq!(p.blockers.len(), 1, "{target:?}: {:#?}", p.blockers);
        let b = &p.blockers[0];
        assert_eq!(
            (b.code, b.paths.clone(), b.module_id.as_deref()),
            (ErrorCode::PathNotAllowed, vec![SHARED.to_string()], Some("@shop/cart"))
        );
        assert_eq!(
            b.message,
            format!("`{SHARED}` is a symbolic link in the session, not a file: delivery carries regular files only; replace it with the file it stands for, or remove it")
        );
    }
    let p = w.plan(&id, DeliveryTarget::Workspace).await;
    let err = w.deliver(&p).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DeliveryBlocked);
    assert!(err.message.contains(SHARED), "{}", err.message);
    assert_same(&w.workspace(), &before, "the workspace is unchanged");
    assert!(w.outside().is_empty());
}

#[tokio::test]
async fn a_link_in_a_files_own_place_is_replaced_and_a_failed_copy_puts_it_back() {
    let links = |root: &Path, _: &Path| {
        symlink("screen.js", root.join("modules/catalog/src/client/theme.js")).unwrap();
        symlink("screen.js", root.join("modules/catalog/src/client/alias.js")).unwrap();
    };
    let w = shop(links).await;
    let id = w.create("@shop/catalog").await;
    let wd = w.workdir(&id);
    let (theme, alias, routes) = (
        "modules/catalog/src/client/theme.js",
        "modules/catalog/src/client/alias.js",
        "modules/catalog/src/server/routes.js",
    );
    // The session makes the link `theme.js` a file of its own, removes the link
    // `alias.js`, and changes a file the copy writes after `theme.js`.
    std::fs::remove_file(wd.join(theme)).unwrap();
    write(&wd.join(theme), "export const theme = 'session';\n");
    std::fs::remove_file(wd.join(alias)).unwrap();
    write(&wd.join(routes), "export const routes = ['session'];\n");
    w.check_and_review(&id).await;
    let before = w.workspace();
    assert_eq!(before[theme], b"-> screen.js");

    // The links are no conflict: the workspace still has what the session started from.
    let p = w.plan(&id, DeliveryTarget::Workspace).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    // A link made a file is written, not also removed after.
    assert_eq!(p.modules[0].overwritten, [theme, routes]);
    assert_eq!(p.modules[0].deleted, [alias]);
    // The delivery's own gate run takes `routes.js` away after the plan: the copy writes
    // `theme.js`, then fails, and must put the link back.
    write(&wd.join("modules/catalog/node_modules/.arm"), "");
    w.deliver(&p).await.unwrap();
    let run = w.finished(&id).await;
    assert_eq!(run.state, DeliveryState::Failed, "{run:#?}");
    let copy = step(&run, "copy");
    assert_eq!(copy.state, StepState::Failed);
    assert!(copy.output.contains(routes) && copy.output.contains("every file was put back"), "{}", copy.output);
    assert_same(&w.workspace(), &before, "the link is back as a link, nothing else changed, no temp file is left");
    assert!(w.outside().is_empty());

    // Disarmed and done again: the links themselves are replaced and removed; the file
    // they point to is untouched.
    std::fs::remove_file(wd.join("modules/catalog/node_modules/.arm")).unwrap();
    write(&wd.join(routes), "export const routes = ['session'];\n");
    w.check_and_review(&id).await;
    let p = w.plan(&id, DeliveryTarget::Workspace).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    w.deliver(&p).await.unwrap();
    let run = w.finished(&id).await;
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");
    let mut expected = before.clone();
    expected.insert(theme.into(), b"export const theme = 'session';\n".to_vec());
    expected.remove(alias);
    expected.insert(routes.into(), b"export const routes = ['session'];\n".to_vec());
    assert_same(&w.workspace(), &expected, "the links replaced and removed themselves");
    assert!(w.root.join(theme).symlink_metadata().unwrap().is_file());
}

// ---------------------------------------------------------------------------------------
// The git-pr target

/// A bare remote whose `main` holds the shop with `links` committed, the user's clone
/// (`host`), the session's working copy (`session`) and a git home of its own.
struct Remote {
    _tmp: tempfile::TempDir,
    remote: PathBuf,
    host: PathBuf,
    session: PathBuf,
    home: PathBuf,
    id: String,
}

fn remote(links: &[(&str, &str)]) -> Remote {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let remote = bare_remote(&root, "host", "the shop", |seed| {
        copy_tracked_shop(seed);
        for (path, target) in links {
            symlink(target, seed.join(path)).unwrap();
        }
    });
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    Remote {
        _tmp: tmp,
        remote,
        host: root.join("host"),
        session: root.join("session"),
        home,
        id: uuid::Uuid::new_v4().hyphenated().to_string(),
    }
}

impl Remote {
    /// Delivers `files` of `@shop/cart` with no token (so a compare link, no API) and no
    /// install or typecheck.
    async fn deliver(
        &self,
        files: Vec<(String, Option<PathBuf>)>,
        sink: &Recorder,
    ) -> kiln_engine::Result<PullRequestView> {
        let settings = DeliverySettingsView {
            repository: Some("acme/shop".into()),
            reviewers: Vec::new(),
            push_mode: "auto".into(),
            remote: "origin".into(),
            base: "main".into(),
            branch_prefix: "kiln".into(),
            api_url: "http://127.0.0.1:9".into(),
            token_fingerprint: None,
        };
        let mut input = GitPrInput::new(&self.host, &self.id, settings);
        input.files = files;
        input.modules = vec![GitPrModule {
            id: "@shop/cart".into(),
            directory: "modules/cart".into(),
            is_new: false,
            enable: None,
        }];
        input.max_changed_files = 18;
        input.git_env = vec![
            ("HOME".into(), self.home.display().to_string()),
            ("XDG_CONFIG_HOME".into(), self.home.join(".config").display().to_string()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ];
        input.gh_program = Some(self.home.join("no-gh-here"));
        git_pr::deliver(input, sink).await
    }

    fn branch(&self) -> String {
        format!("kiln/cart-{}", &self.id[..8])
    }
}

/// Each step's end, `(id, pass|fail|skip, output)`, in order.
#[derive(Default)]
struct Recorder {
    ends: std::sync::Mutex<Vec<(String, String, String)>>,
}

impl StepSink for Recorder {
    fn start(&self, _: &str, _: &str, _: Option<&str>) {}
    fn pass(&self, id: &str, output: &str) {
        self.ends.lock().unwrap().push((id.into(), "pass".into(), output.into()));
    }
    fn fail(&self, id: &str, output: &str) {
        self.ends.lock().unwrap().push((id.into(), "fail".into(), output.into()));
    }
    fn skip(&self, id: &str, why: &str) {
        self.ends.lock().unwrap().push((id.into(), "skip".into(), why.into()));
    }
}

impl Recorder {
    fn ended(&self, id: &str) -> Option<(String, String)> {
        self.ends.lock().unwrap().iter().find(|(i, _, _)| i == id).map(|(_, how, output)| (how.clone(), output.clone()))
    }
}

#[tokio::test]
async fn git_pr_refuses_to_copy_through_a_directory_link_of_the_base_branch() {
    let r = remote(&[(SHARED, "../../../../shell/lib")]);
    let evil = format!("{SHARED}/evil.js");
    write(&r.session.join(&evil), "export const evil = true;\n");
    let main_before = rev(&r.remote, "refs/heads/main").unwrap();

    let sink = Recorder::default();
    let err = r.deliver(vec![(evil.clone(), Some(r.session.join(&evil)))], &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::PathNotAllowed, "{}", err.message);
    let (how, output) = sink.ended("copy").expect("the copy step ran");
    assert_eq!(how, "fail");
    assert!(output.contains(&evil) && output.contains(&format!("`{SHARED}` is a symbolic link")), "{output}");
    // Nothing after the copy ran, nothing was pushed, the remote's main is as it was.
    assert!(sink.ended("commit").is_none() && sink.ended("push").is_none(), "{:#?}", sink.ends.lock().unwrap());
    assert_eq!(sh_git(&r.remote, &["for-each-ref", "--format=%(refname)", "refs/heads"]), "refs/heads/main");
    assert_eq!(rev(&r.remote, "refs/heads/main").unwrap(), main_before);
    assert!(!r.host.join("shell/lib/evil.js").exists());
}

#[tokio::test]
async fn git_pr_removes_a_deleted_link_itself_not_the_file_it_points_to() {
    let alias = "modules/cart/src/client/alias.js";
    let r = remote(&[(alias, "screen.js")]);
    let main_before = rev(&r.remote, "refs/heads/main").unwrap();

    let sink = Recorder::default();
    let view = r
        .deliver(vec![(alias.to_string(), None)], &sink)
        .await
        .unwrap_or_else(|e| panic!("{e:?}: {:#?}", sink.ends.lock().unwrap()));
    assert_eq!(view.branch, r.branch());
    let sha = rev(&r.remote, &format!("refs/heads/{}", r.branch())).expect("the branch was pushed");
    assert_eq!(sh_git(&r.remote, &["diff", "--name-status", &main_before, &sha]), format!("D\t{alias}"));
}
