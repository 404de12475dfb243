//! The JSON form of a `Summary` (the structure as it is; schema in docs/output-schema.json).

use super::Report;

pub fn to_json(summary: &Report) -> String {
    // Serializing plain structs of numbers and strings cannot fail.
    serde_json::to_string_pretty(summary).unwrap_or_default()
}
