//! Integration tests through the real binary. Each module groups the tests of one part of the
//! contract; `support` builds a fresh sandbox per test and checks the envelope on every call.

mod fuse;
mod generators;
mod kernel;
mod support;

mod agent_replay;

mod args;
mod audit;
mod call;
mod completions;
mod confinement;
mod diff;
mod dispatch;
mod docs;
mod engine;
mod envelope;
mod excludes;
mod hardening;
mod hints_gnu;
mod honest;
mod input_hints;
mod install;
mod limits;
mod lock;
mod mcp;
mod meta;
mod output_cap;
mod policy;
mod pwd;
mod readers;
mod redaction;
mod repository;
mod security;
mod sh;
mod sh_grammar;
mod sh_replay;
mod smoke;
mod start;
mod stat;
mod trust;
mod walkers;
mod wc;
