use protoapi_macros::StorageRow;

#[derive(StorageRow)]
#[row(message = platform_api::platform::iam::v2::Group, table = "groups")]
struct GroupRow {
    name: String,
}

fn main() {}
