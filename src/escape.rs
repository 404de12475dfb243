//! Text from outside (a server's answer, a script, a saved file) made safe to print on a
//! terminal: every control character (C0, DEL, C1) and every bidirectional override is shown as
//! a visible escape, so that nothing printed can move the cursor, retitle the window, reorder a
//! line or start a new one. Every printer of such text uses it. Must not touch spate's own
//! colours and line breaks (apply it to the outside text, before colouring), and is not an
//! encoding for JSON, CSV, HTML or YAML, which have their own.

use std::borrow::Cow;
use std::fmt::{self, Display};

/// `text` as a terminal may show it: `Display` writes it with each unsafe character escaped.
#[derive(Debug, Clone, Copy)]
pub struct Term<'a>(pub &'a str);

/// Shorthand for `Term(text)`, in format arguments: `format!("{}", term(&name))`.
pub fn term(text: &str) -> Term<'_> {
    Term(text)
}

/// `text` with each unsafe character escaped; borrowed when there is none.
pub fn term_str(text: &str) -> Cow<'_, str> {
    match text.chars().any(unsafe_char) {
        true => Cow::Owned(Term(text).to_string()),
        false => Cow::Borrowed(text),
    }
}

/// Control characters (Unicode's Cc: C0, DEL and C1) and the bidirectional embeddings,
/// overrides and isolates, which can make a line read in another order than it was written.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

impl Display for Term<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some((i, c)) = rest.char_indices().find(|&(_, c)| unsafe_char(c)) {
            f.write_str(&rest[..i])?;
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if u32::from(c) < 0x80 => write!(f, "\\x{:02x}", u32::from(c))?,
                c => write!(f, "\\u{{{:x}}}", u32::from(c))?,
            }
            rest = &rest[i + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

/// `text` (a whole report, say) with every control character escaped except the line breaks
/// and, when `colours`, the SGR sequences (`ESC [ ... m`) spate colours with: what a printer
/// missed cannot act on the terminal, though its line breaks stay.
pub fn inert(text: &str, colours: bool) -> Cow<'_, str> {
    let mut out = String::new();
    let mut kept = 0;
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let len = match c {
            '\x1b' if colours => sgr_len(&text[i..]).unwrap_or(0),
            _ => 0,
        };
        if len > 0 {
            i += len;
            continue;
        }
        if c != '\n' && unsafe_char(c) {
            out.push_str(&text[kept..i]);
            out.push_str(&term(&text[i..i + c.len_utf8()]).to_string());
            kept = i + c.len_utf8();
        }
        i += c.len_utf8();
    }
    match kept {
        0 => Cow::Borrowed(text),
        _ => {
            out.push_str(&text[kept..]);
            Cow::Owned(out)
        }
    }
}

/// The length of the SGR sequence `text` starts with (`ESC [`, digits and semicolons, `m`).
fn sgr_len(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("\x1b[")?;
    let params = rest.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
    rest[params..].starts_with('m').then_some(2 + params + 1)
}

/// Whether `text` holds nothing a terminal would act on: no control character but the line
/// breaks and, when `colours`, the SGR sequences (`ESC [ ... m`) spate colours with. For tests
/// of every printer.
pub fn is_inert(text: &str, colours: bool) -> bool {
    matches!(inert(text, colours), Cow::Borrowed(_))
}

/// The fuzzed property (fuzz/fuzz_targets/outside.rs): whatever `text` holds, what `term`
/// makes of it drives no terminal, and text with nothing to escape is shown as it is.
pub fn check(text: &str) {
    let shown = term(text).to_string();
    assert!(is_inert(&shown, false), "{text:?} shown as {shown:?}");
    assert!(!shown.contains('\n'), "{text:?} shown on two lines");
    if !text.chars().any(unsafe_char) {
        assert_eq!(shown, text);
    }
    assert_eq!(term_str(text), shown);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_sent() {
        for (raw, shown) in [
            ("plain text, ünïcödé", "plain text, ünïcödé"),
            ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
            ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),
            ("a\nforged line\r", "a\\nforged line\\r"),
            ("tab\there", "tab\\there"),
            ("nul\0del\x7f", "nul\\x00del\\x7f"),
            // C1: NEL, and CSI, which some terminals read as ESC [.
            ("next\u{85}csi\u{9b}2J", "next\\u{85}csi\\u{9b}2J"),
            (
                "rtl \u{202e}override\u{2066}",
                "rtl \\u{202e}override\\u{2066}",
            ),
            ("", ""),
        ] {
            assert_eq!(term(raw).to_string(), shown, "{raw:?}");
            assert_eq!(term_str(raw), shown, "{raw:?}");
            assert!(is_inert(&term(raw).to_string(), false), "{raw:?}");
        }
        assert!(matches!(term_str("calm"), Cow::Borrowed("calm")));
    }

    #[test]
    fn the_fuzzed_property_holds_for_hostile_samples() {
        for t in [
            "",
            "plain",
            "\x1b[31mred",
            "a\nb\r\n",
            "\u{85}\u{9b}\u{202e}",
            "é\u{7f}\0",
        ] {
            check(t);
        }
    }

    #[test]
    fn inert_text_allows_line_breaks_and_only_spates_colours() {
        assert!(is_inert("a\nb\n", false));
        assert!(is_inert("\x1b[1;31mFAIL\x1b[0m\n", true));
        assert!(!is_inert("\x1b[1;31mFAIL\x1b[0m", false));
        assert!(!is_inert("\x1b]0;t\x07", true));
        assert!(!is_inert("\x1b[2J", true));
        assert!(!is_inert("a\rb", true));
        assert!(!is_inert("\u{9b}31m", true));
        assert!(!is_inert("\x1b[", true));
        assert_eq!(
            inert("\x1b[1mok\x1b[0m \x1b]0;t\x07\n", true),
            "\x1b[1mok\x1b[0m \\x1b]0;t\\x07\n"
        );
        assert_eq!(inert("\x1b[1mok", false), "\\x1b[1mok");
    }
}
