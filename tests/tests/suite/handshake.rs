use moat_tests::{Era, Fixture, Moat, Mode, Options};
use serde_json::json;

#[test]
fn legacy_initialize_negotiates_and_lists_tools() {
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), Era::Legacy);
    let names = m.tool_names();
    assert!(names.contains(&"read_file".to_owned()));
    let r = m.request_raw("ping", json!({}));
    assert_eq!(r["result"], json!({}));
    assert!(m.close().success());
}

#[test]
fn modern_discover_carries_server_info() {
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    let r = m.request("server/discover", json!({}));
    assert_eq!(r["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "moat"
    );
    assert!(m.close().success());
}
