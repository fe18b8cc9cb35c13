use protoapi_macros::Row;

#[derive(Row)]
#[row(message = platform_api::platform::iam::v2::Group)]
struct GroupRow {
    #[row(skip, rename = "name")]
    label: String,
}

fn main() {}
