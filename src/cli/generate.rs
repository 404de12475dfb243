//! `spate completions SHELL` and `spate man`: text generated from the same clap definition that
//! parses the command line, so neither can drift from the flags. Must not print: the caller
//! writes the bytes.

use clap::CommandFactory as _;
use clap_complete::Shell;

use super::args::{Cli, EXAMPLES};

/// The completion script for `shell`.
pub fn completions(shell: Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "spate", &mut out);
    if shell == Shell::Fish {
        return fish_without_dotted_specs(&String::from_utf8_lossy(&out)).into_bytes();
    }
    out
}

/// fish's `argparse` rejects an option spec with a dot ("http1.1"), and the generated script then
/// completes nothing at all. Such flags take no value, so they leave the spec and are removed from
/// the words before `argparse` reads them.
fn fish_without_dotted_specs(script: &str) -> String {
    let mut dotted = Vec::new();
    let mut fixed = String::with_capacity(script.len());
    for line in script.lines() {
        if let Some(specs) = line.strip_prefix("    string join \\n ") {
            let (keep, drop): (Vec<&str>, Vec<&str>) =
                specs.split(' ').partition(|spec| !spec.contains('.'));
            dotted.extend(drop.iter().map(|spec| spec.to_string()));
            fixed.push_str("    string join \\n ");
            fixed.push_str(&keep.join(" "));
        } else {
            fixed.push_str(line);
        }
        fixed.push('\n');
        if line == "    set -e cmd[1]" {
            for flag in &dotted {
                fixed.push_str(&format!("    set cmd (string match -v -- --{flag} $cmd)\n"));
            }
        }
    }
    fixed
}

/// The manual page spate(1) in roff, with one section per subcommand after the options.
pub fn man() -> Vec<u8> {
    let cmd = Cli::command();
    let mut out = Vec::new();
    // The help's closing text is laid out for a terminal; the page gets it as sections below.
    let page = clap_mangen::Man::new(cmd.clone().after_help(None::<&str>));
    // Writing into a Vec cannot fail.
    page.render(&mut out).expect("render into memory");
    out.extend_from_slice(closing_sections(EXAMPLES).as_bytes());
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name();
        out.extend_from_slice(format!(".SH \"SPATE {}\"\n", name.to_uppercase()).as_bytes());
        let sub_page = clap_mangen::Man::new(sub.clone().bin_name(format!("spate {name}")));
        let mut body = Vec::new();
        sub_page
            .render_synopsis_section(&mut body)
            .expect("in memory");
        sub_page
            .render_description_section(&mut body)
            .expect("in memory");
        sub_page
            .render_options_section(&mut body)
            .expect("in memory");
        // The subcommand's own sections become subsections of this one; the page preamble
        // (the quote-character definition) is already at the top.
        let body = String::from_utf8_lossy(&body).replace(".SH ", ".SS ");
        for line in body
            .lines()
            .filter(|l| !l.starts_with(".ie ") && !l.starts_with(".el "))
        {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// The help's closing text as roff: "Examples:" and "Exit codes:" open EXAMPLES and EXIT STATUS,
/// other paragraphs follow as they are; indented lines (commands) stay unfilled.
fn closing_sections(text: &str) -> String {
    let mut roff = String::new();
    for block in text.split("\n\n") {
        let mut lines = block.lines().peekable();
        match lines.peek() {
            Some(&"Examples:") => {
                lines.next();
                roff.push_str(".SH EXAMPLES\n");
            }
            Some(first) if first.starts_with("Exit codes:") => {
                roff.push_str(".SH \"EXIT STATUS\"\n");
            }
            _ => roff.push_str(".PP\n"),
        }
        let mut unfilled = false;
        for line in lines {
            let command = line.starts_with("  ");
            if command != unfilled {
                roff.push_str(if command { ".nf\n" } else { ".fi\n" });
                unfilled = command;
            }
            roff.push_str(&escape(line.trim_start()));
            roff.push('\n');
        }
        if unfilled {
            roff.push_str(".fi\n");
        }
    }
    roff
}

/// Text for a roff line: backslashes and minus signs escaped, and a leading `.` or `'` kept from
/// being read as a request.
fn escape(line: &str) -> String {
    let text = line.replace('\\', "\\e").replace('-', "\\-");
    if text.starts_with(['.', '\'']) {
        format!("\\&{text}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_completes_the_flags_and_subcommands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::PowerShell] {
            let text = String::from_utf8(completions(shell)).unwrap();
            // fish spells long flags without the dashes (`-l connections`).
            for word in [
                "connections",
                "duration",
                "http2",
                "serve",
                "demo",
                "completions",
            ] {
                assert!(text.contains(word), "{shell}: no {word}");
            }
        }
    }

    #[test]
    fn fish_argparse_specs_have_no_dots_and_the_dotted_flag_is_filtered() {
        let text = String::from_utf8(completions(Shell::Fish)).unwrap();
        let specs = text
            .lines()
            .find(|l| l.starts_with("    string join \\n "))
            .expect("an optspec line");
        assert!(!specs.contains('.'), "{specs}");
        assert!(specs.contains(" http2 "), "{specs}");
        assert!(text.contains("    set cmd (string match -v -- --http1.1 $cmd)\n"));
        // The flag itself is still offered.
        assert!(text.contains("-l http1.1 "));
    }

    #[test]
    fn the_man_page_has_options_examples_and_subcommands() {
        let text = String::from_utf8(man()).unwrap();
        assert!(
            text.starts_with(".ie") || text.contains(".TH spate 1"),
            "{}",
            &text[..200]
        );
        for needle in [
            "\\-\\-connections",
            ".SH EXAMPLES\n.nf\nspate demo",
            "Comparing servers",
            ".SH \"EXIT STATUS\"\nExit codes: 0",
            ".SH \"SPATE SERVE\"",
            ".SH \"SPATE DEMO\"",
            "\\-\\-body\\-size",
        ] {
            assert!(text.contains(needle), "no {needle}");
        }
    }
}
