//! Roles, the handoff line and routing (ARCHITECTURE.md: Workflows and the chain).

use kiln_engine::testing::config::Workflow;
use kiln_engine::testing::handoff::{self, Target};
use kiln_engine::testing::roles::{self, Role, Scope, BUNDLED};
use kiln_engine::testing::routing::{route, ModuleState, Route};

#[test]
fn bundled_roles_are_exactly_their_source_documents() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("roles");
    let mut on_disk: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read_to_string(e.path()).unwrap()))
        .collect();
    on_disk.sort();
    let bundled: Vec<(String, String)> = BUNDLED.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
    assert_eq!(bundled, on_disk, "roles/ and roles::BUNDLED differ: list every document in BUNDLED");
}

#[test]
fn defaults_parse_and_hand_off_only_to_known_roles() {
    let tmp = tempfile::tempdir().unwrap();
    let roles = roles::load(tmp.path(), Workflow::Specs).unwrap();
    let ids: Vec<&str> = roles.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["agentic-engineer", "backend-engineer", "business-manager", "frontend-engineer", "ux-designer"]);
    // The direct workflow has one bundled role, which may change the whole working copy.
    let direct = roles::load(tmp.path(), Workflow::Direct).unwrap();
    assert_eq!(direct.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["engineer"]);
    assert_eq!(
        (direct[0].scope, direct[0].allowed_paths.clone(), direct[0].handoff.len()),
        (Scope::Repository, vec!["**".to_string()], 0)
    );
    let bm = roles::find(&roles, "Business Manager").unwrap();
    assert_eq!(bm.allowed_paths, ["SPEC.md", "docs/**"]);
    assert!(bm.instruction.contains("specification"));
    assert!(!bm.read_only);
}

#[test]
fn a_workspace_document_overrides_a_default_and_bad_ones_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kiln/roles");
    std::fs::create_dir_all(&dir).unwrap();
    let custom = "---\nid: frontend-engineer\nname: Screen Builder\nallowed_paths: [web/**]\nhandoff: [backend-engineer]\ngates: [tests]\nread_only: false\n---\nBuild screens in web/.\n";
    std::fs::write(dir.join("frontend-engineer.md"), custom).unwrap();
    let roles = roles::load(tmp.path(), Workflow::Specs).unwrap();
    let fe = roles::find(&roles, "frontend-engineer").unwrap();
    assert_eq!((fe.name.as_str(), fe.allowed_paths.clone()), ("Screen Builder", vec!["web/**".to_string()]));
    assert_eq!(roles.len(), 5);
    // A workspace's own roles take part in the direct workflow too, beside the engineer.
    let direct = roles::load(tmp.path(), Workflow::Direct).unwrap();
    assert_eq!(direct.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["engineer", "frontend-engineer"]);

    for (bad, needle) in [
        (custom.replace("gates:", "gatez:"), "gatez"),
        (custom.replace("read_only: false", "read_only: maybe"), "read_only"),
        (custom.replace("handoff: [backend-engineer]", "handoff: [ghost]"), "ghost"),
        (custom.replace("handoff: [backend-engineer]", "handoff: [frontend-engineer]"), "itself"),
        (custom.replacen("---\n", "", 1), "front matter"),
        (custom.replace("gates: [tests]", "gates: [tests]\nscope: galaxy"), "scope"),
    ] {
        std::fs::write(dir.join("frontend-engineer.md"), &bad).unwrap();
        let err = roles::load(tmp.path(), Workflow::Specs).unwrap_err();
        assert_eq!(err.code, kiln_engine::ErrorCode::ConfigInvalid);
        assert!(err.message.contains(needle), "{needle}: {}", err.message);
    }
}

fn defaults() -> Vec<Role> {
    roles::load(tempfile::tempdir().unwrap().path(), Workflow::Specs).unwrap()
}

#[test]
fn handoff_lines_are_parsed_forgivingly() {
    let roles = defaults();
    let role = |id: &str| Target::Role(id.to_string());
    let table: Vec<(&str, Option<(Target, &str)>)> = vec![
        ("Done.\nHANDOFF: frontend-engineer - the API is ready", Some((role("frontend-engineer"), "the API is ready"))),
        ("HANDOFF: Frontend Engineer - build the screen.", Some((role("frontend-engineer"), "build the screen"))),
        ("handoff: backend-engineer — needs an endpoint", Some((role("backend-engineer"), "needs an endpoint"))),
        ("**HANDOFF:** none - request satisfied.", Some((Target::None, "request satisfied"))),
        ("HANDOFF: none", Some((Target::None, ""))),
        ("HANDOFF: UX Designer: the flow is unclear", Some((role("ux-designer"), "the flow is unclear"))),
        ("HANDOFF: qa-engineer - please test", Some((Target::Unknown("qa-engineer".into()), "please test"))),
        ("HANDOFF: frontend-engineer.", Some((role("frontend-engineer"), ""))),
        // The last handoff line wins; text without one has none.
        ("HANDOFF: none - x\nthen\nHANDOFF: business-manager - y", Some((role("business-manager"), "y"))),
        ("I changed the handoff logic in the server.", None),
        ("no line at all", None),
    ];
    for (text, expected) in table {
        let got = handoff::parse(text, &roles).map(|h| (h.target, h.reason));
        let expected = expected.map(|(t, r)| (t, r.to_string()));
        assert_eq!(got, expected, "{text:?}");
    }
}

#[test]
fn routing_follows_module_state_then_words() {
    let all = ["business-manager", "ux-designer", "frontend-engineer", "backend-engineer", "agentic-engineer"];
    let ready = ModuleState { has_spec: true, spec_approved: true, has_server: true, has_screen: true };
    let role_of = |state: &ModuleState, request: &str| match route(state, request, &all) {
        Route::Role { role, reason } => {
            assert!(!reason.is_empty());
            role
        }
        Route::AwaitApproval { .. } => "approval".into(),
    };
    assert_eq!(role_of(&ModuleState::default(), "add an API"), "business-manager");
    assert_eq!(role_of(&ModuleState { has_spec: true, ..Default::default() }, "add an API"), "approval");
    assert_eq!(
        role_of(&ModuleState { has_spec: true, spec_approved: true, ..Default::default() }, "a button"),
        "backend-engineer"
    );
    assert_eq!(role_of(&ModuleState { has_screen: false, ..ready.clone() }, "an endpoint"), "frontend-engineer");
    assert_eq!(role_of(&ready, "Add an endpoint that lists orders"), "backend-engineer");
    assert_eq!(role_of(&ready, "Move the button to the left"), "frontend-engineer");
    assert_eq!(role_of(&ready, "Rework the checkout flow"), "ux-designer");
    assert_eq!(role_of(&ready, "Tighten the spec's acceptance rules"), "business-manager");
    assert_eq!(role_of(&ready, "Make it nicer"), "frontend-engineer");
}

#[test]
fn module_state_is_read_from_the_working_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let globs = |g: &str| vec![g.to_string()];
    let state = || ModuleState::read(dir, "SPEC.md", &globs("src/server/**"), &globs("src/client/**"), false);
    assert_eq!(state(), ModuleState::default());
    std::fs::write(dir.join("SPEC.md"), "---\nstatus: draft\n---\n").unwrap();
    std::fs::create_dir_all(dir.join("src/server")).unwrap();
    std::fs::write(dir.join("src/server/routes.js"), "").unwrap();
    assert_eq!(state(), ModuleState { has_spec: true, spec_approved: false, has_server: true, has_screen: false });
}
