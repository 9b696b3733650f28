//! The readbox executable: hands the process's arguments to the library and exits with its status.
//!
//! Its C `main` runs without the standard library's preparation of a Rust `main`, which costs a
//! small call about 100,000 instructions; `readbox::start_process` does the part that matters.
#![no_main]

// Running out of memory answers `io: out of memory`, never an abort (docs/contract.md#limits).
#[global_allocator]
static ALLOCATOR: readbox::limits::Allocator = readbox::limits::Allocator;

#[unsafe(no_mangle)]
extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    readbox::start_process();
    let status = readbox::run(std::env::args_os().collect());
    std::process::exit(status);
}
