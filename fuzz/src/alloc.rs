//! A global allocator that aborts on any single allocation above [`LIMIT`], naming its size.
//! It stands in for libFuzzer's `-malloc_limit_mb`, which only works with a sanitizer's allocator
//! hooks; the abort is a "deadly signal" to libFuzzer, which saves the input as a crash.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write as _;

/// The largest single allocation allowed: 64 MiB.
pub const LIMIT: usize = 64 << 20;

/// [`System`], with the limit.
#[derive(Debug, Clone, Copy)]
pub struct Capped;

// SAFETY: every call is forwarded unchanged to `System`, which upholds `GlobalAlloc`'s contract;
// the only addition is a size check that aborts before anything is allocated.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size);
        // SAFETY: forwarded with the caller's pointer, layout and size.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Aborts when `size` is over the limit. Allocates nothing itself (it runs inside the allocator).
fn check(size: usize) {
    if size <= LIMIT {
        return;
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = size;
    loop {
        at -= 1;
        // `rest % 10` is a single digit.
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(b"==swdesk-fuzz== out of memory: a single allocation of ");
    let _ = stderr.write_all(&digits[at..]);
    let _ = stderr.write_all(b" bytes is over the 64 MiB limit\n");
    std::process::abort();
}
