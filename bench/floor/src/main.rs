//! The floor: HTTP/1.1 keep-alive ping-pong over C connections with as little user-space work
//! as a client can do (a fixed request, no parsing beyond the arena target's `hello` body, no
//! clock per request), through level-triggered epoll, edge-triggered epoll (as tokio, and so
//! spate, registers its sockets) and io_uring. What it costs per request is what the kernel
//! charges any load generator on this machine. It must not grow features: it is a yardstick,
//! not a load generator.
//!
//! `latency` is the epoll client with a clock read at each send and each completion, for the
//! tail a strictly first-come-first-served client sees (p99/p50); its CPU figure is not the floor.
//!
//! Usage: spate-floor epoll|edge|uring|latency C SECONDS [ADDR] (ADDR: a loopback address,
//! default 127.0.0.1:18081, the arena's HTTP/1.1 target). Prints requests/s and CPU µs per
//! request.

use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use io_uring::{IoUring, opcode, squeue, types};

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
const BUF: usize = 4096;

/// The arena target answers every request with the body `hello`; a response is complete when
/// the bytes read so far end with it.
fn complete(read: &[u8]) -> bool {
    read.ends_with(b"hello")
}

/// User and system CPU seconds of this process.
fn cpu() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let r = unsafe {
        let mut r: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut r);
        r
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(r.ru_utime), s(r.ru_stime))
}

fn send(fd: i32) {
    // SAFETY: REQUEST is valid for its length. Loopback sockets take a 40-byte write whole.
    unsafe { libc::send(fd, REQUEST.as_ptr().cast(), REQUEST.len(), 0) };
}

/// epoll: one epoll_wait per batch, then one recv and one send per response, in the order the
/// kernel reports readiness. Level-triggered, the kernel polls every socket it reported once
/// more at the next wait; edge-triggered (`edge`), it reports a socket again only when new
/// bytes arrive, which is enough here because one recv takes a whole response (or the rest of
/// it arrives as new bytes). With `lat`, each request's latency in ns.
fn epoll(conns: &[TcpStream], until: Instant, edge: bool, mut lat: Option<&mut Vec<u64>>) -> u64 {
    let mut sent = vec![until; conns.len()];
    // SAFETY: plain system calls on descriptors this process owns.
    let ep = unsafe { libc::epoll_create1(0) };
    for (i, s) in conns.iter().enumerate() {
        s.set_nonblocking(true).expect("nonblocking");
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32 | if edge { libc::EPOLLET as u32 } else { 0 },
            u64: i as u64,
        };
        // SAFETY: as above.
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) };
        if lat.is_some() {
            sent[i] = Instant::now();
        }
        send(s.as_raw_fd());
    }
    let mut have = vec![0usize; conns.len()];
    let mut bufs = vec![[0u8; BUF]; conns.len()];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let mut done = 0u64;
    while Instant::now() < until {
        // SAFETY: `events` has room for 1024 entries.
        let k = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), 1024, 100) };
        for e in &events[..usize::try_from(k).unwrap_or(0)] {
            let i = e.u64 as usize;
            let fd = conns[i].as_raw_fd();
            let rest = &mut bufs[i][have[i]..];
            // SAFETY: `rest` is writable for its length.
            let r = unsafe { libc::recv(fd, rest.as_mut_ptr().cast(), rest.len(), 0) };
            if r <= 0 {
                continue;
            }
            have[i] += r as usize;
            if complete(&bufs[i][..have[i]]) {
                have[i] = 0;
                done += 1;
                if let Some(lat) = lat.as_deref_mut() {
                    let now = Instant::now();
                    lat.push((now - sent[i]).as_nanos() as u64);
                    sent[i] = now;
                }
                send(fd);
            }
        }
    }
    done
}

/// io_uring: each request is a send linked to a recv (the send's completion is skipped), and
/// everything queued since the last wait goes to the kernel in the same io_uring_enter.
fn uring(conns: &[TcpStream], until: Instant) -> u64 {
    let mut ring: IoUring = IoUring::builder()
        .setup_coop_taskrun()
        .build(4096)
        .expect("io_uring (kernel 5.19 or newer, not disabled)");
    let mut have = vec![0usize; conns.len()];
    // Leaked: a recv still queued when the ring goes away must never write into freed memory.
    let bufs: &mut [[u8; BUF]] = Vec::leak(vec![[0u8; BUF]; conns.len()]);
    let mut queued: Vec<squeue::Entry> = Vec::new();
    let recv = |i: usize, fd: i32, at: *mut u8, len: usize| {
        opcode::Recv::new(types::Fd(fd), at, len as u32)
            .build()
            .user_data(i as u64)
    };
    let ask = |i: usize, fd: i32, buf: &mut [u8; BUF], q: &mut Vec<squeue::Entry>| {
        let send = opcode::Send::new(types::Fd(fd), REQUEST.as_ptr(), REQUEST.len() as u32)
            .build()
            .flags(squeue::Flags::IO_LINK | squeue::Flags::SKIP_SUCCESS)
            .user_data(u64::MAX);
        q.push(send);
        q.push(recv(i, fd, buf.as_mut_ptr(), BUF));
    };
    for (i, s) in conns.iter().enumerate() {
        ask(i, s.as_raw_fd(), &mut bufs[i], &mut queued);
    }
    let mut done = 0u64;
    let mut completed: Vec<(u64, i32)> = Vec::with_capacity(4096);
    while Instant::now() < until {
        {
            let mut sq = ring.submission();
            for e in queued.drain(..) {
                // SAFETY: the buffers (leaked) and REQUEST (static) outlive the ring.
                unsafe { sq.push(&e).expect("submission queue full") };
            }
        }
        ring.submit_and_wait(1).expect("io_uring_enter");
        completed.extend(ring.completion().map(|c| (c.user_data(), c.result())));
        for (ud, res) in completed.drain(..) {
            if ud == u64::MAX || res <= 0 {
                continue;
            }
            let i = ud as usize;
            let fd = conns[i].as_raw_fd();
            have[i] += res as usize;
            if complete(&bufs[i][..have[i]]) {
                have[i] = 0;
                done += 1;
                ask(i, fd, &mut bufs[i], &mut queued);
            } else {
                let rest = &mut bufs[i][have[i]..];
                queued.push(recv(i, fd, rest.as_mut_ptr(), rest.len()));
            }
        }
    }
    done
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let usage = || {
        eprintln!(
            "usage: spate-floor epoll|edge|uring|latency CONNECTIONS SECONDS [LOOPBACK_ADDR]"
        );
        ExitCode::from(2)
    };
    let (Some(mode), Some(Ok(c)), Some(Ok(secs))) = (
        args.get(1),
        args.get(2).map(|s| s.parse::<usize>()),
        args.get(3).map(|s| s.parse::<u64>()),
    ) else {
        return usage();
    };
    let addr: SocketAddr = match args
        .get(4)
        .map_or(Ok("127.0.0.1:18081".parse().unwrap()), |a| a.parse())
    {
        Ok(a) => a,
        Err(_) => return usage(),
    };
    if !addr.ip().is_loopback()
        || c == 0
        || secs == 0
        || !matches!(mode.as_str(), "epoll" | "edge" | "uring" | "latency")
    {
        return usage();
    }
    let conns: Vec<TcpStream> = match (0..c).map(|_| TcpStream::connect(addr)).collect() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("spate-floor: cannot connect to {addr}: {e}");
            return ExitCode::from(1);
        }
    };
    for s in &conns {
        s.set_nodelay(true).expect("TCP_NODELAY");
    }
    let (u0, s0) = cpu();
    let start = Instant::now();
    let until = start + Duration::from_secs(secs);
    let mut lat = Vec::with_capacity(if mode == "latency" { 20_000_000 } else { 0 });
    let done = match mode.as_str() {
        "epoll" => epoll(&conns, until, false, None),
        "edge" => epoll(&conns, until, true, None),
        "latency" => epoll(&conns, until, false, Some(&mut lat)),
        _ => uring(&conns, until),
    };
    let elapsed = start.elapsed().as_secs_f64();
    let (u1, s1) = cpu();
    let per = |x: f64| x / done.max(1) as f64 * 1e6;
    println!(
        "floor-{mode} c={c} requests={done} rps={:.0} cpu_us_per_req={:.2} user_us_per_req={:.2}",
        done as f64 / elapsed,
        per(u1 - u0 + s1 - s0),
        per(u1 - u0)
    );
    if !lat.is_empty() {
        lat.sort_unstable();
        let q = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize] as f64 / 1e6;
        println!(
            "latency_ms p50={:.3} p90={:.3} p99={:.3} p99.9={:.3} p99/p50={:.2}",
            q(0.5),
            q(0.9),
            q(0.99),
            q(0.999),
            q(0.99) / q(0.5)
        );
    }
    ExitCode::SUCCESS
}
