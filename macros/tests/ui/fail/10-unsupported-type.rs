use macros::StorageRow;

#[derive(StorageRow)]
#[row(message = generated::platform::iam::v2::Group)]
struct GroupRow {
    name: String,
    resource_limits: Vec<i32>,
}

fn main() {}
