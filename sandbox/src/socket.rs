//! Adopting the broker's socket, which the broker placed on a fixed descriptor.

/// The descriptor number the broker puts the worker's end of the socketpair on.
pub const SOCKET_FD: i32 = 3;

/// Take ownership of the socket on [`SOCKET_FD`].
///
/// Call once, at the top of the worker's main; the broker's spawn guarantees the
/// descriptor is an open `AF_UNIX` stream socket (it `dup2`s it there between
/// fork and exec, and checks the result).
#[cfg(unix)]
#[must_use]
pub fn take_socket() -> std::os::unix::net::UnixStream {
    use std::os::fd::FromRawFd;
    // SAFETY: fd 3 was installed by the broker's pre-exec hook as the worker's end
    // of a socketpair; nothing else in this process refers to it, and this
    // function is called once, so ownership is unique.
    #[allow(unsafe_code)]
    unsafe {
        std::os::unix::net::UnixStream::from_raw_fd(SOCKET_FD)
    }
}
