use protoapi_macros::StorageRow;

#[derive(StorageRow)]
#[row(message = platform_api::platform::iam::v2::Group)]
struct GroupRow {
    #[row(rename = "display name")]
    name: String,
}

fn main() {}
