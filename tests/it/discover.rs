//! `spate completions` and `spate man` as a user meets them: the bash script completes flags and
//! subcommands inside a real bash, the man page is roff for section 1, a bad shell is exit 2.

use std::process::Command;

use crate::support::spate;

/// Sources the generated bash completion and asks it to complete `words` (the last one is the
/// word under the cursor); returns the candidates.
fn bash_complete(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = format!(
        "source {path}; COMP_WORDS=({words}); COMP_CWORD={cword}; \
         _spate spate {cur} {prev}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path = script.display(),
        words = words.join(" "),
        cword = words.len() - 1,
        cur = words[words.len() - 1],
        prev = words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "-c", &line])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completion_completes_flags_and_subcommands() {
    let out = spate(&["completions", "bash"]);
    assert!(out.status.success());
    let dir = std::env::temp_dir().join(format!("spate-complete-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("spate.bash");
    std::fs::write(&script, &out.stdout).unwrap();

    assert_eq!(
        bash_complete(&script, &["spate", "--connecti"]),
        ["--connections"]
    );
    assert_eq!(
        bash_complete(&script, &["spate", "--connect-ti"]),
        ["--connect-timeout"]
    );
    assert_eq!(
        bash_complete(&script, &["spate", "--connect-to"]),
        ["--connect-to"]
    );
    let subcommands = bash_complete(&script, &["spate", "se"]);
    assert!(subcommands.contains(&"serve".to_owned()), "{subcommands:?}");
    assert_eq!(
        bash_complete(&script, &["spate", "serve", "--body-s"]),
        ["--body-size"]
    );
    let shells = bash_complete(&script, &["spate", "completions", "z"]);
    assert_eq!(shells, ["zsh"]);
    let formats = bash_complete(&script, &["spate", "--format", "j"]);
    assert_eq!(formats, ["json"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_listed_shell_gets_a_script() {
    for (shell, marker) in [
        ("bash", "complete -F _spate"),
        ("zsh", "#compdef spate"),
        ("fish", "complete -c spate"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = spate(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}: no {marker}");
        assert!(out.stderr.is_empty(), "{shell}");
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = spate(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("spate: ") && err.contains("tcsh"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn the_man_page_is_section_one_roff_with_every_flag() {
    let out = spate(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH spate 1"), "{}", &page[..200]);
    let help = String::from_utf8(spate(&["--help"]).stdout).unwrap();
    // Every long flag of the help is documented in the page (roff escapes the dashes).
    let flags: Vec<&str> = help
        .split_whitespace()
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.trim_end_matches([',', ')', '`']))
        .filter(|w| {
            w.chars()
                .skip(2)
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        })
        .collect();
    assert!(flags.len() > 30, "{flags:?}");
    for flag in flags {
        assert!(
            page.contains(&flag.replace('-', "\\-")),
            "the man page lacks {flag}"
        );
    }
}
