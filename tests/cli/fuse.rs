//! A FUSE file system for the tests (`tests/fuse/aliasfs.py`): a read-only passthrough that
//! looks names up as vfat, exFAT and Windows shares do (trailing dots and spaces dropped, case
//! folded, short names such as `SSH~1`), and whose files named `slow*` block every read until it
//! is unmounted. It runs under the Python in `target/fuse-venv` (with the mfusepy package) that
//! `.ci/run` makes; where that, `/dev/fuse` or `fusermount3` is missing, or mounting is refused
//! (a container without the right), [`AliasFs::mount`] says why and the test passes without it,
//! unless `READBOX_REQUIRE_FUSE=1` (set by `.ci/run` where FUSE works) makes that a failure.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A mounted [`AliasFs`]; dropping it unmounts it and ends its process.
pub struct AliasFs {
    child: Child,
    mountpoint: PathBuf,
}

impl AliasFs {
    /// Mounts a view of `source` at `mountpoint` (an empty directory), or says why it cannot and
    /// returns `None`.
    pub fn mount(source: &Path, mountpoint: &Path) -> Option<AliasFs> {
        let required = std::env::var("READBOX_REQUIRE_FUSE").is_ok_and(|v| v == "1");
        let skip = |why: String| {
            assert!(!required, "READBOX_REQUIRE_FUSE=1, but {why}");
            eprintln!("skipped: {why}");
            None
        };
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let python = manifest.join("target/fuse-venv/bin/python");
        let script = manifest.join("tests/fuse/aliasfs.py");
        if !Path::new("/dev/fuse").exists() {
            return skip("no /dev/fuse".into());
        }
        if Command::new("fusermount3").arg("-V").output().is_err() {
            return skip("no fusermount3 (the fuse3 package)".into());
        }
        if !python.exists() {
            return skip(format!("no {} (.ci/run makes it)", python.display()));
        }
        let mut child = Command::new(&python)
            .arg(&script)
            .arg(source)
            .arg(mountpoint)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the FUSE file system");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let ready = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
        if ready.trim() != "ready" {
            let _ = child.kill();
            let out = child
                .wait_with_output()
                .map(|o| o.stderr)
                .unwrap_or_default();
            let why = String::from_utf8_lossy(&out);
            return skip(format!(
                "the FUSE file system did not mount: {}",
                why.lines().last().unwrap_or("no message")
            ));
        }
        // `init` runs just before the mount is visible: wait for it.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !mounted(mountpoint) {
            assert!(Instant::now() < deadline, "the FUSE mount never showed");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(AliasFs {
            child,
            mountpoint: mountpoint.to_path_buf(),
        })
    }
}

/// Whether `path` is a FUSE mount point (`/proc/self/mounts`).
fn mounted(path: &Path) -> bool {
    std::fs::read_to_string("/proc/self/mounts").is_ok_and(|m| {
        m.lines().any(|l| {
            let mut f = l.split(' ');
            let (_, point, kind) = (f.next(), f.next(), f.next());
            point == path.to_str() && kind.is_some_and(|k| k.starts_with("fuse"))
        })
    })
}

impl Drop for AliasFs {
    fn drop(&mut self) {
        // Lazily: a reader still blocked in a slow file must not keep the mount.
        let _ = Command::new("fusermount3")
            .arg("-u")
            .arg("-z")
            .arg(&self.mountpoint)
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
