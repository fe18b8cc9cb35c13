use macros::StorageRow;

#[derive(StorageRow)]
#[row(message = generated::platform::iam::v2::Group, table = "groups")]
struct GroupRow {
    name: String,
}

fn main() {}
