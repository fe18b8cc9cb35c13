use macros::StorageRow;

#[derive(StorageRow)]
#[row(message = generated::platform::iam::v2::Group)]
struct GroupRow<T> {
    name: T,
}

fn main() {}
