//! Build script: lets tauri-build embed the page under dist/ and read tauri.conf.json.
fn main() {
    tauri_build::build()
}
