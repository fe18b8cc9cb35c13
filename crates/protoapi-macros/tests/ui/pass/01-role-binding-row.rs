use platform_api::platform::iam::v2::RoleBinding;
use protoapi_macros::Row;
use protoapi_runtime::resource::SortValue;
use protoapi_runtime::row::Row;

#[derive(Row, Debug, PartialEq)]
#[row(message = RoleBinding)]
struct RoleBindingRow {
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
    let row = RoleBindingRow::from_message(&binding);
    assert_eq!(row, RoleBindingRow { name: "ci".into(), create_time: 42, role_uid: "r".into(), cached: false });

    let names: Vec<&str> = RoleBindingRow::COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(names, ["name", "create_time", "role_uid"]);
    assert_eq!(RoleBindingRow::COLUMNS[1].field, "createTime");
    assert!(RoleBindingRow::COLUMNS[1].integer && RoleBindingRow::COLUMNS[1].output_only);
    assert_eq!(row.values(), [SortValue::Text("ci".into()), SortValue::Int(42), SortValue::Text("r".into())]);
}
