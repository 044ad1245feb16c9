//! A bare Tauri window showing a static page: what any Tauri app costs at idle, against which
//! tests/bench/memory.sh measures Kiln's desktop app.

fn main() {
    tauri::Builder::default().run(tauri::generate_context!()).expect("the bare window runs");
}
