//! Special files: a FIFO, a socket or a device is refused (`special_file`)
//! without being opened, so a read can never block on it, and listings count
//! such entries in `special_skipped` without touching them.

use std::time::{Duration, Instant};

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::json;

use super::util::{call_err, call_ok};

/// An open of a FIFO with no writer blocks until the tool deadline (15 s by
/// default) ends the request; an answer well before that, with the
/// `special_file` code, shows nothing was opened. Loose for loaded machines.
const PROMPTLY: Duration = Duration::from_secs(5);

#[test]
fn reading_a_fifo_is_refused_promptly() {
    let fx = Fixture::new();
    fx.fifo("pipe");
    fx.dir("sub");
    fx.fifo("sub/pipe2");
    fx.file("a.txt", "a\n");
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            for p in ["pipe", "sub/pipe2"] {
                let t = Instant::now();
                let (code, r) = call_err(&mut m, "read_file", json!({"path": p}));
                assert!(t.elapsed() < PROMPTLY, "{:?}", t.elapsed());
                assert_eq!(code, "special_file", "{mode:?}/{era:?} {p}: {r}");
                assert!(text(&r, 0).contains("FIFO"), "{r}");
            }
            // The server still answers.
            let r = call_ok(&mut m, "read_file", json!({"path": "a.txt"}));
            assert_eq!(r["structuredContent"]["total_lines"], 1);
            let (code, _) = call_err(&mut m, "list_directory", json!({"path": "pipe"}));
            assert_eq!(code, "not_a_directory");
        }
    }
}

#[test]
fn reading_a_socket_or_device_is_refused() {
    let fx = Fixture::new();
    let _listener = fx.socket("sock");
    // A character device (as root only; /dev/null's numbers).
    let dev = fx.root.join("nulldev");
    let c = std::ffi::CString::new(dev.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    #[allow(unsafe_code)]
    let have_dev =
        unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 3)) } == 0;
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let (code, r) = call_err(&mut m, "read_file", json!({"path": "sock"}));
        assert_eq!(code, "special_file", "{r}");
        assert!(text(&r, 0).contains("socket"), "{r}");
        if have_dev {
            let (code, r) = call_err(&mut m, "read_file", json!({"path": "nulldev"}));
            assert_eq!(code, "special_file", "{r}");
            assert!(text(&r, 0).contains("device"), "{r}");
        }
    }
}

#[test]
fn listing_a_directory_with_a_fifo_and_a_socket_does_not_block() {
    let fx = Fixture::new();
    fx.fifo("pipe");
    let _listener = fx.socket("sock");
    fx.file("a.txt", "a\n");
    fx.dir("d");
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let t = Instant::now();
        let r = call_ok(&mut m, "list_directory", json!({}));
        assert!(t.elapsed() < PROMPTLY, "{:?}", t.elapsed());
        let s = &r["structuredContent"];
        assert_eq!(s["special_skipped"], 2, "{r}");
        let names = super::util::entry_names(&r);
        assert_eq!(names, ["d", "a.txt"], "{r}");
        assert_eq!(
            (s["files"].as_u64(), s["directories"].as_u64()),
            (Some(1), Some(1))
        );
        assert!(text(&r, 0).contains("2 special files"), "{r}");
    }
}
