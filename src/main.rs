//! The readbox executable: hands the process's arguments to the library and exits with its status.

// Running out of memory answers `io: out of memory`, never an abort (docs/contract.md#limits).
#[global_allocator]
static ALLOCATOR: readbox::limits::Allocator = readbox::limits::Allocator;

fn main() {
    let status = readbox::run(std::env::args_os().collect());
    std::process::exit(status);
}
