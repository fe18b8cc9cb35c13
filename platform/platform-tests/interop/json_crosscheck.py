"""Checks our canonical JSON against Python protobuf's json_format.

Reads DIR/descriptors.pb and DIR/corpus.jsonl (written by
`cargo run -p platform-api --example json_corpus -- DIR`). For each message:
- json_format reads our JSON into the same message as the protobuf bytes;
- json_format writes, with every field printed, JSON equal to ours as a value
  (numbers compared as numbers, so `1.0` and `1` agree; floats as the float
  they denote).

Usage: python3 json_crosscheck.py DIR
"""

import json
import math
import struct
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory


def load_pool(path):
    files = descriptor_pb2.FileDescriptorSet.FromString(path.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return pool


def normalise(value):
    """NaN as its JSON spelling, so that it equals itself."""
    if isinstance(value, dict):
        return {key: normalise(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalise(item) for item in value]
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value
    return value


def to_dict(message):
    return json_format.MessageToDict(
        message,
        always_print_fields_with_no_presence=True,
        preserving_proto_field_name=False,
    )


def floats_agree(ours, theirs):
    """Python prints `float` fields with the shortest repr of the single
    precision value; compare those at single precision."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(
            floats_agree(ours[key], theirs[key]) for key in ours
        )
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(
            floats_agree(a, b) for a, b in zip(ours, theirs)
        )
    if isinstance(ours, (int, float)) and isinstance(theirs, (int, float)):
        return ours == theirs or single(ours) == single(theirs)
    return ours == theirs


def single(number):
    return struct.unpack("f", struct.pack("f", number))[0]


def main():
    directory = Path(sys.argv[1])
    pool = load_pool(directory / "descriptors.pb")
    checked = 0
    failures = []
    types = set()
    for line in (directory / "corpus.jsonl").read_text(encoding="utf-8").split("\n"):
        if not line:
            continue
        case = json.loads(line)
        descriptor = pool.FindMessageTypeByName(case["type"])
        cls = message_factory.GetMessageClass(descriptor)
        expected = cls.FromString(bytes.fromhex(case["binary"]))

        read = cls()
        try:
            json_format.Parse(case["json"], read)
        except json_format.ParseError as error:
            failures.append(f"{case['type']}: json_format cannot read {case['json']}: {error}")
            continue
        if read.SerializeToString(deterministic=True) != expected.SerializeToString(
            deterministic=True
        ):
            failures.append(f"{case['type']}: {case['json']} reads as {read}, expected {expected}")

        ours = normalise(json.loads(case["json"]))
        theirs = normalise(to_dict(expected))
        if not floats_agree(ours, theirs):
            failures.append(
                f"{case['type']}: we wrote {json.dumps(ours)}, json_format writes {json.dumps(theirs)}"
            )
        checked += 1
        types.add(case["type"])
    for failure in failures[:20]:
        print("MISMATCH", failure)
    print(f"{checked} messages of {len(types)} types checked, {len(failures)} mismatches")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
