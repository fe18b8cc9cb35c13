use macros::StorageRow;

#[derive(StorageRow)]
#[row(message = generated::platform::iam::v2::Group)]
struct GroupRow {
    #[row(skip, output_only)]
    cached: bool,
}

fn main() {}
