//! Update masks through the `Update` flow. Masks are checked when planned, before storage is called; what only
//! the stored item reveals is checked when applied.

use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, MessageDescriptor, ReflectMessage};
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{
    DescriptorProto, FieldDescriptorProto, FieldMask, FileDescriptorProto, Timestamp,
};

use crate::auth::Authorizer;
use crate::context::Caller;
use crate::error::{Code, Error};
use crate::mask::Update;
use crate::paging::PageTokens;
use crate::resource::{Behavior, Resource};
use crate::resource::{FieldSpec, SortValue};
use crate::standard::{self, ApiContext};
use crate::store::StoreError;

/// A resource with a field of every behaviour.
#[derive(Clone, PartialEq, prost::Message)]
pub(in crate::standard) struct Thing {
    #[prost(string, tag = "1")]
    uid: String,
    #[prost(string, tag = "2")]
    display_name: String,
    #[prost(string, tag = "3")]
    owner: String,
    #[prost(string, tag = "4")]
    description: String,
    #[prost(message, optional, tag = "5")]
    create_time: Option<Timestamp>,
    #[prost(message, optional, tag = "6")]
    update_time: Option<Timestamp>,
    #[prost(string, tag = "7")]
    etag: String,
}

fn descriptor() -> MessageDescriptor {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        let field = |name: &str, json: &str, number, r#type: Type| FieldDescriptorProto {
            name: Some(name.into()),
            json_name: Some(json.into()),
            number: Some(number),
            label: Some(Label::Optional.into()),
            r#type: Some(r#type.into()),
            type_name: (r#type == Type::Message).then(|| ".google.protobuf.Timestamp".into()),
            ..Default::default()
        };
        let file = FileDescriptorProto {
            name: Some("test/thing.proto".into()),
            package: Some("test".into()),
            dependency: vec!["google/protobuf/timestamp.proto".into()],
            message_type: vec![DescriptorProto {
                name: Some("Thing".into()),
                field: vec![
                    field("uid", "uid", 1, Type::String),
                    field("display_name", "displayName", 2, Type::String),
                    field("owner", "owner", 3, Type::String),
                    field("description", "description", 4, Type::String),
                    field("create_time", "createTime", 5, Type::Message),
                    field("update_time", "updateTime", 6, Type::Message),
                    field("etag", "etag", 7, Type::String),
                ],
                ..Default::default()
            }],
            syntax: Some("proto3".into()),
            ..Default::default()
        };
        let mut pool = DescriptorPool::global();
        pool.add_file_descriptor_proto(file).unwrap();
        pool
    });
    pool.get_message_by_name("test.Thing").unwrap()
}

impl ReflectMessage for Thing {
    fn descriptor(&self) -> MessageDescriptor {
        descriptor()
    }
}

impl Resource for Thing {
    const TYPE: &'static str = "test.example.com/Thing";
    const COLLECTION: &'static str = "things";
    const FIELDS: &'static [FieldSpec] = &[
        spec("uid", "uid", Behavior::OutputOnly),
        spec("display_name", "displayName", Behavior::Required),
        spec("owner", "owner", Behavior::Immutable),
        spec("description", "description", Behavior::Optional),
        spec("create_time", "createTime", Behavior::OutputOnly),
        spec("update_time", "updateTime", Behavior::OutputOnly),
        spec("etag", "etag", Behavior::OutputOnly),
    ];
    const ORDER_BY: &'static [&'static str] = &[];

    fn key(&self) -> &str {
        &self.uid
    }
    fn set_key(&mut self, key: String) {
        self.uid = key;
    }
    fn create_time(&self) -> Option<&Timestamp> {
        self.create_time.as_ref()
    }
    fn set_create_time(&mut self, time: Timestamp) {
        self.create_time = Some(time);
    }
    fn update_time(&self) -> Option<&Timestamp> {
        self.update_time.as_ref()
    }
    fn set_update_time(&mut self, time: Timestamp) {
        self.update_time = Some(time);
    }
    fn etag(&self) -> &str {
        &self.etag
    }
    fn set_etag(&mut self, etag: String) {
        self.etag = etag;
    }
    fn copy_field(&mut self, source: &Self, path: &str) {
        match path {
            "uid" => self.uid.clone_from(&source.uid),
            "display_name" => self.display_name.clone_from(&source.display_name),
            "owner" => self.owner.clone_from(&source.owner),
            "description" => self.description.clone_from(&source.description),
            "create_time" => self.create_time = source.create_time,
            "update_time" => self.update_time = source.update_time,
            "etag" => self.etag.clone_from(&source.etag),
            _ => {}
        }
    }
    fn has_field(&self, path: &str) -> bool {
        match path {
            "uid" => !self.uid.is_empty(),
            "display_name" => !self.display_name.is_empty(),
            "owner" => !self.owner.is_empty(),
            "description" => !self.description.is_empty(),
            "create_time" => self.create_time.is_some(),
            "update_time" => self.update_time.is_some(),
            "etag" => !self.etag.is_empty(),
            _ => false,
        }
    }
    fn field_eq(&self, other: &Self, path: &str) -> bool {
        let mut copy = other.clone();
        copy.copy_field(self, path);
        copy == *other
    }
    fn sort_value(&self, _field: &str) -> SortValue {
        SortValue::Text(self.uid.clone())
    }
}

const fn spec(path: &'static str, json_path: &'static str, behavior: Behavior) -> FieldSpec {
    FieldSpec {
        path,
        json_path,
        behavior,
    }
}

fn mask(paths: &[&str]) -> FieldMask {
    FieldMask {
        paths: paths.iter().map(|p| (*p).to_owned()).collect(),
    }
}

fn thing(display_name: &str, owner: &str) -> Thing {
    Thing {
        uid: "0123456789abcdef".into(),
        display_name: display_name.into(),
        owner: owner.into(),
        ..Default::default()
    }
}

/// `(field, description)` of each violation of an INVALID_ARGUMENT.
fn violations(error: &Error) -> Vec<(String, String)> {
    assert_eq!(error.code(), Code::InvalidArgument, "{error}");
    error
        .field_violations()
        .iter()
        .map(|v| (v.field.clone(), v.description.clone()))
        .collect()
}

fn planned(paths: &[&str]) -> Result<Update<Thing>, Error> {
    Update::plan(Some(&mask(paths)), thing("new", ""), "thing")
}

#[test]
fn mask_problems_are_answered_when_planned_in_lower_camel_case() {
    let expected = [
        (
            "updateMask.createTime".to_owned(),
            "the field is output only".to_owned(),
        ),
        (
            "updateMask.colourName".to_owned(),
            "no such field in the resource".to_owned(),
        ),
    ];
    // As REST decodes `updateMask=createTime,colourName`, and as a gRPC
    // client may send either spelling.
    for paths in [
        ["create_time", "colour_name", "description"],
        ["createTime", "colourName", "description"],
    ] {
        let error = planned(&paths).unwrap_err();
        assert_eq!(violations(&error), expected, "{paths:?}");
    }
    let error = planned(&["*", "description"]).unwrap_err();
    assert_eq!(
        violations(&error),
        [(
            "updateMask.*".to_owned(),
            "`*` cannot be combined with other paths".to_owned()
        )]
    );
    let error = Update::plan(None, Thing::default(), "thing").unwrap_err();
    assert_eq!(violations(&error)[0].0, "updateMask");
    assert_eq!(
        planned(&["displayName", "description"]).unwrap().paths(),
        ["display_name", "description"]
    );
}

#[tokio::test]
async fn a_bad_mask_is_answered_before_storage() {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let plan = async |paths: &[&str]| {
        standard::plan_update(
            &context,
            &Caller::System,
            "0123456789abcdef",
            Some(&mask(paths)),
            thing("new", ""),
            "thing",
        )
        .await
    };
    for paths in [&["createTime"][..], &["colour"], &["uid", "description"]] {
        let error = plan(paths).await.unwrap_err();
        assert_eq!(error.code(), Code::InvalidArgument, "{paths:?}");
    }
    // A missing item is storage's answer, once the mask is valid.
    let missing = standard::updated::<Thing>(Ok(None), "0123456789abcdef").unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    let update = plan(&["displayName"]).await.unwrap();
    let stored = update
        .apply(&thing("old", ""))
        .map(Some)
        .map_err(StoreError::Rejected);
    let updated = standard::updated(stored, "0123456789abcdef").unwrap();
    assert_eq!(updated.display_name, "new");
}

#[test]
fn apply_reports_what_the_stored_value_reveals() {
    let stored = thing("old", "alice");
    let patch = thing("", "bob");
    let update = Update::plan(Some(&mask(&["displayName", "owner"])), patch, "thing").unwrap();
    let error = update.apply(&stored).unwrap_err();
    assert_eq!(
        violations(&error),
        [
            (
                "thing.owner".to_owned(),
                "the field is immutable and cannot change".to_owned()
            ),
            (
                "thing.displayName".to_owned(),
                "the field is required and cannot be cleared".to_owned()
            ),
        ]
    );
    // Named with its current value, an IMMUTABLE field is fine.
    let same = Update::plan(Some(&mask(&["owner"])), thing("", "alice"), "thing").unwrap();
    assert_eq!(same.apply(&stored).unwrap(), stored);

    let mut stale = thing("new", "");
    stale.etag = "stale".into();
    let update = Update::plan(Some(&mask(&["displayName"])), stale, "thing").unwrap();
    let error = update.apply(&stored).unwrap_err();
    assert_eq!(error.code(), Code::Aborted);
}

#[test]
fn a_required_mask_must_name_fields() {
    let absent = standard::require_mask(None).unwrap_err();
    assert_eq!(absent.code(), Code::InvalidArgument);
    assert!(format!("{absent:?}").contains("updateMask"), "{absent:?}");
    let empty = FieldMask { paths: vec![] };
    assert_eq!(
        standard::require_mask(Some(&empty)).unwrap_err().code(),
        Code::InvalidArgument
    );
    let named = FieldMask {
        paths: vec!["display_name".into()],
    };
    assert!(standard::require_mask(Some(&named)).is_ok());
}

#[path = "soft_delete.rs"]
mod soft_delete;
