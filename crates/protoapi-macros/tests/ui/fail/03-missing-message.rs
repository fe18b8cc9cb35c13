use protoapi_macros::StorageRow;

#[derive(StorageRow)]
struct GroupRow {
    name: String,
}

fn main() {}
