# Homebrew formula for spate. This repository is its tap:
#   brew tap spate-rs/spate https://github.com/spate-rs/spate
#   brew install spate
# It builds the tagged release from source with cargo (a minute or two), then installs the man
# page and the shell completions that the binary generates.
class Spate < Formula
  desc "HTTP load generator: raw-TCP HTTP/1.1, HTTP/2, TLS, HDR latency, honest reports"
  homepage "https://github.com/spate-rs/spate"
  url "https://github.com/spate-rs/spate.git", tag: "v0.1.0"
  license any_of: ["MIT", "Apache-2.0"]
  head "https://github.com/spate-rs/spate.git", branch: "main"

  depends_on "rust" => :build

  def install
    system "cargo", "install", *std_cargo_args
    (man1/"spate.1").write Utils.safe_popen_read(bin/"spate", "man")
    generate_completions_from_executable(bin/"spate", "completions")
  end

  test do
    assert_match "spate #{version}", shell_output("#{bin}/spate --version")
  end
end
