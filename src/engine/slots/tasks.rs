//! A load thread's tasks without tokio's task machinery: the thread's body, its connections and
//! its side tasks (sweeper, pacer, busy-poll spinner, HTTP/2 connection drivers) in one
//! `TaskSet` that the runtime's `block_on` polls directly; connections sit inline in their
//! members, side tasks are boxed. A socket's wake-up then costs one queue push instead of a
//! tokio task's header, scheduler queue and `LocalSet` tick, and one flat set means no inner set
//! that has polled all its members wakes its parent for nothing. Must not be used across
//! threads: tasks are `!Send` and the spawner is a `RefCell`.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::engine::slots::task_set::{Member, TaskSet};

type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Where code running on the thread hands over a task to run beside it until the body ends.
#[derive(Default)]
pub struct Spawner {
    new: RefCell<Vec<Task<'static>>>,
}

impl Spawner {
    /// Runs `task` on this thread until it completes or the thread's body ends, whichever comes
    /// first. It is first polled within the same wake-up as the code that spawned it.
    pub fn spawn(&self, task: impl Future<Output = ()> + 'static) {
        self.new.borrow_mut().push(Box::pin(task));
    }
}

/// The thread's connections: futures of one type, kept inline in the set's entries (no box, so
/// no second allocation and pointer to follow per wake-up), and counted until they complete.
/// They are handed over as an iterator and made one at a time as the set takes them: a list of
/// ready-made futures would hold every connection's state twice at the peak.
pub struct Conns<C> {
    new: RefCell<Vec<Box<dyn Iterator<Item = C>>>>,
    left: Cell<usize>,
    waiter: RefCell<Option<Waker>>,
}

impl<C> Default for Conns<C> {
    fn default() -> Self {
        Conns {
            new: RefCell::new(Vec::new()),
            left: Cell::new(0),
            waiter: RefCell::new(None),
        }
    }
}

impl<C> Conns<C> {
    /// Runs these connections beside the body, from the body's next wake-up on.
    pub fn push_all(&self, conns: impl ExactSizeIterator<Item = C> + 'static) {
        self.left.set(self.left.get() + conns.len());
        self.new.borrow_mut().push(Box::new(conns));
    }

    /// Completes once every connection handed over has.
    pub async fn all_done(&self) {
        poll_fn(|cx| {
            if self.left.get() == 0 {
                return Poll::Ready(());
            }
            *self.waiter.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    fn done_one(&self) {
        self.left.set(self.left.get() - 1);
        if self.left.get() == 0
            && let Some(w) = self.waiter.borrow_mut().take()
        {
            w.wake();
        }
    }
}

/// One member of the thread's set: a connection, inline, or a boxed side task.
enum Entry<'a, C> {
    Conn(C),
    Side(Task<'a>),
}

impl<C: Future<Output = ()> + Unpin> Future for Entry<'_, C> {
    /// Whether a connection finished.
    type Output = bool;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        match self.get_mut() {
            Entry::Conn(conn) => Pin::new(conn).poll(cx).map(|()| true),
            Entry::Side(task) => task.as_mut().poll(cx).map(|()| false),
        }
    }
}

impl<C: Member<Output = ()>> Member for Entry<'_, C> {
    fn companion(&self) -> usize {
        match self {
            Entry::Conn(conn) => conn.companion(),
            Entry::Side(_) => 0,
        }
    }
}

/// Runs `body` with the connections pushed to `conns` and the tasks spawned through `spawner`
/// beside it; returns the body's output as soon as it has one, dropping whatever is still
/// running.
pub async fn run<T, C: Member<Output = ()>>(
    spawner: &Spawner,
    conns: &Conns<C>,
    body: impl Future<Output = T>,
) -> T {
    let out = Cell::new(None);
    let ended = Cell::new(false);
    let mut set: TaskSet<Entry<'_, C>> = TaskSet::default();
    set.push(Entry::Side(Box::pin(async {
        out.set(Some(body.await));
        ended.set(true);
    })));
    let result = poll_fn(|cx: &mut Context<'_>| {
        loop {
            // Tasks spawned or connections handed over since the last look run in this wake-up.
            for task in spawner.new.borrow_mut().drain(..) {
                set.push(Entry::Side(task));
            }
            for batch in conns.new.borrow_mut().drain(..) {
                set.extend(batch.map(Entry::Conn));
            }
            let p = set.poll(cx, |conn_finished| {
                if conn_finished {
                    conns.done_one();
                }
                match ended.get() {
                    true => ControlFlow::Break(()),
                    false => ControlFlow::Continue(()),
                }
            });
            if let Some(v) = out.take() {
                return Poll::Ready(v);
            }
            let nothing_new = spawner.new.borrow().is_empty() && conns.new.borrow().is_empty();
            if p.yielded || nothing_new {
                return Poll::Pending;
            }
        }
    })
    .await;
    drop(set);
    // Tasks spawned by the ones just dropped never ran; they go too.
    spawner.new.borrow_mut().clear();
    conns.new.borrow_mut().clear();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    /// A connection type for the tests that push none.
    type Idle = std::future::Ready<()>;
    impl Member for Idle {}

    fn none() -> Conns<Idle> {
        Conns::default()
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn side_tasks_run_beside_the_body_and_stop_with_it() {
        let spawner = Rc::new(Spawner::default());
        let seen = Rc::new(Cell::new(0u32));
        let dropped = Rc::new(Cell::new(false));
        struct OnDrop(Rc<Cell<bool>>);
        impl Drop for OnDrop {
            fn drop(&mut self) {
                self.0.set(true);
            }
        }
        let out = block_on(run(&spawner, &none(), {
            let (spawner, seen, dropped) = (spawner.clone(), seen.clone(), dropped.clone());
            async move {
                // A side task that never ends; it must be dropped when the body returns.
                spawner.spawn(async move {
                    let _guard = OnDrop(dropped);
                    std::future::pending::<()>().await
                });
                // A side task that spawns another; both must run while the body waits.
                let inner = (spawner.clone(), seen.clone());
                spawner.spawn(async move {
                    inner.1.set(inner.1.get() + 1);
                    let s = inner.1.clone();
                    inner.0.spawn(async move { s.set(s.get() + 10) });
                });
                while seen.get() < 11 {
                    tokio::task::yield_now().await;
                }
                seen.get()
            }
        }));
        assert_eq!(out, 11);
        assert!(dropped.get(), "a side task outlived the body");
        assert!(spawner.new.borrow().is_empty());
    }

    #[test]
    fn a_side_task_can_wake_the_body() {
        let spawner = Spawner::default();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let out = block_on(run(&spawner, &none(), async {
            spawner.spawn(async move {
                tokio::task::yield_now().await;
                let _ = tx.send(7u32);
            });
            rx.await
        }));
        assert_eq!(out, Ok(7));
    }

    #[test]
    fn a_body_that_never_waits_still_lets_side_tasks_run() {
        let spawner = Spawner::default();
        let flag = Rc::new(Cell::new(false));
        let rounds = block_on(run(&spawner, &none(), async {
            let f = flag.clone();
            spawner.spawn(async move { f.set(true) });
            let mut rounds = 0u32;
            // Ready at once until the thread's cooperative budget is spent.
            while !flag.get() && rounds < 1_000_000 {
                tokio::task::coop::consume_budget().await;
                rounds += 1;
            }
            rounds
        }));
        assert!(flag.get(), "the side task never ran ({rounds} rounds)");
    }

    #[test]
    fn connections_run_inline_and_the_body_waits_for_all_of_them() {
        let spawner = Spawner::default();
        let conns = Conns::default();
        let finished = Rc::new(Cell::new(0u32));
        let counter = finished.clone();
        // Boxed, as the set takes only `Unpin` connections.
        let conn = move |rounds: u32| {
            let finished = counter.clone();
            Box::pin(async move {
                for _ in 0..rounds {
                    tokio::task::yield_now().await;
                }
                finished.set(finished.get() + 1);
            })
        };
        let seen = block_on(run(&spawner, &conns, async {
            conns.push_all([0, 3, 10].into_iter().map(conn.clone()));
            conns.all_done().await;
            finished.get()
        }));
        assert_eq!(
            seen, 3,
            "the body went on before every connection had finished"
        );
    }

    #[test]
    fn a_connection_and_its_waker_fit_in_four_cache_lines() {
        // The connection sits in its member as it is (no box, no tag of its own), beside the
        // waker: four lines, each fetched when it is woken and read on the way to every request.
        type Conn = crate::engine::slots::drive::Drive;
        assert_eq!(size_of::<Entry<'static, Conn>>(), size_of::<Conn>());
        let member = crate::engine::slots::task_set::member_bytes::<Entry<'static, Conn>>();
        assert!(member <= 4 * 64, "{member}");
    }
}
