use protoapi_macros::Row;

#[derive(Row)]
#[row(message = platform_api::platform::iam::v2::Group)]
struct GroupRow {
    name: String,
    resource_limits: Vec<i32>,
}

fn main() {}
