//! `readbox mcp`: the enabled tools as an MCP server on standard input and output.
//!
//! The protocol is the Model Context Protocol (docs/contract.md#mcp): JSON-RPC 2.0, one message per
//! line, until standard input closes; the initialize handshake of the protocol versions 2024-11-05
//! to 2025-11-25, and the stateless form of 2026-07-28 (each request names its version and
//! capabilities in `_meta`, `server/discover`, roots asked for with an `input_required` result).
//!
//! Invariants:
//! - Standard output carries protocol messages only, each one line written whole under one
//!   lock by the envelope module (the only writer of standard output), with its escapes (no raw
//!   DEL, C1 or bidi control); diagnostics go to standard error.
//! - Every `tools/call` runs as a child `readbox call TOOL JSON` of this very binary, so the
//!   policy and its lock, Landlock, the caps, the timeout and the audit log hold per call as for
//!   `readbox call`. The server reads no file content itself.
//! - Roots a client offers only narrow, and only the gate looks at their paths (`roots`): they
//!   reach the child as `READBOX_NARROW_ROOTS`, a layer that the child's policy applies after
//!   every other one and that can only narrow, so a mistake here cannot widen the roots. A call
//!   never runs before the roots the client declared are known (it waits at most the call
//!   timeout, then fails).
//!
//! Why JSON-RPC of our own on `serde_json` and threads, not an MCP SDK crate: every ordinary
//! call starts this same binary, and an SDK would link an async runtime and its crates into it,
//! making the binary larger and every call's start-up heavier, for what fits in this module:
//! eight methods, line framing and one child per call (the session here, the calls in `calls`,
//! the client's roots in `roots`).

mod calls;
mod roots;

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value, json};

use crate::envelope;
use crate::error::Error;
use crate::policy::Policy;
use crate::resolve::Gate;
use crate::tools;
use calls::{Job, Queue, Slot};
use roots::{Narrowing, RootsState, root_uris};

/// The handshake versions, oldest first: `initialize` echoes one of them, else the newest.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The stateless version: a request that names it in `_meta` needs no handshake.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// `_meta` keys of the stateless form.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// JSON-RPC 2.0 error codes, and MCP's for an unsupported protocol version.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const UNSUPPORTED_VERSION: i64 = -32022;
/// A server error (JSON-RPC leaves -32000 to -32099 to the server): too many calls waiting.
const BUSY: i64 = -32000;

/// Calls that may wait for a worker; one more is refused at once with [`BUSY`], so that what a
/// client sends cannot grow the server's memory (docs/contract.md#mcp).
pub const MAX_QUEUED: usize = 32;

/// The longest message read; a longer line is answered `-32600` and skipped without being held.
/// A call's arguments hold at most [`MAX_ARGUMENTS`]; 1 MiB leaves room for a long roots list
/// and keeps the server's memory small whatever a line holds.
const MAX_MESSAGE: usize = 1 << 20;

/// The longest `arguments` object handed to a child (an argument of a program may hold 128 KiB
/// on Linux; readbox's own paths and patterns are at most 4 KiB each).
const MAX_ARGUMENTS: usize = 64 << 10;

/// The key of the roots request in an `input_required` result (stateless form).
const ROOTS_INPUT: &str = "roots";

/// Set while this process serves MCP: its standard output carries protocol messages, never an
/// envelope.
pub static SERVING: AtomicBool = AtomicBool::new(false);

/// Runs the server until standard input closes; returns the exit status (0, or 2 when it could
/// not start: bad words, a `config:` error, an audit log that cannot be opened).
pub fn serve(words: &[OsString]) -> i32 {
    SERVING.store(true, Ordering::SeqCst);
    std::panic::set_hook(Box::new(|info| {
        if cfg!(debug_assertions) {
            eprintln!("readbox mcp: internal error: {info}");
        } else {
            eprintln!("readbox mcp: internal error");
        }
        std::process::exit(crate::error::EXIT_ERROR);
    }));
    match start(words) {
        Ok(mut session) => {
            session.run();
            if let Some((log, record)) = &session.audit {
                let summary = crate::envelope::Summary {
                    output_bytes: 0,
                    truncated: false,
                    redactions: 0,
                };
                if let Err(e) = log.end(record, crate::error::EXIT_SUCCESS, None, summary) {
                    eprintln!("readbox mcp: {e}");
                    return crate::error::EXIT_ERROR;
                }
            }
            crate::error::EXIT_SUCCESS
        }
        Err(e) => {
            eprintln!("readbox mcp: {e}");
            crate::error::EXIT_ERROR
        }
    }
}

/// Everything before the first message: the words, the policy, the gate (to resolve the roots a
/// client offers), the audit log and Landlock, then the workers.
fn start(words: &[OsString]) -> Result<Session, Error> {
    if !words.is_empty() {
        return Err(Error::Usage(
            "readbox mcp takes no arguments (the roots come from the policy and the client)".into(),
        ));
    }
    let start = std::time::Instant::now();
    // A config file whose read blocks must not hold the server's start forever.
    let loading =
        crate::limits::Deadline::new(start, crate::limits::early_seconds()).watch_start(|e| {
            eprintln!("readbox mcp: {e}");
            std::process::exit(crate::error::EXIT_ERROR);
        });
    let loaded = Policy::load();
    loading.end();
    let policy = loaded?;
    // Without configured roots, the client's roots become the roots: they are found by a gate
    // whose one root is `/`, under the policy's excludes (docs/contract.md#mcp).
    let configured = policy.roots_configured();
    let gate = if configured {
        policy.open_gate()?
    } else {
        let mut open = policy.clone();
        open.roots = vec![PathBuf::from("/")];
        open.locked_roots = Vec::new();
        open.workdir = PathBuf::from("/");
        open.open_gate()?
    };
    let roots_policy = if configured {
        policy.clone()
    } else {
        let mut open = policy.clone();
        open.roots = vec![PathBuf::from("/")];
        open
    };

    // Opened (and made) here so that Landlock can leave exactly this file writable for the
    // children, and so that a log that cannot be written stops the server at once.
    let audit = match &policy.audit_log {
        Some(p) => Some(crate::audit::Log::open(p)?),
        None => None,
    };
    // The server's own lines, named `mcp`; each call's child writes its own pair.
    let record = crate::audit::Record::new("mcp", words, &policy.workdir, start);
    if let Some(log) = &audit {
        log.begin(&record)?;
    }
    policy.check_sandbox(&crate::sandbox::restrict_writes(audit.as_slice()))?;
    let exe =
        std::env::current_exe().map_err(|e| Error::Io(format!("cannot find this program: {e}")))?;
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let shared = Arc::new(Shared {
        exe,
        timeout: policy.timeout,
        max_envelope: policy
            .max_output_bytes
            .saturating_mul(6)
            .saturating_add(1 << 20),
        out: Writer::default(),
        queue: Mutex::new(Queue::default()),
        queue_cv: Condvar::new(),
        roots: Mutex::new(RootsState::default()),
        roots_cv: Condvar::new(),
        calls: Mutex::new(HashMap::new()),
        shutdown: AtomicBool::new(false),
        configured: configured.then(|| policy.roots.clone()),
        workdir: policy.workdir.clone(),
    });
    for i in 0..workers {
        let s = shared.clone();
        std::thread::Builder::new()
            .name(format!("readbox-mcp-{i}"))
            .spawn(move || s.work())
            .map_err(|e| Error::Io(format!("cannot start a worker thread: {e}")))?;
    }
    // The children open the log again; the server keeps its handle for its end line.
    Ok(Session {
        audit: audit.map(|log| (log, record)),
        shared,
        policy,
        roots_policy,
        gate,
        next_request: 0,
    })
}

// ---------------------------------------------------------------------------------------------
// State shared with the workers.
// ---------------------------------------------------------------------------------------------

/// The session's messages to the client, one at a time, through [`envelope::write_line`] (the
/// envelope module is the only writer of standard output).
#[derive(Default)]
struct Writer {
    /// Held while a line is written, so that lines never interleave; true once output is
    /// closed.
    closed: Mutex<bool>,
}

impl Writer {
    /// Writes `msg` as one line, whole, unless output is closed.
    fn send(&self, msg: &Value) {
        let mut closed = lock(&self.closed);
        if !*closed && !envelope::write_line(msg) {
            // The client is gone; nothing more can reach it.
            *closed = true;
        }
    }

    /// No message is written after this returns (one being written is finished first).
    fn close(&self) {
        *lock(&self.closed) = true;
    }
}

/// What the session (main thread) and the workers share.
struct Shared {
    /// This program, started again for each call.
    exe: PathBuf,
    /// The policy's timeout, seconds: how long a call waits for the roots, and the base of the
    /// deadline past which its child is killed.
    timeout: f64,
    /// The most a child's envelope can hold (every byte of output escaped, plus the notes).
    max_envelope: u64,
    out: Writer,
    queue: Mutex<Queue>,
    queue_cv: Condvar,
    roots: Mutex<RootsState>,
    roots_cv: Condvar,
    /// The calls in flight, by their id as JSON text.
    calls: Mutex<HashMap<String, Arc<Mutex<Slot>>>>,
    shutdown: AtomicBool,
    /// The configured roots; `None` when none were configured, so that only a client's roots
    /// can give any (docs/contract.md#mcp).
    configured: Option<Vec<PathBuf>>,
    /// The server's working directory: the calls' too when it lies beneath their roots, else
    /// their first root is (so that a relative path names something the caller can see).
    workdir: PathBuf,
}

/// Locks `m`, also after a panic elsewhere (the state stays usable: every update is one step).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error_response(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({"code": code, "message": message});
    if let Some(d) = data {
        error["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

fn server_info() -> Value {
    json!({"name": "readbox", "version": env!("CARGO_PKG_VERSION")})
}

/// A result of the stateless form: `resultType`, and the server's identity in `_meta`.
fn stateless(result: Value) -> Value {
    let Value::Object(fields) = result else {
        return result;
    };
    let mut m = Map::new();
    m.insert("resultType".into(), json!("complete"));
    m.extend(fields);
    let meta = m.entry("_meta").or_insert_with(|| json!({}));
    meta[META_SERVER_INFO] = server_info();
    Value::Object(m)
}

// ---------------------------------------------------------------------------------------------
// The session: reading messages and answering them, on the main thread.
// ---------------------------------------------------------------------------------------------

/// The main thread's side: the policy and gate (for the client's roots) and the request ids it
/// sends the client.
struct Session {
    shared: Arc<Shared>,
    policy: Policy,
    /// The policy whose roots a client's roots are narrowed from: the configured roots, or `/`
    /// when none are configured.
    roots_policy: Policy,
    gate: Gate,
    next_request: u64,
    /// The audit log and the server's own record, for its end line.
    audit: Option<(crate::audit::Log, crate::audit::Record)>,
}

/// One line of standard input.
enum Incoming {
    Line(Vec<u8>),
    TooLong,
    End,
}

/// Reads the next line (without its end), at most [`MAX_MESSAGE`] bytes of it.
fn next_line(input: &mut impl BufRead) -> Incoming {
    let mut line = Vec::new();
    match input
        .by_ref()
        .take(MAX_MESSAGE as u64 + 1)
        .read_until(b'\n', &mut line)
    {
        Ok(0) | Err(_) => return Incoming::End,
        Ok(_) => {}
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() > MAX_MESSAGE {
        // Skip the rest of the line, without holding it.
        loop {
            let mut rest = Vec::new();
            match input
                .by_ref()
                .take(MAX_MESSAGE as u64)
                .read_until(b'\n', &mut rest)
            {
                Ok(0) | Err(_) => return Incoming::End,
                Ok(_) if rest.last() == Some(&b'\n') => return Incoming::TooLong,
                Ok(_) => {}
            }
        }
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Incoming::Line(line)
}

/// The request's `_meta` object, if any.
fn meta_of(params: Option<&Map<String, Value>>) -> Option<&Map<String, Value>> {
    params?.get("_meta")?.as_object()
}

/// A JSON-RPC id a request may carry: a string or a number.
fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_))
}

impl Session {
    fn send(&self, msg: &Value) {
        self.shared.out.send(msg);
    }

    /// Serves until standard input ends, then ends every child.
    fn run(&mut self) {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            match next_line(&mut input) {
                Incoming::End => break,
                Incoming::TooLong => self.send(&error_response(
                    &Value::Null,
                    INVALID_REQUEST,
                    &format!("message longer than {MAX_MESSAGE} bytes"),
                    None,
                )),
                Incoming::Line(line) => self.message(&line),
            }
        }
        self.shutdown();
    }

    /// Ends the session: no more output, every waiting worker released, every child killed.
    fn shutdown(&self) {
        let s = &self.shared;
        s.out.close();
        s.shutdown.store(true, Ordering::SeqCst);
        drop(lock(&s.queue));
        s.queue_cv.notify_all();
        drop(lock(&s.roots));
        s.roots_cv.notify_all();
        for slot in lock(&s.calls).values() {
            let mut slot = lock(slot);
            slot.cancelled = true;
            if let Some(pid) = slot.child.take() {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }

    /// One line from the client.
    fn message(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let msg: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(_) => {
                self.send(&error_response(
                    &Value::Null,
                    PARSE_ERROR,
                    "Parse error",
                    None,
                ));
                return;
            }
        };
        // A repeated key would be read as its last value: refused at every depth, as `call`
        // refuses it (docs/contract.md#mcp). In the message itself, -32600 (with no id when the
        // id is the key repeated); within `params`, -32602.
        if let Some(dup) = crate::args::duplicate_key(line) {
            // Only a request is answered; a response of the client's with a repeated key is
            // dropped, as if never sent.
            let id = match &msg {
                Value::Object(o)
                    if o.contains_key("method") && (dup.key != "id" || dup.depth > 0) =>
                {
                    o.get("id").filter(|i| valid_id(i)).cloned()
                }
                _ => None,
            };
            let why = format!("the key '{}' is given twice", dup.key);
            match (dup.depth, id) {
                (0, id) => self.send(&error_response(
                    id.as_ref().unwrap_or(&Value::Null),
                    INVALID_REQUEST,
                    &why,
                    None,
                )),
                (_, Some(id)) => self.send(&error_response(&id, INVALID_PARAMS, &why, None)),
                // A notification gets no answer.
                (_, None) => {}
            }
            return;
        }
        let obj = match msg {
            Value::Object(o) => o,
            Value::Array(_) => {
                self.send(&error_response(
                    &Value::Null,
                    INVALID_REQUEST,
                    "batches are not supported: send one message per line",
                    None,
                ));
                return;
            }
            _ => {
                self.send(&error_response(
                    &Value::Null,
                    INVALID_REQUEST,
                    "a message is a JSON object",
                    None,
                ));
                return;
            }
        };
        let id = obj.get("id").filter(|i| valid_id(i)).cloned();
        let invalid = |why: &str| {
            error_response(
                id.as_ref().unwrap_or(&Value::Null),
                INVALID_REQUEST,
                why,
                None,
            )
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            self.send(&invalid("jsonrpc must be \"2.0\""));
            return;
        }
        let params = match obj.get("params") {
            None | Some(Value::Null) => None,
            Some(Value::Object(p)) => Some(p),
            Some(_) => {
                if let Some(id) = &id {
                    self.send(&error_response(
                        id,
                        INVALID_PARAMS,
                        "params must be an object",
                        None,
                    ));
                }
                return;
            }
        };
        match (obj.get("method"), obj.get("id")) {
            (Some(Value::String(method)), None) => self.notification(method, params),
            (Some(Value::String(method)), Some(_)) => match id {
                Some(id) => self.request(&id, method, params),
                None => self.send(&invalid("an id is a string or a number")),
            },
            (Some(_), _) => self.send(&invalid("method must be a string")),
            (None, Some(_)) if obj.contains_key("result") != obj.contains_key("error") => {
                self.client_response(&obj);
            }
            (None, _) => self.send(&invalid("neither a request, a notification nor a response")),
        }
    }

    /// A request from the client.
    fn request(&mut self, id: &Value, method: &str, params: Option<&Map<String, Value>>) {
        // The stateless form names its version in every request's `_meta`.
        let stateless = match meta_of(params).and_then(|m| m.get(META_VERSION)) {
            None => false,
            Some(Value::String(v)) if v == STATELESS_VERSION => true,
            Some(Value::String(v)) if HANDSHAKE_VERSIONS.contains(&v.as_str()) => false,
            Some(other) => {
                let requested = other
                    .as_str()
                    .map_or_else(|| other.to_string(), str::to_string);
                self.send(&error_response(
                    id,
                    UNSUPPORTED_VERSION,
                    "Unsupported protocol version",
                    Some(json!({"supported": supported_versions(), "requested": requested})),
                ));
                return;
            }
        };
        let answer = |s: &Self, result: Value| {
            let result = if stateless {
                self::stateless(result)
            } else {
                result
            };
            s.send(&response(id, result));
        };
        match method {
            "initialize" => {
                let asked = params
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Value::as_str);
                let version = asked
                    .filter(|v| HANDSHAKE_VERSIONS.contains(v))
                    .unwrap_or(HANDSHAKE_VERSIONS[HANDSHAKE_VERSIONS.len() - 1]);
                let roots = params
                    .and_then(|p| p.get("capabilities"))
                    .and_then(|c| c.get("roots"))
                    .is_some_and(Value::is_object);
                *lock(&self.shared.roots) = RootsState {
                    capability: roots,
                    pending: None,
                    known: None,
                };
                self.shared.roots_cv.notify_all();
                self.send(&response(
                    id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": false}},
                        "serverInfo": server_info(),
                        "instructions": self.instructions(roots),
                    }),
                ));
            }
            "ping" => answer(self, json!({})),
            "server/discover" => {
                self.send(&response(id, stateless_discover(&self.instructions(false))));
            }
            "tools/list" => {
                let mut result = json!({"tools": self.tool_list()});
                if stateless {
                    result["ttlMs"] = json!(0);
                    result["cacheScope"] = json!("private");
                }
                answer(self, result);
            }
            "tools/call" => self.call(id, params, stateless),
            _ => self.send(&error_response(
                id,
                METHOD_NOT_FOUND,
                &format!("Method not found: {method}"),
                None,
            )),
        }
    }

    /// The enabled tools as `tools/list` gives them: `readbox schema`'s definitions, marked
    /// read-only and closed-world, with an output schema for wc and stat.
    fn tool_list(&self) -> Vec<Value> {
        crate::meta::enabled_tools(&self.policy)
            .map(|t| {
                let mut def = json!({
                    "name": t.name,
                    "description": crate::meta::description(t),
                    "inputSchema": crate::meta::input_schema(t),
                    "annotations": {"readOnlyHint": true, "openWorldHint": false},
                });
                if let Some(s) = crate::meta::output_schema(t) {
                    def["outputSchema"] = s;
                }
                def
            })
            .collect()
    }

    /// `tools/call`: checks the tool and the shape of the arguments (their values are the
    /// child's to check), then queues the call.
    fn call(&mut self, id: &Value, params: Option<&Map<String, Value>>, stateless: bool) {
        let invalid =
            |s: &Self, why: String| s.send(&error_response(id, INVALID_PARAMS, &why, None));
        let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return invalid(self, "tools/call: params.name must be a tool name".into());
        };
        let Some(tool) = tools::by_name(name).filter(|t| self.policy.tools.contains(&t.name))
        else {
            return invalid(
                self,
                format!(
                    "unknown tool '{}'; tools: {}",
                    crate::error::shown(name.as_bytes()),
                    self.policy.tools.join(" ")
                ),
            );
        };
        let arguments = match params.and_then(|p| p.get("arguments")) {
            None | Some(Value::Null) => "{}".to_string(),
            Some(a @ Value::Object(_)) => a.to_string(),
            Some(_) => return invalid(self, "tools/call: arguments must be an object".into()),
        };
        if arguments.len() > MAX_ARGUMENTS {
            return invalid(
                self,
                format!("tools/call: arguments longer than {MAX_ARGUMENTS} bytes"),
            );
        }
        let narrowing = if stateless {
            let declared = meta_of(params)
                .and_then(|m| m.get(META_CAPABILITIES))
                .and_then(|c| c.get("roots"))
                .is_some_and(Value::is_object);
            if declared {
                let answer = params
                    .and_then(|p| p.get("inputResponses"))
                    .and_then(|r| r.get(ROOTS_INPUT));
                let Some(answer) = answer else {
                    // Ask for the roots first: the client retries with them.
                    let ask = stateless_meta(json!({
                        "resultType": "input_required",
                        "inputRequests": {ROOTS_INPUT: {"method": "roots/list"}},
                    }));
                    return self.send(&response(id, ask));
                };
                match root_uris(answer) {
                    Some(uris) => Some(Narrowing::To(roots::narrow(
                        &self.roots_policy,
                        &self.gate,
                        &uris,
                    ))),
                    None => {
                        return invalid(
                            self,
                            "tools/call: inputResponses.roots must be {\"roots\": [{\"uri\": ...}]}"
                                .into(),
                        );
                    }
                }
            } else {
                None
            }
        } else {
            None
        };
        // A client that calls before `notifications/initialized` (against the protocol) still
        // gets narrowed by its session's roots: they are asked for now. A stateless-form call
        // inside a session waits for them too.
        let unasked = {
            let r = lock(&self.shared.roots);
            r.capability && r.pending.is_none() && r.known.is_none()
        };
        if unasked {
            self.ask_roots();
        }
        if lock(&self.shared.queue).jobs.len() >= MAX_QUEUED {
            return self.send(&error_response(
                id,
                BUSY,
                &format!(
                    "the server is busy: {MAX_QUEUED} calls are waiting; send this one again once one is answered"
                ),
                None,
            ));
        }
        let key = id.to_string();
        let slot = Arc::new(Mutex::new(Slot::default()));
        {
            let mut calls = lock(&self.shared.calls);
            if calls.contains_key(&key) {
                drop(calls);
                return self.send(&error_response(
                    id,
                    INVALID_REQUEST,
                    "a call with this id is still running",
                    None,
                ));
            }
            calls.insert(key.clone(), slot.clone());
        }
        lock(&self.shared.queue).jobs.push_back(Job {
            id: id.clone(),
            key,
            tool,
            arguments,
            narrowing,
            stateless,
            slot,
        });
        self.shared.queue_cv.notify_one();
    }

    /// A notification from the client.
    fn notification(&mut self, method: &str, params: Option<&Map<String, Value>>) {
        match method {
            "notifications/initialized" | "notifications/roots/list_changed"
                if lock(&self.shared.roots).capability =>
            {
                self.ask_roots();
            }
            "notifications/cancelled" => {
                let Some(id) = params.and_then(|p| p.get("requestId")) else {
                    return;
                };
                if let Some(slot) = lock(&self.shared.calls).get(&id.to_string()) {
                    let mut slot = lock(slot);
                    slot.cancelled = true;
                    if let Some(pid) = slot.child.take() {
                        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                    }
                }
            }
            // Other notifications need nothing of a server that only serves tools.
            _ => {}
        }
    }

    /// Sends `roots/list`; calls wait for its answer.
    fn ask_roots(&mut self) {
        self.next_request += 1;
        let id = format!("readbox-roots-{}", self.next_request);
        lock(&self.shared.roots).pending = Some(id.clone());
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "roots/list"}));
    }

    /// A response to a request of ours: only the latest `roots/list` counts.
    fn client_response(&mut self, msg: &Map<String, Value>) {
        let id = msg.get("id").and_then(Value::as_str);
        if id.is_none() || lock(&self.shared.roots).pending.as_deref() != id {
            return;
        }
        let narrowing = match msg.get("result").and_then(root_uris) {
            Some(uris) => roots::narrow(&self.roots_policy, &self.gate, &uris),
            None => {
                // The client declared roots but did not give them: nothing is readable.
                eprintln!("readbox mcp: the client's roots/list failed; every path is denied");
                Vec::new()
            }
        };
        let mut r = lock(&self.shared.roots);
        if r.pending.as_deref() == id {
            r.pending = None;
            r.known = Some(Narrowing::To(narrowing));
            drop(r);
            self.shared.roots_cv.notify_all();
        }
    }
}

/// What the server tells a client about itself (`initialize`, `server/discover`), before the
/// roots and the working directory.
const INSTRUCTIONS: &str = "Read-only file tools confined beneath the allowed directories. Paths \
    are absolute or relative to the working directory (pwd prints it). Excluded files (.env, \
    keys and the like) are denied. Output is capped: a truncated answer says where it stopped \
    and, for cat and head, the call that continues it as the tool's parameters.";

/// The denial of every call when no roots were configured and the client gave none
/// (docs/contract.md#mcp).
pub(crate) const NO_ROOTS: &str = "no roots: readbox mcp reads nothing until it is given roots; set \
    READBOX_ROOTS (':'-separated directories) or allowed_directories in a config file \
    (READBOX_CONFIG) in the server's environment, or use a client that offers roots";

impl Session {
    /// The `instructions` of `initialize`: what the tools do, the roots and the working
    /// directory; `client_roots` says that the client declared roots.
    fn instructions(&self, client_roots: bool) -> String {
        let shown = |dirs: &[PathBuf]| -> String {
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let roots = match (&self.shared.configured, client_roots) {
            (Some(r), false) => format!("Roots: {}.", shown(r)),
            (Some(r), true) => format!(
                "Roots: {}, narrowed to the roots this client offers.",
                shown(r)
            ),
            (None, true) => "Roots: the directories this client offers as roots.".to_string(),
            (None, false) => format!("Roots: none, so every call is denied: {NO_ROOTS}."),
        };
        let w = &self.shared.workdir;
        let workdir = match &self.shared.configured {
            Some(r) if r.iter().any(|root| w.starts_with(root)) => {
                format!(" Working directory: {}.", w.display())
            }
            Some(r) if !r.is_empty() => {
                format!(" Working directory: {} (the first root).", r[0].display())
            }
            _ if client_roots => format!(
                " Working directory: {} when it lies beneath a root, else the first root.",
                w.display()
            ),
            _ => String::new(),
        };
        format!("{INSTRUCTIONS} {roots}{workdir}")
    }
}

/// Every version this server speaks, oldest first.
fn supported_versions() -> Vec<&'static str> {
    let mut v = HANDSHAKE_VERSIONS.to_vec();
    v.push(STATELESS_VERSION);
    v
}

/// `_meta` with the server's identity, for results of the stateless form.
fn stateless_meta(mut result: Value) -> Value {
    result["_meta"] = json!({META_SERVER_INFO: server_info()});
    result
}

/// The answer to `server/discover`.
fn stateless_discover(instructions: &str) -> Value {
    stateless(json!({
        "supportedVersions": supported_versions(),
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": server_info(),
        "instructions": instructions,
        "ttlMs": 0,
        "cacheScope": "private",
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_skipped_whole() {
        let mut big = vec![b'x'; MAX_MESSAGE + 10];
        big.extend_from_slice(b"\n{\"a\":1}\r\n");
        let mut input = std::io::Cursor::new(big);
        assert!(matches!(next_line(&mut input), Incoming::TooLong));
        assert!(matches!(next_line(&mut input), Incoming::Line(l) if l == b"{\"a\":1}"));
        assert!(matches!(next_line(&mut input), Incoming::End));
    }
}
