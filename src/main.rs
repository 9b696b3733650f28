//! The readbox executable: hands the process's arguments to the library and exits with its status.
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
