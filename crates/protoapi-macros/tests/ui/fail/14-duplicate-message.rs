use protoapi_macros::Row;

#[derive(Row)]
#[row(message = platform_api::platform::iam::v2::Group)]
#[row(message = platform_api::platform::iam::v2::Role)]
struct GroupRow {
    name: String,
}

fn main() {}
