//! The first calls a new user makes.

use crate::support::TestEnv;

#[test]
fn cat_a_file_both_ways() {
    let env = TestEnv::new();
    env.write("a.txt", "hello\n");
    env.both("cat", &["a.txt"]).ok("hello\n");
}

#[test]
fn outside_is_denied() {
    let env = TestEnv::new();
    env.both("cat", &["../outside/secret.txt"])
        .denied("../outside/secret.txt");
}
