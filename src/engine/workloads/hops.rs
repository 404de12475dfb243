//! --redirect: the requests of redirect chains, built once per thread. A hop is the request a
//! redirect leads to (its bytes, ready to write) and where it goes; it is found again by the
//! hop it came from, the status and the Location, so that a chain a server repeats costs a
//! lookup, not a rebuild. Each origin's destination is resolved once per thread. Must not be
//! used on the static path: without --redirect there is no `Hops` at all.

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;

use crate::engine::protocols::open::Via;
use crate::engine::run::requests::listed;
use crate::engine::slots::shared::{LaneChoice, Listed};
use crate::net::TlsClient;
use crate::plan::Plan;
use crate::redirect::{self, Origin, RedirectError};
use crate::request;
use crate::route::Endpoint;

/// Chains a thread keeps at most; a server that names a new Location every time (a token in
/// it) gets its hops built each time instead of filling memory.
const MAX_KEPT: usize = 4096;

/// What following redirects needs, the same for every thread.
#[derive(Debug)]
pub struct Follow {
    /// The run's own plan: the first request of every chain, and whose credentials go where.
    pub plan: Plan,
    /// Redirects followed per request at most.
    pub limit: u32,
    /// TLS for origins a redirect leads to (ALPN as `away` says), named per origin; why not, if
    /// it could not be set up (only a hop to https:// needs it).
    pub tls: Result<TlsClient, String>,
    /// How connections to other https:// origins choose their protocol: with ALPN as the run's
    /// do over TCP (h2 alone with --http2, h2 or http/1.1 otherwise), HTTP/1.1 in a run of
    /// HTTP/1.1 or HTTP/3. Other http:// origins are spoken to in HTTP/1.1.
    pub away: LaneChoice,
    /// The first request of every chain, in every form the run sends.
    pub first: Listed,
    /// The forms a hop to the run's own origin takes beside HTTP/1.1's: the run's protocol.
    pub h2: bool,
    pub h3: bool,
}

/// One request of a chain.
pub struct Hop {
    /// Tells the hops of a thread apart, to find what follows each.
    id: u32,
    pub plan: Plan,
    /// Its request: HTTP/1.1's bytes for every hop, and the run's protocol's form for a hop to
    /// the run's own origin.
    pub listed: Listed,
    pub dest: Rc<Dest>,
}

/// Where the hops to one origin connect.
pub struct Dest {
    /// The run's own origin: its hops go on the connection's own, opened as the run's are.
    pub home: bool,
    /// How a connection here chooses its protocol (`Follow::away`).
    lane: LaneChoice,
    /// Resolved for this origin, or why not (the hop fails as a connect would).
    endpoint: Result<Endpoint, String>,
    tls: Option<Result<TlsClient, String>>,
    tunnel: Option<Bytes>,
    preferred: Cell<usize>,
}

impl Dest {
    /// How to open a connection here (not for `home`: that is the run's own [`Via`]).
    pub fn via(&self) -> Result<Via<'_>, String> {
        let endpoint = self.endpoint.as_ref().map_err(Clone::clone)?;
        let tls = match &self.tls {
            Some(t) => Some(t.as_ref().map_err(Clone::clone)?),
            None => None,
        };
        Ok(Via {
            endpoint,
            preferred: &self.preferred,
            tunnel: self.tunnel.as_ref(),
            tls,
            lane: self.lane,
        })
    }
}

/// Where a Location leads from hop `.0` after a response of status `.1`.
type Known = (u32, u16, Result<Rc<Hop>, RedirectError>);

/// A thread's hops and destinations.
pub struct Hops {
    follow: Arc<Follow>,
    pub first: Rc<Hop>,
    /// By Location: where it leads from each hop and status it came with.
    next: HashMap<Box<[u8]>, Vec<Known>>,
    kept: usize,
    dests: HashMap<Origin, Rc<Dest>>,
    ids: u32,
}

impl Hops {
    pub fn new(follow: Arc<Follow>) -> Hops {
        let home = Rc::new(Dest {
            home: true,
            lane: LaneChoice::Http1,
            endpoint: Err(String::new()),
            tls: None,
            tunnel: None,
            preferred: Cell::new(0),
        });
        let first = Rc::new(Hop {
            id: 0,
            plan: follow.plan.clone(),
            listed: follow.first.clone(),
            dest: home.clone(),
        });
        let mut dests = HashMap::new();
        dests.insert(Origin::of(&follow.plan.target), home);
        Hops {
            follow,
            first,
            next: HashMap::new(),
            kept: 0,
            dests,
            ids: 1,
        }
    }

    pub fn limit(&self) -> u32 {
        self.follow.limit
    }

    /// The hop a `status` response with Location `location` to `from` leads to.
    pub fn next(
        &mut self,
        from: &Hop,
        status: u16,
        location: &[u8],
    ) -> Result<Rc<Hop>, RedirectError> {
        if let Some(known) = self.next.get(location).and_then(|v| {
            v.iter()
                .find(|(id, s, _)| *id == from.id && *s == status)
                .map(|(_, _, to)| to.clone())
        }) {
            return known;
        }
        let to = redirect::next(&self.follow.plan, &from.plan, status, location).and_then(|plan| {
            let dest = self.dest(&plan);
            self.ids = self.ids.wrapping_add(1);
            hop(&self.follow, self.ids, plan, dest)
                .map(Rc::new)
                .map_err(|why| RedirectError::Unsendable { status, why })
        });
        if self.kept < MAX_KEPT {
            self.kept += 1;
            self.next
                .entry(location.into())
                .or_default()
                .push((from.id, status, to.clone()));
        }
        to
    }

    /// The destination of `plan`'s origin, resolved the first time.
    fn dest(&mut self, plan: &Plan) -> Rc<Dest> {
        let origin = Origin::of(&plan.target);
        if let Some(d) = self.dests.get(&origin) {
            return d.clone();
        }
        // A name lookup on the load thread, once per origin and thread.
        let endpoint = plan.route.resolve(&plan.target).map_err(|e| e.to_string());
        let tls = plan.target.tls.then(|| match &self.follow.tls {
            Ok(t) => t.for_host(&plan.target.host).map_err(|e| e.to_string()),
            Err(why) => Err(why.clone()),
        });
        let dest = Rc::new(Dest {
            home: false,
            // Without TLS nothing negotiates: prior knowledge is for the run's own origin.
            lane: match plan.target.tls {
                true => self.follow.away,
                false => LaneChoice::Http1,
            },
            endpoint,
            tls,
            tunnel: request::tunnel_bytes(plan),
            preferred: Cell::new(0),
        });
        self.dests.insert(origin, dest.clone());
        dest
    }
}

/// The hop `id` to `plan`'s URL: in the run's protocol's form too when it goes to the run's
/// origin (on the slot's own connection), in HTTP/1.1's and, where the connection may speak
/// it, HTTP/2's elsewhere (a connection of its own).
fn hop(follow: &Follow, id: u32, plan: Plan, dest: Rc<Dest>) -> Result<Hop, String> {
    let home = dest.home;
    let h2 = match home {
        true => follow.h2,
        false => dest.lane != LaneChoice::Http1,
    };
    Ok(Hop {
        id,
        listed: listed(&plan, h2, home && follow.h3)?,
        plan,
        dest,
    })
}
