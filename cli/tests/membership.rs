//! Faults on a real etcd, with member agents as separate processes (this
//! crate's `shardring member join`) and followers in the test: a member
//! killed with SIGKILL drops out of the ring when its lease expires; a
//! follower answers from its last ring while etcd is down for 10 s and
//! converges when it is back; a follower that was cut off while etcd
//! compacted its history re-reads the prefix and converges.
//!
//! Each wait has a deadline generous for a loaded 2-core machine (`WAIT`),
//! and the tests print the times they measured instead of asserting them.

#[path = "../../membership/tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Etcd, eventually};
use shardring::{Node, Ring};
use shardring_membership::{Admin, Event, Follower, FollowerOptions, MemberRecord};

const PREFIX: &str = "/shardring/faults";

/// The deadline for anything to happen: generous, for a loaded 2-core machine.
const WAIT: Duration = Duration::from_secs(30);

/// A `shardring member join` process, killed when dropped.
struct Agent(Child);

impl Agent {
    fn join(etcd: &str, id: &str, ttl: u64) -> Agent {
        let mut child = Command::new(env!("CARGO_BIN_EXE_shardring"))
            .args(["member", "join", "--etcd", etcd, "--prefix", PREFIX, "--id", id, "--ttl", &ttl.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert!(line.starts_with("joined"), "{line}");
        Agent(child)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ids(follower: &Follower) -> Vec<String> {
    let mut ids: Vec<String> = follower.ring().nodes().iter().map(|n| n.id().to_owned()).collect();
    ids.sort();
    ids
}

fn ring_of(ids: &[&str]) -> Ring {
    Ring::builder().nodes(ids.iter().map(|id| Node::new(*id, 1.0))).build().unwrap()
}

#[test]
fn a_killed_member_drops_out_when_its_lease_expires_and_the_others_stay() {
    let etcd = Etcd::start();
    let follower = Follower::etcd(&[etcd.url()], PREFIX, FollowerOptions::default()).unwrap();
    let _stays = Agent::join(&etcd.url(), "stays", 2);
    let mut dies = Agent::join(&etcd.url(), "dies", 2);
    eventually(WAIT, "both members", || ids(&follower) == ["dies", "stays"]);
    dies.0.kill().unwrap();
    let gone = eventually(WAIT, "the killed member to drop out", || ids(&follower) != ["dies", "stays"]);
    println!("SIGKILLed member (TTL 2 s) gone from the follower's ring after {:.2} s", gone.as_secs_f64());
    assert_eq!(ids(&follower), ["stays"]);
    let mut admin = Admin::connect(&[etcd.url()], PREFIX).unwrap();
    let listed: Vec<String> = admin.members().unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(listed, ["stays"], "etcd itself no longer lists it");
}

#[test]
fn followers_answer_while_etcd_is_down_and_converge_when_it_is_back() {
    let mut etcd = Etcd::start();
    let endpoints = [etcd.url()];
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    for id in ["a", "b", "c"] {
        admin.put_member(id, &MemberRecord::new(1.0)).unwrap();
    }
    let _agent = Agent::join(&etcd.url(), "agent", 5);
    // Each event with the time it happened, recorded on the follower's thread.
    let (sender, events) = std::sync::mpsc::channel();
    let sender = Mutex::new(sender);
    let hook = Box::new(move |event: &Event, _: &Arc<shardring_membership::Epoch>| {
        let _ = sender.lock().unwrap().send((Instant::now(), event.clone()));
    });
    let follower = Arc::new(
        Follower::etcd(&endpoints, PREFIX, FollowerOptions { hook: Some(hook), ..Default::default() }).unwrap(),
    );
    eventually(WAIT, "four members", || follower.ring().nodes().len() == 4);
    let before = follower.epoch();
    // A change right before the outage.
    admin.put_member("d", &MemberRecord::new(1.0)).unwrap();
    drop(admin);
    let down = Instant::now();
    etcd.stop();
    // Readers keep answering from a whole ring throughout.
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(Mutex::new(0u64));
    let reader = {
        let (follower, stop, answered) = (Arc::clone(&follower), Arc::clone(&stop), Arc::clone(&answered));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let epoch = follower.epoch();
                for i in 0..100 {
                    epoch.ring.get(format!("key-{i}")).expect("a ring with members answers");
                }
                assert_eq!(epoch.ring.fingerprint(), epoch.fingerprint);
                *answered.lock().unwrap() += 100;
            }
        })
    };
    let noticed = eventually(WAIT, "the follower to notice", || !follower.status().connected);
    let seen_down = Instant::now();
    println!("etcd killed: the follower noticed after {:.2} s", noticed.as_secs_f64());
    std::thread::sleep(Duration::from_secs(10).saturating_sub(down.elapsed()));
    // The stale clock started at the first failure: after etcd was killed,
    // before the test saw it.
    let (seen_for, status, killed_for) = (seen_down.elapsed(), follower.status(), down.elapsed());
    assert!(
        seen_for <= status.stale_for && status.stale_for <= killed_for,
        "stale for {:?}, seen down for {seen_for:?}, etcd down for {killed_for:?}: {status:?}",
        status.stale_for
    );
    assert!(follower.revision() >= before.revision);
    etcd.restart();
    let deadline = Instant::now() + WAIT;
    let (at, down_for) = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left).expect("a reconnection within the deadline") {
            (at, Event::Reconnected { down_for, .. }) => break (at, down_for),
            _ => continue,
        }
    };
    stop.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    println!(
        "etcd down {:.1} s, {} lookups answered meanwhile; etcd took {:?} to start, the follower reconnected {:?} after the restart began",
        down_for.as_secs_f64(),
        answered.lock().unwrap(),
        etcd.ready - etcd.spawned,
        at - etcd.spawned,
    );
    // The agent kept its registration, and the change made before the outage is in.
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    let revision = admin.put_member("e", &MemberRecord::new(1.0)).unwrap();
    let epoch = follower.wait_for_revision(revision, WAIT).unwrap();
    assert_eq!(epoch.fingerprint, ring_of(&["a", "agent", "b", "c", "d", "e"]).fingerprint());
    assert!(follower.status().connected);
}

/// A TCP relay to etcd that can cut every connection and refuse new ones.
struct Relay {
    port: u16,
    open: Arc<AtomicBool>,
    connections: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    fn start(target: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Arc::new(AtomicBool::new(true));
        let connections = Arc::new(Mutex::new(Vec::new()));
        let (accept_open, accept_connections) = (Arc::clone(&open), Arc::clone(&connections));
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if !accept_open.load(Ordering::Relaxed) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else { continue };
                let mut all = accept_connections.lock().unwrap();
                all.push(client.try_clone().unwrap());
                all.push(server.try_clone().unwrap());
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Relay { port, open, connections }
    }

    fn cut(&self) {
        self.open.store(false, Ordering::Relaxed);
        for connection in self.connections.lock().unwrap().drain(..) {
            let _ = connection.shutdown(Shutdown::Both);
        }
    }

    fn restore(&self) {
        self.open.store(true, Ordering::Relaxed);
    }
}

#[test]
fn a_follower_cut_off_while_history_is_compacted_rereads_and_converges() {
    let etcd = Etcd::start();
    let relay = Relay::start(etcd.client_port);
    let through_relay = [format!("http://127.0.0.1:{}", relay.port)];
    let mut admin = Admin::connect(&[etcd.url()], PREFIX).unwrap();
    admin.put_member("a", &MemberRecord::new(1.0)).unwrap();
    let follower = Follower::etcd(&through_relay, PREFIX, FollowerOptions::default()).unwrap();
    let events = follower.subscribe();
    assert_eq!(ids(&follower), ["a"]);
    // Cut once the follower watches, so that it resumes its watch (and
    // finds the history compacted) instead of reading the prefix afresh:
    // the same record written again changes only its mod revision, which
    // reaches the follower only through the watch.
    let watched = admin.put_member("a", &MemberRecord::new(1.0)).unwrap();
    follower.wait_for_revision(watched, WAIT).unwrap();
    relay.cut();
    let noticed = eventually(WAIT, "the follower to notice the cut", || !follower.status().connected);
    println!("connections cut: the follower noticed after {:.2} s", noticed.as_secs_f64());
    admin.put_member("b", &MemberRecord::new(1.0)).unwrap();
    admin.leave("a").unwrap();
    let mut last = 0;
    for weight in 1..=5 {
        last = admin.put_member("c", &MemberRecord::new(f64::from(weight))).unwrap();
    }
    etcd.etcdctl(&["compact", &last.to_string()]);
    assert_eq!(ids(&follower), ["a"], "still the last ring while cut off");
    relay.restore();
    let restored = Instant::now();
    let epoch = follower.wait_for_revision(last, WAIT).unwrap();
    println!("connections restored: the follower held revision {last} after {:.2} s", restored.elapsed().as_secs_f64());
    let want = Ring::builder().node("b", 1.0).node("c", 5.0).build().unwrap();
    let got: Vec<(String, f64)> = epoch.ring.nodes().iter().map(|n| (n.id().to_owned(), n.weight())).collect();
    assert_eq!(
        epoch.fingerprint,
        want.fingerprint(),
        "at revision {} (wanted {last}): {got:?}; events {:?}",
        epoch.revision,
        events.try_iter().collect::<Vec<_>>()
    );
    let seen: Vec<Event> = events.try_iter().collect();
    assert!(seen.iter().any(|e| matches!(e, Event::Reconnected { .. })), "the reconnection is reported: {seen:?}");
}
