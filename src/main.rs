//! The `spate` binary: argv to a command, the library to run it, the result to an exit code.
//! The only place that exits; it prints nothing but one-line errors and the demo banner.

use std::process::ExitCode;

use spate::cli::{self, Command, EXIT_USAGE};
use spate::engine::{self, RunError};
use spate::plan::Plan;
use spate::report::{self, Output};
use spate::serve::Server;
use spate::stats::Summary;

/// The target was unreachable, or no response below 400 arrived.
const EXIT_NO_SUCCESS: u8 = 1;

fn main() -> ExitCode {
    let command = match cli::parse(std::env::args_os()) {
        Ok(c) => c,
        Err(exit) => {
            if exit.code == 0 {
                print!("{}", exit.message);
            } else {
                eprintln!("{}", exit.message);
            }
            return ExitCode::from(exit.code);
        }
    };
    match command {
        Command::Run { plan, output } => run(&plan, &output),
        Command::Serve(config) => match Server::start(&config) {
            Ok(server) => {
                println!("spate serve: listening on {}", server.url());
                server.wait();
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("spate serve: cannot listen on {}: {e}", config.addr);
                ExitCode::from(EXIT_USAGE)
            }
        },
        Command::Demo {
            duration,
            connections,
            output,
        } => match spate::demo::start(duration, connections) {
            Ok((server, plan)) => {
                eprintln!(
                    "spate demo: built-in target on {}; running spate -c {} -z {} --threads {} {}",
                    server.url(),
                    plan.connections,
                    seconds(duration),
                    plan.threads,
                    server.url()
                );
                run(&plan, &output)
            }
            Err(e) => {
                eprintln!("spate demo: cannot start the built-in target: {e}");
                ExitCode::from(EXIT_NO_SUCCESS)
            }
        },
    }
}

fn seconds(d: std::time::Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

fn run(plan: &Plan, output: &Output) -> ExitCode {
    let out = match engine::run(plan) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("spate: {e}");
            let code = match e {
                RunError::Plan(_) => EXIT_USAGE,
                RunError::Resolve { .. } | RunError::Unreachable { .. } | RunError::Threads(_) => {
                    EXIT_NO_SUCCESS
                }
            };
            return ExitCode::from(code);
        }
    };
    let summary = Summary::new(plan, &out);
    if let Err(e) = report::emit(&summary, output) {
        eprintln!("spate: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    if summary.any_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_NO_SUCCESS)
    }
}
