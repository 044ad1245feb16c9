//! Build script: lets tauri-build embed the UI and the capabilities that live under src-tauri/.
fn main() {
    // The UI is embedded when `generate_context!` expands: rebuild when it is rebuilt.
    println!("cargo:rerun-if-changed=ui/dist");
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .capabilities_path_pattern("./src-tauri/capabilities/**/*"),
    )
    .expect("tauri-build failed");
}
