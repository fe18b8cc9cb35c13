use protoapi_macros::StorageRow;

#[derive(StorageRow)]
#[row(message = platform_api::platform::iam::v2::Group)]
struct GroupRow {
    name: String,
    resource_limits: Vec<i32>,
}

fn main() {}
