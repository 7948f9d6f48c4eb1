//! The JSON-RPC envelope parser and encoder (`broker::mcp::jsonrpc`).
//!
//! Properties:
//! * `parse` never panics, on raw bytes or on envelopes built field by field;
//! * whenever the input is a JSON object whose `id` is a string or a number,
//!   the error (if any) carries that id, and so does the message (if valid);
//! * an answer to a parsed message is one line of valid JSON whose `id` is
//!   the id as it was sent;
//! * `encode` always gives exactly one line (no `\n`, `\r`, U+2028 or U+2029)
//!   of valid JSON that reads back as the value encoded, for error responses,
//!   success responses and any JSON value the input holds.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use moat_broker::jsonrpc::{self, Id};
use serde_json::Value;

/// A JSON value built by the fuzzer (depth-limited by `arbitrary` itself).
#[derive(Arbitrary, Debug)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(i) => Value::from(*i),
            Json::UInt(u) => Value::from(*u),
            // Non-finite floats become null, as serde_json does.
            Json::Float(f) => Value::from(*f),
            Json::Str(s) => Value::String(s.clone()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Input {
    /// Raw bytes, as a client may send them.
    Raw(Vec<u8>),
    /// An object with the envelope's members, each present or not, any type.
    Envelope {
        id: Option<Json>,
        jsonrpc: Option<Json>,
        method: Option<Json>,
        params: Option<Json>,
        result: Option<Json>,
        error: Option<Json>,
        extra: Vec<(String, Json)>,
        /// Members are written in this rotation of their usual order.
        rotate: u8,
    },
}

/// JSON equality, with floats compared loosely: serde_json's default float
/// parsing may be one unit in the last place off after a round trip.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x == y {
                return true;
            }
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs()) * 4.0,
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn check_encode(value: &Value) {
    let line = jsonrpc::encode(value);
    assert!(
        !line.iter().any(|&b| b == b'\n' || b == b'\r'),
        "encode wrote a line break"
    );
    let text = std::str::from_utf8(&line).expect("encode writes UTF-8");
    assert!(
        !text.contains(['\u{2028}', '\u{2029}']),
        "encode wrote a raw line separator"
    );
    let back: Value = serde_json::from_slice(&line).expect("encode writes valid JSON");
    assert!(
        same(&back, value),
        "encode changed the value: {value} -> {back}"
    );
}

fn check(bytes: &[u8]) {
    let parsed = jsonrpc::parse(bytes);
    // What the parser should have recovered: a string or number `id` of an object.
    let expected_id = serde_json::from_slice::<Value>(bytes).ok().and_then(|v| {
        v.as_object()
            .and_then(|o| o.get("id"))
            .filter(|id| id.is_string() || id.is_number())
            .cloned()
    });
    let same_id = |id: Option<&Id>| match (id.map(Id::to_value), &expected_id) {
        (Some(a), Some(b)) => same(&a, b),
        (None, None) => true,
        _ => false,
    };
    match &parsed {
        Ok(msg) => {
            assert!(!msg.method.is_empty(), "a valid message has a method");
            assert!(same_id(msg.id.as_ref()), "the message lost its id");
            if let Some(id) = &msg.id {
                check_encode(&jsonrpc::success(id, Value::Object(msg.params.clone())));
                let reply = jsonrpc::Reply::success(id.clone(), Value::Object(msg.params.clone()));
                let line = reply.encode();
                assert_eq!(line.len() as u64, reply.encoded_len(), "encoded_len is wrong");
                match serde_json::from_slice::<Value>(&line) {
                    Ok(back) => assert!(
                        same(&back["id"], &id.to_value()),
                        "the answer changed its id"
                    ),
                    // Only a number serde_json cannot hold (`1e400`), as sent.
                    Err(_) => assert!(
                        serde_json::from_slice::<Value>(bytes).is_err(),
                        "an answer is not valid JSON"
                    ),
                }
            }
        }
        Err(e) => {
            if expected_id.is_some() {
                assert!(same_id(e.id.as_ref()), "the error lost the request's id");
            }
            check_encode(&e.to_value());
        }
    }
    if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
        check_encode(&value);
    }
}

fuzz_target!(|input: Input| {
    match input {
        Input::Raw(bytes) => check(&bytes),
        Input::Envelope {
            id,
            jsonrpc,
            method,
            params,
            result,
            error,
            extra,
            rotate,
        } => {
            let mut members: Vec<(String, Value)> = [
                ("id", id),
                ("jsonrpc", jsonrpc),
                ("method", method),
                ("params", params),
                ("result", result),
                ("error", error),
            ]
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_value())))
            .collect();
            members.extend(extra.iter().map(|(k, v)| (k.clone(), v.to_value())));
            if !members.is_empty() {
                let n = usize::from(rotate) % members.len();
                members.rotate_left(n);
            }
            // Written by hand so duplicate keys and member order reach the parser.
            let mut text = String::from("{");
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(&Value::String(k.clone()).to_string());
                text.push(':');
                text.push_str(&v.to_string());
            }
            text.push('}');
            check(text.as_bytes());
        }
    }
});
