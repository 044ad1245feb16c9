//! Delivery in the direct workflow (ARCHITECTURE.md: Workflows and the chain, Delivery) through the engine's API, as a user runs
//! it on an ordinary repository: a pnpm monorepo (`packages/a`, `packages/b`, a root
//! lockfile and changelog) with no kiln.toml, its history in conventional commits, pushed
//! to a real bare remote whose clone is the workspace; gates detected from the repository
//! itself and run by `check_modules`, a passing review stored through `review::store`, and
//! the GitHub double for the pull request. A session that changes `packages/a/src/x.js`
//! and root files delivers every one of them into the workspace and as a pull request
//! (exactly those files, committed with the session's title and brief in the repository's
//! style); a session that changed nothing offers nothing to deliver; a changed module that
//! is not in the session blocks until it joins.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kiln_engine::testing::ids::SessionId;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};
use kiln_github_double::{Config, GithubDouble, RepoConfig};

/// What `pnpm install` writes for the monorepo, so the detected install step keeps it.
const LOCKFILE: &str = "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .: {}\n\n  packages/a: {}\n\n  packages/b: {}\n";

/// The same once `@mono/a` depends on `@mono/b` (a link: it installs offline).
const LOCKFILE_LINKED: &str = "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .: {}\n\n  packages/a:\n    dependencies:\n      '@mono/b':\n        specifier: workspace:*\n        version: link:../b\n\n  packages/b: {}\n";

/// A package's manifest, with node's own test runner and `dependencies` as given.
fn manifest(name: &str, dependencies: &str) -> String {
    format!(
        "{{\n  \"name\": \"@mono/{name}\",\n  \"version\": \"1.0.0\",\n  \"type\": \"module\",\n  \"scripts\": {{ \"test\": \"node --test\" }}{dependencies}\n}}\n"
    )
}

/// A pnpm monorepo with no kiln.toml: two packages with node's own test runner.
fn monorepo(root: &Path) {
    write(&root.join(".gitignore"), "node_modules/\n");
    write(&root.join("pnpm-workspace.yaml"), "packages:\n  - \"packages/*\"\n");
    write(&root.join("package.json"), "{\n  \"name\": \"mono\",\n  \"private\": true\n}\n");
    write(&root.join("pnpm-lock.yaml"), LOCKFILE);
    write(&root.join("CHANGELOG.md"), "# Changes\n");
    for (name, var) in [("a", "x"), ("b", "y")] {
        let dir = root.join("packages").join(name);
        write(&dir.join("package.json"), &manifest(name, ""));
        write(&dir.join(format!("src/{var}.js")), &format!("export const {var} = 1;\n"));
        write(
            &dir.join(format!("test/{var}.test.js")),
            &format!("import {{ test }} from \"node:test\";\nimport assert from \"node:assert\";\nimport {{ {var} }} from \"../src/{var}.js\";\n\ntest(\"{var} is a number\", () => assert.equal(typeof {var}, \"number\"));\n"),
        );
    }
}

struct World {
    _tmp: tempfile::TempDir,
    remote: PathBuf,
    host: PathBuf,
    engine: Arc<Engine>,
    github: GithubDouble,
}

/// The monorepo on a bare remote, with history in conventional commits, and the user's
/// clone of it opened as the workspace with the delivery settings for the GitHub double.
async fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let remote = bare_remote(&root, "host", "chore: set up the pnpm workspace", monorepo);
    let seed = root.join("seed");
    write(&seed.join("packages/b/README.md"), "# @mono/b\n");
    sh_git(&seed, &["add", "-A"]);
    sh_git(&seed, &["commit", "--quiet", "-m", "docs(b): say what b is"]);
    write(&seed.join("packages/a/README.md"), "# @mono/a\n");
    sh_git(&seed, &["add", "-A"]);
    sh_git(&seed, &["commit", "--quiet", "-m", "feat(a): say what a is"]);
    sh_git(&seed, &["push", "--quiet", "origin", "main"]);
    let host = root.join("host");
    sh_git(&host, &["pull", "--quiet", "--ff-only", "origin", "main"]);
    assert!(!host.join("kiln.toml").exists());

    let token = format!("ghp_kilndirect{}", uuid::Uuid::new_v4().simple());
    let github =
        GithubDouble::spawn(Config::new(token.clone()).repo(RepoConfig::new("kiln-test", "mono").git_dir(&remote)));
    let engine = engine(&root.join("config"));
    let view = open(&engine, &host).await;
    assert_eq!(view.workflow, Workflow::Direct, "no kiln.toml: the direct workflow");
    engine
        .update_settings(UpdateSettingsArgs {
            planner_agent: Some(false),
            delivery_repository: Some("kiln-test/mono".into()),
            delivery_api_url: Some(github.base_url()),
            delivery_token: Some(token),
            ..Default::default()
        })
        .await
        .unwrap();
    World { _tmp: tmp, remote, host, engine, github }
}

impl World {
    fn workdir(&self, id: &str) -> PathBuf {
        self.host.join(".kiln/sessions").join(id).join("workspace")
    }

    async fn session(&self, id: &str) -> SessionView {
        self.engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap()
    }

    /// A session on `@mono/a` (its install step finished) with the given title.
    async fn create(&self, title: &str, brief: &str) -> String {
        let s = self
            .engine
            .create_session(CreateSessionArgs {
                brief: brief.into(),
                title: Some(title.into()),
                create_modules: None,
                issue: None,
            })
            .await
            .unwrap();
        assert_eq!(s.modules.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["@mono/a"]);
        let s = wait_setup(&self.engine, &s.id).await;
        assert_eq!(s.setup, SetupState::Passed, "the detected install step: {s:#?}");
        s.id
    }

    /// Runs every gate (none may fail or be skipped) and stores a passing review of every
    /// module as its files are now.
    async fn check_and_review(&self, id: &str) -> Vec<GateResultView> {
        let gates = self.engine.check_modules(SessionIdArgs { session_id: id.into() }).await.unwrap();
        assert!(gates.iter().all(|g| matches!(g.status, GateStatus::Passed | GateStatus::NotConfigured)), "{gates:#?}");
        assert!(gates.iter().any(|g| g.gate == "tests" && g.status == GateStatus::Passed), "{gates:#?}");
        let ws = self.engine.workspace().unwrap();
        let sid = SessionId::parse(id).unwrap();
        for m in self.session(id).await.modules {
            kiln_engine::testing::review::store(&ws, &sid, &m, true, "ready", "REVIEW: pass - ready").await.unwrap();
        }
        gates
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
        delivery_finished(&self.engine, id, Duration::from_secs(120)).await
    }
}

const TITLE: &str = "Make x two";
const BRIEF: &str = "The x in @mono/a is wrong: it should be two.\nRecord it in the changelog.";

/// The session's change: two files of `@mono/a` (it now depends on `@mono/b`) and two
/// root files (the lockfile that dependency changes, the changelog).
fn change(w: &World, id: &str) {
    let wd = w.workdir(id);
    write(&wd.join("packages/a/src/x.js"), "export const x = 2;\n");
    write(
        &wd.join("packages/a/package.json"),
        &manifest("a", ",\n  \"dependencies\": { \"@mono/b\": \"workspace:*\" }"),
    );
    write(&wd.join("pnpm-lock.yaml"), LOCKFILE_LINKED);
    write(&wd.join("CHANGELOG.md"), "# Changes\n\n- x is two\n");
}

fn planned<'a>(p: &'a DeliveryPlan, id: &str) -> &'a PlannedModule {
    p.modules.iter().find(|m| m.module_id == id).unwrap_or_else(|| panic!("no {id} in {:#?}", p.modules))
}

#[tokio::test]
async fn a_direct_session_delivers_its_module_and_root_files_into_the_workspace() {
    let w = world().await;
    let id = w.create(TITLE, BRIEF).await;
    change(&w, &id);
    w.check_and_review(&id).await;

    let p = w.plan(&id, DeliveryTarget::Workspace).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    let ids: Vec<(&str, DiffGroup)> = p.modules.iter().map(|m| (m.module_id.as_str(), m.group)).collect();
    assert_eq!(ids, [("@mono/a", DiffGroup::Module), (OUTSIDE_MODULES_ID, DiffGroup::Outside)]);
    let a = planned(&p, "@mono/a");
    assert_eq!(a.overwritten, ["packages/a/package.json", "packages/a/src/x.js"]);
    assert!(a.new_packages.is_empty(), "a sibling is no new package: {a:#?}");
    let outside = planned(&p, OUTSIDE_MODULES_ID);
    assert_eq!(
        (outside.directory.as_str(), outside.overwritten.clone()),
        ("", vec!["CHANGELOG.md".to_string(), "pnpm-lock.yaml".to_string()])
    );
    assert!(outside.added.is_empty() && outside.deleted.is_empty() && !outside.enable);
    // The review and gate evidence stay per module: none is asked of the root files.
    assert!(p.gates.iter().all(|g| !g.contains(OUTSIDE_MODULES_ID)), "{:?}", p.gates);
    assert!(!p.gates.iter().any(|g| g.starts_with("spec-schema")), "direct checks no specification: {:?}", p.gates);

    w.deliver(&p).await.unwrap();
    let run = w.finished(&id).await;
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");
    assert_eq!(run.landed, ["packages/a/package.json", "packages/a/src/x.js", "CHANGELOG.md", "pnpm-lock.yaml"]);
    let copy = run.steps.iter().find(|s| s.id == "copy").unwrap();
    assert!(copy.title.contains("Copy 4 files"), "{copy:#?}");
    assert_eq!(std::fs::read_to_string(w.host.join("packages/a/src/x.js")).unwrap(), "export const x = 2;\n");
    assert_eq!(std::fs::read_to_string(w.host.join("CHANGELOG.md")).unwrap(), "# Changes\n\n- x is two\n");
    assert_eq!(std::fs::read_to_string(w.host.join("pnpm-lock.yaml")).unwrap(), LOCKFILE_LINKED);
    assert!(w.session(&id).await.delivered_at.is_some());
    // Exactly those files changed in the user's working tree.
    let status = sh_git(&w.host, &["status", "--porcelain", "--untracked-files=all"]);
    let changed: Vec<&str> = status.lines().map(str::trim).filter(|l| !l.contains(".kiln/")).collect();
    assert_eq!(
        changed,
        ["M CHANGELOG.md", "M packages/a/package.json", "M packages/a/src/x.js", "M pnpm-lock.yaml"],
        "{status}"
    );
}

#[tokio::test]
async fn a_direct_session_is_delivered_as_a_pull_request_of_exactly_its_files_with_its_title_and_brief() {
    let w = world().await;
    let id = w.create(TITLE, BRIEF).await;
    change(&w, &id);
    let gates = w.check_and_review(&id).await;
    let main_before = rev(&w.remote, "refs/heads/main").unwrap();

    let p = w.plan(&id, DeliveryTarget::GitPr).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    assert!(p.available_targets.iter().all(|t| t.available), "{:?}", p.available_targets);
    let branch = format!("kiln/a-{}", &id[..8]);
    assert_eq!(p.branch.as_deref(), Some(branch.as_str()));
    assert!(p.modules.iter().any(|m| m.group == DiffGroup::Outside), "{:#?}", p.modules);
    w.deliver(&p).await.unwrap();
    let run = w.finished(&id).await;
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");
    assert_eq!(run.landed, ["packages/a/package.json", "packages/a/src/x.js", "CHANGELOG.md", "pnpm-lock.yaml"]);
    let guardrail = run.steps.iter().find(|s| s.id == "guardrail").unwrap();
    assert!(
        guardrail.output.contains("CHANGELOG.md (outside the modules, changed by the session)"),
        "{}",
        guardrail.output
    );
    assert!(guardrail.output.contains("packages/a/src/x.js (module)"), "{}", guardrail.output);

    // The branch holds exactly the session's files, one commit on main.
    let sha = rev(&w.remote, &format!("refs/heads/{branch}")).expect("the branch was pushed");
    assert_eq!(sh_git(&w.remote, &["rev-parse", &format!("{sha}^")]), main_before);
    assert_eq!(
        sh_git(&w.remote, &["diff", "--name-status", &main_before, &sha]),
        "M\tCHANGELOG.md\nM\tpackages/a/package.json\nM\tpackages/a/src/x.js\nM\tpnpm-lock.yaml"
    );
    assert_eq!(sh_git(&w.remote, &["show", &format!("{sha}:CHANGELOG.md")]), "# Changes\n\n- x is two");

    // The commit: the title in the history's style (conventional, scoped; `wrong` makes
    // it a fix), the brief, the gate evidence and the session trailer.
    let message = sh_git(&w.remote, &["log", "-1", "--format=%B", &sha]);
    assert!(
        message.starts_with(
            "fix(a): make x two\n\nThe x in @mono/a is wrong: it should be two.\nRecord it in the changelog.\n\n"
        ),
        "{message}"
    );
    assert!(message.contains(&format!("Delivered by Kiln from session {id}.")), "{message}");
    let passed = gates.iter().filter(|g| g.status == GateStatus::Passed).count();
    assert!(message.contains(&format!("Gates: {passed} passed, 0 failed, 0 skipped")), "{message}\n{gates:#?}");
    assert!(message.contains("- @mono/a tests: passed"), "{message}");
    assert!(message.trim_end().ends_with(&format!("Kiln-Session: {id}")), "{message}");

    // The pull request: the same title, the root files among its files.
    let created = w.github.requests_to("POST", "/repos/kiln-test/mono/pulls");
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].body["title"], "fix(a): make x two");
    assert_eq!(created[0].body["head"], branch.as_str());
    let body = created[0].body["body"].as_str().unwrap();
    for needle in [
        "The x in @mono/a is wrong",
        "**Modified** (4)",
        "- `CHANGELOG.md`",
        "- `pnpm-lock.yaml`",
        "- `packages/a/src/x.js`",
        "## Screenshots\n\nNo preview: there was nothing to capture.",
    ] {
        assert!(body.contains(needle), "{needle:?} missing from the body:\n{body}");
    }
    // The workspace itself is untouched by a pull request.
    assert_eq!(std::fs::read_to_string(w.host.join("CHANGELOG.md")).unwrap(), "# Changes\n");
}

#[tokio::test]
async fn a_session_that_changed_nothing_offers_nothing_to_deliver() {
    let w = world().await;
    let id = w.create("Nothing yet", "Look at @mono/a").await;
    w.check_and_review(&id).await;
    for target in [DeliveryTarget::Workspace, DeliveryTarget::GitPr] {
        let p = w.plan(&id, target).await;
        assert!(
            p.modules.iter().all(|m| m.added.is_empty() && m.overwritten.is_empty() && m.deleted.is_empty()),
            "{:#?}",
            p.modules
        );
        let nothing: Vec<&Blocker> =
            p.blockers.iter().filter(|b| b.message == "nothing to deliver: the session changed no file").collect();
        assert_eq!(nothing.len(), 1, "{:#?}", p.blockers);
        assert_eq!(nothing[0].code, ErrorCode::DeliveryBlocked);
        let err = w.deliver(&p).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::DeliveryBlocked, "{err:?}");
        assert!(err.message.contains("nothing to deliver"), "{}", err.message);
    }
    assert!(w.engine.get_delivery(SessionIdArgs { session_id: id.clone() }).await.unwrap().is_none());
    assert_eq!(sh_git(&w.remote, &["for-each-ref", "--format=%(refname)", "refs/heads"]), "refs/heads/main");
}

#[tokio::test]
async fn a_changed_module_that_is_not_in_the_session_blocks_until_it_joins() {
    let w = world().await;
    let id = w.create(TITLE, BRIEF).await;
    change(&w, &id);
    write(&w.workdir(&id).join("packages/b/src/y.js"), "export const y = 2;\n");
    w.check_and_review(&id).await;

    let p = w.plan(&id, DeliveryTarget::Workspace).await;
    let b = planned(&p, "@mono/b");
    assert_eq!((b.group, b.overwritten.clone()), (DiffGroup::OtherModule, vec!["packages/b/src/y.js".to_string()]));
    assert_eq!(p.blockers.len(), 1, "{:#?}", p.blockers);
    let blocker = &p.blockers[0];
    assert_eq!((blocker.code, blocker.module_id.as_deref()), (ErrorCode::DeliveryBlocked, Some("@mono/b")));
    assert!(blocker.message.contains("`@mono/b` changed but is not in the session"), "{}", blocker.message);
    assert_eq!(blocker.paths, ["packages/b/src/y.js"]);
    assert_eq!(w.deliver(&p).await.unwrap_err().code, ErrorCode::DeliveryBlocked);
    assert!(w.engine.get_delivery(SessionIdArgs { session_id: id.clone() }).await.unwrap().is_none());

    // Joined, checked and reviewed: one of the session's modules, delivered with the rest.
    w.engine.add_module(AddModuleArgs { session_id: id.clone(), module_id: "@mono/b".into() }).await.unwrap();
    wait_setup(&w.engine, &id).await;
    w.check_and_review(&id).await;
    let p = w.plan(&id, DeliveryTarget::Workspace).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    let groups: Vec<(&str, DiffGroup)> = p.modules.iter().map(|m| (m.module_id.as_str(), m.group)).collect();
    assert_eq!(
        groups,
        [("@mono/a", DiffGroup::Module), ("@mono/b", DiffGroup::Module), (OUTSIDE_MODULES_ID, DiffGroup::Outside)]
    );
    assert_eq!(
        planned(&p, "@mono/b").overwritten,
        ["packages/b/src/y.js"],
        "b's base is checkpoint 0: its change is kept"
    );
    w.deliver(&p).await.unwrap();
    let run = w.finished(&id).await;
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");
    assert_eq!(std::fs::read_to_string(w.host.join("packages/b/src/y.js")).unwrap(), "export const y = 2;\n");
}
