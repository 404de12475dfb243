//! `--log-result`'s frame: a result between two marker lines on stdout, so that it can be
//! found in a log that mixes other lines in (a Kubernetes pod's), and the reading of every
//! framed result out of such a log for `spate merge`. Text in, text out; judges no JSON.

/// The lines around a framed result.
pub const RESULT_BEGIN: &str = "-----BEGIN SPATE RESULT-----";
pub const RESULT_END: &str = "-----END SPATE RESULT-----";

/// `json` (ending in a newline) between the marker lines.
pub fn frame(json: &str) -> String {
    format!("{RESULT_BEGIN}\n{json}{RESULT_END}\n")
}

/// The results `--log-result` framed in a log, in the order they end: the lines between each
/// line that ends with the begin marker and its end, taking only the lines with the begin
/// line's prefix, without it. `kubectl logs --prefix` names each line's pod, and the pods' lines interleave.
pub fn unframe(log: &str) -> Vec<String> {
    let mut out = Vec::new();
    // The results under way: each one's prefix and its text so far.
    let mut open: Vec<(&str, String)> = Vec::new();
    for line in log.lines() {
        // A begin line is its prefix and the marker: the marker ends it.
        if let Some(prefix) = line.strip_suffix(RESULT_BEGIN) {
            open.retain(|(p, _)| *p != prefix);
            open.push((prefix, String::new()));
            continue;
        }
        // The longest prefix the line has: a pod's own, before one of none.
        let Some(k) = (0..open.len())
            .filter(|&k| line.starts_with(open[k].0))
            .max_by_key(|&k| open[k].0.len())
        else {
            continue;
        };
        let rest = &line[open[k].0.len()..];
        if rest == RESULT_END {
            out.push(open.remove(k).1);
        } else {
            open[k].1.push_str(rest);
            open[k].1.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framed_results_are_found_among_other_lines_and_prefixes() {
        let log = "\
spate: shard 0/2: 1 of 2 connections
-----BEGIN SPATE RESULT-----
{\"a\": 1}
-----END SPATE RESULT-----
[pod/x-0] -----BEGIN SPATE RESULT-----
[pod/x-1] -----BEGIN SPATE RESULT-----
[pod/x-0] {\"b\":
[pod/x-1] {\"c\": 3}
[pod/x-1] -----END SPATE RESULT-----
[pod/x-0] 2}
[pod/x-0] -----END SPATE RESULT-----
-----BEGIN SPATE RESULT-----
{\"cut\": short
";
        assert_eq!(
            unframe(log),
            ["{\"a\": 1}\n", "{\"c\": 3}\n", "{\"b\":\n2}\n"]
        );
        assert!(unframe("{}").is_empty());
    }

    #[test]
    fn a_framed_result_is_read_back_whatever_the_prefix() {
        let json = "{\n  \"a\": [1, 2]\n}\n";
        for prefix in [
            "",
            "[pod/spate-0-x/spate] ",
            "2026-11-27T10:00:00Z stdout F ",
        ] {
            let log: String = frame(json)
                .lines()
                .map(|l| format!("{prefix}{l}\n"))
                .collect();
            assert_eq!(unframe(&log), [json], "{prefix:?}");
        }
    }

    #[test]
    fn any_text_is_read_without_a_panic() {
        for log in [
            "",
            "-----BEGIN SPATE RESULT-----",
            "é-----BEGIN SPATE RESULT-----\né",
            "\u{0}\n-----END SPATE RESULT-----",
        ] {
            let _ = unframe(log);
        }
    }
}
