//! The hostile names, used: JSON of fields named with Rust keywords, the
//! generated JSON codec against reflection on every message, and a thing
//! created, read and listed over REST, whose fields are named with keywords
//! in a package whose messages shadow the prelude.

mod common;

use axum::http::StatusCode;
use hostile_names::hostile;
use hostile_names::hostile::v1::r#type::r#match::r#move::r#ref::{Fn, r#fn::Async};
use serde_json::{Value, json};

use common::{app, call};

fn keywords() -> hostile::v1::Keywords {
    hostile::v1::Keywords {
        r#type: "type".into(),
        r#match: "match".into(),
        r#move: 3,
        r#ref: true,
        self_: "self".into(),
        super_: "super".into(),
        crate_: "crate".into(),
        r#fn: "fn".into(),
        r#async: "async".into(),
        r#await: "await".into(),
        r#dyn: "dyn".into(),
        r#box: "box".into(),
        r#gen: "gen".into(),
        r#try: "try".into(),
        r#yield: "yield".into(),
        extern_: "extern".into(),
        upper_self: Some(hostile::v1::UpperSelf {
            self_: "Self".into(),
        }),
        r#for: vec!["for".into()],
        r#if: [("if".to_owned(), "then".to_owned())].into(),
        r#else: Some(String::new()),
        r#return: Some(prost_types::Timestamp {
            seconds: 1,
            nanos: 0,
        }),
        r#abstract: Some(Box::new(hostile::v1::Keywords {
            r#type: "inner".into(),
            ..Default::default()
        })),
        r#macro: Some(hostile::v1::keywords::Macro::Priv("priv".into())),
        kind: Some(hostile::v1::Kind {
            name: "a message".into(),
        }),
        other_kind: hostile::other::Kind::Self_ as i32,
        ..Default::default()
    }
}

#[test]
fn keyword_fields_round_trip_through_json() {
    let message = keywords();
    let value: Value = serde_json::from_slice(&protoapi_runtime::json::to_vec(&message)).unwrap();
    assert_eq!(value["type"], "type");
    assert_eq!(value["self"], "self");
    assert_eq!(value["super"], "super");
    assert_eq!(value["crate"], "crate");
    assert_eq!(value["extern"], "extern");
    assert_eq!(value["upperSelf"], json!({"Self": "Self"}));
    assert_eq!(value["for"], json!(["for"]));
    assert_eq!(value["if"], json!({"if": "then"}));
    assert_eq!(value["else"], "");
    assert_eq!(value["abstract"]["type"], "inner");
    assert_eq!(value["priv"], "priv");
    assert_eq!(value["otherKind"], "KIND_SELF");
    let back: hostile::v1::Keywords = protoapi_runtime::json::from_value(value).unwrap();
    assert_eq!(back, message);
}

#[test]
fn deeply_nested_keyword_types_round_trip_through_json() {
    let message = hostile::v1::Type {
        deepest: Some(Fn {
            r#dyn: "dyn".into(),
            r#async: Async::Self_ as i32,
        }),
        ..Default::default()
    };
    let value: Value = serde_json::from_slice(&protoapi_runtime::json::to_vec(&message)).unwrap();
    assert_eq!(
        value,
        json!({"deepest": {"dyn": "dyn", "async": "ASYNC_SELF"}})
    );
    let back: hostile::v1::Type = protoapi_runtime::json::from_value(value).unwrap();
    assert_eq!(back, message);
}

#[test]
fn prelude_named_messages_round_trip_through_json() {
    let message = hostile::v1::Box {
        vec: Some(hostile::v1::Vec {
            items: vec![hostile::v1::String {
                value: "string".into(),
            }],
        }),
        option: Some(hostile::v1::Option {
            some: Some(hostile::v1::Result { ok: "ok".into() }),
        }),
        services: None,
    };
    let value: Value = serde_json::from_slice(&protoapi_runtime::json::to_vec(&message)).unwrap();
    assert_eq!(
        value,
        json!({"vec": {"items": [{"value": "string"}]}, "option": {"some": {"ok": "ok"}}})
    );
    let back: hostile::v1::Box = protoapi_runtime::json::from_value(value).unwrap();
    assert_eq!(back, message);
}

#[test]
fn every_message_reads_and_writes_what_reflection_does() {
    protoapi_runtime::json::conformance::check_api(
        &hostile_names::DESCRIPTOR_POOL,
        hostile_names::visit_messages,
        8,
    );
}

#[tokio::test]
async fn keyword_fields_and_methods_over_rest() {
    let app = app();
    let parent = "1".repeat(40);
    let thing = json!({
        "name": "a thing",
        "type": "small",
        "match": "fixed",
        "async": ["one", "two"],
        "box": {"type": "boxed", "self": "inside"},
        "ref": "member",
    });
    let (status, created) = call(&app, "POST", &format!("/v1/things/{parent}"), Some(thing)).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["type"], "small");
    assert_eq!(created["box"]["self"], "inside");
    assert_eq!(created["ref"], "member");
    let uid = created["uid"].as_str().unwrap();

    // A value outside `allowed` of the keyword-named field.
    let (status, body) = call(
        &app,
        "POST",
        &format!("/v1/things/{parent}"),
        Some(json!({"name": "b", "type": "huge"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let (status, got) = call(&app, "GET", &format!("/v1/things/{uid}"), None).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got, created);

    let (status, listed) = call(&app, "GET", "/v1/things?orderBy=type%20desc", None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["items"], json!([created]));

    let (status, patched) = call(
        &app,
        "PATCH",
        &format!("/v1/things/{uid}?updateMask=type,box.self"),
        Some(json!({"type": "large", "box": {"type": "ignored", "self": "changed"}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["type"], "large");
    assert_eq!(patched["box"]["self"], "changed");
    assert_eq!(patched["box"]["type"], "boxed");

    let (status, moved) = call(&app, "POST", "/type/move", Some(json!({"self": "me"}))).await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved, json!({"self": "me"}));
    let (status, page) = call(&app, "POST", "/type/turn", Some(json!({"self": "me"}))).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page, json!({"next": "me"}));
}
