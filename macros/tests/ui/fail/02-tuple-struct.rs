use macros::StorageRow;

#[derive(StorageRow)]
#[row(message = generated::platform::iam::v2::Group)]
struct Row(String);

fn main() {}
