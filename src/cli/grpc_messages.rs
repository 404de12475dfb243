//! `spate grpc`'s request messages from `-d`/`-D`: one JSON message, or several (a JSON array,
//! as ghz takes them, or JSON values one after another: JSON lines), each encoded once by the method's
//! schema and named for the report. A message the schema refuses is one line that says which
//! (its place, and the field). Reads no file (the caller did) and sends nothing.

use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::grpc::schema::Method;
use crate::request_list::MAX_ENTRIES;

/// The longest JSON of a message kept as its name in the report, in characters.
const NAME_CHARS: usize = 48;

/// One request message: its bytes (without gRPC's prefix) and its name in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub bytes: Vec<u8>,
    pub name: String,
}

/// Where a piece of the text is: its place in an array, or its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Whole,
    Item(usize),
    Line(usize),
}

/// The JSON texts of `text`'s messages: the whole text when it is one JSON value that is not
/// an array; an array's items; or each of several values one after another (JSON lines, or
/// objects written over several lines each), named by the line each starts on. Values are
/// kept as slices of `text`, never parsed into trees, and at most `MAX_ENTRIES` of them.
fn pieces(text: &str) -> Result<Vec<(Place, String)>, String> {
    let whole = || Ok(vec![(Place::Whole, text.to_owned())]);
    let mut values: Vec<&RawValue> = Vec::new();
    for next in serde_json::Deserializer::from_str(text).into_iter::<&RawValue>() {
        match next {
            Ok(_) if values.len() == MAX_ENTRIES => return Err(too_many()),
            Ok(v) => values.push(v),
            // Not even a first value: the schema's reader says what is wrong with the whole.
            Err(_) if values.is_empty() => return whole(),
            Err(e) => return Err(format!("line {}: not JSON: {e}", e.line())),
        }
    }
    match values.as_slice() {
        [] => whole(),
        [v] if v.get().starts_with('[') => {
            let Items(items) = serde_json::from_str(v.get()).map_err(|e| e.to_string())?;
            if items.is_empty() {
                return Err("an empty array: give at least one message".into());
            }
            Ok(items
                .iter()
                .enumerate()
                .map(|(i, v)| (Place::Item(i + 1), v.get().to_owned()))
                .collect())
        }
        [_] => whole(),
        several => Ok(several
            .iter()
            .map(|v| {
                // A value is a slice of the text: where it starts says its line.
                let at = v.get().as_ptr() as usize - text.as_ptr() as usize;
                let line = 1 + text[..at].matches('\n').count();
                (Place::Line(line), v.get().to_owned())
            })
            .collect()),
    }
}

fn too_many() -> String {
    format!("more than the {MAX_ENTRIES} messages a run sends in turn")
}

/// An array's items as slices of its text, refused past `MAX_ENTRIES` as they are read.
struct Items<'a>(Vec<&'a RawValue>);

impl<'de> Deserialize<'de> for Items<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Seq;
        impl<'de> Visitor<'de> for Seq {
            type Value = Items<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of messages")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<&'de RawValue>()? {
                    if out.len() == MAX_ENTRIES {
                        return Err(serde::de::Error::custom(too_many()));
                    }
                    out.push(item);
                }
                Ok(Items(out))
            }
        }
        d.deserialize_seq(Seq)
    }
}

/// The messages `text` (from `source`: `-d` or `-D FILE`) holds, built by `method`.
pub fn messages(method: &Method, text: &str, source: &str) -> Result<Vec<Message>, String> {
    let pieces = pieces(text).map_err(|e| format!("{source}: {e}"))?;
    pieces
        .into_iter()
        .map(|(place, json)| {
            let bytes = method.request(&json).map_err(|e| {
                let why = e.strip_prefix("-d: ").unwrap_or(&e);
                match place {
                    Place::Whole => format!("{source}: {why}"),
                    Place::Item(i) => format!("{source}: message {i} of the array: {why}"),
                    Place::Line(n) => format!("{source}:{n}: {why}"),
                }
            })?;
            Ok(Message {
                name: name(&json),
                bytes,
            })
        })
        .collect()
}

/// A message's name in the report: its JSON on one line, cut to `NAME_CHARS` characters.
fn name(json: &str) -> String {
    let one_line = match serde_json::from_str::<serde_json::Value>(json) {
        Ok(v) => v.to_string(),
        Err(_) => json.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    match one_line.chars().count() > NAME_CHARS {
        true => one_line.chars().take(NAME_CHARS - 3).collect::<String>() + "...",
        false => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_an_array_or_json_lines_are_the_messages() {
        let texts = |t: &str| {
            pieces(t)
                .unwrap()
                .into_iter()
                .map(|(p, s)| (p, s.trim().to_owned()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            texts("{\n  \"key\": \"a\"\n}\n"),
            [(Place::Whole, "{\n  \"key\": \"a\"\n}".into())]
        );
        assert_eq!(
            texts(r#"[{"key":"a"}, {"key":"b"}]"#),
            [
                (Place::Item(1), r#"{"key":"a"}"#.into()),
                (Place::Item(2), r#"{"key":"b"}"#.into())
            ]
        );
        assert_eq!(
            texts("{\"key\":\"a\"}\n\n{\"key\":\"b\"}\n"),
            [
                (Place::Line(1), r#"{"key":"a"}"#.into()),
                (Place::Line(3), r#"{"key":"b"}"#.into())
            ]
        );
        assert_eq!(
            texts("{\n \"key\": \"a\"\n}\n{\n \"key\": \"b\"\n}"),
            [
                (Place::Line(1), "{\n \"key\": \"a\"\n}".into()),
                (Place::Line(4), "{\n \"key\": \"b\"\n}".into())
            ]
        );
        assert_eq!(texts("{oops"), [(Place::Whole, "{oops".into())]);
        assert!(pieces("[]").is_err());
        assert_eq!(
            pieces("{}\n{oops"),
            Err("line 2: not JSON: key must be a string at line 2 column 2".into())
        );
    }

    #[test]
    fn a_name_is_the_json_on_one_line_and_cut() {
        assert_eq!(name("{ \"key\" :\n \"a\" }"), r#"{"key":"a"}"#);
        let long = format!(r#"{{"key":"{}"}}"#, "x".repeat(100));
        let n = name(&long);
        assert_eq!(n.chars().count(), NAME_CHARS);
        assert!(n.ends_with("..."));
    }
}
