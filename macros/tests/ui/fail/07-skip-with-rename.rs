use macros::StorageRow;

#[derive(StorageRow)]
#[row(message = generated::platform::iam::v2::Group)]
struct GroupRow {
    #[row(skip, rename = "name")]
    label: String,
}

fn main() {}
