//! ANSI colours for the report: the 11 levels (bands, or words against `--slo` targets) from dark green through
//! yellow to dark red, in 256 colours or a 16-colour fallback, and the rule for using colour at
//! all (a terminal, no NO_COLOR, no --no-color, not TERM=dumb).

use std::ffi::OsStr;

/// Levels 0 (fastest) .. 10 (slowest) in the 256-colour palette.
const ANSI256: [u8; 11] = [22, 28, 34, 70, 142, 178, 214, 208, 202, 160, 88];
/// The same in 16 colours (SGR codes).
const ANSI16: [&str; 11] = [
    "32", "32", "92", "92", "93", "33", "33", "91", "91", "31", "1;31",
];

/// A 256-colour palette entry as the CSS colour xterm shows it (its 6x6x6 cube), so that the HTML
/// report's levels are the terminal's.
fn css(c256: u8) -> String {
    let i = c256.saturating_sub(16);
    let v = |n: u8| if n == 0 { 0 } else { 55 + 40 * n };
    format!("#{:02x}{:02x}{:02x}", v(i / 36), v(i / 6 % 6), v(i % 6))
}

/// The CSS colour of SLO level `level` (0..=10).
pub fn level_css(level: usize) -> String {
    css(ANSI256[level.min(10)])
}

/// The CSS colours of PASS and FAIL.
pub fn pass_css() -> String {
    css(34)
}

pub fn fail_css() -> String {
    css(160)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    None,
    Ansi16,
    Ansi256,
}

impl Palette {
    /// The palette for a stream, from its terminal-ness, `--no-color` and the environment.
    pub fn detect(is_terminal: bool, no_color_flag: bool) -> Palette {
        let term = std::env::var("TERM").ok();
        let colorterm = std::env::var("COLORTERM").ok();
        Palette::choose(
            is_terminal,
            no_color_flag,
            std::env::var_os("NO_COLOR").as_deref(),
            term.as_deref(),
            colorterm.as_deref(),
        )
    }

    /// The rule itself. NO_COLOR counts when it is set and not empty (no-color.org).
    pub fn choose(
        is_terminal: bool,
        no_color_flag: bool,
        no_color_env: Option<&OsStr>,
        term: Option<&str>,
        colorterm: Option<&str>,
    ) -> Palette {
        if !is_terminal || no_color_flag || no_color_env.is_some_and(|v| !v.is_empty()) {
            return Palette::None;
        }
        match term {
            Some("dumb") => Palette::None,
            Some(t) if t.contains("256color") => Palette::Ansi256,
            _ if colorterm.is_some_and(|c| !c.is_empty()) => Palette::Ansi256,
            _ => Palette::Ansi16,
        }
    }

    fn paint(self, sgr16: &str, c256: u8, text: &str) -> String {
        match self {
            Palette::None => text.to_owned(),
            Palette::Ansi16 => format!("\x1b[{sgr16}m{text}\x1b[0m"),
            Palette::Ansi256 => format!("\x1b[38;5;{c256}m{text}\x1b[0m"),
        }
    }

    /// `text` in the colour of SLO level `level` (0..=10).
    pub fn level(self, level: usize, text: &str) -> String {
        let l = level.min(10);
        self.paint(ANSI16[l], ANSI256[l], text)
    }

    pub fn pass(self, text: &str) -> String {
        self.paint("32", 34, text)
    }

    pub fn fail(self, text: &str) -> String {
        self.paint("1;31", 160, text)
    }

    pub fn bold(self, text: &str) -> String {
        match self {
            Palette::None => text.to_owned(),
            _ => format!("\x1b[1m{text}\x1b[0m"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_opt_outs() {
        let c = |tty, flag, nc: Option<&str>, term: Option<&str>, ct: Option<&str>| {
            Palette::choose(tty, flag, nc.map(OsStr::new), term, ct)
        };
        assert_eq!(
            c(true, false, None, Some("xterm-256color"), None),
            Palette::Ansi256
        );
        assert_eq!(c(true, false, None, Some("xterm"), None), Palette::Ansi16);
        assert_eq!(
            c(true, false, None, Some("xterm"), Some("truecolor")),
            Palette::Ansi256
        );
        assert_eq!(
            c(true, false, None, Some("screen"), Some("")),
            Palette::Ansi16
        );
        assert_eq!(
            c(false, false, None, Some("xterm-256color"), None),
            Palette::None,
            "not a terminal"
        );
        assert_eq!(
            c(true, true, None, Some("xterm-256color"), None),
            Palette::None,
            "--no-color"
        );
        assert_eq!(
            c(true, false, Some("1"), Some("xterm-256color"), None),
            Palette::None,
            "NO_COLOR"
        );
        assert_eq!(
            c(true, false, Some(""), Some("xterm"), None),
            Palette::Ansi16,
            "empty NO_COLOR is unset"
        );
        assert_eq!(c(true, false, None, Some("dumb"), None), Palette::None);
    }

    #[test]
    fn painting() {
        assert_eq!(Palette::None.level(3, "x"), "x");
        assert_eq!(Palette::Ansi256.level(0, "x"), "\x1b[38;5;22mx\x1b[0m");
        assert_eq!(Palette::Ansi256.level(99, "x"), "\x1b[38;5;88mx\x1b[0m");
        assert_eq!(Palette::Ansi16.level(10, "x"), "\x1b[1;31mx\x1b[0m");
        assert_eq!(Palette::Ansi16.fail("FAIL"), "\x1b[1;31mFAIL\x1b[0m");
    }

    #[test]
    fn css_colours_are_xterm_s_cube() {
        assert_eq!(level_css(0), "#005f00");
        assert_eq!(level_css(5), "#d7af00");
        assert_eq!(level_css(10), "#870000");
        assert_eq!(fail_css(), "#d70000");
    }
}
