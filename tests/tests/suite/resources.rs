//! Workspace files as resources: the list (the find_files walk, paged),
//! the template, reads through exactly read_file's controls (each attack
//! read_file refuses is refused here, -32602 with `data.uri`), and path
//! completion that never offers a denied name. Both eras, both sandbox
//! modes.

use std::collections::BTreeSet;

use moat_tests::{Era, Fixture, Moat, Mode, Options};
use serde_json::{Value, json};

use super::util::SECRET;

const TEMPLATE: &str = "moat://workspace/{+path}";

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("README.md", "# demo\n");
    fx.file(
        "src/conf.py",
        "DB_PASSWORD = \"Zq8wLk2mPx7nRt4vYb3cD9hJ\"\nname = 'demo'\n",
    );
    for i in 0..150 {
        fx.file(&format!("many/f_{i:03}.txt"), "x\n");
    }
    fx.file(".env", "SECRET=1\n");
    fx.file(".ssh/id_rsa", "key\n");
    fx.file("node_modules/x/index.js", "x\n");
    fx.file(".gitignore", "ignored.log\n");
    fx.file("ignored.log", "x\n");
    fx.file(".hidden_note", "x\n");
    // `.gitignore` applies inside a repository.
    fx.git(&["init", "--quiet"]);
    std::fs::write(fx.outside.join("secret.txt"), SECRET).expect("outside file");
    fx.symlink("escape.txt", fx.outside.join("secret.txt"));
    fx.hardlink("linked.txt", &fx.outside.join("secret.txt"));
    fx.fifo("pipe");
    fx
}

fn request(m: &mut Moat, method: &str, params: Value) -> Value {
    m.request(method, params)
}

fn result(r: &Value) -> &Value {
    assert!(r.get("error").is_none(), "{r}");
    &r["result"]
}

/// Every resource of the workspace, following nextCursor.
fn all_resources(m: &mut Moat) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = request(m, "resources/list", params);
        let res = result(&r);
        out.extend(
            res["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .cloned(),
        );
        match res.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => return out,
        }
    }
    panic!("resources/list does not end");
}

#[test]
fn the_workspace_is_listed_as_resources_and_the_capability_declared() {
    let fx = fixture();
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            let caps = if era == Era::Modern {
                request(&mut m, "server/discover", json!({}))["result"]["capabilities"].clone()
            } else {
                let mut fresh = Moat::start(&fx.root, &Options::new(mode));
                let r = fresh.request_raw(
                    "initialize",
                    json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
                );
                r["result"]["capabilities"].clone()
            };
            assert_eq!(caps["resources"]["subscribe"], false, "{caps}");
            assert!(caps["completions"].is_object(), "{caps}");
            let list = all_resources(&mut m);
            let uris: Vec<&str> = list.iter().filter_map(|r| r["uri"].as_str()).collect();
            let unique: BTreeSet<&str> = uris.iter().copied().collect();
            assert_eq!(
                unique.len(),
                uris.len(),
                "{mode:?}/{era:?}: a page repeated"
            );
            for want in [
                "moat://workspace/README.md",
                "moat://workspace/src/conf.py",
                "moat://workspace/many/f_149.txt",
            ] {
                assert!(unique.contains(want), "{mode:?}/{era:?}: {want} missing");
            }
            assert_eq!(uris.iter().filter(|u| u.contains("/many/")).count(), 150);
            for absent in [
                ".env",
                "id_rsa",
                "node_modules",
                "ignored.log",
                "escape.txt",
                "pipe",
            ] {
                assert!(
                    !uris.iter().any(|u| u.contains(absent)),
                    "{mode:?}/{era:?}: {absent} listed"
                );
            }
            let readme = list
                .iter()
                .find(|r| r["uri"] == "moat://workspace/README.md")
                .expect("README");
            assert_eq!(readme["name"], "README.md");
            assert_eq!(readme["mimeType"], "text/markdown");
            assert_eq!(readme["size"], 7);
            // No URI shows the host path.
            let root = fx.root.display().to_string();
            assert!(!list.iter().any(|r| r.to_string().contains(&root)));
            let t = request(&mut m, "resources/templates/list", json!({}));
            assert_eq!(
                result(&t)["resourceTemplates"][0]["uriTemplate"],
                TEMPLATE,
                "{t}"
            );
            if era == Era::Modern {
                for method in ["resources/list", "resources/templates/list"] {
                    let r = request(&mut m, method, json!({}));
                    assert!(
                        result(&r)["ttlMs"].is_u64() && result(&r)["cacheScope"].is_string(),
                        "{r}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_resource_is_read_through_read_file_s_controls() {
    let fx = fixture();
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            let uri = "moat://workspace/src/conf.py";
            let r = request(&mut m, "resources/read", json!({"uri": uri}));
            let item = &result(&r)["contents"][0];
            assert_eq!(item["uri"], uri);
            assert_eq!(item["mimeType"], "text/x-python");
            let text = item["text"].as_str().expect("text");
            assert!(
                text.starts_with("<untrusted-file-content id="),
                "fenced: {text}"
            );
            assert!(text.contains("name = 'demo'"), "{text}");
            assert!(
                !r.to_string().contains("Zq8wLk2mPx7nRt4vYb3cD9hJ"),
                "{mode:?}/{era:?}: {r}"
            );
            assert_eq!(item["_meta"]["moat/redaction"]["applied"], true, "{item}");
            assert_eq!(
                item["_meta"]["moat/contentAssessment"]["level"], "none",
                "{item}"
            );
            if era == Era::Modern {
                assert!(result(&r)["ttlMs"].is_u64(), "{r}");
            }
        }
    }
}

#[test]
fn every_refused_or_unknown_uri_is_invalid_params_naming_the_uri() {
    let fx = fixture();
    let refused = [
        "moat://workspace/../secret.txt",
        "moat://workspace/..%2fsecret.txt",
        "moat://workspace/%2e%2e/secret.txt",
        "moat://workspace//etc/passwd",
        "moat://workspace/%2fetc%2fpasswd",
        "moat://workspace/escape.txt",
        "moat://workspace/linked.txt",
        "moat://workspace/pipe",
        "moat://workspace/.env",
        "moat://workspace/.ssh/id_rsa",
        "moat://workspace/no/such/file.txt",
        "moat://workspace/many",
        "moat://elsewhere/README.md",
        "file:///etc/passwd",
        "moat://workspace/",
        "moat://workspace/README.md?x=1",
        "test://nonexistent-resource-for-conformance-testing",
    ];
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            for uri in refused {
                let r = request(&mut m, "resources/read", json!({"uri": uri}));
                assert_eq!(r["error"]["code"], -32602, "{mode:?}/{era:?} {uri}: {r}");
                assert_eq!(r["error"]["data"]["uri"], uri, "{uri}: {r}");
                assert!(!r.to_string().contains(SECRET), "{uri} leaked: {r}");
                assert!(r.get("result").is_none(), "{uri}: {r}");
            }
            let r = request(&mut m, "resources/read", json!({}));
            assert_eq!(r["error"]["code"], -32602, "{r}");
        }
    }
}

#[test]
fn paths_complete_without_ever_offering_a_denied_name() {
    let fx = fixture();
    let complete = |m: &mut Moat, value: &str| -> Value {
        let r = m.request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": TEMPLATE}, "argument": {"name": "path", "value": value}}),
        );
        result(&r)["completion"].clone()
    };
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            let c = complete(&mut m, "sr");
            assert_eq!(c["values"], json!(["src/"]), "{mode:?}/{era:?}: {c}");
            let c = complete(&mut m, "src/c");
            assert_eq!(c["values"], json!(["src/conf.py"]), "{c}");
            // Hidden names only when asked for; denied ones never.
            let c = complete(&mut m, "");
            let values: Vec<&str> = c["values"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert!(
                values.contains(&"README.md") && !values.iter().any(|v| v.starts_with('.')),
                "{c}"
            );
            let c = complete(&mut m, ".");
            let values: Vec<&str> = c["values"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert!(values.contains(&".hidden_note"), "{c}");
            assert!(
                !values
                    .iter()
                    .any(|v| v.starts_with(".env") || v.starts_with(".ssh")),
                "{c}"
            );
            let c = complete(&mut m, "../");
            assert_eq!(c["values"], json!([]), "{c}");
            // At most 100, with the total and hasMore.
            let c = complete(&mut m, "many/f_");
            assert_eq!(c["values"].as_array().map(Vec::len), Some(100), "{c}");
            assert_eq!(c["total"], 150, "{c}");
            assert_eq!(c["hasMore"], true, "{c}");
            // Anything else completes to nothing.
            let r = m.request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "x"}}),
            );
            assert_eq!(result(&r)["completion"]["values"], json!([]), "{r}");
        }
    }
}
