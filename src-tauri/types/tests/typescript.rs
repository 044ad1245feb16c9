//! The UI's TypeScript types are generated from the vocabulary's Rust types; this fails
//! when the committed `ui/src/api/types.ts` drifts. `KILN_UPDATE_TYPES=1` rewrites it.

#[test]
fn committed_typescript_types_match_the_rust_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/api/types.ts");
    let generated = kiln_types::typescript();
    if std::env::var_os("KILN_UPDATE_TYPES").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "ui/src/api/types.ts is out of date with the Rust types; run `KILN_UPDATE_TYPES=1 cargo test -p kiln-types`"
    );
}

#[test]
fn error_codes_spell_the_same_on_the_wire() {
    use kiln_types::ErrorCode::*;
    for code in [
        InvalidInput,
        InvalidSessionId,
        WorkspaceNotFound,
        WorkspaceNotOpen,
        ConfigInvalid,
        ModuleNotFound,
        ModuleRequired,
        ModuleAlreadyInSession,
        SessionNotFound,
        SessionDeleted,
        SessionRunning,
        SessionArchived,
        SessionDelivered,
        SessionNotArchived,
        UnknownCommand,
        Internal,
        AttachmentLimit,
        AttachmentTooLarge,
        AttachmentType,
        AttachmentEmpty,
        AttachmentMismatch,
        DriverNotFound,
        DriverFailed,
        SpecMissing,
        AttachmentNotFound,
        CheckpointNotFound,
        NotAllowedInMode,
        PathNotAllowed,
        SecretUnreadable,
        PreviewNotConfigured,
        DeliveryBlocked,
        DeliveryConflict,
        PlanStale,
        TargetUnavailable,
        BranchMoved,
        ConfigExists,
        ToolchainMissing,
        WorkspaceInUse,
        ModuleUnknown,
        NotBlocked,
    ] {
        assert_eq!(serde_json::to_value(code).unwrap(), serde_json::Value::String(code.as_str().into()));
    }
}
