//! `arcsim`: run the simulated world.

use std::process::ExitCode;

use arcsim::commands::app::Cli;
use arcsim::commands::exit;
use clap::Parser;

/// A simulated run allocates and frees JSON trees all the time; mimalloc does that in about half the
/// CPU glibc's allocator takes (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (`include/mimalloc.h`, v2 and v3 alike); the
/// Rust bindings name only its deprecated neighbours.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps the memory mimalloc frees committed instead of handing it back to the kernel 10 ms later: a
/// sweep frees one world's JSON trees and allocates the next's, and each page handed back was faulted
/// in and zeroed again (about 1% of a standard seed's CPU, docs/log/2026-12-07.md). Memory stays at
/// the process's peak, which a sweep reaches in its first worlds anyway.
fn keep_freed_memory_committed() {
    // SAFETY: sets one integer option; mimalloc reads it when it next decides whether to purge.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

/// The exit status of a process that wrote to a pipe whose reader had gone (128 + SIGPIPE), as `cat`
/// or `yes` end under `| head`.
const CLOSED_STDOUT_EXIT: i32 = 141;

/// Ends the process quietly when standard output is a pipe its reader closed (`arcsim list | head -2`),
/// instead of the panic `print!` raises. Standard output only: the sockets `serve` and `stage` write to
/// keep Rust's EPIPE errors, which they handle.
fn quiet_on_closed_stdout() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(CLOSED_STDOUT_EXIT);
        }
        default_hook(info);
    }));
}

fn main() -> ExitCode {
    keep_freed_memory_committed();
    quiet_on_closed_stdout();
    match Cli::parse().execute() {
        Ok(()) => ExitCode::from(exit::PASSED),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(exit::status_of(&e))
        }
    }
}
