//! The shipping files agree with each other: the Homebrew formula builds this version's tag, the
//! changelog has a section for it (the release notes come from there), the release workflow
//! builds every archive install.sh may ask for, and the crate carries what crates.io needs.

use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[test]
fn the_formula_builds_this_version_and_tests_it() {
    let formula = read("Formula/spate.rb");
    assert!(
        formula.contains(&format!("tag: \"v{VERSION}\"")),
        "Formula/spate.rb does not build v{VERSION}"
    );
    assert!(formula.contains("test do") && formula.contains("--version"));
    assert!(formula.contains(env!("CARGO_PKG_REPOSITORY")));
}

#[test]
fn the_changelog_has_this_version() {
    let changelog = read("CHANGELOG.md");
    assert!(
        changelog
            .lines()
            .any(|l| l.starts_with(&format!("## [{VERSION}] - "))),
        "CHANGELOG.md has no '## [{VERSION}] - date' section"
    );
}

#[test]
fn the_release_builds_every_archive_install_sh_asks_for() {
    let workflow = read(".github/workflows/release.yml");
    let install = read("install.sh");
    for (os, cpu) in [
        ("unknown-linux-gnu", "x86_64"),
        ("unknown-linux-gnu", "aarch64"),
        ("unknown-linux-musl", "x86_64"),
        ("unknown-linux-musl", "aarch64"),
        ("apple-darwin", "x86_64"),
        ("apple-darwin", "aarch64"),
    ] {
        assert!(install.contains(&format!("os_part=\"{os}\"")), "{os}");
        assert!(install.contains(&format!("cpu_part=\"{cpu}\"")), "{cpu}");
        assert!(
            workflow.contains(&format!("target: {cpu}-{os},")),
            "no {cpu}-{os} build"
        );
    }
    assert!(install.contains("archive=\"spate-$target.tar.gz\""));
    assert!(workflow.contains("archive=\"spate-$TARGET.tar.gz\""));
    assert!(workflow.contains("\"$archive.sha256\""));
    assert!(workflow.contains("target: x86_64-pc-windows-msvc,"));
    assert!(install.contains("spate-x86_64-pc-windows-msvc.zip"));
    let repo = env!("CARGO_PKG_REPOSITORY");
    assert!(
        install.contains(&format!("repo=\"{repo}\"")),
        "install.sh downloads from elsewhere"
    );
}

#[test]
fn the_crate_has_what_a_crates_io_release_needs() {
    for (field, value) in [
        ("description", env!("CARGO_PKG_DESCRIPTION")),
        ("license", env!("CARGO_PKG_LICENSE")),
        ("repository", env!("CARGO_PKG_REPOSITORY")),
        ("homepage", env!("CARGO_PKG_HOMEPAGE")),
        ("readme", env!("CARGO_PKG_README")),
        ("rust-version", env!("CARGO_PKG_RUST_VERSION")),
    ] {
        assert!(!value.is_empty(), "Cargo.toml has no {field}");
    }
    assert_eq!(env!("CARGO_PKG_LICENSE"), "MIT OR Apache-2.0");
    assert!(read("LICENSE-MIT").contains("MIT License"));
    assert!(read("LICENSE-APACHE").contains("Apache License"));
}

#[test]
fn the_containerfile_fetches_a_static_build_the_release_makes() {
    let file = read("Containerfile");
    let workflow = read(".github/workflows/release.yml");
    for cpu in ["x86_64", "aarch64"] {
        let target = format!("{cpu}-unknown-linux-musl");
        assert!(file.contains(&format!("target={target} ")), "{target}");
        assert!(workflow.contains(&format!("target: {target},")), "{target}");
    }
    assert!(file.contains("\"$base/spate-$target.tar.gz\" \"$base/spate-$target.tar.gz.sha256\""));
    assert!(file.contains("sha256sum -c"), "the archive is checked");
    assert!(file.contains(&format!("{}/releases/", env!("CARGO_PKG_REPOSITORY"))));
    // `spate k8s-job` gives the pods spate's arguments only.
    assert!(file.contains("ENTRYPOINT [\"/spate\"]"));
}
