//! Returning freed heap memory to the system.
//!
//! Building the content controls' automata allocates several times what the
//! built automata keep (the intermediate automata are freed once the final
//! tables exist). glibc's allocator keeps freed memory at the top of its
//! heaps for later allocations rather than giving it back, so a process that
//! built them once would carry that peak as resident memory for its whole
//! life. [`release_free_heap`] asks the allocator to give back what it holds
//! free; a process calls it after such a one-off build.

/// Gives the pages the allocator holds free back to the system, where the
/// allocator can (glibc); elsewhere nothing. Costs a walk of the
/// allocator's free lists, well under a millisecond after start-up.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases memory the allocator holds free;
    // it takes no pointer, leaves every live allocation where it is, and is
    // thread-safe (it takes each arena's lock).
    unsafe {
        libc::malloc_trim(0);
    }
}
