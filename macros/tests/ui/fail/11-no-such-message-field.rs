use macros::StorageRow;

#[derive(StorageRow)]
#[row(message = generated::platform::iam::v2::Group)]
struct GroupRow {
    name: String,
    colour: String,
}

fn main() {}
