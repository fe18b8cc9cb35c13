//! "Did you mean": the field a client most likely meant by a name the
//! message does not have.

use prost_reflect::MessageDescriptor;

/// Unknown names of one request that get a "did you mean" (a body may name
/// thousands: the hints' cost stays bounded).
pub const MAX_HINTS: usize = 16;

/// Keys longer than this get no hint (no field name is that long).
const MAX_HINTED_KEY: usize = 64;

/// The field of `descriptor` a client most likely meant by `key`: its JSON
/// name, when it is at most two edits away (one for names of up to four
/// letters), ignoring case.
pub fn meant(descriptor: &MessageDescriptor, key: &str) -> Option<String> {
    if key.len() > MAX_HINTED_KEY {
        return None;
    }
    let key = key.to_lowercase();
    descriptor
        .fields()
        .map(|field| field.json_name().to_owned())
        .map(|name| {
            (
                strsim::damerau_levenshtein(&key, &name.to_lowercase()),
                name,
            )
        })
        .filter(|(edits, name)| *edits <= if name.len() <= 4 { 1 } else { 2 })
        .min_by_key(|(edits, _)| *edits)
        .map(|(_, name)| name)
}
