//! Both eras: the legacy `initialize` handshake, the stateless `_meta` era,
//! `server/discover`, `tools/list` paging and cursors, serverInfo and trace
//! echo, and the order of the modern `_meta` checks.

use std::time::Duration;

use moat_tests::{Era, Fixture, MODERN, Moat, Mode, Options};
use serde_json::{Value, json};

use super::util::{cursor, rpc_err, rpc_error_of};

const LEGACY: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

fn opts() -> Options {
    Options::new(Mode::InProcess)
}

fn initialize(m: &mut Moat, params: Value) -> Value {
    let r = m.request_raw("initialize", params);
    assert!(r.get("error").is_none(), "initialize failed: {r}");
    r["result"].clone()
}

#[test]
fn legacy_initialize_echoes_each_supported_version() {
    let fx = Fixture::new();
    for v in LEGACY {
        let mut m = Moat::start(&fx.root, &opts());
        let r = initialize(
            &mut m,
            json!({"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert_eq!(r["protocolVersion"], v, "{r}");
        assert_eq!(r["serverInfo"]["name"], "moat");
        assert_eq!(r["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(r["capabilities"]["tools"].is_object(), "{r}");
        assert!(r["instructions"].as_str().is_some_and(|s| !s.is_empty()));
        // A legacy result is not a modern one.
        assert!(r.get("resultType").is_none(), "{r}");
        assert!(m.close().success());
    }
}

#[test]
fn legacy_initialize_with_an_unknown_version_offers_the_newest_legacy_one() {
    let fx = Fixture::new();
    for params in [
        json!({"protocolVersion": "1999-01-01", "capabilities": {}}),
        json!({"protocolVersion": 20251125, "capabilities": {}}),
        json!({"capabilities": {}}),
    ] {
        let mut m = Moat::start(&fx.root, &opts());
        let r = initialize(&mut m, params.clone());
        assert_eq!(r["protocolVersion"], "2025-11-25", "{params} -> {r}");
        // The session then works in the legacy era.
        m.notify("notifications/initialized", json!({}));
        let l = m.request_raw("tools/list", json!({}));
        assert!(l["result"]["tools"].is_array(), "{l}");
    }
}

#[test]
fn legacy_ping_and_initialized_notification() {
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &opts(), Era::Legacy);
    // `connect` sent notifications/initialized: it must not have been answered.
    assert_eq!(m.recv_within(Duration::from_millis(100)), None);
    let r = m.request_raw("ping", json!({}));
    assert_eq!(r["result"], json!({}), "{r}");
    let r = m.request_raw("ping", Value::Null);
    assert_eq!(r["result"], json!({}), "{r}");
    let names = m.tool_names();
    assert!(names.iter().any(|n| n == "read_file"), "{names:?}");
    assert!(names.iter().any(|n| n == "list_directory"), "{names:?}");
    let (status, rest) = m.finish();
    assert!(status.success());
    assert!(rest.is_empty(), "unexpected output: {rest:?}");
}

#[test]
fn modern_initialize_and_ping_are_not_methods() {
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &opts(), Era::Modern);
    for method in ["initialize", "ping"] {
        let (code, _, r) = rpc_err(
            &mut m,
            method,
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        );
        assert_eq!(code, -32601, "{r}");
        assert_eq!(r["error"]["data"]["method"], method, "{r}");
    }
    // And the process did not switch to the legacy era: a request without
    // `_meta` is still refused for lacking it.
    let r = m.request_raw("tools/list", json!({}));
    let (code, msg, _) = rpc_error_of(&r);
    assert_eq!(code, -32602, "{r}");
    assert!(msg.contains("protocolVersion"), "{r}");
}

#[test]
fn discover_describes_the_server() {
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &opts(), Era::Modern);
    let r = m.request("server/discover", json!({}));
    let res = &r["result"];
    assert_eq!(res["resultType"], "complete", "{r}");
    assert_eq!(res["supportedVersions"], json!([MODERN]), "{r}");
    assert_eq!(res["ttlMs"], json!(3_600_000), "{r}");
    assert!(
        matches!(res["cacheScope"].as_str(), Some("public" | "private")),
        "cacheScope must be public or private: {r}"
    );
    assert!(res["capabilities"]["tools"].is_object(), "{r}");
    let info = &res["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "moat", "{r}");
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"), "{r}");
    assert!(res["instructions"].as_str().is_some_and(|s| !s.is_empty()));
}

#[test]
fn discovery_ttl_comes_from_configuration() {
    let fx = Fixture::new();
    let o = opts().env("MOAT_SERVER__DISCOVERY_TTL_MS", "1234");
    let mut m = Moat::connect(&fx.root, &o, Era::Modern);
    let r = m.request("server/discover", json!({}));
    assert_eq!(r["result"]["ttlMs"], json!(1234), "{r}");
    let r = m.request("tools/list", json!({}));
    assert_eq!(r["result"]["ttlMs"], json!(1234), "{r}");
}

#[test]
fn trace_keys_are_echoed_in_every_modern_result() {
    let fx = Fixture::new();
    fx.file("a.txt", "x\n");
    let mut m = Moat::connect(&fx.root, &opts(), Era::Modern);
    let mut meta = Moat::modern_meta();
    meta["traceparent"] = json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    meta["tracestate"] = json!("vendor=abc");
    meta["baggage"] = json!("user=42");
    for (method, params) in [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "a.txt"}}),
        ),
        (
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "missing.txt"}}),
        ),
    ] {
        let mut p = params;
        p["_meta"] = meta.clone();
        let r = m.request_raw(method, p);
        let rm = &r["result"]["_meta"];
        for k in ["traceparent", "tracestate", "baggage"] {
            assert_eq!(rm[k], meta[k], "{method}: {k} not echoed: {r}");
        }
        assert_eq!(rm["io.modelcontextprotocol/serverInfo"]["name"], "moat");
    }
    // Only string values are echoed, and nothing else the client sent.
    let mut meta = Moat::modern_meta();
    meta["baggage"] = json!(5);
    meta["com.example/thing"] = json!("x");
    let r = m.request_raw("server/discover", json!({"_meta": meta}));
    let rm = r["result"]["_meta"].as_object().unwrap();
    assert!(!rm.contains_key("baggage"), "{r}");
    assert!(!rm.contains_key("com.example/thing"), "{r}");
    assert!(!rm.contains_key("io.modelcontextprotocol/protocolVersion"));
}

#[test]
fn tools_list_pages_are_sorted_and_complete() {
    let fx = Fixture::new();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(), era);
        let names = m.tool_names();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "{era:?}: tools/list must be sorted by name");
        let mut dedup = sorted.clone();
        dedup.dedup();
        assert_eq!(dedup, sorted, "{era:?}: duplicate tools");
        let r = m.request("tools/list", json!({}));
        let res = &r["result"];
        let first = res["tools"].as_array().unwrap();
        // Every tool on the first page: clients that never follow a cursor
        // must still see read_file and search_code.
        let first_names: Vec<&str> = first.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(
            first_names, names,
            "{era:?}: the first page holds every tool: {r}"
        );
        assert!(first_names.contains(&"read_file") && first_names.contains(&"search_code"));
        assert!(res.get("nextCursor").is_none(), "one page, no cursor: {r}");
        if era == Era::Modern {
            assert_eq!(res["resultType"], "complete");
            assert!(res["ttlMs"].is_u64(), "{r}");
            assert!(matches!(
                res["cacheScope"].as_str(),
                Some("public" | "private")
            ));
            assert_eq!(
                res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
                "moat"
            );
        }
        for t in first {
            assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
            assert_eq!(t["annotations"]["destructiveHint"], false, "{t}");
            assert_eq!(t["inputSchema"]["type"], "object", "{t}");
            assert_eq!(t["outputSchema"]["type"], "object", "{t}");
        }
    }
}

#[test]
fn tools_list_cursors() {
    let fx = Fixture::new();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(), era);
        let names = m.tool_names();
        let n = names.len();
        assert!(n >= 2, "{names:?}");

        // The cursor is an offset: offset 1 starts at the second tool.
        let r = m.request("tools/list", json!({"cursor": cursor(1)}));
        let page: Vec<&str> = r["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(page, names[1..].to_vec(), "{r}");
        assert!(r["result"].get("nextCursor").is_none(), "{r}");

        // Offset == count: an empty page and no nextCursor.
        let r = m.request("tools/list", json!({"cursor": cursor(n)}));
        assert_eq!(r["result"]["tools"], json!([]), "{r}");
        assert!(r["result"].get("nextCursor").is_none(), "{r}");

        // `b2Zmc2V0OjU` is offset 5: it decodes and pages from the sixth
        // tool (an error, if any, says "past the end", not "not issued").
        assert_eq!(cursor(5), "b2Zmc2V0OjU");
        let r = m.request("tools/list", json!({"cursor": "b2Zmc2V0OjU"}));
        if n > 5 {
            assert_eq!(r["result"]["tools"][0]["name"], names[5], "{r}");
        } else if n == 5 {
            assert_eq!(r["result"]["tools"], json!([]), "{r}");
        } else {
            let (code, msg, _) = rpc_error_of(&r);
            assert_eq!(code, -32602, "{r}");
            assert!(msg.contains("past the end"), "{r}");
        }

        // Past the end.
        let (code, msg, r) = rpc_err(&mut m, "tools/list", json!({"cursor": cursor(n + 1)}));
        assert_eq!(code, -32602, "{r}");
        assert!(msg.contains("past the end"), "{r}");

        let negative = super::util::b64url(b"offset:-1");
        for bad in ["AAAA", "not-a-real-cursor", "", negative.as_str()] {
            let (code, msg, r) = rpc_err(&mut m, "tools/list", json!({"cursor": bad}));
            assert_eq!(code, -32602, "cursor {bad:?}: {r}");
            assert!(msg.contains("not one this server issued"), "{r}");
        }
        for bad in [json!(5), json!(true), json!({"offset": 0}), json!(["x"])] {
            let (code, msg, r) = rpc_err(&mut m, "tools/list", json!({"cursor": bad}));
            assert_eq!(code, -32602, "cursor {bad}: {r}");
            assert!(msg.contains("string"), "{r}");
        }
        // A null cursor is no cursor.
        let r = m.request("tools/list", json!({"cursor": null}));
        assert_eq!(r["result"]["tools"][0]["name"], names[0], "{r}");
    }
}

#[test]
fn a_cursor_with_non_ascii_digits_is_invalid_params() {
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &opts(), Era::Modern);
    let c = super::util::b64url("offset:٣".as_bytes());
    let (code, _, r) = rpc_err(&mut m, "tools/list", json!({"cursor": c}));
    assert_eq!(code, -32602, "{r}");
}

fn modern_meta_error(m: &mut Moat, meta: Value) -> (i64, String, Value) {
    let r = m.request_raw("tools/list", json!({"_meta": meta}));
    rpc_error_of(&r)
}

const V: &str = "io.modelcontextprotocol/protocolVersion";
const C: &str = "io.modelcontextprotocol/clientCapabilities";

#[test]
fn modern_meta_errors_are_checked_in_a_fixed_order() {
    let fx = Fixture::new();
    let mut m = Moat::start(&fx.root, &opts());

    // 1. Key syntax first: a bad key wins over a missing/unsupported version.
    let (code, msg, r) = modern_meta_error(&mut m, json!({"-bad": 1, V: "1999-01-01"}));
    assert_eq!(code, -32602, "{r}");
    assert!(msg.contains("not a valid meta key"), "{r}");
    let (code, msg, r) = modern_meta_error(&mut m, json!({"bad key": 1, C: {}}));
    assert_eq!(
        (code, msg.contains("not a valid meta key")),
        (-32602, true),
        "{r}"
    );

    // ... and a reserved prefix.
    for key in ["x.mcp/invented", "org.modelcontextprotocol/x"] {
        let (code, msg, r) = modern_meta_error(&mut m, json!({key: 1, V: "1999-01-01", C: {}}));
        assert_eq!(code, -32602, "{key}: {r}");
        assert!(msg.contains("reserved"), "{key}: {r}");
    }

    // 2. Missing version (or not a non-empty string).
    for meta in [
        json!({C: {}}),
        json!({V: 20260728, C: {}}),
        json!({V: "", C: {}}),
        json!({}),
    ] {
        let (code, msg, r) = modern_meta_error(&mut m, meta.clone());
        assert_eq!(code, -32602, "{meta}: {r}");
        assert!(msg.contains("protocolVersion"), "{meta}: {r}");
    }

    // 3. Unsupported version, checked before the capabilities.
    let (code, _, r) = modern_meta_error(&mut m, json!({V: "1999-01-01"}));
    assert_eq!(code, -32022, "{r}");
    assert_eq!(r["error"]["data"]["requested"], "1999-01-01", "{r}");
    assert_eq!(r["error"]["data"]["supported"], json!([MODERN]), "{r}");

    // 4. Then the capabilities.
    for meta in [
        json!({V: MODERN}),
        json!({V: MODERN, C: []}),
        json!({V: MODERN, C: "x"}),
    ] {
        let (code, msg, r) = modern_meta_error(&mut m, meta.clone());
        assert_eq!(code, -32602, "{meta}: {r}");
        assert!(msg.contains("clientCapabilities"), "{meta}: {r}");
    }

    // Trace keys are exempt from the key rules; other prefixes are fine.
    let r = m.request_raw(
        "tools/list",
        json!({"_meta": {V: MODERN, C: {}, "traceparent": "x", "com.example/thing": 1}}),
    );
    assert!(r["result"]["tools"].is_array(), "{r}");

    // A non-object `_meta`, or none, is an empty one.
    for params in [json!({"_meta": "x"}), json!({"_meta": null}), json!({})] {
        let r = m.request_raw("server/discover", params.clone());
        let (code, msg, _) = rpc_error_of(&r);
        assert_eq!(code, -32602, "{params}: {r}");
        assert!(msg.contains("protocolVersion"), "{params}: {r}");
    }
}

#[test]
fn errors_carry_no_meta_and_keep_the_id() {
    let fx = Fixture::new();
    let mut m = Moat::start(&fx.root, &opts());
    m.send(&json!({"jsonrpc": "2.0", "id": "req-7", "method": "tools/list", "params": {"_meta": {V: "1999-01-01", C: {}}}}));
    let r = m.recv();
    assert_eq!(r["id"], "req-7", "{r}");
    assert_eq!(r["error"]["code"], -32022, "{r}");
    assert!(r.get("result").is_none() && r["error"].get("_meta").is_none());
}

#[test]
fn unknown_method_names_the_method_in_both_eras() {
    let fx = Fixture::new();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(), era);
        let (code, msg, r) = rpc_err(&mut m, "nope/nothing", json!({}));
        assert_eq!(code, -32601, "{era:?}: {r}");
        assert_eq!(r["error"]["data"]["method"], "nope/nothing", "{r}");
        assert!(msg.contains("nope/nothing"), "{r}");
    }
}

#[test]
fn a_legacy_session_still_serves_modern_requests() {
    // Dual-era: `_meta` on a request selects the modern behaviour even after
    // a legacy handshake on the same stdio process.
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &opts(), Era::Legacy);
    let r = m.request_raw("server/discover", json!({"_meta": Moat::modern_meta()}));
    assert_eq!(r["result"]["supportedVersions"], json!([MODERN]), "{r}");
    let r = m.request_raw("tools/list", json!({"_meta": Moat::modern_meta()}));
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
}
