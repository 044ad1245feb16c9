//! Kiln's own environment, out of reach of the commands it runs. A scoped command gets
//! a cleared environment (`super::Scope`), but the kernel still shows any process's
//! starting environment as `/proc/<pid>/environ`, and Landlock does not stop a confined
//! command reading Kiln's there (it does stop `mem`, `cwd` and `exe`). So at start Kiln
//! moves its environment to memory of its own and blanks the block the kernel shows:
//! Kiln and the programs it starts see the same variables as before, and
//! `/proc/<pid>/environ` reads as zeros.

use std::ffi::{CStr, CString};

extern "C" {
    static mut environ: *mut *mut libc::c_char;
}

/// Copies the environment to the heap and zeroes the original block.
///
/// # Safety
/// Call first thing in `main`, before any thread starts and before anything holds a
/// pointer returned by `getenv`: the variables are set again one by one.
pub unsafe fn conceal() {
    // SAFETY (for the whole body): single-threaded by the contract above; `environ` is
    // the C library's, a null-terminated array of NUL-terminated strings.
    unsafe {
        let mut originals: Vec<(*mut libc::c_char, usize)> = Vec::new();
        let mut vars: Vec<(CString, CString)> = Vec::new();
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let text = CStr::from_ptr(*entry);
            let bytes = text.to_bytes();
            originals.push((*entry, bytes.len()));
            if let Some(eq) = bytes.iter().position(|&b| b == b'=').filter(|&i| i > 0) {
                if let (Ok(name), Ok(value)) = (CString::new(&bytes[..eq]), CString::new(&bytes[eq + 1..])) {
                    vars.push((name, value));
                }
            }
            entry = entry.add(1);
        }
        if libc::clearenv() != 0 {
            return;
        }
        for (name, value) in &vars {
            libc::setenv(name.as_ptr(), value.as_ptr(), 1);
        }
        // The originals are referenced by nothing now (setenv copied each one).
        for (text, len) in originals {
            std::ptr::write_bytes(text, 0, len);
        }
    }
}
