//! moat as PID 1 (a container without an init): orphans re-parented to the
//! broker — the git of a worker killed mid-request — are reaped, not left as
//! zombies.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use moat_tests::{Fixture, moat_bin};

fn nspid(pid: u32) -> Option<String> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .map(|v| v.split_whitespace().last().unwrap_or("").to_owned())
}

#[test]
fn an_orphan_re_parented_to_a_pid_1_broker_is_reaped() {
    let fx = Fixture::new();
    // `unshare --pid --fork` makes moat PID 1 of a new PID namespace.
    let mut outer = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc"])
        .arg(moat_bin())
        .args(["serve", "--workspace"])
        .arg(&fx.root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("unshare (util-linux) runs moat in a new PID namespace");
    // Find the broker: the child of `unshare` that is PID 1 inside.
    let until = Instant::now() + Duration::from_secs(10);
    let broker = loop {
        let found = moat_tests::children_of(outer.id())
            .into_iter()
            .find(|p| nspid(*p).as_deref() == Some("1"));
        if let Some(p) = found {
            break p;
        }
        assert!(Instant::now() < until, "no PID-1 broker appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    // A process in the namespace whose parent exits is re-parented to PID 1.
    let st = Command::new("nsenter")
        .args([
            "--target",
            &broker.to_string(),
            "--pid",
            "--mount",
            "sh",
            "-c",
            "sleep 0.2 & exit",
        ])
        .status()
        .expect("nsenter");
    assert!(st.success());
    // The orphan lives 0.2 s, then must not stay a zombie of the broker.
    std::thread::sleep(Duration::from_millis(400));
    let until = Instant::now() + Duration::from_secs(8);
    loop {
        let zombies: Vec<u32> = moat_tests::children_of(broker)
            .into_iter()
            .filter(|p| moat_tests::process_state(*p) == Some('Z'))
            .collect();
        if zombies.is_empty() {
            break;
        }
        assert!(
            Instant::now() < until,
            "orphans left as zombies of a PID-1 broker: {zombies:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(outer.stdin.take());
    let _ = outer.wait();
}
