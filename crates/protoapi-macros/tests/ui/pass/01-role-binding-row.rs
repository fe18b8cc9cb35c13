use platform_api::platform::iam::v2::RoleBinding;
use protoapi_macros::StorageRow;
use protoapi_runtime::resource::SortValue;
use protoapi_runtime::row::Row;

#[derive(StorageRow, Debug, PartialEq)]
#[row(message = RoleBinding)]
struct RoleBindingColumns {
    name: String,
    #[row(timestamp, output_only)]
    create_time: i64,
    #[row(rename = "role")]
    role_uid: String,
    #[row(skip)]
    cached: bool,
}

fn main() {
    let binding = RoleBinding {
        name: "ci".into(),
        role: "r".into(),
        create_time: Some(protoapi_runtime::time::from_micros(42)),
        ..Default::default()
    };
    let row = RoleBindingColumns::from_message(&binding);
    assert_eq!(row, RoleBindingColumns { name: "ci".into(), create_time: 42, role_uid: "r".into(), cached: false });

    let names: Vec<&str> = RoleBindingColumns::COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(names, ["name", "create_time", "role_uid"]);
    assert_eq!(RoleBindingColumns::COLUMNS[1].field, "createTime");
    assert!(RoleBindingColumns::COLUMNS[1].integer && RoleBindingColumns::COLUMNS[1].output_only);
    assert_eq!(row.values(), [SortValue::Text("ci".into()), SortValue::Int(42), SortValue::Text("r".into())]);
}
