//! The task set's rules: polled once and then only when woken, places and wakers reused, yields
//! and stops, tokio's budget, wake-ups from other threads, and whole cache lines per member.

use super::*;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::AtomicUsize;

/// A task for the tests: counts its polls, finishes with its name after `rounds` of them,
/// and wakes itself on each pending poll when `spin` is set (a task that yields).
struct Task {
    name: u32,
    polls: Rc<Cell<u32>>,
    rounds: u32,
    spin: bool,
    waker: Rc<Cell<Option<Waker>>>,
}

impl Future for Task {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        let this = self.get_mut();
        this.polls.set(this.polls.get() + 1);
        if this.polls.get() >= this.rounds {
            return Poll::Ready(this.name);
        }
        if this.spin {
            cx.waker().wake_by_ref();
        }
        this.waker.set(Some(cx.waker().clone()));
        Poll::Pending
    }
}

impl Member for Task {}

/// The task's poll count and the waker it kept, as the test sees them.
type Seen = (Rc<Cell<u32>>, Rc<Cell<Option<Waker>>>);

fn task(name: u32, rounds: u32, spin: bool) -> (Task, Seen) {
    let polls = Rc::new(Cell::new(0));
    let waker = Rc::new(Cell::new(None));
    let t = Task {
        name,
        polls: polls.clone(),
        rounds,
        spin,
        waker: waker.clone(),
    };
    (t, (polls, waker))
}

/// A parent waker that counts its wake-ups.
#[derive(Default)]
struct Parent(AtomicUsize);
impl Wake for Parent {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

fn parent() -> (Arc<Parent>, Waker) {
    let p = Arc::new(Parent::default());
    (p.clone(), Waker::from(p))
}

fn keep_all(_: u32) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

#[test]
fn new_members_are_polled_once_and_then_only_when_woken() {
    let mut set = TaskSet::default();
    let (a, (a_polls, a_waker)) = task(1, 3, false);
    let (b, (b_polls, _)) = task(2, 10, false);
    set.extend([a, b].into_iter());
    let (parent, waker) = parent();
    let mut cx = Context::from_waker(&waker);
    let p = set.poll(&mut cx, keep_all);
    assert_eq!((p.polled, p.yielded), (2, false));
    assert_eq!((a_polls.get(), b_polls.get()), (1, 1));
    // Nothing woken: nothing polled, and the parent is not woken.
    assert_eq!(set.poll(&mut cx, keep_all).polled, 0);
    assert_eq!(parent.0.load(Ordering::Relaxed), 0);
    // A wake-up queues the member once however often it comes, and wakes the parent once.
    let w = a_waker.take().expect("a kept its waker");
    w.wake_by_ref();
    w.wake_by_ref();
    assert_eq!(parent.0.load(Ordering::Relaxed), 1);
    assert_eq!(set.poll(&mut cx, keep_all).polled, 1);
    assert_eq!((a_polls.get(), b_polls.get()), (2, 1));
    // The third poll finishes it and hands over its output; a late wake-up of a finished
    // member polls nothing.
    w.wake_by_ref();
    let mut finished = Vec::new();
    let p = set.poll(&mut cx, |v| {
        finished.push(v);
        ControlFlow::Continue(())
    });
    assert_eq!((p.polled, finished), (1, vec![1]));
    assert_eq!(set.live, 1);
    w.wake_by_ref();
    assert_eq!(set.poll(&mut cx, keep_all).polled, 0);
    assert_eq!(a_polls.get(), 3);
}

/// A set whose one task has finished after two polls, and the waker that task kept.
fn with_a_finished_task(cx: &mut Context<'_>) -> (TaskSet<Task>, Waker) {
    let mut set = TaskSet::default();
    let (a, (_, a_waker)) = task(1, 2, false);
    set.push(a);
    set.poll(cx, keep_all);
    let stale = a_waker.take().expect("a kept its waker");
    stale.wake_by_ref();
    set.poll(cx, keep_all);
    assert_eq!(set.live(), 0);
    (set, stale)
}

#[test]
fn a_finished_members_place_is_reused_and_a_stale_wake_only_polls_its_successor() {
    let (_, waker) = parent();
    let mut cx = Context::from_waker(&waker);
    let (mut set, stale) = with_a_finished_task(&mut cx);
    let (b, (b_polls, _)) = task(2, 10, false);
    set.push(b);
    assert_eq!(
        set.places.len(),
        1,
        "the finished task's place was not reused"
    );
    set.poll(&mut cx, keep_all);
    assert_eq!(b_polls.get(), 1);
    // The old task's waker queues the place again: one spurious poll of the new task, which
    // futures must tolerate, and nothing else.
    stale.wake_by_ref();
    assert_eq!(set.poll(&mut cx, keep_all).polled, 1);
    assert_eq!(b_polls.get(), 2);
}

#[test]
fn a_reused_place_keeps_its_waker_and_a_late_wake_before_the_push_polls_once() {
    let (_, waker) = parent();
    let mut cx = Context::from_waker(&waker);
    let (mut set, stale) = with_a_finished_task(&mut cx);
    // Woken after it finished and before its place is taken: the queued entry polls b.
    stale.wake_by_ref();
    let (b, (b_polls, b_waker)) = task(2, 10, false);
    set.push(b);
    assert_eq!(set.live(), 1);
    assert_eq!(set.poll(&mut cx, keep_all).polled, 1);
    assert_eq!(b_polls.get(), 1);
    // The successor was polled with the very waker the old task kept, so a socket still
    // holding that one keeps no allocation of its own alive.
    let kept = b_waker.take().expect("b kept its waker");
    assert!(kept.will_wake(&stale));
}

#[test]
fn members_that_keep_waking_themselves_let_the_runtime_in() {
    let mut set = TaskSet::default();
    let (a, (a_polls, _)) = task(1, u32::MAX, true);
    let (b, (b_polls, _)) = task(2, u32::MAX, true);
    let (c, (c_polls, _)) = task(3, u32::MAX, false);
    set.extend([a, b, c].into_iter());
    let (parent, waker) = parent();
    let p = set.poll(&mut Context::from_waker(&waker), keep_all);
    // Each polled once, then the set yields with the two spinners queued, and has woken
    // its caller to come back.
    assert_eq!((p.polled, p.yielded), (3, true));
    assert_eq!((a_polls.get(), b_polls.get(), c_polls.get()), (1, 1, 1));
    assert!(parent.0.load(Ordering::Relaxed) >= 1);
    let p = set.poll(&mut Context::from_waker(&waker), keep_all);
    assert_eq!((p.polled, p.yielded), (2, true));
    assert_eq!((a_polls.get(), b_polls.get(), c_polls.get()), (2, 2, 1));
}

#[test]
fn a_stop_leaves_the_rest_of_the_batch_queued_in_order() {
    let mut set = TaskSet::default();
    let (a, (_, _)) = task(1, 1, false);
    let (b, (b_polls, _)) = task(2, 5, false);
    let (c, (c_polls, _)) = task(3, 5, false);
    set.extend([a, b, c].into_iter());
    let (_, waker) = parent();
    let mut cx = Context::from_waker(&waker);
    let p = set.poll(&mut cx, |v| {
        assert_eq!(v, 1);
        ControlFlow::Break(())
    });
    assert_eq!(p.polled, 1);
    assert_eq!((b_polls.get(), c_polls.get()), (0, 0));
    assert_eq!(set.poll(&mut cx, keep_all).polled, 2);
    assert_eq!((b_polls.get(), c_polls.get()), (1, 1));
}

/// A task that makes one unit of progress on tokio's cooperative budget, then finishes and
/// notes its name.
struct Spender(u32, Rc<std::cell::RefCell<Vec<u32>>>);

impl Future for Spender {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        std::task::ready!(tokio::task::coop::poll_proceed(cx)).made_progress();
        self.1.borrow_mut().push(self.0);
        Poll::Ready(self.0)
    }
}

impl Member for Spender {}

#[test]
fn a_spent_budget_ends_the_turn_and_the_rest_waits_in_order() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let done = Rc::default();
    let mut set = TaskSet::default();
    set.extend((0..1000).map(|i| Spender(i, Rc::clone(&done))));
    let mut turns = Vec::new();
    rt.block_on(async {
        while set.live() > 0 {
            // One poll of this task is one turn, with a fresh budget (128 units today).
            let p = std::future::poll_fn(|cx| Poll::Ready(set.poll(cx, keep_all))).await;
            turns.push((p.polled, p.yielded));
            tokio::task::yield_now().await;
        }
    });
    assert!(
        done.borrow().iter().copied().eq(0..1000),
        "finished out of order"
    );
    let (polled, yielded) = turns[0];
    assert!(yielded, "the first turn ran out of budget");
    // Every member polled finished: none was polled only to be put off.
    let total: usize = turns.iter().map(|&(p, _)| p).sum();
    assert_eq!(total, 1000, "{} turns: {turns:?}", turns.len());
    assert!(polled < 1000 && turns.len() > 1);
}

#[test]
fn a_wake_from_another_thread_reaches_the_set() {
    let mut set = TaskSet::default();
    let (a, (a_polls, a_waker)) = task(1, 5, false);
    set.push(a);
    let (parent, waker) = parent();
    set.poll(&mut Context::from_waker(&waker), keep_all);
    let w = a_waker.take().expect("a kept its waker");
    std::thread::spawn(move || w.wake()).join().unwrap();
    assert_eq!(parent.0.load(Ordering::Relaxed), 1);
    assert_eq!(
        set.poll(&mut Context::from_waker(&waker), keep_all).polled,
        1
    );
    assert_eq!(a_polls.get(), 2);
}

#[test]
fn a_member_is_its_task_and_waker_in_whole_cache_lines() {
    // Waker 16 + flag 8 + companion 8 + the task and its `Option` tag.
    assert_eq!(member_bytes::<[u8; 31]>(), 64);
    assert_eq!(member_bytes::<[u8; 32]>(), 128);
}
