//! The attachment rules of ARCHITECTURE.md: Attachments: every refusal has its stable code, content must
//! match its extension, and names come out safe, short and unique.

use kiln_engine::testing::attachments::{check, safe_name, Kind, MAX_BYTES, MAX_NAME_CHARS, MAX_PER_SESSION};
use kiln_engine::ErrorCode;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
const JPEG: &[u8] = b"\xff\xd8\xff\xe0\0\x10JFIF";
const GIF: &[u8] = b"GIF89a\x01\0\x01\0";
const WEBP: &[u8] = b"RIFF\x24\0\0\0WEBPVP8 ";
const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n";

fn refused(name: &str, bytes: &[u8], existing: usize) -> ErrorCode {
    check(name, bytes, existing).unwrap_err().code
}

fn name(original: &str) -> String {
    safe_name(original, &[]).unwrap()
}

#[test]
fn accepts_each_type_by_its_content() {
    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg"/>"#;
    for (file, bytes, kind) in [
        ("a.png", PNG, Kind::Image),
        ("a.jpg", JPEG, Kind::Image),
        ("a.JPEG", JPEG, Kind::Image),
        ("a.gif", GIF, Kind::Image),
        ("a.webp", WEBP, Kind::Image),
        ("a.svg", svg.as_slice(), Kind::Image),
        ("a.pdf", PDF, Kind::File),
        ("a.md", "# Títle\n".as_bytes(), Kind::File),
        ("a.txt", b"plain", Kind::File),
        ("a.csv", b"a,b\n1,2\n", Kind::File),
        ("a.json", b"{\"a\": [1, 2]}", Kind::File),
        ("a.json", "\u{feff}[]".as_bytes(), Kind::File),
    ] {
        let checked = check(file, bytes, 0).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(checked.kind, kind, "{file}");
        assert_eq!(checked.extension, file.rsplit('.').next().unwrap().to_ascii_lowercase());
    }
    assert_eq!(serde_json::to_value(Kind::Image).unwrap(), "image");
    assert_eq!(serde_json::to_value(Kind::File).unwrap(), "file");
}

#[test]
fn at_most_ten_per_session() {
    assert!(check("a.png", PNG, MAX_PER_SESSION - 1).is_ok());
    assert_eq!(refused("a.png", PNG, MAX_PER_SESSION), ErrorCode::AttachmentLimit);
}

#[test]
fn at_most_five_megabytes() {
    let mut big = vec![b'a'; MAX_BYTES];
    assert_eq!(MAX_BYTES, 5 * 1024 * 1024);
    assert!(check("a.txt", &big, 0).is_ok());
    big.push(b'a');
    assert_eq!(refused("a.txt", &big, 0), ErrorCode::AttachmentTooLarge);
}

#[test]
fn only_listed_types() {
    for file in ["setup.exe", "a.PNG.exe", "noextension", ".png", "script.sh", "page.html", "a.svgz"] {
        assert_eq!(refused(file, PNG, 0), ErrorCode::AttachmentType, "{file}");
    }
}

#[test]
fn empty_is_refused() {
    assert_eq!(refused("a.txt", b"", 0), ErrorCode::AttachmentEmpty);
}

#[test]
fn content_must_match_the_extension() {
    for (file, bytes) in [
        ("photo.pdf", PNG),
        ("doc.png", PDF),
        ("photo.jpg", PNG),
        ("photo.gif", b"GIF88a...".as_slice()),
        ("photo.webp", b"RIFF\0\0\0\0WAVEfmt ".as_slice()),
        ("page.svg", b"<html><body><svg></svg></body></html>".as_slice()),
        ("page.svg", b"<svgfoo/>".as_slice()),
        ("page.svg", b"<!-- never closed <svg>".as_slice()),
        ("bad.svg", b"<!DOCTYPE svg [<!ENTITY x \"y\">]><svg/>".as_slice()),
        ("data.json", b"{not json".as_slice()),
        ("notes.md", b"\xff\xfe binary".as_slice()),
        ("table.csv", PNG),
        ("notes.txt", JPEG),
    ] {
        assert_eq!(refused(file, bytes, 0), ErrorCode::AttachmentMismatch, "{file}");
    }
}

#[test]
fn svg_may_start_with_a_declaration_comments_and_a_doctype() {
    let svg = "\u{feff}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- made by hand -->\n\
               <!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n\
               <svg\n  width=\"10\" height=\"10\"><rect/></svg>\n";
    assert_eq!(check("logo.svg", svg.as_bytes(), 0).unwrap().kind, Kind::Image);
    assert!(check("logo.svg", b"  <svg>", 0).is_ok());
}

#[test]
fn the_count_is_checked_first_then_type_emptiness_size_and_content() {
    assert_eq!(refused("a.exe", b"", MAX_PER_SESSION), ErrorCode::AttachmentLimit);
    assert_eq!(refused("a.exe", b"", 0), ErrorCode::AttachmentType);
    assert_eq!(refused("a.png", &vec![0; MAX_BYTES + 1], 0), ErrorCode::AttachmentTooLarge);
}

#[test]
fn names_keep_only_the_last_path_segment() {
    assert_eq!(name("../../etc/passwd"), "passwd");
    assert_eq!(name("..\\..\\Windows\\win.ini"), "win.ini");
    assert_eq!(name("/abs/dir/report.pdf"), "report.pdf");
    assert_eq!(name("C:\\Users\\me\\shot.png"), "shot.png");
}

#[test]
fn names_are_safe_characters_without_leading_dots_or_double_dots() {
    assert_eq!(name(".env"), "env");
    assert_eq!(name("...hidden.txt"), "hidden.txt");
    assert_eq!(name("my photo (1).PNG"), "my-photo-1.PNG");
    assert_eq!(name("a..b...txt"), "a.b.txt");
    assert_eq!(name("a.-.png"), "a.png");
    assert_eq!(name("--rf.txt"), "rf.txt");
    assert_eq!(name("résumé 2024.pdf"), "r-sum-2024.pdf");
    assert_eq!(name("tab\there\n.md"), "tab-here.md");
    assert_eq!(name("snake_case-name.v2.json"), "snake_case-name.v2.json");
    for original in ["my photo (1).PNG", "../x/..y..z", "a\0b.txt", "日本語.png", "a.b.c..d"] {
        let safe = name(original);
        assert!(safe.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)), "{safe}");
        assert!(!safe.contains("..") && !safe.starts_with('.'), "{safe}");
    }
}

#[test]
fn long_names_are_cut_keeping_the_extension() {
    let safe = name(&format!("{}.png", "a".repeat(300)));
    assert_eq!(safe.len(), MAX_NAME_CHARS);
    assert_eq!(safe, format!("{}.png", "a".repeat(124)));
    // A cut never leaves a dash or dot before the extension.
    let safe = name(&format!("{}-b.png", "a".repeat(123)));
    assert_eq!(safe, format!("{}.png", "a".repeat(123)));
    // A long enough name with no room for its "extension" is cut as a whole.
    let safe = name(&format!("a.{}", "b".repeat(300)));
    assert_eq!(safe.len(), MAX_NAME_CHARS);
    assert!(safe.starts_with("a.bbb"));
}

#[test]
fn duplicates_get_a_number_before_the_extension() {
    let mut taken = Vec::new();
    for expected in ["shot.png", "shot-2.png", "shot-3.png"] {
        let safe = safe_name("shot.png", &taken).unwrap();
        assert_eq!(safe, expected);
        taken.push(safe);
    }
    // Case alone does not make a name unique: file systems may ignore it.
    assert_eq!(safe_name("SHOT.png", &taken).unwrap(), "SHOT-4.png");
    assert_eq!(safe_name("README", &["readme".into()]).unwrap(), "README-2");
    // The number still fits in 128 characters.
    let long = format!("{}.png", "a".repeat(300));
    let first = safe_name(&long, &[]).unwrap();
    let second = safe_name(&long, &[first]).unwrap();
    assert_eq!(second.len(), MAX_NAME_CHARS);
    assert_eq!(second, format!("{}-2.png", "a".repeat(122)));
}

#[test]
fn a_name_with_nothing_left_is_refused() {
    for original in ["", ".", "..", "...", "/", "../..", "\\\\", "./.././", "dir/", "---", " ( ) "] {
        let err = safe_name(original, &[]).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{original:?}");
    }
}
