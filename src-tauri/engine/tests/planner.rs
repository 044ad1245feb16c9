//! The planner's rules, table-driven (SPEC §5).

use kiln_engine::modules::{ModuleInfo, Toolchain};
use kiln_engine::planner::Rules;
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
    let table: Vec<(&str, Vec<(&str, ModuleChange, &str)>)> = vec![
        ("Add coupons to @shop/cart", vec![("@shop/cart", ModuleChange::Edit, "modules/cart")]),
        ("Fix the date picker in parties.core.", vec![("parties.core", ModuleChange::Edit, "modules/parties")]),
        ("Rework module modules/orders so totals round", vec![("orders", ModuleChange::Edit, "modules/orders")]),
        ("Tidy module `modules/cart/` please", vec![("@shop/cart", ModuleChange::Edit, "modules/cart")]),
        (
            "Use @shop/catalog prices in @shop/cart",
            vec![("@shop/catalog", ModuleChange::Edit, "modules/catalog"), ("@shop/cart", ModuleChange::Edit, "modules/cart")],
        ),
        (
            "In @shop/cart, then parties.core, then @shop/catalog",
            vec![
                ("@shop/cart", ModuleChange::Edit, "modules/cart"),
                ("parties.core", ModuleChange::Edit, "modules/parties"),
                ("@shop/catalog", ModuleChange::Edit, "modules/catalog"),
            ],
        ),
        ("Create venues.core for booking rooms", vec![("venues.core", ModuleChange::New, "modules/venues")]),
        (
            "Add @shop/reviews and link it from @shop/catalog",
            vec![("@shop/reviews", ModuleChange::New, "modules/reviews"), ("@shop/catalog", ModuleChange::Edit, "modules/catalog")],
        ),
        // Named twice: once, at its first place.
        ("@shop/cart badge; also @shop/cart totals", vec![("@shop/cart", ModuleChange::Edit, "modules/cart")]),
        // A bare English word never selects, even when a module's id is that word.
        ("Make the orders page faster in @shop/catalog", vec![("@shop/catalog", ModuleChange::Edit, "modules/catalog")]),
        ("The cart and catalog should share prices; start in parties.core", vec![("parties.core", ModuleChange::Edit, "modules/parties")]),
        // A file name never selects.
        ("Bump package.json in @shop/cart", vec![("@shop/cart", ModuleChange::Edit, "modules/cart")]),
        ("Update README.md and then parties.core", vec![("parties.core", ModuleChange::Edit, "modules/parties")]),
    ];
    for (brief, expected) in table {
        let got = rules.classify(brief).unwrap_or_else(|e| panic!("{brief:?}: {e}"));
        let got: Vec<(&str, ModuleChange, &str)> = got.iter().map(|s| (s.id.as_str(), s.kind, s.directory.as_str())).collect();
        assert_eq!(got, expected, "brief: {brief:?}");
    }
}

#[test]
fn bare_words_and_file_names_alone_select_nothing() {
    let modules = workspace();
    let pattern = Regex::new(r"^[a-z][a-z0-9-]*\.core$").unwrap();
    let rules = Rules { modules: &modules, id_pattern: Some(&pattern), globs: &[] };
    for brief in ["Make the cart faster", "catalog should show prices", "orders", "fix package.json", "edit index.core.json"] {
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
    assert_eq!(err.code, ErrorCode::ModuleNotFound);
    assert!(err.message.contains("modules/nope"));
    // "module" followed by an ordinary word is just English.
    assert_eq!(rules.classify("The module that holds @shop/cart").unwrap()[0].id, "@shop/cart");
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
