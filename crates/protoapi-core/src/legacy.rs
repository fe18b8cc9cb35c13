//! Legacy versions of resources: an older message (say `v1.Group`) that shows
//! the current resource (`v2.Group`) under earlier field names and shapes,
//! over the same storage, authorization and validation.
//!
//! The generator implements [`View`] for every legacy message declared in the
//! annotation files (`[collection.legacy]`); generated legacy services convert
//! requests with [`View::to_current`], run the current resource's standard
//! flows and convert answers back with [`View::from_current`].

use prost_types::FieldMask;

use crate::error::{Error, FieldViolation};
use crate::resource::Resource;

/// A legacy message showing the resource `Current`.
pub trait View: Sized {
    /// The resource it shows.
    type Current: Resource;

    /// The top-level fields (proto names) of `Current` that a legacy full
    /// replacement writes: every writable field the legacy message shows.
    /// Fields it does not show keep their stored values.
    const REPLACES: &'static [&'static str];

    /// The current resource as the legacy version shows it.
    fn from_current(current: Self::Current) -> Self;

    /// The current resource a legacy message describes; problems (e.g. an
    /// unknown map key) are pushed to `violations`, named under `path`.
    fn into_current(self, path: &str, violations: &mut Vec<FieldViolation>) -> Self::Current;

    /// [`View::into_current`], failing with one BadRequest for every problem.
    fn to_current(self, path: &str) -> Result<Self::Current, Error> {
        let mut violations = Vec::new();
        let current = self.into_current(path, &mut violations);
        if violations.is_empty() {
            Ok(current)
        } else {
            Err(Error::invalid_fields(violations))
        }
    }

    /// The update mask of a full replacement: [`View::REPLACES`].
    fn replacement_mask() -> FieldMask {
        FieldMask {
            paths: Self::REPLACES
                .iter()
                .map(|path| (*path).to_owned())
                .collect(),
        }
    }
}

/// Violations for the keys left in a legacy map after every known one was
/// taken: `path.key` is not a field of the message it stands for.
pub fn unknown_keys<V>(
    map: std::collections::HashMap<String, V>,
    path: &str,
    known: &[&str],
    violations: &mut Vec<FieldViolation>,
) {
    let mut keys: Vec<String> = map.into_keys().collect();
    keys.sort();
    for key in keys {
        violations.push(FieldViolation::new(
            crate::json::field_path(path, &key),
            format!("unknown key; known: {}", known.join(", ")),
        ));
    }
}

/// Whether `value` is its type's default (proto3: not set).
pub fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}
