use protoapi_macros::StorageRow;

#[derive(StorageRow)]
#[row(message = platform_api::platform::iam::v2::Group)]
struct GroupRow<T> {
    name: T,
}

fn main() {}
