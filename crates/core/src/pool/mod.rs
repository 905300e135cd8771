//! The search thread pool: how many threads the searches of the whole process run at once,
//! and how the requests running share them. Plain Rust (no async runtime): waiting for a
//! slot is a `std::future::Future`, the rest is a mutex and condition variables.
//!
//! The pool has one general slot per core and one quick lane. A request waits in line
//! (first come, first served; dropping the wait leaves the line) for one slot, its base,
//! which it keeps until it ends. A [`Lane::Wide`] request (a walk, many files) starts its
//! even share of threads (one per core when it is alone; see `wide_threads`) and is lent
//! every free slot it can use, so a search alone uses every core. Lent
//! slots are taken back as soon as another request waits: from the request holding the
//! most, one at a time; the thread using it finishes the file it is on, then parks. When
//! nobody waits, free slots are lent again, to the request holding the fewest. So a long
//! search never makes a newcomer wait for more than one of its files, and the requests
//! running share the cores evenly. The threads of a request take a [`Turn`] of its
//! [`Gate`] around each file (see `walk::Control::turn`): at most as many work at once as
//! it holds slots; the others park until it holds more or it is cancelled.
//!
//! The quick lane is for requests that are small by construction ([`Lane::Quick`]: a few
//! small files named directly, a listing the file index serves from memory). They take a
//! general slot when one is free or can be taken back, else the quick lane: they never wait
//! behind long searches, only behind another quick request. At most cores + 1 threads
//! search at once, plus, for the rest of one file, a thread whose slot was just taken back.

pub(crate) mod pacing;

use crate::mutex::lock;
use std::cell::Cell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};

/// The cores this process may use: the size of the pool, and of every parallel walk.
/// Read once: on Linux the standard library reads the cgroup's CPU quota from several
/// files at every call, which a search would pay each time it sizes its walk.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// What a request needs from the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// Work of any size: one thread per core, running on as many slots as it is lent.
    Wide,
    /// Small work by construction (milliseconds), on one thread: may use the quick lane.
    Quick,
}

/// The process-wide pool, or a private one (tests).
pub struct Pool {
    capacity: usize,
    state: Mutex<State>,
}

struct State {
    /// General slots nobody holds.
    free: usize,
    quick_free: bool,
    /// Requests waiting for their base slot, in arrival order; a granted one stays until
    /// its future takes the grant.
    queue: VecDeque<Waiter>,
    /// Wide requests holding general slots, oldest first: those that lend and give back.
    wide: Vec<Arc<Gate>>,
    next_id: u64,
}

struct Waiter {
    id: u64,
    lane: Lane,
    waker: Option<Waker>,
    grant: Option<Grant>,
}

struct Grant {
    gate: Arc<Gate>,
    quick_lane: bool,
}

impl Pool {
    pub fn new(capacity: usize) -> Arc<Pool> {
        let capacity = capacity.max(1);
        Arc::new(Pool {
            capacity,
            state: Mutex::new(State {
                free: capacity,
                quick_free: true,
                queue: VecDeque::new(),
                wide: Vec::new(),
                next_id: 0,
            }),
        })
    }

    /// The pool every search of the process shares: one general slot per core.
    pub fn global() -> &'static Arc<Pool> {
        static POOL: OnceLock<Arc<Pool>> = OnceLock::new();
        POOL.get_or_init(|| Pool::new(cores()))
    }

    /// Waits in line for a slot. Dropping the future before it is ready leaves the line
    /// (and gives back a slot granted meanwhile).
    pub fn acquire(self: &Arc<Self>, lane: Lane) -> Acquire {
        Acquire {
            pool: self.clone(),
            lane,
            id: None,
            taken: false,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Grants waiters in order (taking lent slots back for them), then, when nobody is
    /// left waiting, lends the free slots and evens out the shares.
    fn rebalance(&self, state: &mut State) {
        for i in 0..state.queue.len() {
            if state.queue[i].grant.is_some() {
                continue;
            }
            if state.free == 0 {
                take_back(state);
            }
            let lane = state.queue[i].lane;
            let grant = if state.free > 0 {
                state.free -= 1;
                let threads = match lane {
                    Lane::Wide => wide_threads(self.capacity, state.wide.len() + 1),
                    Lane::Quick => 1,
                };
                let gate = Arc::new(Gate::new(threads));
                if threads > 1 {
                    state.wide.push(gate.clone());
                }
                Grant {
                    gate,
                    quick_lane: false,
                }
            } else if lane == Lane::Quick && state.quick_free {
                state.quick_free = false;
                Grant {
                    gate: Arc::new(Gate::new(1)),
                    quick_lane: true,
                }
            } else {
                // A wide waiter keeps its place: the wide ones behind it cannot be granted
                // either (no general slot is left), quick ones may still take the lane.
                continue;
            };
            let waiter = &mut state.queue[i];
            waiter.grant = Some(grant);
            if let Some(waker) = waiter.waker.take() {
                waker.wake();
            }
        }
        if state.queue.iter().any(|w| w.grant.is_none()) {
            return;
        }
        while state.free > 0 {
            let Some(gate) = state
                .wide
                .iter()
                .filter(|g| g.held() < g.threads)
                .min_by_key(|g| g.held())
            else {
                break;
            };
            gate.lend();
            state.free -= 1;
        }
        // Even shares: a request holding two or more slots more than another that could use
        // one more gives one to it (its thread on that slot ends its file first).
        while let Some(poor) = state
            .wide
            .iter()
            .filter(|g| g.held() < g.threads)
            .min_by_key(|g| g.held())
        {
            let Some(rich) = state.wide.iter().max_by_key(|g| g.held()) else {
                break;
            };
            if rich.held() < poor.held() + 2 {
                break;
            }
            rich.take_back();
            poor.lend();
        }
    }

    /// Gives a lease's slots back and grants or lends them anew.
    fn release(&self, gate: &Arc<Gate>, quick_lane: bool) {
        let mut state = self.lock();
        if quick_lane {
            state.quick_free = true;
        } else {
            state.free += gate.release_all();
            state.wide.retain(|g| !Arc::ptr_eq(g, gate));
        }
        self.rebalance(&mut state);
    }
}

/// The threads a wide request starts when it is the `running`-th: its even share then (at
/// least two, so it can still widen), and all it can ever work on. A search alone gets
/// one per core; the pool's threads, parked ones included, stay near capacity × ln(capacity)
/// however requests come.
fn wide_threads(capacity: usize, running: usize) -> usize {
    capacity.div_ceil(running.max(1)).max(2).min(capacity)
}

/// Takes one lent slot back, from the wide request holding the most (the newest among
/// equals); none when every request holds only its base.
fn take_back(state: &mut State) {
    if let Some(gate) = state
        .wide
        .iter()
        .filter(|g| g.held() > 1)
        .max_by_key(|g| g.held())
    {
        gate.take_back();
        state.free += 1;
    }
}

/// The wait for a slot; yields the [`Lease`].
pub struct Acquire {
    pool: Arc<Pool>,
    lane: Lane,
    id: Option<u64>,
    taken: bool,
}

impl Future for Acquire {
    type Output = Lease;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Lease> {
        let this = &mut *self;
        let pool = this.pool.clone();
        let mut state = pool.lock();
        let id = match this.id {
            Some(id) => id,
            None => {
                let id = state.next_id;
                state.next_id += 1;
                state.queue.push_back(Waiter {
                    id,
                    lane: this.lane,
                    waker: None,
                    grant: None,
                });
                this.id = Some(id);
                pool.rebalance(&mut state);
                id
            }
        };
        let Some(pos) = state.queue.iter().position(|w| w.id == id) else {
            unreachable!("a waiter stays in line until its future takes the grant")
        };
        if state.queue[pos].grant.is_some() {
            let grant = state
                .queue
                .remove(pos)
                .and_then(|w| w.grant)
                .expect("checked above");
            this.taken = true;
            drop(state);
            return Poll::Ready(Lease {
                pool,
                gate: grant.gate,
                quick_lane: grant.quick_lane,
            });
        }
        state.queue[pos].waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Acquire {
    fn drop(&mut self) {
        let (Some(id), false) = (self.id, self.taken) else {
            return;
        };
        let mut state = self.pool.lock();
        let Some(pos) = state.queue.iter().position(|w| w.id == id) else {
            return;
        };
        let waiter = state.queue.remove(pos).expect("position found");
        match waiter.grant {
            Some(grant) => {
                drop(state);
                self.pool.release(&grant.gate, grant.quick_lane);
            }
            // Leaving the line may let the waiters behind be lent slots.
            None => self.pool.rebalance(&mut state),
        }
    }
}

/// A request's slots, held until it is dropped (when the request's work has ended).
pub struct Lease {
    pool: Arc<Pool>,
    gate: Arc<Gate>,
    quick_lane: bool,
}

impl Lease {
    /// The threads the request should start: one per core for wide work, else one.
    pub fn threads(&self) -> usize {
        self.gate.threads
    }

    /// The gate its threads take turns at (put into its `Control`).
    pub fn gate(&self) -> Arc<Gate> {
        self.gate.clone()
    }

    /// Slots held now (diagnostics and tests).
    pub fn held(&self) -> usize {
        self.gate.held()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.pool.release(&self.gate, self.quick_lane);
    }
}

/// One request's share of the pool as its threads see it: at most `held` of them work at
/// once. Changed by the pool (under its lock, which is always taken before this one).
#[derive(Debug)]
pub struct Gate {
    threads: usize,
    state: Mutex<GateState>,
    turn_free: Condvar,
}

#[derive(Debug)]
struct GateState {
    held: usize,
    running: usize,
    /// The request is stopping: every thread goes through, to see that and end.
    open: bool,
}

thread_local! {
    /// This thread is inside a turn: a nested one (a file's work that asks again) must
    /// not wait for the slot the thread itself is using.
    static IN_TURN: Cell<bool> = const { Cell::new(false) };
}

impl Gate {
    fn new(threads: usize) -> Gate {
        Gate {
            threads,
            state: Mutex::new(GateState {
                held: 1,
                running: 0,
                open: false,
            }),
            turn_free: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        lock(&self.state)
    }

    /// Waits until fewer of the request's threads work than it holds slots, and counts
    /// this one until the turn is dropped. Call it around one file's work, not longer:
    /// between turns is where a thread gives its slot back. A thread holding a turn must
    /// not wait for other threads of the same request that need one (they could wait for
    /// its slot for ever); nested turns on one thread are free.
    pub(crate) fn turn(&self) -> Turn<'_> {
        if IN_TURN.with(Cell::get) {
            return Turn::free();
        }
        let mut state = self.lock();
        while state.running >= state.held && !state.open {
            state = self
                .turn_free
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.running += 1;
        IN_TURN.with(|t| t.set(true));
        Turn { gate: Some(self) }
    }

    /// Lets every thread through from now on (the request was cancelled: parked threads
    /// must wake to see it and stop).
    pub fn open(&self) {
        self.lock().open = true;
        self.turn_free.notify_all();
    }

    fn held(&self) -> usize {
        self.lock().held
    }

    fn lend(&self) {
        self.lock().held += 1;
        self.turn_free.notify_one();
    }

    /// One slot fewer; a thread working past it ends its file first (it is not stopped).
    fn take_back(&self) {
        let mut state = self.lock();
        state.held = state.held.saturating_sub(1).max(1);
    }

    fn release_all(&self) -> usize {
        std::mem::take(&mut self.lock().held)
    }
}

/// One thread's permission to work on one file; the slot is free again when dropped.
pub(crate) struct Turn<'a> {
    gate: Option<&'a Gate>,
}

impl Turn<'_> {
    /// A turn that waited for nothing: work outside the pool (no gate), or nested.
    pub fn free() -> Turn<'static> {
        Turn { gate: None }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let Some(gate) = self.gate else {
            return;
        };
        IN_TURN.with(|t| t.set(false));
        let mut state = gate.lock();
        state.running -= 1;
        if state.running < state.held {
            gate.turn_free.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// Polls a wait once (no runtime needed: the pool wakes nobody we must hear).
    fn poll(acquire: &mut Acquire) -> Option<Lease> {
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(acquire).poll(&mut cx) {
            Poll::Ready(lease) => Some(lease),
            Poll::Pending => None,
        }
    }

    fn get(pool: &Arc<Pool>, lane: Lane) -> Lease {
        poll(&mut pool.acquire(lane)).expect("granted at once")
    }

    /// Free general slots plus those held add up to the capacity.
    fn check_accounting(pool: &Pool) {
        let state = pool.lock();
        let wide: usize = state.wide.iter().map(|g| g.held()).sum();
        assert!(state.free + wide <= pool.capacity);
    }

    #[test]
    fn a_search_alone_is_lent_every_slot() {
        let pool = Pool::new(4);
        let lease = get(&pool, Lane::Wide);
        assert_eq!(lease.threads(), 4);
        assert_eq!(lease.held(), 4);
        check_accounting(&pool);
        // Later ones start their even share then, at least two (never more than cores).
        assert_eq!(get(&pool, Lane::Wide).threads(), 2);
        let shares: Vec<usize> = [(1, 1), (2, 1), (2, 2), (64, 1), (64, 4), (64, 64)]
            .iter()
            .map(|&(capacity, running)| wide_threads(capacity, running))
            .collect();
        assert_eq!(shares, [1, 2, 2, 64, 16, 2]);
    }

    #[test]
    fn a_newcomer_takes_a_lent_slot_back_and_it_returns_after() {
        let pool = Pool::new(2);
        let long = get(&pool, Lane::Wide);
        assert_eq!(long.held(), 2);
        let other = get(&pool, Lane::Wide);
        assert_eq!((long.held(), other.held()), (1, 1));
        check_accounting(&pool);
        drop(other);
        assert_eq!(long.held(), 2, "lent again once nobody waits");
        check_accounting(&pool);
    }

    #[test]
    fn running_requests_share_evenly_and_the_line_is_kept_in_order() {
        let pool = Pool::new(4);
        let a = get(&pool, Lane::Wide);
        let b = get(&pool, Lane::Wide);
        assert_eq!((a.held(), b.held()), (2, 2));
        let c = get(&pool, Lane::Wide);
        let d = get(&pool, Lane::Wide);
        assert_eq!((a.held(), b.held(), c.held(), d.held()), (1, 1, 1, 1));
        // Every slot is a base now: a fifth waits, and a sixth behind it.
        let mut e = pool.acquire(Lane::Wide);
        let mut f = pool.acquire(Lane::Wide);
        assert!(poll(&mut e).is_none());
        assert!(poll(&mut f).is_none());
        drop(a);
        assert!(poll(&mut f).is_none(), "the sixth does not pass the fifth");
        let e = poll(&mut e).expect("the fifth gets the slot");
        drop(b);
        let f = poll(&mut f).expect("then the sixth");
        drop((c, d));
        assert_eq!(e.held() + f.held(), 4);
        check_accounting(&pool);
    }

    #[test]
    fn quick_requests_never_wait_behind_wide_ones() {
        let pool = Pool::new(1);
        let long = get(&pool, Lane::Wide);
        let mut wide = pool.acquire(Lane::Wide);
        assert!(poll(&mut wide).is_none());
        // Behind a waiting wide request, with the only general slot a base: the lane.
        let quick = get(&pool, Lane::Quick);
        assert_eq!(quick.threads(), 1);
        // A second quick one waits for the first, not for the long search.
        let mut second = pool.acquire(Lane::Quick);
        assert!(poll(&mut second).is_none());
        drop(quick);
        let second = poll(&mut second).expect("the lane is free again");
        drop((second, long));
        assert!(poll(&mut wide).is_some());
    }

    #[test]
    fn leaving_the_line_gives_back_what_was_granted() {
        let pool = Pool::new(1);
        let long = get(&pool, Lane::Wide);
        let mut waiting = pool.acquire(Lane::Wide);
        assert!(poll(&mut waiting).is_none());
        drop(long); // granted to the waiter, not yet taken
        drop(waiting);
        assert_eq!(pool.lock().free, 1);
        assert!(pool.lock().queue.is_empty());
    }

    /// The threads of a lease: never more at work than it holds, and the parked ones
    /// resume when a slot comes back; opening the gate lets all through.
    #[test]
    fn turns_follow_the_slots_held() {
        let pool = Pool::new(3);
        let lease = get(&pool, Lane::Wide);
        assert_eq!(lease.held(), 3);
        let other = get(&pool, Lane::Wide);
        assert_eq!(lease.held(), 2);
        let gate = lease.gate();
        let (working, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let (done, most_before) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let lent = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    for _ in 0..20 {
                        let _turn = gate.turn();
                        let now = working.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        // Seen before the other request ended: this turn was had on 2.
                        if !lent.load(Ordering::SeqCst) {
                            most_before.fetch_max(now, Ordering::SeqCst);
                        }
                        std::thread::sleep(Duration::from_millis(1));
                        working.fetch_sub(1, Ordering::SeqCst);
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
            // Halfway, the other request ends: its slot is lent to this one.
            let deadline = Instant::now() + Duration::from_secs(10);
            while done.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(2));
            }
            lent.store(true, Ordering::SeqCst);
            drop(other);
        });
        assert!(
            most_before.load(Ordering::SeqCst) <= 2,
            "two slots, two at work"
        );
        assert!(most.load(Ordering::SeqCst) <= 3);
        assert_eq!(done.load(Ordering::SeqCst), 3);
        // Nested turns never wait for the thread's own slot.
        let single = Pool::new(1);
        let one = get(&single, Lane::Wide);
        let gate = one.gate();
        let outer = gate.turn();
        let inner = gate.turn();
        drop((inner, outer));
        // An open gate lets everyone through.
        gate.open();
        let (a, b) = (gate.turn(), Turn::free());
        drop((a, b));
    }
}
