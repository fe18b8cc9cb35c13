use macros::StorageRow;

#[derive(StorageRow)]
struct GroupRow {
    name: String,
}

fn main() {}
