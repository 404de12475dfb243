//! What `spate mcp` calls: tools with their arguments and weights, resources to read, prompts to
//! get, or `tools/list` itself, from the flags or from a JSON-lines file. Must not know HTTP or
//! the engine.

use serde_json::{Map, Value};

/// One kind of measured call.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    /// `tools/call` with these arguments.
    Tool {
        name: String,
        arguments: Map<String, Value>,
    },
    /// `resources/read` of this URI.
    Resource { uri: String },
    /// `prompts/get` with these arguments.
    Prompt {
        name: String,
        arguments: Map<String, Value>,
    },
    /// `tools/list`.
    ListTools,
}

/// A call and its share of the calls (`weight` out of the sum of all weights).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub method: Method,
    pub weight: u32,
}

/// The most calls a run may mix.
pub const MAX_CALLS: usize = 1024;

impl Call {
    /// The JSON-RPC method.
    pub fn rpc_method(&self) -> &'static str {
        match self.method {
            Method::Tool { .. } => "tools/call",
            Method::Resource { .. } => "resources/read",
            Method::Prompt { .. } => "prompts/get",
            Method::ListTools => "tools/list",
        }
    }

    /// What the `Mcp-Name` header carries: the tool's or prompt's name, the resource's URI.
    pub fn name(&self) -> Option<&str> {
        match &self.method {
            Method::Tool { name, .. } | Method::Prompt { name, .. } => Some(name),
            Method::Resource { uri } => Some(uri),
            Method::ListTools => None,
        }
    }

    /// The row the report gives it: a tool by its name, the others by method and name.
    pub fn label(&self) -> String {
        match &self.method {
            Method::Tool { name, .. } => name.clone(),
            Method::ListTools => "tools/list".into(),
            _ => format!("{} {}", self.rpc_method(), self.name().unwrap_or_default()),
        }
    }

    /// The JSON-RPC params, without `_meta`.
    pub fn params(&self) -> Map<String, Value> {
        let mut p = Map::new();
        match &self.method {
            Method::Tool { name, arguments } | Method::Prompt { name, arguments } => {
                p.insert("name".into(), Value::String(name.clone()));
                p.insert("arguments".into(), Value::Object(arguments.clone()));
            }
            Method::Resource { uri } => {
                p.insert("uri".into(), Value::String(uri.clone()));
            }
            Method::ListTools => {}
        }
        p
    }
}

/// `NAME[:WEIGHT]`: a weight is a whole number from 1; a suffix that is not one belongs to
/// the name.
pub fn name_and_weight(s: &str) -> Result<(String, u32), String> {
    let (name, weight) = match s.rsplit_once(':') {
        Some((n, w)) if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) => {
            let w: u32 = w
                .parse()
                .map_err(|_| format!("{s:?}: the weight {w} is too large"))?;
            (n, w)
        }
        _ => (s, 1),
    };
    if name.is_empty() {
        return Err(format!("{s:?}: the name is empty"));
    }
    if weight == 0 {
        return Err(format!("{s:?}: a weight is at least 1"));
    }
    Ok((name.to_string(), weight))
}

/// `NAME=JSON`: the arguments of the tool or prompt NAME, a JSON object.
pub fn named_arguments(s: &str) -> Result<(String, Map<String, Value>), String> {
    let Some((name, json)) = s.split_once('=') else {
        return Err(format!(
            "{s:?}: give NAME='{{...}}', a tool and its arguments as JSON"
        ));
    };
    Ok((
        name.to_string(),
        object(json).map_err(|e| format!("{name}: {e}"))?,
    ))
}

fn object(json: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("the arguments must be a JSON object".into()),
        Err(e) => Err(format!("the arguments are not JSON: {e}")),
    }
}

/// The calls of a JSON-lines file: one object a line, `{"tool": NAME, "arguments": {...},
/// "weight": N}` (or `"resource": URI`, or `"prompt": NAME`); blank lines and lines starting
/// with `#` are skipped.
pub fn from_lines(file: &str, text: &str) -> Result<Vec<Call>, String> {
    let mut calls = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |why: String| format!("{file}:{}: {why}", i + 1);
        if calls.len() == MAX_CALLS {
            return Err(at(format!("more than {MAX_CALLS} calls")));
        }
        let m = object(line).map_err(|e| at(e.replace("arguments", "line")))?;
        let text_of = |k: &str| match m.get(k) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(at(format!("\"{k}\" must be a non-empty string"))),
        };
        let arguments = match m.get("arguments") {
            None => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => return Err(at("\"arguments\" must be a JSON object".into())),
        };
        let weight = match m.get("weight") {
            None => 1,
            Some(w) => match w.as_u64() {
                Some(w @ 1..=0xFFFF_FFFF) => w as u32,
                _ => return Err(at("\"weight\" must be a whole number from 1".into())),
            },
        };
        let method = match (text_of("tool")?, text_of("resource")?, text_of("prompt")?) {
            (Some(name), None, None) => Method::Tool { name, arguments },
            (None, Some(uri), None) => Method::Resource { uri },
            (None, None, Some(name)) => Method::Prompt { name, arguments },
            _ => {
                return Err(at(
                    "each line names one of \"tool\", \"resource\" or \"prompt\"".into(),
                ));
            }
        };
        if let Some(k) = m
            .keys()
            .find(|k| !["tool", "resource", "prompt", "arguments", "weight"].contains(&k.as_str()))
        {
            return Err(at(format!("unknown field \"{k}\"")));
        }
        calls.push(Call { method, weight });
    }
    if calls.is_empty() {
        return Err(format!("{file}: no call in it"));
    }
    Ok(calls)
}

/// The order of calls that gives each its weight's share, spread out (smooth weighted round
/// robin): weights 3 and 1 give 0 0 1 0, not 0 0 0 1. Its length is the sum of the weights,
/// reduced by their greatest common divisor, and at most `MAX_SCHEDULE`.
pub fn schedule(weights: &[u32]) -> Result<Vec<u16>, String> {
    let g = weights
        .iter()
        .fold(0u64, |g, &w| gcd(g, u64::from(w)))
        .max(1);
    let w: Vec<u64> = weights.iter().map(|&w| u64::from(w) / g).collect();
    let total: u64 = w.iter().sum();
    if total > MAX_SCHEDULE as u64 {
        return Err(format!(
            "the weights add up to {total} (after dividing by their common factor): at most \
             {MAX_SCHEDULE}"
        ));
    }
    let mut current = vec![0i64; w.len()];
    let mut out = Vec::with_capacity(total as usize);
    for _ in 0..total {
        for (c, &wi) in current.iter_mut().zip(&w) {
            *c += wi as i64;
        }
        let (best, _) = current
            .iter()
            .enumerate()
            .max_by_key(|&(i, &c)| (c, std::cmp::Reverse(i)))
            .expect("at least one call");
        current[best] -= total as i64;
        out.push(best as u16);
    }
    Ok(out)
}

/// The longest schedule of weighted calls.
pub const MAX_SCHEDULE: usize = 1 << 16;

fn gcd(a: u64, b: u64) -> u64 {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_take_weights_and_arguments_are_objects() {
        assert_eq!(name_and_weight("add").unwrap(), ("add".into(), 1));
        assert_eq!(name_and_weight("add:3").unwrap(), ("add".into(), 3));
        assert_eq!(name_and_weight("ns:add").unwrap(), ("ns:add".into(), 1));
        assert!(name_and_weight("add:0").is_err());
        assert!(name_and_weight(":2").is_err());
        assert!(name_and_weight("add:99999999999").is_err());
        let (n, a) = named_arguments(r#"add={"a":2,"b":3}"#).unwrap();
        assert_eq!((n.as_str(), a.len()), ("add", 2));
        assert!(named_arguments("add").is_err());
        assert!(named_arguments("add=[1]").unwrap_err().contains("object"));
        assert!(named_arguments("add={").unwrap_err().contains("not JSON"));
    }

    #[test]
    fn a_lines_file_gives_calls_and_names_its_faults_by_line() {
        let text = "# calls\n{\"tool\":\"add\",\"arguments\":{\"a\":1},\"weight\":2}\n\n\
                    {\"resource\":\"file:///x\"}\n{\"prompt\":\"p\"}\n";
        let calls = from_lines("c.jsonl", text).unwrap();
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].weight, 2);
        assert_eq!(calls[0].label(), "add");
        assert_eq!(calls[1].label(), "resources/read file:///x");
        assert_eq!(calls[1].name(), Some("file:///x"));
        for (bad, why) in [
            ("{\"tool\":1}", "c.jsonl:1: \"tool\""),
            ("{\"tool\":\"a\",\"prompt\":\"b\"}", "one of"),
            ("{\"tool\":\"a\",\"weight\":0}", "weight"),
            ("{\"tool\":\"a\",\"args\":{}}", "unknown field \"args\""),
            ("nope", "not JSON"),
            ("", "no call"),
        ] {
            let e = from_lines("c.jsonl", bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn a_schedule_gives_each_call_its_share_spread_out() {
        assert_eq!(schedule(&[3, 1]).unwrap(), vec![0, 0, 1, 0]);
        assert_eq!(schedule(&[2, 2]).unwrap(), vec![0, 1]);
        assert_eq!(schedule(&[1]).unwrap(), vec![0]);
        let s = schedule(&[5, 3, 2]).unwrap();
        assert_eq!(s.len(), 10);
        for (i, w) in [5, 3, 2].into_iter().enumerate() {
            assert_eq!(s.iter().filter(|&&c| c as usize == i).count(), w);
        }
        assert!(schedule(&[70_000, 1]).is_err());
    }
}
