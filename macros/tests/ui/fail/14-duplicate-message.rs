use macros::StorageRow;

#[derive(StorageRow)]
#[row(message = generated::platform::iam::v2::Group)]
#[row(message = generated::platform::iam::v2::Role)]
struct GroupRow {
    name: String,
}

fn main() {}
