//! The `spate` binary: runs the application and exits with its code. The only place that exits.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(spate::app::main(std::env::args_os()))
}
