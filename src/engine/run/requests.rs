//! The requests of a plan, built once into a thread's `Setup`: HTTP/1.1 bytes, HTTP/2's fields,
//! HTTP/3's request, and the thread's feature (a request list's requests in each of those forms,
//! or what --redirect's chains start from). Must not run per request.

use std::sync::Arc;

use crate::engine::slots::shared::{Feature, GrpcSetup, H3Setup, ListSetup, Listed, Setup};
use crate::plan::Plan;
use crate::proto::h2::Other;
use crate::request;

/// The one feature `plan`'s slots have (the plan refuses two together), built for its threads.
pub(in crate::engine) fn feature(plan: &Plan) -> Result<Feature, String> {
    if let Some(g) = &plan.grpc {
        return Ok(Feature::Grpc(Arc::new(GrpcSetup {
            call: g.clone(),
            stream: plan.stream.clone().map(Arc::new),
            list: match &plan.list {
                Some(l) => Some(Arc::new(list_setup(plan, l)?)),
                None => None,
            },
        })));
    }
    if let Some(l) = &plan.list {
        return Ok(Feature::List(Arc::new(list_setup(plan, l)?)));
    }
    if let Some(f) = follow(plan)? {
        return Ok(Feature::Follow(f));
    }
    Ok(match &plan.stream {
        Some(s) => Feature::Stream(Arc::new(s.clone())),
        None => Feature::None,
    })
}

/// What --redirect needs, or `None` without it. TLS for the origins redirects lead to is set up
/// now, even for an http:// URL, but its failure matters only to a hop to https://; its ALPN
/// offers what the run's does over TCP (http/1.1 alone in a run of HTTP/1.1 or HTTP/3).
fn follow(plan: &Plan) -> Result<Option<Arc<crate::engine::workloads::hops::Follow>>, String> {
    if plan.redirects == 0 {
        return Ok(None);
    }
    let https = Plan {
        target: crate::target::Target {
            tls: true,
            ..plan.target.clone()
        },
        ..plan.clone()
    };
    use crate::reach::LaneChoice;
    let lane = crate::reach::lane_choice(plan);
    let (h2, h3) = (plan.may_use_h2(), lane == LaneChoice::Http3);
    let away = match lane {
        LaneChoice::Http2 => LaneChoice::Http2,
        LaneChoice::Alpn => LaneChoice::Alpn,
        LaneChoice::Http1 | LaneChoice::Http3 => LaneChoice::Http1,
    };
    // ALPN for other origins: the run's (`https` keeps its protocol), or http/1.1 alone.
    let tls = match away {
        LaneChoice::Http1 => crate::reach::look_tls_client(&https),
        _ => crate::reach::tls_client(&https),
    };
    Ok(Some(Arc::new(crate::engine::workloads::hops::Follow {
        first: listed(plan, h2, h3)?,
        plan: plan.clone(),
        limit: plan.redirects,
        tls: match tls {
            Ok(Some(tls)) => Ok(tls),
            Ok(None) => Err("no TLS".into()),
            Err(e) => Err(e.to_string()),
        },
        away,
        h2,
        h3,
    })))
}

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
