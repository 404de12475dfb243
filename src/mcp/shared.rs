//! `--session shared`: the run's one session, opened before the run over its own connection
//! (the handshake timed), and ended (DELETE) after it. The run's calls carry its id; each
//! connection makes no handshake of its own. Not on the load path; must not count a run's
//! figures.

use std::time::{Duration, Instant};

use super::SessionMode;
use super::client::connect;
use super::probe::{Listing, ProbeError, Transport};
use super::session::{self, Session};
use crate::plan::Plan;
use crate::proto::h1::ReadSpace;

/// The run's session and how long its handshake took.
#[derive(Debug, Clone)]
pub struct Opened {
    pub session: Session,
    pub took_ns: u64,
}

/// Whether `mode` applies to the server `listing` describes: why not, if it does not.
pub fn check(mode: SessionMode, listing: &Listing) -> Result<(), String> {
    if mode == SessionMode::PerConnection {
        return Ok(());
    }
    if !listing.sessions {
        return Err(format!(
            "--session {}: the server speaks the stateless revision ({}), which has no sessions; each call stands alone",
            mode.name(),
            listing.version
        ));
    }
    if mode == SessionMode::Shared && listing.transport == Transport::Sse {
        return Err(
            "--session shared: over the legacy HTTP+SSE transport each session's answers come on its own stream, so connections cannot share one".into(),
        );
    }
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime, ProbeError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ProbeError::Unreachable(format!("cannot start: {e}")))
}

/// Opens the run's session in the revision the server chose.
pub fn open(plan: &Plan, listing: &Listing) -> Result<Opened, ProbeError> {
    runtime()?.block_on(async {
        let mut conn = connect(plan).await?;
        let init = session::initialize_request(plan, &listing.version);
        let initialized = session::initialized_request(plan, &listing.version);
        let mut space = ReadSpace::new(64 << 10);
        let t = Instant::now();
        let session = tokio::time::timeout(
            plan.timeout.max(Duration::from_secs(1)),
            session::handshake(&mut conn, &init, &initialized, &mut space),
        )
        .await
        .map_err(|_| ProbeError::Unreachable("no answer to initialize in time".into()))?
        .map_err(|f| ProbeError::NotMcp(f.to_string()))?;
        Ok(Opened {
            session,
            took_ns: t.elapsed().as_nanos() as u64,
        })
    })
}

/// Ends the run's session, as a client should; whether the server took the DELETE is not the
/// run's concern.
pub fn end(plan: &Plan, opened: &Opened) {
    if opened.session.id.is_none() {
        return;
    }
    let Ok(rt) = runtime() else {
        return;
    };
    rt.block_on(async {
        let delete = session::with_session(
            &session::delete_request(plan, &opened.session.version),
            &opened.session,
        );
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            if let Ok(mut conn) = connect(plan).await {
                let _ = session::end(&mut conn, &delete).await;
            }
        })
        .await;
    });
}
