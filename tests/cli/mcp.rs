//! `readbox mcp` through the real binary, driven by a small JSON-RPC client written here: the
//! handshake of every version and the stateless form, the tool list against `readbox schema`,
//! calls against `readbox call`, protocol errors, roots that only narrow, concurrency,
//! cancellation and the end of input (docs/contract.md#mcp). The narrow-only roots layer it
//! relies on (`READBOX_NARROW_ROOTS`) is tested here too, through plain calls.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{OUTSIDE_CANARY, TestEnv};

/// How long any one answer may take before the test fails (generous: the machine is shared).
const WAIT: Duration = Duration::from_secs(20);

/// A `readbox mcp` process and the client side of its session.
struct Mcp {
    child: Child,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    rx: Receiver<Value>,
    /// Messages received but not yet asked for (responses by id, requests, notifications).
    seen: Vec<Value>,
    /// Every line of stdout, and what was wrong with any of them.
    problems: Arc<Mutex<Vec<String>>>,
    next_id: i64,
}

/// What the client answers `roots/list` with: `None` leaves the request to the test.
type Roots = Arc<Mutex<Option<Vec<String>>>>;

impl Mcp {
    fn start(env: &TestEnv) -> Mcp {
        Mcp::start_with_roots(env, Arc::new(Mutex::new(None)))
    }

    /// Starts the server; a reader thread checks that every stdout line is one JSON-RPC 2.0
    /// message, answers `roots/list` from `roots` when it holds a list, and hands every other
    /// message to the test.
    fn start_with_roots(env: &TestEnv, roots: Roots) -> Mcp {
        let mut cmd = env.readbox_command();
        // `readbox mcp` never takes its working directory as a root: the sandbox's root is
        // given, unless the test chose the roots.
        if !env.has_var("READBOX_ROOTS") {
            cmd.env("READBOX_ROOTS", env.root());
        }
        cmd.arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start readbox mcp");
        let stdin = Arc::new(Mutex::new(child.stdin.take()));
        let stdout = child.stdout.take().unwrap();
        let problems = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = channel();
        let (w, p) = (stdin.clone(), problems.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else {
                    p.lock().unwrap().push("stdout is not UTF-8".to_string());
                    break;
                };
                let msg: Value = match serde_json::from_str(&line) {
                    Ok(m @ Value::Object(_)) if line.contains(OUTSIDE_CANARY) => {
                        p.lock().unwrap().push(format!("the canary leaked: {m}"));
                        m
                    }
                    Ok(m @ Value::Object(_)) => m,
                    _ => {
                        p.lock()
                            .unwrap()
                            .push(format!("not one JSON object: {line}"));
                        continue;
                    }
                };
                if msg["jsonrpc"] != "2.0" {
                    p.lock().unwrap().push(format!("not JSON-RPC 2.0: {line}"));
                }
                // As in the envelope, no DEL, C1 or bidi control reaches a reader raw.
                if line.chars().any(|c| {
                    matches!(c, '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
                }) {
                    p.lock().unwrap().push(format!("a raw control character: {line}"));
                }
                if msg["method"] == "roots/list"
                    && let Some(list) = roots.lock().unwrap().clone()
                {
                    let answer = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                        "roots": list.iter().map(|u| json!({"uri": u})).collect::<Vec<_>>()}});
                    if let Some(s) = w.lock().unwrap().as_mut() {
                        let _ = writeln!(s, "{answer}");
                    }
                }
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        Mcp {
            child,
            stdin,
            rx,
            seen: Vec::new(),
            problems,
            next_id: 0,
        }
    }

    fn write_line(&self, line: &str) {
        let mut s = self.stdin.lock().unwrap();
        let s = s.as_mut().expect("stdin is open");
        writeln!(s, "{line}").expect("write to readbox mcp");
    }

    fn send(&self, msg: &Value) {
        self.write_line(&msg.to_string());
    }

    fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request; returns its id.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message that `pick` accepts, within `limit`; `None` when none came.
    fn next_where(&mut self, limit: Duration, pick: impl Fn(&Value) -> bool) -> Option<Value> {
        if let Some(i) = self.seen.iter().position(&pick) {
            return Some(self.seen.remove(i));
        }
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(m) if pick(&m) => return Some(m),
                Ok(m) => self.seen.push(m),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The response to `id` (result or error).
    #[track_caller]
    fn response(&mut self, id: &Value) -> Value {
        let want = id.clone();
        self.next_where(WAIT, |m| m["id"] == want && m.get("method").is_none())
            .unwrap_or_else(|| panic!("no response to id {id}"))
    }

    /// A request that must succeed: its result.
    #[track_caller]
    fn rpc(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        let msg = self.response(&id);
        assert!(msg.get("error").is_none(), "{method}: {msg}");
        msg["result"].clone()
    }

    /// A request that must fail: its error code.
    #[track_caller]
    fn rpc_error(&mut self, method: &str, params: Value) -> i64 {
        let id = self.request(method, params);
        let msg = self.response(&id);
        msg["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{method}: expected an error, got {msg}"))
    }

    #[track_caller]
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.rpc("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// The handshake; `roots` declares the roots capability.
    #[track_caller]
    fn initialize(&mut self, version: &str, roots: bool) -> Value {
        let caps = if roots {
            json!({"roots": {"listChanged": true}})
        } else {
            json!({})
        };
        let r = self.rpc(
            "initialize",
            json!({"protocolVersion": version, "capabilities": caps,
                   "clientInfo": {"name": "readbox-tests", "version": "1"}}),
        );
        self.notify("notifications/initialized", json!({}));
        r
    }

    /// Closes stdin and waits for the exit (at most `limit`); checks that stdout held only
    /// JSON-RPC messages.
    #[track_caller]
    fn close_within(mut self, limit: Duration) -> std::process::ExitStatus {
        self.stdin.lock().unwrap().take();
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("readbox mcp did not exit within {limit:?} of its stdin closing");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let problems = self.problems.lock().unwrap();
        assert!(problems.is_empty(), "stdout: {problems:?}");
        let mut err = String::new();
        use std::io::Read;
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(
            !err.contains("panicked") && !err.contains(OUTSIDE_CANARY),
            "{err}"
        );
        status
    }

    #[track_caller]
    fn close(self) {
        let st = self.close_within(WAIT);
        assert_eq!(st.code(), Some(0));
    }
}

/// The text blocks of a tool result.
fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {result}"))
        .iter()
        .map(|b| {
            assert_eq!(b["type"], "text", "{result}");
            b["text"].as_str().unwrap().to_string()
        })
        .collect()
}

/// A successful result: its first text block.
#[track_caller]
fn ok_text(result: &Value) -> String {
    assert_eq!(result["isError"], json!(false), "{result}");
    texts(result)[0].clone()
}

/// A tool error: its first text block, which must start with `class: `.
#[track_caller]
fn error_text(result: &Value, class: &str) -> String {
    assert_eq!(result["isError"], json!(true), "{result}");
    let t = texts(result)[0].clone();
    assert!(t.starts_with(&format!("{class}: ")), "{t}");
    t
}

fn file_uri(p: &std::path::Path) -> String {
    format!("file://{}", p.display()).replace(' ', "%20")
}

/// A 1 TiB sparse file: grep reads zeros far longer than any test lasts.
fn slow_file(env: &mut TestEnv) {
    let f = std::fs::File::create(env.p("big.bin")).unwrap();
    f.set_len(1 << 40).unwrap();
    env.var("READBOX_MAX_READ_BYTES", "1125899906842624");
}

// ---------------------------------------------------------------------------------------------
// The narrow-only roots layer, through plain calls.
// ---------------------------------------------------------------------------------------------

#[test]
fn narrow_roots_variable_only_narrows() {
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    let sub = env.p("sub").display().to_string();
    env.var("READBOX_NARROW_ROOTS", &sub);
    env.run("cat", &["../a.txt"]).denied("../a.txt");
    env.run("cat", &["x.txt"]).ok("x\n");
    env.run("cat", &[env.p("a.txt")])
        .denied(&env.p("a.txt").display().to_string());
    env.run("pwd", &[] as &[&str]).ok(&format!("{sub}\n"));
    let policy = env.readbox(&["policy"]).json();
    assert_eq!(
        policy["settings"]["allowed_directories"],
        json!({"value": [sub], "source": "env READBOX_NARROW_ROOTS"})
    );
    let mut wide = TestEnv::new();
    wide.var(
        "READBOX_NARROW_ROOTS",
        &wide.outside().display().to_string(),
    );
    wide.run("cat", &["x"])
        .fails("config", "READBOX_NARROW_ROOTS");
}

#[test]
fn narrow_roots_set_but_empty_deny_everything() {
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.var("READBOX_NARROW_ROOTS", "");
    env.run("cat", &["a.txt"]).denied("a.txt");
    env.run("ls", &[] as &[&str]).denied(".");
    env.run("cat", &[env.p("a.txt")])
        .denied(&env.p("a.txt").display().to_string());
    env.run("pwd", &[] as &[&str]).denied(".");
    env.run("find", &["/"]).denied("/");
}

// ---------------------------------------------------------------------------------------------
// The handshake and the tool list.
// ---------------------------------------------------------------------------------------------

#[test]
fn initialize_echoes_each_handshake_version_else_answers_the_newest() {
    let env = TestEnv::new();
    for v in readbox::mcp::HANDSHAKE_VERSIONS {
        let mut m = Mcp::start(&env);
        let r = m.initialize(v, false);
        assert_eq!(r["protocolVersion"], v);
        assert_eq!(r["serverInfo"]["name"], "readbox");
        assert_eq!(r["capabilities"], json!({"tools": {"listChanged": false}}));
        assert_eq!(m.rpc("ping", json!({})), json!({}));
        m.close();
    }
    let mut m = Mcp::start(&env);
    for asked in ["1999-01-01", readbox::mcp::STATELESS_VERSION] {
        assert_eq!(m.initialize(asked, false)["protocolVersion"], "2025-11-25");
    }
    m.close();
}

#[test]
fn tools_list_is_readbox_schema_marked_read_only() {
    let mut env = TestEnv::new();
    env.var("READBOX_TOOLS", "cat,wc,stat,grep");
    let schema: Vec<Value> = serde_json::from_str(&env.readbox(&["schema"]).output).unwrap();
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    let list = m.rpc("tools/list", json!({}));
    assert!(list.get("nextCursor").is_none());
    let tools = list["tools"].as_array().unwrap();
    assert_eq!(tools.len(), schema.len());
    for (t, s) in tools.iter().zip(&schema) {
        assert_eq!(t["name"], s["name"]);
        assert_eq!(t["description"], s["description"]);
        assert_eq!(t["inputSchema"], s["input_schema"]);
        assert_eq!(
            t["annotations"],
            json!({"readOnlyHint": true, "openWorldHint": false})
        );
        let structured = ["wc", "stat"].contains(&t["name"].as_str().unwrap());
        assert_eq!(t.get("outputSchema").is_some(), structured, "{t}");
    }
    let wc = tools.iter().find(|t| t["name"] == "wc").unwrap();
    assert_eq!(
        wc["outputSchema"]["required"],
        json!(["lines", "words", "bytes"])
    );
    m.close();
}

// ---------------------------------------------------------------------------------------------
// Calls.
// ---------------------------------------------------------------------------------------------

#[test]
fn calls_answer_as_readbox_call_does() {
    let env = TestEnv::new();
    env.write("docs/n.txt", "caf\u{e9} needle\nline two\n\u{85}needle\n");
    env.write("src/a.py", "import os\nneedle = 1\n");
    env.write("src/b.py", "import os\nneedle = 2\n");
    let mut m = Mcp::start(&env);
    m.initialize("2025-11-25", false);
    for (tool, args) in [
        ("cat", json!({"path": "docs/n.txt"})),
        ("head", json!({"path": "docs/n.txt", "lines": 1})),
        ("tail", json!({"path": "docs/n.txt", "lines": 1})),
        ("grep", json!({"pattern": "needle"})),
        ("ls", json!({"path": "src"})),
        ("find", json!({"pattern": "*.py"})),
        ("diff", json!({"path_a": "src/a.py", "path_b": "src/b.py"})),
        ("pwd", json!({})),
    ] {
        let plain = env.readbox(&["call", tool, &args.to_string()]);
        let r = m.call(tool, args.clone());
        assert_eq!(ok_text(&r), plain.output, "{tool} {args}");
        assert_eq!(
            r["_meta"],
            json!({"exitStatus": plain.status, "truncated": false})
        );
    }
    // grep with no match: not an error, exit status 1, the empty answer said in words.
    let r = m.call("grep", json!({"pattern": "absent"}));
    assert_eq!(ok_text(&r), "no line matched");
    assert_eq!(r["_meta"]["exitStatus"], 1);
    m.close();
}

#[test]
fn wc_and_stat_give_structured_content() {
    let env = TestEnv::new();
    env.write("f.txt", "one two\nthree\n");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    let r = m.call("wc", json!({"path": "f.txt"}));
    assert_eq!(
        r["structuredContent"],
        json!({"lines": 2, "words": 3, "bytes": 14})
    );
    let r = m.call("stat", json!({"path": "f.txt"}));
    let plain = env.readbox(&["call", "stat", r#"{"path": "f.txt"}"#]);
    assert_eq!(r["structuredContent"], plain.json());
    assert!(
        m.call("cat", json!({"path": "f.txt"}))
            .get("structuredContent")
            .is_none()
    );
    m.close();
}

#[test]
fn denied_usage_and_truncated_calls() {
    let mut env = TestEnv::new();
    let secret = env.secret(".env");
    env.write("long.txt", "0123456789\n".repeat(20));
    env.var("READBOX_MAX_OUTPUT_BYTES", "25");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    for path in [".env", "../outside/secret.txt"] {
        let t = error_text(&m.call("cat", json!({"path": path})), "denied");
        assert_eq!(t, format!("denied: {path}"));
    }
    let outside = env.outside().join("secret.txt");
    error_text(&m.call("head", json!({"path": outside})), "denied");
    let r = m.call("grep", json!({"pattern": secret.clone()}));
    assert_eq!(ok_text(&r), "no line matched");
    error_text(
        &m.call("head", json!({"path": "long.txt", "lines": "x"})),
        "usage",
    );
    error_text(
        &m.call("cat", json!({"path": "long.txt", "nope": 1})),
        "usage",
    );
    let r = m.call("cat", json!({"path": "long.txt"}));
    let plain = env.readbox(&["call", "cat", r#"{"path": "long.txt"}"#]);
    assert!(plain.truncated && !plain.notes.is_empty());
    assert_eq!(ok_text(&r), plain.output);
    // The notes (where the output stopped, the call that continues it): one second block.
    assert_eq!(texts(&r), [plain.output.clone(), plain.notes.join("\n")]);
    assert_eq!(r["_meta"], json!({"exitStatus": 0, "truncated": true}));
    m.close();
}

#[test]
fn protocol_errors_are_answered_and_the_session_goes_on() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.var("READBOX_TOOLS", "cat,ls");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    m.write_line("this is not json {");
    let e = m.next_where(WAIT, |v| v["id"].is_null()).unwrap();
    assert_eq!(e["error"]["code"], -32700);
    m.write_line(r#"[{"jsonrpc":"2.0","id":99,"method":"ping"}]"#);
    let e = m.next_where(WAIT, |v| v["id"].is_null()).unwrap();
    assert_eq!(e["error"]["code"], -32600);
    m.write_line(r#"{"jsonrpc":"1.0","id":98,"method":"ping"}"#);
    assert_eq!(m.response(&json!(98))["error"]["code"], -32600);
    m.notify("notifications/no-such-thing", json!({"x": 1}));
    assert_eq!(m.rpc_error("no/such/method", json!({})), -32601);
    for (name, args) in [
        ("grep", json!({"pattern": "a"})),
        ("no-such-tool", json!({})),
        ("cat", json!(["a.txt"])),
        ("cat", json!("a.txt")),
    ] {
        let code = m.rpc_error("tools/call", json!({"name": name, "arguments": args}));
        assert_eq!(code, -32602, "{name} {args}");
    }
    assert_eq!(m.rpc_error("tools/call", json!({})), -32602);
    assert_eq!(ok_text(&m.call("cat", json!({"path": "a.txt"}))), "a\n");
    // Arguments may be left out: pwd takes none, ls defaults to `.`.
    let id = m.request("tools/call", json!({"name": "ls"}));
    assert_eq!(ok_text(&m.response(&id)["result"]), "a.txt\n");
    m.close();
}

#[test]
fn the_audit_log_records_each_call() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    let log = env.base().join("cfg/audit.jsonl");
    let cfg = env.config(
        "a.toml",
        &format!("audit_log = {:?}\n", log.display().to_string()),
    );
    env.var("READBOX_CONFIG", cfg.to_str().unwrap());
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    m.call("cat", json!({"path": "a.txt"}));
    m.call("wc", json!({"path": "a.txt"}));
    m.close();
    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Each call is audited as `readbox call` audits it: the tool and its JSON object.
    for tool in ["cat", "wc"] {
        assert!(
            records
                .iter()
                .any(|r| r["tool"] == tool && r["arguments"] == json!({"path": "a.txt"})),
            "{tool} in {text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Roots.
// ---------------------------------------------------------------------------------------------

#[test]
fn client_roots_narrow_to_a_subfolder() {
    let env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    let roots: Roots = Arc::new(Mutex::new(Some(vec![file_uri(&env.p("sub"))])));
    let mut m = Mcp::start_with_roots(&env, roots);
    m.initialize("2025-06-18", true);
    assert_eq!(
        ok_text(&m.call("cat", json!({"path": env.p("sub/x.txt")}))),
        "x\n"
    );
    // Relative paths start at the first narrowed root.
    assert_eq!(ok_text(&m.call("cat", json!({"path": "x.txt"}))), "x\n");
    error_text(&m.call("cat", json!({"path": env.p("a.txt")})), "denied");
    error_text(&m.call("ls", json!({"path": env.root()})), "denied");
    m.close();
}

#[test]
fn client_roots_outside_the_configured_roots_leave_nothing() {
    let env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    // A root outside, a link beneath the root that leaves it, and a URI that is no local file:
    // none survives.
    env.symlink("out", env.outside());
    let roots = vec![
        "file:///etc".to_string(),
        file_uri(&env.outside()),
        file_uri(&env.p("out")),
        "https://example.invalid/x".to_string(),
    ];
    let mut m = Mcp::start_with_roots(&env, Arc::new(Mutex::new(Some(roots))));
    m.initialize("2025-06-18", true);
    for (tool, args) in [
        ("cat", json!({"path": "a.txt"})),
        ("cat", json!({"path": env.p("a.txt")})),
        ("cat", json!({"path": "/etc/hostname"})),
        ("cat", json!({"path": env.outside().join("secret.txt")})),
        ("ls", json!({})),
        ("pwd", json!({})),
    ] {
        error_text(&m.call(tool, args), "denied");
    }
    m.close();
}

#[test]
fn a_client_root_above_the_configured_root_keeps_it_whole() {
    let env = TestEnv::new();
    env.write("a.txt", "top\n");
    let roots = vec!["file:///".to_string()];
    let mut m = Mcp::start_with_roots(&env, Arc::new(Mutex::new(Some(roots))));
    m.initialize("2025-06-18", true);
    assert_eq!(ok_text(&m.call("cat", json!({"path": "a.txt"}))), "top\n");
    error_text(
        &m.call("cat", json!({"path": "../outside/secret.txt"})),
        "denied",
    );
    m.close();
}

/// The answers of one session whose client offers the single root `uri`: a relative read, an
/// absolute read beneath the configured root, a listing and the working directory.
fn answers_under_client_root(env: &TestEnv, uri: String) -> Vec<Value> {
    let mut m = Mcp::start_with_roots(env, Arc::new(Mutex::new(Some(vec![uri]))));
    m.initialize("2025-06-18", true);
    let answers = [
        ("cat", json!({"path": "a.txt"})),
        ("cat", json!({"path": env.p("a.txt")})),
        ("ls", json!({})),
        ("pwd", json!({})),
    ]
    .into_iter()
    .map(|(tool, args)| m.call(tool, args))
    .collect();
    m.close();
    answers
}

#[test]
fn a_client_root_outside_tells_nothing_of_what_exists_there() {
    let env = TestEnv::new();
    env.write("a.txt", "top\n");
    std::fs::create_dir(env.outside().join("dir")).unwrap();
    let outside = env.outside().display().to_string();
    // The URI's path is folded lexically (as RFC 3986 removes dot segments), so `..` after an
    // outside name means the same whether or not that name exists; and what is outside the
    // configured roots is never looked at, so an existing folder there answers as a missing one.
    for (form, readable) in [
        ("{outside}/{name}", false),
        ("{outside}/{name}/", false),
        ("{outside}/{name}/..", false),
        ("{outside}/{name}/../../root", true),
        ("{outside}/{name}/../../root/../outside", false),
    ] {
        let uri = |name: &str| {
            format!(
                "file://{}",
                form.replace("{outside}", &outside).replace("{name}", name)
            )
        };
        let existing = answers_under_client_root(&env, uri("dir"));
        let missing = answers_under_client_root(&env, uri("missing"));
        assert_eq!(existing, missing, "{form}");
        if readable {
            assert_eq!(ok_text(&existing[0]), "top\n", "{form}");
            assert_eq!(ok_text(&existing[3]), format!("{}\n", env.root().display()));
        } else {
            for answer in &existing {
                error_text(answer, "denied");
            }
        }
    }
}

#[test]
fn a_link_outside_the_configured_roots_is_not_followed_for_a_client_root() {
    let env = TestEnv::new();
    env.write("a.txt", "top\n");
    // A link beside the secret that leads back to the root: the server does not resolve
    // anything outside the configured roots, so it narrows to nothing, as a call naming
    // `outside/to-root/a.txt` is denied.
    let link = env.outside().join("to-root");
    std::os::unix::fs::symlink(env.root(), &link).unwrap();
    for answer in answers_under_client_root(&env, file_uri(&link)) {
        error_text(&answer, "denied");
    }
    let through = link.join("a.txt").display().to_string();
    env.run("cat", &[&through]).denied(&through);
}

#[test]
fn calls_wait_for_the_roots_and_follow_list_changed() {
    let env = TestEnv::new();
    env.write("one/a.txt", "1\n");
    env.write("two/b.txt", "2\n");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", true);
    let ask = m
        .next_where(WAIT, |v| v["method"] == "roots/list")
        .expect("roots/list after initialized");
    // A call sent before the answer waits for it, then runs narrowed.
    let id = m.request(
        "tools/call",
        json!({"name": "cat", "arguments": {"path": env.p("two/b.txt")}}),
    );
    assert!(
        m.next_where(Duration::from_millis(300), |v| v["id"] == id)
            .is_none()
    );
    m.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "roots": [{"uri": file_uri(&env.p("one"))}]}}));
    error_text(&m.response(&id)["result"], "denied");
    assert_eq!(ok_text(&m.call("cat", json!({"path": "a.txt"}))), "1\n");
    // The client's roots change: asked again, and the new answer applies.
    m.notify("notifications/roots/list_changed", json!({}));
    let ask = m.next_where(WAIT, |v| v["method"] == "roots/list").unwrap();
    m.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "roots": [{"uri": file_uri(&env.p("two"))}]}}));
    assert_eq!(ok_text(&m.call("cat", json!({"path": "b.txt"}))), "2\n");
    error_text(
        &m.call("cat", json!({"path": env.p("one/a.txt")})),
        "denied",
    );
    // An error instead of roots leaves nothing readable.
    m.notify("notifications/roots/list_changed", json!({}));
    let ask = m.next_where(WAIT, |v| v["method"] == "roots/list").unwrap();
    m.send(&json!({"jsonrpc": "2.0", "id": ask["id"],
                   "error": {"code": -32601, "message": "no"}}));
    error_text(
        &m.call("cat", json!({"path": env.p("two/b.txt")})),
        "denied",
    );
    m.close();
}

#[test]
fn unanswered_roots_time_the_call_out() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.var("READBOX_TIMEOUT", "0.5");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", true);
    let t = error_text(&m.call("cat", json!({"path": "a.txt"})), "timeout");
    assert!(t.contains("roots/list"), "{t}");
    m.close();
}

// ---------------------------------------------------------------------------------------------
// The stateless form (2026-07-28).
// ---------------------------------------------------------------------------------------------

fn stateless_meta(roots: bool) -> Value {
    let caps = if roots {
        json!({"roots": {}})
    } else {
        json!({})
    };
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": caps})
}

#[test]
fn the_stateless_form_needs_no_handshake() {
    let env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    let mut m = Mcp::start(&env);
    let d = m.rpc("server/discover", json!({"_meta": stateless_meta(false)}));
    assert_eq!(d["resultType"], "complete");
    assert_eq!(
        d["supportedVersions"],
        json!([
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ])
    );
    assert_eq!(d["capabilities"]["tools"], json!({"listChanged": false}));
    assert_eq!(
        (d["ttlMs"].clone(), d["cacheScope"].clone()),
        (json!(0), json!("private"))
    );
    let list = m.rpc("tools/list", json!({"_meta": stateless_meta(false)}));
    assert_eq!(list["resultType"], "complete");
    assert_eq!(list["tools"].as_array().unwrap().len(), 11);
    let r = m.rpc(
        "tools/call",
        json!({"name": "cat", "arguments": {"path": "a.txt"}, "_meta": stateless_meta(false)}),
    );
    assert_eq!(r["resultType"], "complete");
    assert_eq!(ok_text(&r), "top\n");
    // With the roots capability, the roots are asked for first, then narrow the retried call.
    let call =
        json!({"name": "cat", "arguments": {"path": "x.txt"}, "_meta": stateless_meta(true)});
    let ask = m.rpc("tools/call", call.clone());
    assert_eq!(ask["resultType"], "input_required");
    assert_eq!(
        ask["inputRequests"],
        json!({"roots": {"method": "roots/list"}})
    );
    let mut retry = call.clone();
    retry["inputResponses"] = json!({"roots": {"roots": [{"uri": file_uri(&env.p("sub"))}]}});
    assert_eq!(ok_text(&m.rpc("tools/call", retry.clone())), "x\n");
    retry["arguments"] = json!({"path": env.p("a.txt")});
    error_text(&m.rpc("tools/call", retry), "denied");
    // An unknown version names the supported ones.
    let id = m.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}),
    );
    let e = m.response(&id)["error"].clone();
    assert_eq!(e["code"], -32022);
    assert_eq!(e["data"]["requested"], "2099-01-01");
    m.close();
}

// ---------------------------------------------------------------------------------------------
// Concurrency, cancellation, the end of input.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_slow_call_does_not_hold_back_quick_ones() {
    let mut env = TestEnv::new();
    slow_file(&mut env);
    env.var("READBOX_TIMEOUT", "30");
    for i in 0..4 {
        env.write(&format!("f{i}.txt"), format!("{i}\n"));
    }
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    let slow = m.request(
        "tools/call",
        json!({"name": "grep", "arguments": {"pattern": "needle", "path": "big.bin"}}),
    );
    let quick: Vec<Value> = (0..4)
        .map(|i| {
            m.request(
                "tools/call",
                json!({"name": "cat", "arguments": {"path": format!("f{i}.txt")}}),
            )
        })
        .collect();
    for (i, id) in quick.iter().enumerate() {
        assert_eq!(ok_text(&m.response(id)["result"]), format!("{i}\n"));
    }
    let answered: HashMap<String, ()> = m.seen.iter().map(|v| (v["id"].to_string(), ())).collect();
    assert!(!answered.contains_key(&slow.to_string()));
    // Closing stdin ends the slow call's child too, and the server at once.
    let st = m.close_within(Duration::from_secs(5));
    assert_eq!(st.code(), Some(0));
}

#[test]
fn a_cancelled_call_gets_no_answer() {
    let mut env = TestEnv::new();
    slow_file(&mut env);
    env.var("READBOX_TIMEOUT", "30");
    env.write("a.txt", "a\n");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    let id = m.request(
        "tools/call",
        json!({"name": "grep", "arguments": {"pattern": "needle", "path": "big.bin"}}),
    );
    std::thread::sleep(Duration::from_millis(300));
    m.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "test"}),
    );
    assert_eq!(ok_text(&m.call("cat", json!({"path": "a.txt"}))), "a\n");
    assert!(
        m.next_where(Duration::from_millis(500), |v| v["id"] == id)
            .is_none()
    );
    m.close();
}

#[test]
fn the_call_timeout_holds_per_call() {
    let mut env = TestEnv::new();
    slow_file(&mut env);
    env.var("READBOX_TIMEOUT", "1");
    env.write("a.txt", "a\n");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    let r = m.call("grep", json!({"pattern": "needle", "path": "big.bin"}));
    assert_eq!(
        error_text(&r, "timeout"),
        "timeout: the call took longer than 1 s"
    );
    assert_eq!(ok_text(&m.call("cat", json!({"path": "a.txt"}))), "a\n");
    m.close();
}

#[test]
fn mcp_takes_no_arguments_and_a_bad_policy_stops_it() {
    let mut env = TestEnv::new();
    let out = env
        .readbox_command()
        .args(["mcp", "/tmp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "stdout carries protocol messages only"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("readbox mcp: usage: "), "{err}");
    env.var("READBOX_TIMEOUT", "never");
    let out = env.readbox_command().arg("mcp").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("readbox mcp: config: READBOX_TIMEOUT"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// A real client: the official MCP Python SDK.
// ---------------------------------------------------------------------------------------------

/// The official MCP Python SDK drives the server (`tests/mcp-sdk/client.py`: the handshake, each
/// tool, a denied path, a truncated call, client roots that narrow or leave nothing, and the
/// stateless form). It needs a virtual environment with the pinned `mcp` package, which `.ci/run`
/// makes in `target/mcp-sdk-venv` (`READBOX_MCP_PYTHON` may name another interpreter). Without
/// one the test says so and passes, unless `READBOX_REQUIRE_MCP_SDK=1` (set by `.ci/run`) says it
/// must run, and then it fails.
#[test]
fn the_official_python_sdk_drives_the_server() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var_os("READBOX_MCP_PYTHON").map_or_else(
        || manifest.join("target/mcp-sdk-venv/bin/python"),
        std::path::PathBuf::from,
    );
    let required = std::env::var("READBOX_REQUIRE_MCP_SDK").is_ok_and(|v| v == "1");
    if !python.exists() {
        assert!(
            !required,
            "READBOX_REQUIRE_MCP_SDK=1, but there is no {} (.ci/run makes it)",
            python.display()
        );
        // Written past the test harness's capture, which would hide it for a test that passes.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "the_official_python_sdk_drives_the_server skipped: no MCP SDK environment at {} \
             (the README says how to make one)",
            python.display()
        );
        return;
    }
    let mut child = std::process::Command::new(&python)
        .arg(manifest.join("tests/mcp-sdk/client.py"))
        .arg(crate::support::binary())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the SDK client");
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the SDK client did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains(" passed, 0 failed"),
        "the SDK client failed ({}):\n{said}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_call_before_initialized_still_waits_for_the_roots() {
    let env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    let roots: Roots = Arc::new(Mutex::new(Some(vec![file_uri(&env.p("sub"))])));
    let mut m = Mcp::start_with_roots(&env, roots);
    m.rpc(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
               "clientInfo": {"name": "hasty", "version": "1"}}),
    );
    error_text(&m.call("cat", json!({"path": env.p("a.txt")})), "denied");
    assert_eq!(ok_text(&m.call("cat", json!({"path": "x.txt"}))), "x\n");
    m.close();
}

// ---------------------------------------------------------------------------------------------
// First contact: roots must be given, the instructions name them, empty answers in words,
// continuations as parameters.
// ---------------------------------------------------------------------------------------------

#[test]
fn without_configured_roots_every_call_is_denied_saying_how_to_give_them() {
    let mut env = TestEnv::new();
    env.write("a.txt", "hello\n");
    // Empty counts as unset: no roots from the environment or a config file.
    env.var("READBOX_ROOTS", "");
    let mut m = Mcp::start(&env);
    let r = m.initialize("2025-11-25", false);
    let instructions = r["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("Roots: none") && instructions.contains("READBOX_ROOTS"),
        "{instructions}"
    );
    for (tool, args) in [
        ("cat", json!({"path": "a.txt"})),
        ("pwd", json!({})),
        ("ls", json!({})),
        ("cat", json!({"path": env.p("a.txt")})),
    ] {
        let t = error_text(&m.call(tool, args), "denied");
        assert!(
            t.starts_with("denied: no roots:") && t.contains("READBOX_ROOTS"),
            "{t}"
        );
    }
    m.close();
    // The client's roots become the roots; relative paths start at the first of them.
    let sub = env.mkdir("sub");
    env.write("sub/x.txt", "x\n");
    let roots: Roots = Arc::new(Mutex::new(Some(vec![format!("file://{}", sub.display())])));
    let mut m = Mcp::start_with_roots(&env, roots);
    let r = m.initialize("2025-11-25", true);
    assert!(
        r["instructions"]
            .as_str()
            .unwrap()
            .contains("Roots: the directories this client offers")
    );
    assert_eq!(ok_text(&m.call("cat", json!({"path": "x.txt"}))), "x\n");
    assert_eq!(
        ok_text(&m.call("pwd", json!({}))),
        format!("{}\n", sub.display())
    );
    error_text(&m.call("cat", json!({"path": env.p("a.txt")})), "denied");
    m.close();
}

#[test]
fn the_instructions_name_the_roots_and_the_working_directory() {
    let mut env = TestEnv::new();
    env.write("a.txt", "hello\n");
    let mut m = Mcp::start(&env);
    let r = m.initialize("2025-11-25", false);
    let root = env.root().display().to_string();
    let i = r["instructions"].as_str().unwrap();
    assert!(
        i.contains(&format!("Roots: {root}."))
            && i.contains(&format!("Working directory: {root}.")),
        "{i}"
    );
    m.close();
    // Started elsewhere (a host may start it in `/`): the calls still start at the first root.
    let root = env.root();
    env.var("READBOX_ROOTS", root.to_str().unwrap()).cd("/");
    let mut m = Mcp::start(&env);
    let r = m.initialize("2025-11-25", false);
    let i = r["instructions"].as_str().unwrap();
    assert!(
        i.contains(&format!(
            "Working directory: {} (the first root).",
            root.display()
        )),
        "{i}"
    );
    assert_eq!(ok_text(&m.call("cat", json!({"path": "a.txt"}))), "hello\n");
    m.close();
}

#[test]
fn empty_answers_are_said_in_words_and_continuations_are_parameters() {
    let env = TestEnv::new();
    env.write("a.txt", "hello\n");
    env.write("b.txt", "hello\n");
    env.write("empty.txt", "");
    env.mkdir("nothing");
    env.write(
        "big.txt",
        (0..10_000)
            .map(|i| format!("line {i}\n"))
            .collect::<String>(),
    );
    let mut m = Mcp::start(&env);
    m.initialize("2025-11-25", false);
    for (tool, args, said, status) in [
        ("grep", json!({"pattern": "absent"}), "no line matched", 1),
        (
            "diff",
            json!({"path_a": "a.txt", "path_b": "b.txt"}),
            "no differences",
            0,
        ),
        ("ls", json!({"path": "nothing"}), "no entries", 0),
        ("find", json!({"pattern": "*.rs"}), "no entries", 0),
        ("cat", json!({"path": "empty.txt"}), "no lines", 0),
    ] {
        let r = m.call(tool, args);
        assert_eq!(ok_text(&r), said, "{tool}");
        assert_eq!(r["_meta"]["exitStatus"], status, "{tool}");
    }
    let r = m.call("cat", json!({"path": "big.txt"}));
    let notes = &texts(&r)[1];
    assert!(
        notes.ends_with(r#"continue with: {"path": "big.txt", "from_line": 3388}"#),
        "{notes}"
    );
    m.close();
    // `readbox call` gives the same; the command line gives a call.
    let a = env.readbox(&["call", "cat", r#"{"path": "big.txt"}"#]);
    assert!(a.notes[0].ends_with(r#"{"path": "big.txt", "from_line": 3388}"#));
    let a = env.run("cat", &["big.txt"]);
    assert!(a.notes[0].ends_with("continue with: cat big.txt 3388"));
}

// ---------------------------------------------------------------------------------------------
// Messages that two readers would read two ways, and sessions that cannot be widened.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_repeated_key_is_refused_at_every_depth() {
    let env = TestEnv::new();
    env.write("a.txt", "hello\n");
    let secret = env.secret(".env");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    let cases = [
        // In the arguments: the last would name the excluded file.
        (
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"cat","arguments":{"path":"a.txt","path":".env"}}}"#,
            "a",
            -32602,
            "the key 'path' is given twice",
        ),
        // In params: the last would run another tool.
        (
            r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"cat","name":"ls","arguments":{"path":"a.txt"}}}"#,
            "b",
            -32602,
            "the key 'name' is given twice",
        ),
        // In the message itself.
        (
            r#"{"jsonrpc":"2.0","id":"c","method":"tools/list","method":"tools/call","params":{"name":"cat","arguments":{"path":".env"}}}"#,
            "c",
            -32600,
            "the key 'method' is given twice",
        ),
        // Deeper, in an array.
        (
            r#"{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"cat","arguments":{"path":"a.txt"},"_meta":{"x":[{"k":1,"k":2}]}}}"#,
            "d",
            -32602,
            "the key 'k' is given twice",
        ),
    ];
    for (line, id, code, message) in cases {
        m.write_line(line);
        let msg = m.response(&json!(id));
        assert_eq!(msg["error"]["code"], code, "{line}: {msg}");
        assert_eq!(msg["error"]["message"], message, "{line}: {msg}");
        assert!(!msg.to_string().contains(&secret));
    }
    // A repeated id: no answer can name the request; it is refused without one.
    m.write_line(r#"{"jsonrpc":"2.0","id":"e","id":"f","method":"ping"}"#);
    let msg = m
        .next_where(WAIT, |m| m.get("error").is_some() && m["id"].is_null())
        .expect("an answer to a message whose id is given twice");
    assert_eq!(msg["error"]["code"], -32600, "{msg}");
    assert_eq!(msg["error"]["message"], "the key 'id' is given twice");
    // The session goes on.
    assert_eq!(ok_text(&m.call("cat", json!({"path": "a.txt"}))), "hello\n");
    m.close();
}

#[test]
fn ids_are_echoed_exactly_as_sent() {
    let env = TestEnv::new();
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    for id in [
        "123456789012345678901234567890",
        "-98765432109876543210",
        "1.50",
        "0.1",
    ] {
        m.write_line(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        let want: Value = serde_json::from_str(id).unwrap();
        let msg = m.response(&want);
        assert_eq!(msg["result"], json!({}), "{msg}");
        assert_eq!(msg["id"].to_string(), id, "{msg}");
    }
    m.close();
}

#[test]
fn a_stateless_form_call_inside_a_session_keeps_the_sessions_roots() {
    let env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    env.write("sub/deeper/y.txt", "y\n");
    let roots: Roots = Arc::new(Mutex::new(Some(vec![file_uri(&env.p("sub"))])));
    let mut m = Mcp::start_with_roots(&env, roots);
    m.initialize("2025-06-18", true);
    error_text(&m.call("cat", json!({"path": env.p("a.txt")})), "denied");
    let stateless = |path: std::path::PathBuf, meta: Value| json!({"name": "cat", "arguments": {"path": path}, "_meta": meta});
    // Without roots of its own: the session's.
    let r = m.rpc(
        "tools/call",
        stateless(env.p("a.txt"), stateless_meta(false)),
    );
    error_text(&r, "denied");
    let r = m.rpc(
        "tools/call",
        stateless(env.p("sub/x.txt"), stateless_meta(false)),
    );
    assert_eq!(ok_text(&r), "x\n");
    // With roots of its own, wider than the session's: still the session's.
    let mut call = stateless(env.p("a.txt"), stateless_meta(true));
    call["inputResponses"] = json!({"roots": {"roots": [{"uri": file_uri(&env.root())}]}});
    error_text(&m.rpc("tools/call", call), "denied");
    // Narrower than the session's: its own.
    let mut call = stateless(env.p("sub/x.txt"), stateless_meta(true));
    call["inputResponses"] = json!({"roots": {"roots": [{"uri": file_uri(&env.p("sub/deeper"))}]}});
    error_text(&m.rpc("tools/call", call.clone()), "denied");
    call["arguments"] = json!({"path": env.p("sub/deeper/y.txt")});
    assert_eq!(ok_text(&m.rpc("tools/call", call)), "y\n");
    m.close();
}

#[test]
fn a_full_queue_answers_busy_at_once_and_the_servers_memory_stays_small() {
    let mut env = TestEnv::new();
    slow_file(&mut env);
    env.var("READBOX_TIMEOUT", "60");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    // More calls than the workers run and the queue holds, each with 60 KB of arguments that
    // the child would refuse: they only ever wait.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let filler = "x".repeat(60_000);
    let sent = 400;
    let ids: Vec<Value> = (0..sent)
        .map(|_| {
            m.request(
                "tools/call",
                json!({"name": "grep", "arguments": {"pattern": filler, "path": "big.bin"}}),
            )
        })
        .collect();
    let busy = |m: &Value| m["error"]["code"] == -32000;
    let mut refused = 0;
    while m.next_where(WAIT, busy).is_some() {
        refused += 1;
        if refused == sent - 32 - workers {
            break;
        }
    }
    // Every call beyond the running ones and the 32 waiting is refused at once (a worker may
    // not yet have taken its first call when the queue fills).
    assert!(
        (sent - 32 - workers..=sent - 32).contains(&refused),
        "{refused} of {sent} refused"
    );
    let msg = m.seen.iter().find(|v| busy(v)).cloned();
    assert!(msg.is_none_or(|v| {
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the server is busy: 32 calls are waiting")
    }));
    let status = std::fs::read_to_string(format!("/proc/{}/status", m.child.id())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap();
    assert!(
        peak_kib < 32 * 1024,
        "the server's peak memory: {peak_kib} KiB"
    );
    drop(ids);
    let st = m.close_within(Duration::from_secs(10));
    assert_eq!(st.code(), Some(0));
}

#[test]
fn calls_whose_children_cannot_exit_are_answered_and_free_their_slots() {
    // Children blocked in reads that a FUSE file system has taken cannot exit until it answers;
    // each call still answers by its timeout, and the next call gets a worker.
    let mut env = TestEnv::new();
    let Some(_fs) = crate::hardening::alias_root(&env) else {
        return;
    };
    env.var("READBOX_TIMEOUT", "1");
    let mut m = Mcp::start(&env);
    m.initialize("2025-06-18", false);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let slow: Vec<Value> = (0..workers)
        .map(|_| {
            m.request(
                "tools/call",
                json!({"name": "cat", "arguments": {"path": "slow.txt"}}),
            )
        })
        .collect();
    let quick = m.request(
        "tools/call",
        json!({"name": "cat", "arguments": {"path": "a.txt"}}),
    );
    for id in &slow {
        let r = m.response(id)["result"].clone();
        error_text(&r, "timeout");
    }
    assert_eq!(ok_text(&m.response(&quick)["result"]), "hello\n");
    m.close_within(Duration::from_secs(10));
}
