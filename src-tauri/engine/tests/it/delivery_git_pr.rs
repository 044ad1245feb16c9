//! The git-pr delivery target (`delivery::git_pr::deliver`) end to end, without the engine:
//! a real bare remote (`git init --bare`) whose `main` holds a copy of examples/shop, the
//! user's clone as the host repository, a fake session working copy, a recording
//! `StepSink`, a recording `git` wrapper (every argv and environment), and the GitHub
//! REST double for the pull request. Covers the happy path and the idempotent second
//! delivery, the guardrail, an API error after the push, a foreign branch, a missing base
//! or remote, push modes, the compare link and `available`.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::common::{bare_remote, copy_tracked_shop, pair, recorded_git_runs, recording_git, rev, sh_git, write};
use kiln_engine::testing::delivery::git_pr::{self, GateRow, GitPrBody, GitPrInput, GitPrModule};
use kiln_engine::testing::delivery::StepSink;
use kiln_engine::types::DeliverySettingsView;
use kiln_engine::ErrorCode;
use kiln_github_double::{Config, Fault, GithubDouble, RepoConfig};

// ---------------------------------------------------------------------------------------
// Fixture

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    remote: PathBuf,
    host: PathBuf,
    session: PathBuf,
    home: PathBuf,
    record: PathBuf,
    git: PathBuf,
    id: String,
    token: String,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let remote = bare_remote(&root, "host", "the shop", copy_tracked_shop);
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();

    // The session's working copy: a new module and a change to an existing one.
    let session = root.join("session");
    write(
        &session.join("modules/wishlist/package.json"),
        "{\n  \"name\": \"@shop/wishlist\",\n  \"version\": \"0.1.0\",\n  \"type\": \"module\"\n}\n",
    );
    write(&session.join("modules/wishlist/SPEC.md"), "# Wishlist\n\nSaved products.\n");
    write(&session.join("modules/wishlist/src/server/routes.js"), "export function routes() { return []; }\n");
    write(&session.join("modules/wishlist/src/client/screen.js"), "export const screen = 'wishlist';\n");
    write(&session.join("modules/cart/src/server/routes.js"), "export function routes() { return ['cart v2']; }\n");
    write(&session.join("shell/app.js"), "// the agent touched the shell\n");

    let record = root.join("record");
    let git = recording_git(&record, &record);
    Fixture {
        _tmp: tmp,
        remote,
        host: root.join("host"),
        session,
        home,
        record,
        git,
        id: uuid::Uuid::new_v4().hyphenated().to_string(),
        token: format!("ghp_kilnsecret{}", uuid::Uuid::new_v4().simple()),
        root,
    }
}

fn module(id: &str, dir: &str, new: bool) -> GitPrModule {
    let enable = new.then(|| format!("node scripts/enable-module.js {id}"));
    GitPrModule { id: id.into(), directory: dir.into(), is_new: new, enable }
}

fn gate(module: Option<&str>, gate: &str, status: &str) -> GateRow {
    GateRow {
        module: module.map(String::from),
        gate: gate.into(),
        status: status.into(),
        duration_ms: 1500,
        note: String::new(),
    }
}

impl Fixture {
    fn settings(&self, api_url: &str) -> DeliverySettingsView {
        DeliverySettingsView {
            repository: Some("acme/shop".into()),
            reviewers: vec!["alice".into(), "acme/web".into()],
            push_mode: "auto".into(),
            remote: "origin".into(),
            base: "main".into(),
            branch_prefix: "kiln".into(),
            api_url: api_url.into(),
            token_fingerprint: None,
        }
    }

    fn input(&self, api_url: &str) -> GitPrInput {
        let mut input = GitPrInput::new(&self.host, &self.id, self.settings(api_url));
        let file = |rel: &str| (rel.to_string(), Some(self.session.join(rel)));
        input.files = vec![
            file("modules/wishlist/package.json"),
            file("modules/wishlist/SPEC.md"),
            file("modules/wishlist/src/server/routes.js"),
            file("modules/wishlist/src/client/screen.js"),
            file("modules/cart/src/server/routes.js"),
            ("modules/cart/test/routes.test.js".into(), None),
        ];
        input.modules =
            vec![module("@shop/wishlist", "modules/wishlist", true), module("@shop/cart", "modules/cart", false)];
        input.max_changed_files = 18;
        input.max_new_dependencies = 3;
        input.new_dependencies = vec!["left-pad".into()];
        // A lockfile change, and a file npm would put in the ignored node_modules.
        input.install = Some("echo installing; printf '\\n' >> package-lock.json; mkdir -p node_modules && echo ok > node_modules/.kiln-installed".into());
        input.typecheck = Some("node --check modules/wishlist/src/server/routes.js && echo typecheck ok".into());
        input.token = Some(self.token.clone());
        input.body = GitPrBody {
            title: None,
            what_changed: "Adds a wishlist module and shows cart v2.".into(),
            gates: vec![
                gate(Some("@shop/wishlist"), "tests", "passed"),
                gate(Some("@shop/wishlist"), "typecheck", "passed"),
                gate(Some("@shop/cart"), "tests", "passed"),
                gate(None, "format", "skipped"),
            ],
            added: vec![
                "modules/wishlist/package.json".into(),
                "modules/wishlist/SPEC.md".into(),
                "modules/wishlist/src/server/routes.js".into(),
                "modules/wishlist/src/client/screen.js".into(),
            ],
            modified: vec!["modules/cart/src/server/routes.js".into()],
            removed: vec!["modules/cart/test/routes.test.js".into()],
            spec_hashes: vec![("@shop/wishlist".into(), "5f1d0c3b9e2a4c7d8e6f".into())],
            closes: None,
            anyway: None,
        };
        input.git_program = Some(self.git.clone());
        input.git_env = vec![
            ("HOME".into(), self.home.display().to_string()),
            ("XDG_CONFIG_HOME".into(), self.home.join(".config").display().to_string()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ];
        input.gh_program = Some(self.root.join("no-gh-here"));
        input
    }

    fn branch(&self) -> String {
        format!("kiln/wishlist-{}", &self.id[..8])
    }

    fn worktree(&self) -> PathBuf {
        self.host.join(".kiln/worktrees").join(&self.id)
    }

    fn remote_sha(&self, branch: &str) -> Option<String> {
        rev(&self.remote, &format!("refs/heads/{branch}"))
    }

    fn remote_branches(&self) -> String {
        sh_git(&self.remote, &["for-each-ref", "--format=%(refname)", "refs/heads"])
    }

    /// Nothing of the run left in the host repository: no worktree (listed or on disk),
    /// no local branch and no remote-tracking ref for the session's branch.
    fn assert_nothing_left(&self) {
        let list = sh_git(&self.host, &["worktree", "list", "--porcelain"]);
        assert_eq!(list.matches("worktree ").count(), 1, "{list}");
        assert!(!self.worktree().exists());
        assert_eq!(rev(&self.host, &format!("refs/heads/{}", self.branch())), None, "the local branch is left");
        assert_eq!(
            rev(&self.host, &format!("refs/remotes/origin/{}", self.branch())),
            None,
            "the tracking ref is left"
        );
    }

    fn assert_token_never_in_git(&self) {
        let runs = recorded_git_runs(&self.record);
        assert!(runs.len() > 5, "the wrapper recorded too little: {}", runs.len());
        for (argv, env) in &runs {
            assert!(!argv.contains(&self.token), "token in a git argv: {argv}");
            // The remote is a path, not the API's host: git is never given the token.
            assert!(!env.contains(&self.token), "token in a git environment ({argv})");
        }
    }
}

// ---------------------------------------------------------------------------------------
// A recording sink

#[derive(Default)]
struct Sink {
    events: Mutex<Vec<(String, String, String)>>,
}

impl StepSink for Sink {
    fn start(&self, id: &str, title: &str, module: Option<&str>) {
        self.events.lock().unwrap().push(("start".into(), id.into(), format!("{title} [{}]", module.unwrap_or(""))));
    }
    fn pass(&self, id: &str, output: &str) {
        self.events.lock().unwrap().push(("pass".into(), id.into(), output.into()));
    }
    fn fail(&self, id: &str, output: &str) {
        self.events.lock().unwrap().push(("fail".into(), id.into(), output.into()));
    }
    fn skip(&self, id: &str, why: &str) {
        self.events.lock().unwrap().push(("skip".into(), id.into(), why.into()));
    }
}

impl Sink {
    /// `(id, how it ended)` in order.
    fn ends(&self) -> Vec<(String, String)> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _, _)| k != "start")
            .map(|(k, id, _)| (id.clone(), k.clone()))
            .collect()
    }
    fn started(&self) -> Vec<String> {
        self.events.lock().unwrap().iter().filter(|(k, _, _)| k == "start").map(|(_, id, _)| id.clone()).collect()
    }
    fn output(&self, id: &str) -> String {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, i, _)| k != "start" && i == id)
            .map(|(_, _, o)| o.clone())
            .collect::<Vec<_>>()
            .join("\n")
    }
    fn all_text(&self) -> String {
        self.events.lock().unwrap().iter().map(|(_, id, text)| format!("{id}: {text}")).collect::<Vec<_>>().join("\n")
    }
}

fn double(fx: &Fixture) -> GithubDouble {
    GithubDouble::spawn(Config::new(fx.token.clone()).repo(RepoConfig::new("acme", "shop").git_dir(&fx.remote)))
}

fn decoded(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes()).into_owned().collect()
}

// ---------------------------------------------------------------------------------------
// The happy path and the second delivery

#[tokio::test]
async fn delivers_a_pull_request_and_a_second_delivery_updates_it() {
    let fx = fixture();
    let github = double(&fx);
    // A worktree directory a crash left behind is cleaned first.
    write(&fx.worktree().join("left-behind.txt"), "crash\n");
    let main_before = fx.remote_sha("main").unwrap();

    let sink = Sink::default();
    let view = git_pr::deliver(fx.input(&github.base_url()), &sink)
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", sink.all_text()));

    assert_eq!(view.branch, fx.branch());
    assert_eq!((view.via.as_str(), view.created, view.number), ("api", true, Some(1)));
    assert!(view.url.contains("/pull/1") || view.url.contains("/pulls/1"), "{}", view.url);
    let expected_steps = [
        "access",
        "fetch",
        "worktree",
        "copy",
        "install",
        "enable:@shop/wishlist",
        "typecheck",
        "guardrail",
        "commit",
        "push",
        "pull-request",
        "cleanup",
    ];
    assert_eq!(sink.started(), expected_steps.to_vec(), "{}", sink.all_text());
    assert_eq!(
        sink.ends(),
        expected_steps.iter().map(|id| pair(id, "pass")).collect::<Vec<_>>(),
        "{}",
        sink.all_text()
    );
    assert!(
        sink.output("worktree").contains("left-behind") || sink.output("worktree").contains("removed"),
        "{}",
        sink.output("worktree")
    );
    assert!(
        sink.output("guardrail").contains("shell/enabled.json (written by enable)"),
        "{}",
        sink.output("guardrail")
    );
    assert!(sink.output("guardrail").contains("package-lock.json (lockfile)"), "{}", sink.output("guardrail"));

    // The remote branch: one commit on main, with the session's files and the enable.
    let sha = fx.remote_sha(&fx.branch()).expect("the branch was pushed");
    assert_eq!(sh_git(&fx.remote, &["rev-parse", &format!("{sha}^")]), main_before);
    let message = sh_git(&fx.remote, &["log", "-1", "--format=%B", &sha]);
    assert!(message.starts_with("kiln: add @shop/wishlist; update @shop/cart\n"), "{message}");
    assert!(message.contains(&format!("session {}", fx.id)), "{message}");
    assert!(message.contains("Gates: 3 passed, 0 failed, 1 skipped"), "{message}");
    assert!(message.contains("- @shop/wishlist tests: passed"), "{message}");
    assert!(message.trim_end().ends_with(&format!("Kiln-Session: {}", fx.id)), "{message}");
    let files = sh_git(&fx.remote, &["diff", "--name-status", &main_before, &sha]);
    for line in [
        "A\tmodules/wishlist/package.json",
        "A\tmodules/wishlist/src/client/screen.js",
        "M\tmodules/cart/src/server/routes.js",
        "D\tmodules/cart/test/routes.test.js",
        "M\tshell/enabled.json",
        "M\tpackage-lock.json",
    ] {
        assert!(files.lines().any(|l| l == line), "{line} missing from:\n{files}");
    }
    assert!(!files.contains("shell/app.js") && !files.contains("node_modules"), "{files}");
    assert!(sh_git(&fx.remote, &["show", &format!("{sha}:shell/enabled.json")]).contains("@shop/wishlist"));

    // The API: list, create, reviewers; every header as GitHub documents it.
    let lists = github.requests_to("GET", "/repos/acme/shop/pulls");
    assert_eq!(lists.len(), 1);
    let query = decoded(lists[0].query.as_deref().unwrap_or(""));
    assert!(query.contains(&("head".into(), format!("acme:{}", fx.branch()))), "{query:?}");
    assert!(query.contains(&("state".into(), "open".into())), "{query:?}");
    let created = github.requests_to("POST", "/repos/acme/shop/pulls");
    assert_eq!(created.len(), 1);
    let c = &created[0];
    assert_eq!(c.status, 201);
    assert_eq!(c.header("authorization"), Some(format!("Bearer {}", fx.token).as_str()));
    assert_eq!(c.header("accept"), Some("application/vnd.github+json"));
    assert_eq!(c.header("user-agent"), Some("kiln"));
    assert_eq!(c.header("x-github-api-version"), Some("2022-11-28"));
    assert_eq!(c.body["head"], fx.branch());
    assert_eq!(c.body["base"], "main");
    assert_eq!(c.body["title"], "kiln: add @shop/wishlist; update @shop/cart");
    let body = c.body["body"].as_str().unwrap();
    for needle in [
        "## What changed",
        "Adds a wishlist module and shows cart v2.",
        "| Module | Gate | Result | Time |",
        "| @shop/wishlist | tests | passed | 1.5 s |",
        "| (workspace) | format | skipped | 1.5 s |",
        "**Added** (4)",
        "- `modules/wishlist/package.json`",
        "**Modified** (1)",
        "- `modules/cart/src/server/routes.js`",
        "**Removed** (1)",
        "- `modules/cart/test/routes.test.js`",
        "| @shop/wishlist | `5f1d0c3b9e2a4c7d8e6f` |",
        &format!("Kiln session `{}`", fx.id),
    ] {
        assert!(body.contains(needle), "{needle:?} missing from the body:\n{body}");
    }
    let reviewers = github.requests_to("POST", "/repos/acme/shop/pulls/1/requested_reviewers");
    assert_eq!(reviewers.len(), 1);
    assert_eq!(reviewers[0].body["reviewers"], serde_json::json!(["alice"]));
    assert_eq!(reviewers[0].body["team_reviewers"], serde_json::json!(["web"]));
    assert_eq!(github.requests_to("GET", "/repos/acme/shop").len(), 1, "auto mode asks for permissions first");

    // The worktree is gone; the branch is kept on success.
    let list = sh_git(&fx.host, &["worktree", "list", "--porcelain"]);
    assert_eq!(list.matches("worktree ").count(), 1, "{list}");
    assert!(!fx.worktree().exists());
    assert_eq!(rev(&fx.host, &format!("refs/heads/{}", fx.branch())), Some(sha.clone()));

    // The second delivery: a changed file, the same branch (replaced) and the same PR.
    write(&fx.session.join("modules/wishlist/src/client/screen.js"), "export const screen = 'wishlist v2';\n");
    let sink2 = Sink::default();
    let mut input = fx.input(&github.base_url());
    input.body.what_changed = "Second round: the wishlist screen says v2.".into();
    let view2 = git_pr::deliver(input, &sink2).await.unwrap_or_else(|e| panic!("{e:?}\n{}", sink2.all_text()));
    assert_eq!(
        (view2.via.as_str(), view2.created, view2.number, view2.branch.as_str()),
        ("api", false, Some(1), fx.branch().as_str())
    );
    assert!(sink2.output("push").contains("earlier delivery"), "{}", sink2.output("push"));
    let sha2 = fx.remote_sha(&fx.branch()).unwrap();
    assert_ne!(sha2, sha);
    assert_eq!(sh_git(&fx.remote, &["rev-parse", &format!("{sha2}^")]), main_before, "the branch is rebuilt on main");
    assert!(sh_git(&fx.remote, &["show", &format!("{sha2}:modules/wishlist/src/client/screen.js")]).contains("v2"));
    assert_eq!(github.requests_to("POST", "/repos/acme/shop/pulls").len(), 1, "no second pull request");
    let patched = github.requests_to("PATCH", "/repos/acme/shop/pulls/1");
    assert_eq!(patched.len(), 1);
    assert!(patched[0].body["body"].as_str().unwrap().contains("Second round"));
    let pulls = github.pulls("acme", "shop");
    assert_eq!(pulls.len(), 1);
    assert!(pulls[0]["body"].as_str().unwrap().contains("Second round"));

    // The token: only ever in Authorization, never in git, a step output or the answer.
    github.assert_token_only_in_authorization(&fx.token);
    fx.assert_token_never_in_git();
    let debug = format!("{:?}", fx.input(&github.base_url()));
    assert!(debug.contains("<set>"), "{debug}");
    for text in [sink.all_text(), sink2.all_text(), format!("{view:?} {view2:?}"), debug] {
        assert!(!text.contains(&fx.token), "{text}");
    }
}

// ---------------------------------------------------------------------------------------
// The guardrail

#[tokio::test]
async fn the_guardrail_stops_before_any_commit() {
    let fx = fixture();
    let github = double(&fx);
    let before = fx.remote_branches();

    // A file outside the session's modules.
    let mut input = fx.input(&github.base_url());
    input.files.push(("shell/app.js".into(), Some(fx.session.join("shell/app.js"))));
    let sink = Sink::default();
    let err = git_pr::deliver(input, &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DeliveryBlocked, "{err:?}");
    assert!(err.message.contains("shell/app.js"), "{}", err.message);
    let out = sink.output("guardrail");
    assert!(out.contains("shell/app.js (NOT ALLOWED)"), "{out}");
    assert!(sink.ends().contains(&pair("guardrail", "fail")));
    assert!(!sink.started().iter().any(|s| s == "commit" || s == "push"), "{:?}", sink.started());
    assert_eq!(sink.ends().last(), Some(&pair("cleanup", "pass")), "{}", sink.all_text());
    assert_eq!(fx.remote_branches(), before, "the remote is unchanged");
    fx.assert_nothing_left();
    // No commit was made anywhere: the host has no object reachable from a Kiln commit.
    assert!(!sh_git(&fx.host, &["log", "--all", "--format=%s"]).contains("kiln:"));

    // Too many files.
    let mut input = fx.input(&github.base_url());
    input.max_changed_files = 3;
    let sink = Sink::default();
    let err = git_pr::deliver(input, &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DeliveryBlocked);
    assert!(err.message.contains("more than max_changed_files = 3"), "{}", err.message);
    assert!(!sink.started().contains(&"commit".to_string()));

    // Too many new dependencies.
    let mut input = fx.input(&github.base_url());
    input.new_dependencies = vec!["a".into(), "b".into(), "c".into(), "d".into()];
    let sink = Sink::default();
    let err = git_pr::deliver(input, &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DeliveryBlocked);
    assert!(
        err.message.contains("4 new dependencies (a, b, c, d), more than max_new_dependencies = 3"),
        "{}",
        err.message
    );

    assert_eq!(fx.remote_branches(), before);
    fx.assert_nothing_left();
    assert!(github.requests_to("POST", "/repos/acme/shop/pulls").is_empty());
}

// ---------------------------------------------------------------------------------------
// The commit message, and the root files of the direct workflow

#[tokio::test]
async fn the_commit_carries_the_title_and_brief_in_the_repositorys_style_and_root_files_land() {
    let fx = fixture();
    let github = double(&fx);
    let main_before = fx.remote_sha("main").unwrap();
    write(&fx.session.join("CHANGELOG.md"), "- a wishlist\n");
    let input = || {
        let mut input = fx.input(&github.base_url());
        input.title = Some("Add a wishlist".into());
        input.brief = Some("Let shoppers keep products for later.\n\nThe cart shows v2 too.".into());
        // Direct workflow: a root file the session changed is allowed as it is.
        input.files.push(("CHANGELOG.md".into(), Some(fx.session.join("CHANGELOG.md"))));
        input.root_files = vec!["CHANGELOG.md".into()];
        input
    };

    // A plain history (`the shop`): the title as the subject, the brief in the body.
    let sink = Sink::default();
    git_pr::deliver(input(), &sink).await.unwrap_or_else(|e| panic!("{e:?}\n{}", sink.all_text()));
    let sha = fx.remote_sha(&fx.branch()).expect("the branch was pushed");
    let message = sh_git(&fx.remote, &["log", "-1", "--format=%B", &sha]);
    assert!(
        message.starts_with("Add a wishlist\n\nLet shoppers keep products for later.\n\nThe cart shows v2 too.\n\nDelivered by Kiln from session "),
        "{message}"
    );
    assert!(message.contains("Gates: 3 passed, 0 failed, 1 skipped"), "{message}");
    assert!(message.trim_end().ends_with(&format!("Kiln-Session: {}", fx.id)), "{message}");
    assert!(
        sink.output("guardrail").contains("CHANGELOG.md (outside the modules, changed by the session)"),
        "{}",
        sink.output("guardrail")
    );
    let files = sh_git(&fx.remote, &["diff", "--name-status", &main_before, &sha]);
    assert!(files.lines().any(|l| l == "A\tCHANGELOG.md"), "{files}");
    assert!(!files.contains("shell/app.js"), "only the root files the session named: {files}");
    let created = github.requests_to("POST", "/repos/acme/shop/pulls");
    assert_eq!(created[0].body["title"], "Add a wishlist");
    assert!(sink.all_text().contains("Commit \"Add a wishlist\""), "{}", sink.all_text());

    // Someone lands conventional commits on main: the next delivery speaks that way, scoped
    // by the first module's directory (the history's scopes name none of the session's).
    let seed = fx.root.join("seed");
    sh_git(&seed, &["pull", "--quiet", "origin", "main"]);
    for (file, subject) in [
        ("shell/a.txt", "fix(shell): keep the header"),
        ("shell/b.txt", "feat(catalog): show ratings"),
        ("shell/c.txt", "chore: tidy"),
    ] {
        write(&seed.join(file), subject);
        sh_git(&seed, &["add", "-A"]);
        sh_git(&seed, &["commit", "--quiet", "-m", subject]);
    }
    sh_git(&seed, &["push", "--quiet", "origin", "main"]);
    let sink = Sink::default();
    git_pr::deliver(input(), &sink).await.unwrap_or_else(|e| panic!("{e:?}\n{}", sink.all_text()));
    let sha = fx.remote_sha(&fx.branch()).unwrap();
    let message = sh_git(&fx.remote, &["log", "-1", "--format=%B", &sha]);
    assert!(
        message.starts_with("feat(wishlist): add a wishlist\n\nLet shoppers keep products for later.\n"),
        "{message}"
    );
    let patched = github.requests_to("PATCH", "/repos/acme/shop/pulls/1");
    assert_eq!(patched[0].body["title"], "feat(wishlist): add a wishlist");

    // A fault in the brief makes it a fix.
    let mut fix = input();
    fix.brief = Some("The wishlist is broken on an empty cart.".into());
    let sink = Sink::default();
    git_pr::deliver(fix, &sink).await.unwrap_or_else(|e| panic!("{e:?}\n{}", sink.all_text()));
    let message = sh_git(&fx.remote, &["log", "-1", "--format=%s", &fx.remote_sha(&fx.branch()).unwrap()]);
    assert_eq!(message, "fix(wishlist): add a wishlist");
    fx.assert_token_never_in_git();
}

#[tokio::test]
async fn a_failing_install_stops_there_and_leaves_nothing() {
    let fx = fixture();
    let github = double(&fx);
    let mut input = fx.input(&github.base_url());
    input.install = Some("echo npm ERR! no such package >&2; exit 3".into());
    let sink = Sink::default();
    let err = git_pr::deliver(input, &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DeliveryBlocked);
    assert!(sink.output("install").contains("npm ERR! no such package"), "{}", sink.all_text());
    assert!(err.message.contains("exit 3"), "{}", err.message);
    assert!(!sink.started().contains(&"guardrail".to_string()));
    assert_eq!(fx.remote_sha(&fx.branch()), None);
    fx.assert_nothing_left();
}

// ---------------------------------------------------------------------------------------
// Failures after the push, and branches that are not the session's

#[tokio::test]
async fn an_api_error_creating_the_pull_request_removes_the_newly_pushed_branch() {
    let fx = fixture();
    let github = double(&fx);
    github.fail_next_create(Fault::ServerError);
    let sink = Sink::default();
    let err = git_pr::deliver(fx.input(&github.base_url()), &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::TargetUnavailable, "{err:?}");
    assert!(err.message.contains("500"), "{}", err.message);
    assert!(sink.ends().contains(&pair("push", "pass")), "{}", sink.all_text());
    assert!(sink.ends().contains(&pair("pull-request", "fail")));
    assert!(sink.output("pull-request").contains("removed the branch"), "{}", sink.output("pull-request"));
    assert_eq!(github.requests_to("POST", "/repos/acme/shop/pulls")[0].status, 500);
    assert_eq!(fx.remote_sha(&fx.branch()), None, "the pushed branch is deleted again");
    assert_eq!(fx.remote_branches(), "refs/heads/main");
    fx.assert_nothing_left();
    github.assert_token_only_in_authorization(&fx.token);
    assert!(!sink.all_text().contains(&fx.token));

    // And it can be retried.
    let sink = Sink::default();
    let view = git_pr::deliver(fx.input(&github.base_url()), &sink)
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", sink.all_text()));
    assert!(view.created);
    assert!(fx.remote_sha(&fx.branch()).is_some());
}

#[tokio::test]
async fn a_branch_that_is_not_the_sessions_is_never_overwritten() {
    let fx = fixture();
    let github = double(&fx);
    // Someone else already has a branch by that name.
    let other = fx.root.join("other");
    sh_git(&fx.root, &["clone", "--quiet", fx.remote.to_str().unwrap(), other.to_str().unwrap()]);
    sh_git(&other, &["checkout", "--quiet", "-b", &fx.branch()]);
    write(&other.join("modules/wishlist/theirs.txt"), "their work\n");
    sh_git(&other, &["add", "-A"]);
    sh_git(&other, &["commit", "--quiet", "-m", "their wishlist"]);
    sh_git(&other, &["push", "--quiet", "origin", &fx.branch()]);
    let theirs = fx.remote_sha(&fx.branch()).unwrap();

    let sink = Sink::default();
    let err = git_pr::deliver(fx.input(&github.base_url()), &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::BranchMoved, "{err:?}");
    assert!(err.message.contains("not made by this session"), "{}", err.message);
    assert!(sink.ends().contains(&pair("push", "fail")));
    assert_eq!(fx.remote_sha(&fx.branch()), Some(theirs), "their branch is untouched");
    assert!(github.requests_to("POST", "/repos/acme/shop/pulls").is_empty());
    fx.assert_nothing_left();
}

// ---------------------------------------------------------------------------------------
// Bad remotes and bases

#[tokio::test]
async fn a_missing_base_or_remote_stops_at_fetch() {
    let fx = fixture();
    let github = double(&fx);

    let mut input = fx.input(&github.base_url());
    input.settings.base = "release".into();
    let sink = Sink::default();
    let err = git_pr::deliver(input, &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::TargetUnavailable, "{err:?}");
    assert!(err.message.contains("has no branch 'release'"), "{}", err.message);
    assert!(sink.output("fetch").contains("fetch --no-tags -- origin +refs/heads/release"), "{}", sink.output("fetch"));
    assert_eq!(sink.started(), vec!["access", "fetch", "cleanup"]);
    fx.assert_nothing_left();

    let mut input = fx.input(&github.base_url());
    input.settings.remote = "upstream".into();
    let sink = Sink::default();
    let err = git_pr::deliver(input, &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::TargetUnavailable, "{err:?}");
    assert!(err.message.contains("upstream"), "{}", err.message);
    assert!(sink.ends().contains(&pair("fetch", "fail")));
    assert!(sink.output("fetch").contains("upstream"), "{}", sink.output("fetch"));
    assert_eq!(sink.started(), vec!["access", "fetch", "cleanup"]);
    fx.assert_nothing_left();
    assert_eq!(fx.remote_branches(), "refs/heads/main");
    fx.assert_token_never_in_git();
}

// ---------------------------------------------------------------------------------------
// Push modes, the compare link, availability

#[tokio::test]
async fn push_modes_and_the_compare_link() {
    let fx = fixture();
    let github = double(&fx);

    // fork: not built; said so before anything runs.
    let mut input = fx.input(&github.base_url());
    input.settings.push_mode = "fork".into();
    let sink = Sink::default();
    let err = git_pr::deliver(input, &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::TargetUnavailable);
    assert!(err.message.contains("fork mode needs the operator's confirmation"), "{}", err.message);
    assert_eq!(sink.started(), vec!["access", "cleanup"]);

    // auto with a token that may not push: refused before any fetch.
    github.set_read_only("acme", "shop");
    let sink = Sink::default();
    let err = git_pr::deliver(fx.input(&github.base_url()), &sink).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::TargetUnavailable);
    assert!(err.message.contains("may not push to acme/shop"), "{}", err.message);
    assert!(!sink.started().contains(&"fetch".to_string()));
    assert_eq!(fx.remote_branches(), "refs/heads/main");

    // No token and no gh: pushed with the user's own git access, and a compare link.
    let mut input = fx.input(&github.base_url());
    input.token = None;
    let before = github.requests().len();
    let sink = Sink::default();
    let view = git_pr::deliver(input, &sink).await.unwrap_or_else(|e| panic!("{e:?}\n{}", sink.all_text()));
    assert_eq!(view.via, "compare");
    assert_eq!(view.url, format!("https://github.com/acme/shop/compare/main...{}", fx.branch()));
    assert_eq!(view.number, None);
    assert!(fx.remote_sha(&fx.branch()).is_some());
    assert_eq!(github.requests().len(), before, "no API call without a token");
    fx.assert_token_never_in_git();
}

#[tokio::test]
async fn a_signed_in_gh_opens_the_pull_request_without_a_token() {
    let fx = fixture();
    let github = double(&fx);
    // A stand-in gh: signed in, no open pull request, creates one; records its argv and env.
    let gh = fx.root.join("bin/gh");
    let log = fx.root.join("gh.log");
    write(
        &gh,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\nenv >> '{log}'\ncase \"$1 $2\" in\n  'auth status') exit 0;;\n  'pr list') echo '[]';;\n  'pr create') cat > '{log}.body'; echo https://github.com/acme/shop/pull/7;;\nesac\n",
            log = log.display()
        ),
    );
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut input = fx.input(&github.base_url());
    input.token = None;
    input.gh_program = Some(gh);
    let sink = Sink::default();
    let view = git_pr::deliver(input, &sink).await.unwrap_or_else(|e| panic!("{e:?}\n{}", sink.all_text()));
    assert_eq!((view.via.as_str(), view.number, view.created), ("gh", Some(7), true));
    assert_eq!(view.url, "https://github.com/acme/shop/pull/7");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains(&format!("pr create --repo acme/shop --head {} --base main", fx.branch())), "{logged}");
    assert!(logged.contains("--reviewer alice,acme/web"), "{logged}");
    assert!(logged.contains("GH_PROMPT_DISABLED=1"), "{logged}");
    let body = std::fs::read_to_string(fx.root.join("gh.log.body")).unwrap();
    assert!(body.contains(&format!("Kiln session `{}`", fx.id)), "{body}");
}

#[tokio::test]
async fn availability_says_why_not() {
    let fx = fixture();
    let settings = fx.settings("https://api.github.com");
    assert_eq!(git_pr::available(Some(&fx.host), &settings), Ok(()));
    assert!(git_pr::available(None, &settings).unwrap_err().contains("not inside a git repository"));
    let plain = fx.root.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    assert!(git_pr::available(Some(&plain), &settings).unwrap_err().contains("not inside a git repository"));
    let mut other = settings.clone();
    other.remote = "upstream".into();
    assert!(git_pr::available(Some(&fx.host), &other).unwrap_err().contains("no remote 'upstream'"));
    let mut fork = settings.clone();
    fork.push_mode = "fork".into();
    assert!(git_pr::available(Some(&fx.host), &fork).unwrap_err().contains("fork"));
    let mut unnamed = settings.clone();
    unnamed.repository = None;
    assert!(
        git_pr::available(Some(&fx.host), &unnamed).unwrap_err().contains("owner/name"),
        "a path remote names no repository"
    );
}
