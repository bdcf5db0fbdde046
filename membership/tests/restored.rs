//! A follower whose etcd is wiped or restored: it must read the new store,
//! not resume a watch of the old one.

mod common;

use std::time::Duration;

use common::{Etcd, eventually};
use shardring::Ring;
use shardring_membership::{Admin, Event, Follower, FollowerOptions, MemberRecord};

const PREFIX: &str = "/shardring/test";
/// The deadline for a change to reach a follower: generous, for a loaded
/// 2-core machine; the times measured are printed.
const WAIT: Duration = Duration::from_secs(30);

/// A follower at revision 150 whose etcd is wiped and started again (the
/// same cluster id, as a restore would keep): the store's revision falls
/// below the follower's, or the store holds keys the follower never saw,
/// so the follower reads the prefix again, says why, and follows the new
/// store's members; three times over, so that whichever reconnect path runs,
/// the check is in it. Before, it resumed its watch at revision 151 and
/// kept the old ring, reporting itself connected. The epoch numbers the
/// follower publishes only grow, though the new store's revisions are far
/// below the old one's, and a subscriber from before the wipe hears of the
/// new store's epochs.
#[test]
fn a_follower_reads_a_wiped_etcd_again() {
    let mut etcd = Etcd::start();
    let endpoints = [etcd.url()];
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    admin.put_member("a", &MemberRecord::new(1.0)).unwrap();
    let mut revision = 0;
    for i in 0..150 {
        revision = admin.put_member("b", &MemberRecord::new(1.0 + f64::from(i % 3))).unwrap();
    }
    let (sender, events) = std::sync::mpsc::channel();
    let sender = std::sync::Mutex::new(sender);
    let hook = Box::new(move |event: &Event, _: &std::sync::Arc<shardring_membership::Epoch>| {
        let _ = sender.lock().unwrap().send(event.clone());
    });
    let options = FollowerOptions {
        hook: Some(hook),
        min_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(500),
        ..Default::default()
    };
    let follower = Follower::etcd(&endpoints, PREFIX, options).unwrap();
    assert!(follower.wait_for_revision(revision, WAIT).unwrap().revision >= revision);
    // One more change, which reaches the follower through its watch: the
    // watch is running when etcd goes away, so the follower resumes it.
    let revision = admin.put_member("c", &MemberRecord::new(1.0)).unwrap();
    assert!(follower.wait_for_revision(revision, WAIT).unwrap().revision >= revision);
    let subscriber = follower.subscribe();
    let mut numbers = Vec::new();
    assert_eq!(follower.epoch().number, follower.epoch().revision as u64, "one store from the start");
    for round in 0..3 {
        let before = follower.epoch();
        etcd.wipe_and_restart();
        let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
        let (x, y) = (format!("x{round}"), format!("y{round}"));
        admin.put_member(&x, &MemberRecord::new(1.0)).unwrap();
        admin.put_member(&y, &MemberRecord::new(1.0)).unwrap();
        let want = Ring::builder().node(x.as_str(), 1.0).node(y.as_str(), 1.0).build().unwrap();
        let took = eventually(WAIT, "the follower holds the new store's members", || {
            follower.epoch().fingerprint == want.fingerprint()
        });
        println!("etcd wiped (round {round}): the follower read the new store after {:.1} s", took.as_secs_f64());
        let mut reasons = Vec::new();
        for event in events.try_iter() {
            match event {
                Event::Disconnected { message } => reasons.push(message),
                Event::Epoch { epoch, .. } => numbers.push(epoch),
                _ => {}
            }
        }
        let after = follower.epoch();
        assert!(
            after.revision < before.revision && after.number > before.number,
            "round {round}: revision {} -> {}, epoch {} -> {}",
            before.revision,
            after.revision,
            before.number,
            after.number
        );
        // The follower swaps the epoch in before it tells subscribers: wait for the event.
        let mut heard: Vec<u64> = Vec::new();
        let deadline = std::time::Instant::now() + WAIT;
        while !heard.contains(&after.number) && std::time::Instant::now() < deadline {
            if let Ok(Event::Epoch { epoch, .. }) = subscriber.recv_timeout(Duration::from_millis(50)) {
                heard.push(epoch);
            }
        }
        assert!(heard.contains(&after.number), "round {round}: the subscriber heard {heard:?}, not {}", after.number);
        assert!(
            reasons.iter().any(|m| m.contains("reading /shardring/test/ again")),
            "round {round}: the follower said why it read the prefix again: {reasons:?}"
        );
        assert!(follower.status().connected, "{:?}", follower.status());
        let revision = admin.put_member("z", &MemberRecord::new(1.0)).unwrap();
        assert!(follower.wait_for_revision(revision, WAIT).unwrap().revision >= revision);
    }
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "epoch numbers only grow: {numbers:?}");
}
