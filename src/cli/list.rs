//! A run's request list from the command line: several URLs, or `--urls-from-file`, in the
//! order `--order` and `--seed` say. Parsing is `request_list`'s; this only picks the source.

use super::Exit;
use super::args::{self, RunArgs};

/// The request list of several URLs or of `--urls-from-file`; `None` for one URL.
pub(super) fn request_list(r: &RunArgs) -> Result<Option<crate::request_list::RequestList>, Exit> {
    use crate::request_list::{Entry, Order, RequestList};
    let order = match (r.order, r.seed) {
        (Some(args::ListOrder::Random), seed) => Order::Random(seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })),
        (_, Some(_)) => {
            return Err(Exit::usage(
                "--seed is for --order random; add it, or drop --seed",
            ));
        }
        _ => Order::RoundRobin,
    };
    let list = match (&r.urls_from_file, r.urls.len()) {
        (Some(_), 1..) => {
            return Err(Exit::usage(
                "give the URLs on the command line or in --urls-from-file, not both",
            ));
        }
        (Some(path), 0) => {
            let name = format!("--urls-from-file {}", path.display());
            let bytes = crate::files::read("--urls-from-file", path, crate::files::BODY_LIMIT)
                .map_err(Exit::usage)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| Exit::usage(format!("{name}: not UTF-8 text")))?;
            RequestList::parse(&name, &text, order)
        }
        (None, 0 | 1) => {
            if r.order.is_some() {
                return Err(Exit::usage(
                    "--order is for a request list: give several URLs or --urls-from-file",
                ));
            }
            return Ok(None);
        }
        (None, _) => {
            let mut entries = Vec::new();
            for url in &r.urls {
                let target =
                    crate::target::Target::parse(url).map_err(|e| Exit::usage(e.to_string()))?;
                entries.push(Entry {
                    method: None,
                    target,
                    body: None,
                });
            }
            RequestList::new(entries, order)
        }
    };
    list.map(Some).map_err(|e| Exit::usage(e.to_string()))
}
