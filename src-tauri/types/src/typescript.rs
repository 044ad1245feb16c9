//! The UI's `ui/src/api/types.ts`, generated: the declaration of every type the API carries,
//! found by walking ts-rs's dependencies from each operation's arguments and result, the event
//! and the error (so a new type needs no list), then the `CommandMap` of the operation table.

use std::any::TypeId;
use std::collections::{BTreeMap, HashSet};

use ts_rs::{Config, TypeVisitor, TS};

use super::*;

pub const TYPES_HEADER: &str = "// Generated from Kiln's Rust types by ts-rs (see src-tauri/types/src/typescript.rs).\n// Do not edit by hand: `KILN_UPDATE_TYPES=1 cargo test -p kiln-types` rewrites it.\n";

/// Collects the declaration of every declarable type it is shown, and of their dependencies.
struct Declarations<'a> {
    cfg: &'a Config,
    seen: HashSet<TypeId>,
    /// By name, so the file's order does not depend on the walk's.
    decls: BTreeMap<String, String>,
}

impl TypeVisitor for Declarations<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Built-ins and wrappers (`Vec`, `Option`, maps) have no declaration of their own;
        // their parameters do.
        if T::output_path().is_some() {
            if !self.seen.insert(TypeId::of::<T>()) {
                return;
            }
            self.decls.insert(T::ident(self.cfg), T::decl(self.cfg));
        }
        T::visit_dependencies(self);
        T::visit_generics(self);
    }
}

macro_rules! operation_types {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident($args:ty) -> $ret:ty $({ $($policy:tt)* })? $(=> $($function:ident)::+)?;
    )*) => {
        fn visit_operations(declarations: &mut Declarations) {
            $(
                declarations.visit::<$args>();
                declarations.visit::<$ret>();
            )*
        }

        fn command_map(cfg: &Config) -> String {
            let mut out = String::new();
            $(
                out.push_str(&command_entry(
                    &[$($doc),*],
                    stringify!($name),
                    &<$args as TS>::name(cfg),
                    &<$ret as TS>::name(cfg),
                ));
            )*
            out
        }
    };
}
crate::for_each_operation!(operation_types);

/// One line of the `CommandMap`, under the operation's documentation.
fn command_entry(doc: &[&str], name: &str, args: &str, result: &str) -> String {
    let lines: Vec<&str> = doc.iter().map(|line| line.strip_prefix(' ').unwrap_or(line)).collect();
    let comment = match lines.as_slice() {
        [] => String::new(),
        [line] => format!("  /** {line} */\n"),
        lines => format!("  /**\n{}   */\n", lines.iter().map(|l| format!("   * {l}\n")).collect::<String>()),
    };
    format!("{comment}  {name}: {{ args: {args}; result: {result} }};\n")
}

/// The content of `ui/src/api/types.ts`.
pub fn typescript() -> String {
    // Every integer the API carries (entry ids, sequences, sizes) fits a JS number.
    let cfg = Config::new().with_large_int("number");
    let mut declarations = Declarations { cfg: &cfg, seen: HashSet::new(), decls: BTreeMap::new() };
    visit_operations(&mut declarations);
    declarations.visit::<KilnEvent>();
    declarations.visit::<ApiError>();
    declarations.visit::<TerminalChunk>();
    let mut out = String::from(TYPES_HEADER);
    for decl in declarations.decls.values() {
        out.push('\n');
        out.push_str("export ");
        out.push_str(decl);
        out.push('\n');
    }
    out.push_str(
        "\n/** Every operation of the API, from its table (src-tauri/types/src/operations.rs): its \
         arguments and its result. */\nexport interface CommandMap {\n",
    );
    out.push_str(&command_map(&cfg));
    out.push_str("}\n");
    out
}
