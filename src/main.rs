//! The readbox executable: hands the process's arguments to the library and exits with its status.

fn main() {
    let status = readbox::run(std::env::args_os().collect());
    std::process::exit(status);
}
