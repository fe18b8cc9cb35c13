use protoapi_macros::Row;

#[derive(Row)]
#[row(message = platform_api::platform::iam::v2::Group)]
struct GroupRow {
    #[row(timestamp)]
    create_time: String,
}

fn main() {}
