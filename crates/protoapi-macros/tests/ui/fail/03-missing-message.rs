use protoapi_macros::Row;

#[derive(Row)]
struct GroupRow {
    name: String,
}

fn main() {}
