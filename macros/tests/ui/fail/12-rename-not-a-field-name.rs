use macros::StorageRow;

#[derive(StorageRow)]
#[row(message = generated::platform::iam::v2::Group)]
struct GroupRow {
    #[row(rename = "display name")]
    name: String,
}

fn main() {}
