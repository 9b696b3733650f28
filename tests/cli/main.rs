//! Integration tests through the real binary. Each module groups the tests of one part of the
//! contract; `support` builds a fresh sandbox per test and checks the envelope on every call.

mod fuse;
mod kernel;
mod support;

mod agent_replay;

mod args;
mod call;
mod completions;
mod diff;
mod dispatch;
mod docs;
mod engine;
mod envelope_policy;
mod hardening;
mod hints_gnu;
mod honest;
mod input_hints;
mod install;
mod mcp;
mod meta;
mod readers_confinement;
mod redaction;
mod repository;
mod security;
mod sh;
mod sh_grammar;
mod sh_replay;
mod smoke;
mod trust;
mod walkers;
