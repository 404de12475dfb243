//! A load thread's tasks without tokio's task machinery: the thread's body, its connections and
//! its side tasks (sweeper, pacer, busy-poll spinner, HTTP/2 connection drivers) in one
//! `FuturesUnordered` that the runtime's `block_on` polls directly. A socket's wake-up then costs
//! one queue push instead of a tokio task's header, scheduler queue and `LocalSet` tick, and one
//! flat set means no inner set that has polled all its members wakes its parent for nothing
//! (`FuturesUnordered` yields when it has polled every member). Must not be used across threads:
//! tasks are `!Send` and the spawner is a `RefCell`.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};

type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Where code running on the thread hands over a task to run beside it until the body ends.
#[derive(Default)]
pub struct Spawner {
    new: RefCell<Vec<Task<'static>>>,
    joined: Rc<Joined>,
}

/// The joined tasks still running, and who waits for them.
#[derive(Default)]
struct Joined {
    left: Cell<usize>,
    waiter: RefCell<Option<Waker>>,
}

impl Spawner {
    /// Runs `task` on this thread until it completes or the thread's body ends, whichever comes
    /// first. It is first polled within the same wake-up as the code that spawned it.
    pub fn spawn(&self, task: impl Future<Output = ()> + 'static) {
        self.new.borrow_mut().push(Box::pin(task));
    }

    /// Like [`spawn`](Self::spawn), and [`all_joined`](Self::all_joined) waits for it.
    pub fn spawn_joined(&self, task: impl Future<Output = ()> + 'static) {
        self.spawn(counted(task, self.joined.clone()));
    }

    /// Completes once every task spawned with [`spawn_joined`](Self::spawn_joined) has.
    pub async fn all_joined(&self) {
        poll_fn(|cx| {
            if self.joined.left.get() == 0 {
                return Poll::Ready(());
            }
            *self.joined.waiter.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}

/// `task`, counted in `joined` until it completes. `map`, not an async block: an async block
/// would keep the task twice, as its captured value and as the future it awaits, and the task is
/// a connection's whole state, paid per connection.
fn counted(task: impl Future<Output = ()>, joined: Rc<Joined>) -> impl Future<Output = ()> {
    joined.left.set(joined.left.get() + 1);
    task.map(move |()| {
        joined.left.set(joined.left.get() - 1);
        if joined.left.get() == 0
            && let Some(w) = joined.waiter.borrow_mut().take()
        {
            w.wake();
        }
    })
}

/// Runs `body` with the tasks spawned through `spawner` beside it; returns the body's output
/// as soon as it has one, dropping whatever side tasks are still running.
pub async fn run<T>(spawner: &Spawner, body: impl Future<Output = T>) -> T {
    let out = Cell::new(None);
    let mut all: FuturesUnordered<Task<'_>> = FuturesUnordered::new();
    all.push(Box::pin(async { out.set(Some(body.await)) }));
    let result = poll_fn(|cx: &mut Context<'_>| {
        loop {
            all.extend(spawner.new.borrow_mut().drain(..));
            match all.poll_next_unpin(cx) {
                Poll::Ready(Some(())) => {
                    if let Some(v) = out.take() {
                        return Poll::Ready(v);
                    }
                }
                // The body is in the set until it has finished.
                Poll::Ready(None) => unreachable!("the body left without an output"),
                Poll::Pending if spawner.new.borrow().is_empty() => return Poll::Pending,
                Poll::Pending => {}
            }
        }
    })
    .await;
    drop(all);
    // Tasks spawned by the ones just dropped never ran; they go too.
    spawner.new.borrow_mut().clear();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

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
        let out = block_on(run(&spawner, {
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
        let out = block_on(run(&spawner, async {
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
        let rounds = block_on(run(&spawner, async {
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
    fn counting_a_task_adds_a_pointer_not_a_copy() {
        let big = [0u8; 1000];
        let task = async move {
            std::future::ready(()).await;
            std::hint::black_box(&big);
        };
        let alone = std::mem::size_of_val(&task);
        let joined = Rc::new(Joined::default());
        let wrapped = counted(task, joined.clone());
        assert!(std::mem::size_of_val(&wrapped) <= alone + 16);
        assert_eq!(joined.left.get(), 1);
        block_on(wrapped);
        assert_eq!(joined.left.get(), 0);
    }
}
