use protoapi_macros::Row;

#[derive(Row)]
enum Row {
    A,
}

fn main() {}
