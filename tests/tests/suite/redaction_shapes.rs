//! Common credential shapes, judged on the wire: each file below is read
//! whole with `read_file`, and the secret part never appears anywhere in the
//! serialised answer (the fenced, numbered text and `structuredContent`),
//! plain or JSON-escaped, while the key name survives.
//!
//! The single-line shapes are the everyday ones: a quoted value in a
//! settings file, an env line with symbols in the password, quoted keys in
//! JSON/YAML/Python dicts, Go's `:=`, PHP/Ruby `=>`, URL credentials with no
//! user name or an unescaped `@` in the password, an `ENCRYPTED PRIVATE KEY`
//! block. The multi-line forms are decided on the whole file: a value on the
//! line after its key, a YAML block scalar, a header whose token is on the
//! next line.
//!
//! Every credential here is built by concatenation, so secret scanners
//! reading this repository stay quiet; none of them is real.

use moat_tests::{Era, Fixture, Moat, Mode, Options};
use serde_json::json;

use super::util::call_line;

/// A file, the secret it holds, and a part of the file that must survive.
struct Shape {
    file: &'static str,
    body: String,
    secret: String,
    keep: &'static str,
}

fn token() -> String {
    ["Zq8wLk2m", "Px7nRt4v", "Yb3cD9"].concat()
}

fn password() -> String {
    ["S3cr3t!", "Passw0rd"].concat()
}

fn single_line_shapes() -> Vec<Shape> {
    let t = token();
    let p = password();
    let s = |file, body: String, secret: &str, keep| Shape {
        file,
        body,
        secret: secret.to_owned(),
        keep,
    };
    let key_body = [
        "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI",
        "q8Rk2mZp4Lx7Wn3vAgIIADAMBggqhkiG9w0CCQUAMBQGCCqG",
    ];
    vec![
        s(
            "settings.py",
            format!("API_TOKEN = \"{t}\"\n"),
            &t,
            "API_TOKEN",
        ),
        s(
            "app.cfg",
            format!("DB_PASSWORD={p}\nDEBUG=1\n"),
            &p,
            "DB_PASSWORD",
        ),
        s(
            "config.json",
            format!("{{\n  \"user\": \"app\",\n  \"password\": \"{p}\"\n}}\n"),
            &p,
            "\\\"password\\\"",
        ),
        s(
            "config.yaml",
            format!("db:\n  \"password\": \"{p}\"\n  'api_key': '{t}'\n"),
            &p,
            "password",
        ),
        s(
            "creds.py",
            format!("CREDS = {{'password': '{p}', 'token': '{t}'}}\n"),
            &p,
            "'password'",
        ),
        s(
            "main.go",
            format!("package main\n\nfunc main() {{\n\tpassword := \"{p}\"\n\t_ = password\n}}\n"),
            &p,
            "password :=",
        ),
        s(
            "config.php",
            format!("<?php\nreturn ['db_password' => '{p}'];\n"),
            &p,
            "db_password",
        ),
        s(
            "config.rb",
            format!("config = {{ :secret => \"{t}\" }}\n"),
            &t,
            ":secret",
        ),
        s(
            "cache.conf",
            format!("url = redis://:{p}@cache.internal:6379/0\n"),
            &p,
            "cache.internal",
        ),
        s(
            "db.ini",
            format!(
                "dsn = postgres://app:{}@db.internal:5432/app\n",
                "p@ss@w0rd42"
            ),
            "p@ss@w0rd42",
            "db.internal",
        ),
        s(
            "deploy.sh",
            format!("mysqldump --password {p} app > dump.sql\n"),
            &p,
            "--password",
        ),
        s(
            "Settings.xml",
            format!("<settings>\n  <password>{p}</password>\n</settings>\n"),
            &p,
            "<password>",
        ),
        s(
            "key_block.txt",
            format!(
                "-----BEGIN ENCRYPTED {k}-----\n{}\n{}\n-----END ENCRYPTED {k}-----\n",
                key_body[0],
                key_body[1],
                k = "PRIVATE KEY"
            ),
            key_body[1],
            "[redacted:private-key-block]",
        ),
    ]
}

fn multi_line_shapes() -> Vec<Shape> {
    let t = token();
    let p = password();
    let s = |file, body: String, secret: &str, keep| Shape {
        file,
        body,
        secret: secret.to_owned(),
        keep,
    };
    vec![
        s(
            "next_line.yaml",
            format!("database:\n  password:\n    {p}\n  user: app\n"),
            &p,
            "password:",
        ),
        s(
            "continued.py",
            format!("API_TOKEN = \\\n    \"{t}\"\n"),
            &t,
            "API_TOKEN",
        ),
        s(
            "block.yaml",
            format!("tls:\n  private_key: |\n    {t}\n    {p}\n  cert: tls.crt\n"),
            &p,
            "private_key: |",
        ),
        s(
            "request.http",
            format!("GET /v1/items\nAuthorization: Bearer\n  {t}\n"),
            &t,
            "Authorization: Bearer",
        ),
    ]
}

fn read_whole_and_check(mode: Mode, shapes: &[Shape]) {
    let fx = Fixture::new();
    for shape in shapes {
        fx.file(shape.file, &shape.body);
    }
    let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
    for shape in shapes {
        let (line, result) = call_line(&mut m, "read_file", json!({"path": shape.file}));
        let escaped = serde_json::to_string(&shape.secret).unwrap();
        let escaped = escaped.trim_matches('"');
        assert!(
            !line.contains(&shape.secret) && !line.contains(escaped),
            "{}: the secret {:?} left the server:\n{line}",
            shape.file,
            shape.secret
        );
        assert!(
            line.contains(shape.keep),
            "{}: {:?} did not survive:\n{line}",
            shape.file,
            shape.keep
        );
        assert_eq!(
            result["structuredContent"]["redaction"]["applied"],
            json!(true),
            "{}: {line}",
            shape.file
        );
    }
}

#[test]
fn common_single_line_shapes_are_redacted_in_the_whole_answer() {
    read_whole_and_check(Mode::Confined, &single_line_shapes());
}

#[test]
fn common_single_line_shapes_are_redacted_in_process_too() {
    read_whole_and_check(Mode::InProcess, &single_line_shapes());
}

#[test]
fn multi_line_forms_are_redacted_when_the_whole_file_is_read() {
    read_whole_and_check(Mode::Confined, &multi_line_shapes());
}

#[test]
fn placeholders_in_those_shapes_survive() {
    let fx = Fixture::new();
    fx.file(
        "settings.py",
        "API_TOKEN = \"changeme\"\nDB_PASSWORD=${DB_PASSWORD}\nSECRET = os.environ[\"SECRET\"]\nCREDS = {'password': '<your-password>'}\nurl = redis://:${REDIS_PASSWORD}@cache:6379\n",
    );
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    let (line, result) = call_line(&mut m, "read_file", json!({"path": "settings.py"}));
    assert_eq!(
        result["structuredContent"]["redaction"]["count"],
        json!(0),
        "{line}"
    );
    for kept in [
        "changeme",
        "${DB_PASSWORD}",
        "os.environ",
        "<your-password>",
        "${REDIS_PASSWORD}",
    ] {
        assert!(line.contains(kept), "{kept} was redacted:\n{line}");
    }
}

#[test]
fn documentation_tags_and_member_access_in_c_are_not_redacted() {
    // Kernel-style C: a `@name:` doc tag followed by its description, and a
    // value reached through `->`, are not credentials; a tag holding a
    // bare random value is.
    let fx = Fixture::new();
    fx.file(
        "irq.c",
        "/**\n * @bus_token: domain-specific data\n * @private_key:\tpregenerated private key for the given curve\n */\nvoid f(void)\n{\n\t__entry->xdp_pass\t= xdp_stats->pass;\n\tmsk->token = subflow_req->token;\n}\n",
    );
    let t = token();
    fx.file("doc.c", format!("/**\n * @token: {t}\n */\n"));
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    let (line, result) = call_line(&mut m, "read_file", json!({"path": "irq.c"}));
    assert_eq!(
        result["structuredContent"]["redaction"]["count"],
        json!(0),
        "{line}"
    );
    for kept in [
        "domain-specific data",
        "pregenerated private key",
        "xdp_stats->pass",
        "subflow_req->token",
    ] {
        assert!(line.contains(kept), "{kept} was redacted:\n{line}");
    }
    let (line, result) = call_line(&mut m, "read_file", json!({"path": "doc.c"}));
    assert!(!line.contains(&t), "the token left the server:\n{line}");
    assert_eq!(
        result["structuredContent"]["redaction"]["applied"],
        json!(true),
        "{line}"
    );
}
