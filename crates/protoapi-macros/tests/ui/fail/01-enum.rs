use protoapi_macros::StorageRow;

#[derive(StorageRow)]
enum Row {
    A,
}

fn main() {}
