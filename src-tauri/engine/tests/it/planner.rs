//! The planner's rules, table-driven (ARCHITECTURE.md: Planner).

use kiln_engine::testing::modules::{ModuleInfo, Toolchain};
use kiln_engine::testing::planner::Rules;
use kiln_engine::types::ModuleChange;
use kiln_engine::ErrorCode;
use regex::Regex;

fn module(id: &str, directory: &str) -> ModuleInfo {
    ModuleInfo { id: id.into(), directory: directory.into(), toolchain: Toolchain::Node, spec_status: None }
}

fn workspace() -> Vec<ModuleInfo> {
    vec![
        module("@shop/cart", "modules/cart"),
        module("@shop/catalog", "modules/catalog"),
        module("parties.core", "modules/parties"),
        module("orders", "modules/orders"),
    ]
}

#[test]
fn rules_select_by_whole_id_and_directory_in_brief_order() {
    let modules = workspace();
    let pattern = Regex::new(r"^([a-z][a-z0-9-]*\.core|@shop/[a-z][a-z0-9-]*)$").unwrap();
    let globs = vec!["modules/*".to_string()];
    let rules = Rules { modules: &modules, id_pattern: Some(&pattern), globs: &globs };
    // (brief, expected [(id, kind, directory)])
    type Expected<'a> = Vec<(&'a str, ModuleChange, &'a str)>;
    let table: Vec<(&str, Expected)> = vec![
        ("Add coupons to @shop/cart", vec![("@shop/cart", ModuleChange::Edit, "modules/cart")]),
        ("Fix the date picker in parties.core.", vec![("parties.core", ModuleChange::Edit, "modules/parties")]),
        ("Rework module modules/orders so totals round", vec![("orders", ModuleChange::Edit, "modules/orders")]),
        ("Tidy module `modules/cart/` please", vec![("@shop/cart", ModuleChange::Edit, "modules/cart")]),
        (
            "Use @shop/catalog prices in @shop/cart",
            vec![
                ("@shop/catalog", ModuleChange::Edit, "modules/catalog"),
                ("@shop/cart", ModuleChange::Edit, "modules/cart"),
            ],
        ),
        (
            "In @shop/cart, then parties.core, then @shop/catalog",
            vec![
                ("@shop/cart", ModuleChange::Edit, "modules/cart"),
                ("parties.core", ModuleChange::Edit, "modules/parties"),
                ("@shop/catalog", ModuleChange::Edit, "modules/catalog"),
            ],
        ),
        // `module <id>` works as well as `module <directory>`.
        ("Add a wishlist to module @shop/catalog", vec![("@shop/catalog", ModuleChange::Edit, "modules/catalog")]),
        (
            "Fix module parties.core and module modules/cart",
            vec![
                ("parties.core", ModuleChange::Edit, "modules/parties"),
                ("@shop/cart", ModuleChange::Edit, "modules/cart"),
            ],
        ),
        // Named twice: once, at its first place.
        ("@shop/cart badge; also @shop/cart totals", vec![("@shop/cart", ModuleChange::Edit, "modules/cart")]),
        // A bare English word never selects, even when a module's id is that word.
        (
            "Make the orders page faster in @shop/catalog",
            vec![("@shop/catalog", ModuleChange::Edit, "modules/catalog")],
        ),
        (
            "The cart and catalog should share prices; start in parties.core",
            vec![("parties.core", ModuleChange::Edit, "modules/parties")],
        ),
        // A file name never selects.
        ("Bump package.json in @shop/cart", vec![("@shop/cart", ModuleChange::Edit, "modules/cart")]),
        ("Update README.md and then parties.core", vec![("parties.core", ModuleChange::Edit, "modules/parties")]),
    ];
    for (brief, expected) in table {
        let got = rules.classify(brief).unwrap_or_else(|e| panic!("{brief:?}: {e}"));
        let got: Vec<(&str, ModuleChange, &str)> =
            got.iter().map(|s| (s.id.as_str(), s.kind, s.directory.as_str())).collect();
        assert_eq!(got, expected, "brief: {brief:?}");
    }
}

/// New modules (issue 15): an id by the pattern that names no module is never made one
/// silently; the operator confirms it (`createModules`), and then it is new.
#[test]
fn new_module_ids_are_unknown_until_confirmed() {
    let modules = workspace();
    let pattern = Regex::new(r"^([a-z][a-z0-9-]*\.core|@shop/[a-z][a-z0-9-]*)$").unwrap();
    let globs = vec!["modules/*".to_string()];
    let rules = Rules { modules: &modules, id_pattern: Some(&pattern), globs: &globs };
    for (brief, unknown) in [
        ("Create venues.core for booking rooms", "venues.core"),
        ("Add @shop/reviews and link it from @shop/catalog", "@shop/reviews"),
        ("Add a wishlist to module @shop/wishlist", "@shop/wishlist"),
    ] {
        let err = rules.classify(brief).unwrap_err();
        assert_eq!(err.code, ErrorCode::ModuleUnknown, "{brief:?}");
        assert!(err.message.starts_with(&format!("`{unknown}` is not a module of this workspace")), "{}", err.message);
        assert!(err.message.contains("`@shop/cart` (modules/cart)"), "the refusal lists the modules: {}", err.message);
    }
    let confirmed = |brief: &str, ids: &[&str]| {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        let got = rules.classify_with(brief, &ids).unwrap_or_else(|e| panic!("{brief:?}: {e}"));
        got.iter().map(|s| (s.id.clone(), s.kind, s.directory.clone())).collect::<Vec<_>>()
    };
    let own = |id: &str, kind, dir: &str| (id.to_string(), kind, dir.to_string());
    assert_eq!(
        confirmed("Create venues.core for booking rooms", &["venues.core"]),
        vec![own("venues.core", ModuleChange::New, "modules/venues")]
    );
    assert_eq!(
        confirmed("Add @shop/reviews and link it from @shop/catalog", &["@shop/reviews"]),
        vec![
            own("@shop/reviews", ModuleChange::New, "modules/reviews"),
            own("@shop/catalog", ModuleChange::Edit, "modules/catalog")
        ]
    );
    assert_eq!(
        confirmed("Add a wishlist to module @shop/wishlist", &["@shop/wishlist"]),
        vec![own("@shop/wishlist", ModuleChange::New, "modules/wishlist")]
    );
    // Two unknown ids are named together; confirming one leaves the other unknown.
    let err = rules.classify_with("Add @shop/a and @shop/b", &["@shop/a".into()]).unwrap_err();
    assert_eq!(err.code, ErrorCode::ModuleUnknown);
    assert!(err.message.starts_with("`@shop/b` is not a module"), "{}", err.message);
    // A confirmed id that cannot be a new module is refused as such.
    assert_eq!(
        rules.classify_with("Fix module modules/nope", &["modules/nope".into()]).unwrap_err().code,
        ErrorCode::InvalidInput
    );
}

#[test]
fn bare_words_and_file_names_alone_select_nothing() {
    let modules = workspace();
    let pattern = Regex::new(r"^[a-z][a-z0-9-]*\.core$").unwrap();
    let rules = Rules { modules: &modules, id_pattern: Some(&pattern), globs: &[] };
    for brief in
        ["Make the cart faster", "catalog should show prices", "orders", "fix package.json", "edit index.core.json"]
    {
        let err = rules.classify(brief).unwrap_err();
        assert_eq!(err.code, ErrorCode::ModuleRequired, "{brief:?}");
        assert!(err.message.contains("@shop/cart"), "the refusal lists the modules: {}", err.message);
    }
}

#[test]
fn an_unknown_module_directory_is_refused() {
    let modules = workspace();
    let rules = Rules { modules: &modules, id_pattern: None, globs: &[] };
    let err = rules.classify("Fix module modules/nope").unwrap_err();
    assert_eq!(err.code, ErrorCode::ModuleUnknown);
    assert!(err.message.starts_with("`modules/nope` is not a module of this workspace"), "{}", err.message);
    // "module" followed by an ordinary word, a number or a file name is just English.
    assert_eq!(rules.classify("The module that holds @shop/cart").unwrap()[0].id, "@shop/cart");
    assert_eq!(rules.classify("Chapter module 3 lives in @shop/cart").unwrap()[0].id, "@shop/cart");
    assert_eq!(rules.classify("The module index.ts of @shop/cart").unwrap()[0].id, "@shop/cart");
}

#[test]
fn without_a_pattern_unknown_ids_are_not_new_modules() {
    let modules = workspace();
    let rules = Rules { modules: &modules, id_pattern: None, globs: &[] };
    assert_eq!(rules.classify("Create venues.core").unwrap_err().code, ErrorCode::ModuleRequired);
}

#[test]
fn a_single_module_workspace_needs_no_naming() {
    let modules = vec![module("app", ".")];
    let rules = Rules { modules: &modules, id_pattern: None, globs: &[] };
    let got = rules.classify("Make it faster").unwrap();
    assert_eq!((got[0].id.as_str(), got[0].kind), ("app", ModuleChange::Edit));
}
