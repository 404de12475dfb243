//! The requests of a plan, built once into a thread's `Setup`: HTTP/1.1 bytes, HTTP/2's fields,
//! HTTP/3's request, and a request list's requests in each of those forms. Must not run per request.

use std::sync::Arc;

use crate::engine::slots::shared::{H3Setup, ListSetup, Listed, Setup};
use crate::plan::Plan;
use crate::proto::h2::Other;
use crate::request;

/// The HTTP/1.1, HTTP/2 and HTTP/3 requests of `plan`, into `setup`: a thread whose script shaped
/// another request than the run's builds its own.
pub(in crate::engine) fn shape_requests(setup: &mut Setup, plan: &Plan) -> Result<(), String> {
    setup.request = request::h1_bytes(plan);
    setup.request_close = request::h1_bytes(&Plan {
        keep_alive: false,
        ..plan.clone()
    });
    setup.retry_safe = plan.is_idempotent();
    setup.head_request = plan.is_head();
    if plan.may_use_h2() {
        setup.h2_request = request::h2_prepared(plan)?;
    }
    if let Some(h3) = &setup.h3 {
        setup.h3 = Some(Arc::new(H3Setup {
            quic: h3.quic.clone(),
            request: Arc::new(request::h3_request(plan)?),
        }));
    }
    Ok(())
}

/// The requests of the list `l`, each built once as `plan` with its method, URL and body: for
/// HTTP/1.1, and for HTTP/2 and HTTP/3 where the run may speak them.
pub(in crate::engine) fn list_setup(
    plan: &Plan,
    l: &crate::request_list::RequestList,
) -> Result<ListSetup, String> {
    let h2 = plan.may_use_h2();
    let h3 = crate::reach::lane_choice(plan) == crate::reach::LaneChoice::Http3;
    let requests = (0..l.entries.len())
        .map(|i| listed(&plan.for_entry(l, i), h2, h3))
        .collect::<Result<_, String>>()?;
    Ok(ListSetup {
        requests,
        order: l.order,
        mcp: l.mcp.clone(),
        scheme: plan.target.scheme(),
        authority: plan.target.authority(),
    })
}

/// `p`'s request for HTTP/1.1, and for HTTP/2 (`h2`) and HTTP/3 (`h3`) when asked.
pub(in crate::engine) fn listed(p: &Plan, h2: bool, h3: bool) -> Result<Listed, String> {
    Ok(Listed {
        request: request::h1_bytes(p),
        request_close: request::h1_bytes(&Plan {
            keep_alive: false,
            ..p.clone()
        }),
        head_request: p.is_head(),
        retry_safe: p.is_idempotent(),
        h2: match h2 {
            true => Other::new(&request::h2_prepared(p)?),
            false => Other::default(),
        },
        h3: match h3 {
            true => Some(Arc::new(request::h3_request(p)?)),
            false => None,
        },
    })
}
