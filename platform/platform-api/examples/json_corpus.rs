//! Writes a corpus for checking the canonical JSON codec against another
//! implementation (`platform/platform-tests/interop/json_crosscheck.py`, on Python protobuf's
//! `json_format`): random messages of every type, one JSON line each with
//! the type, the protobuf encoding (hex) and our canonical JSON.
//!
//! `cargo run -p platform-api --example json_corpus -- DIR [PER_TYPE]` writes
//! `DIR/descriptors.pb` and `DIR/corpus.jsonl`.

use std::fmt::Write as _;
use std::io::Write as _;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use protoapi_runtime::json::{JsonMessage, MessageVisitor, conformance};

struct Corpus {
    per_type: usize,
    runner: TestRunner,
    lines: Vec<String>,
}

impl MessageVisitor for Corpus {
    fn visit<M: JsonMessage + PartialEq + std::fmt::Debug>(&mut self) {
        let descriptor = M::default().descriptor();
        let strategy = conformance::message(&descriptor, 2);
        for _ in 0..self.per_type {
            let dynamic = strategy
                .new_tree(&mut self.runner)
                .expect("the strategy generates a value")
                .current();
            let message: M = dynamic
                .transcode_to()
                .expect("a generated message transcodes");
            let mut hex = String::new();
            for byte in message.encode_to_vec() {
                write!(hex, "{byte:02x}").expect("writing to a string");
            }
            let json =
                String::from_utf8(protoapi_runtime::json::to_vec(&message)).expect("JSON is UTF-8");
            let line = serde_json::json!({
                "type": descriptor.full_name(),
                "binary": hex,
                "json": json,
            });
            self.lines.push(line.to_string());
        }
    }
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: json_corpus DIR [PER_TYPE]"));
    let per_type = args
        .next()
        .map_or(20, |n| n.parse().expect("PER_TYPE is a number"));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("descriptors.pb"),
        platform_api::FILE_DESCRIPTOR_SET,
    )?;
    let mut corpus = Corpus {
        per_type,
        runner: TestRunner::deterministic(),
        lines: Vec::new(),
    };
    platform_api::visit_messages(&mut corpus);
    let mut file = std::fs::File::create(dir.join("corpus.jsonl"))?;
    for line in &corpus.lines {
        writeln!(file, "{line}")?;
    }
    println!("{} messages in {}", corpus.lines.len(), dir.display());
    Ok(())
}
