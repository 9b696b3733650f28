//! The type of an object on disk ([`NodeKind`]), from its mode or from a directory listing.

use rustix::fs::{FileType, Stat};

/// The type of an object, from its mode (as `stat` names them in docs/contract.md#tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (only seen in walks, which never follow them).
    Symlink,
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A mode that is none of the above (a filesystem that reports something else): never read,
    /// never listed, since nothing about it is known.
    Unknown,
}

impl NodeKind {
    /// The kind of the object described by `st`.
    pub fn of(st: &Stat) -> NodeKind {
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => NodeKind::File,
            FileType::Directory => NodeKind::Directory,
            FileType::Symlink => NodeKind::Symlink,
            FileType::Fifo => NodeKind::Fifo,
            FileType::Socket => NodeKind::Socket,
            FileType::CharacterDevice => NodeKind::CharDevice,
            FileType::BlockDevice => NodeKind::BlockDevice,
            // Unsure what it is: not a regular file, so nothing opens it for reading.
            FileType::Unknown => NodeKind::Unknown,
        }
    }

    /// The kind a directory listing reports (`d_type`), if it reports one.
    pub fn from_file_type(t: FileType) -> Option<NodeKind> {
        match t {
            FileType::RegularFile => Some(NodeKind::File),
            FileType::Directory => Some(NodeKind::Directory),
            FileType::Symlink => Some(NodeKind::Symlink),
            FileType::Fifo => Some(NodeKind::Fifo),
            FileType::Socket => Some(NodeKind::Socket),
            FileType::CharacterDevice => Some(NodeKind::CharDevice),
            FileType::BlockDevice => Some(NodeKind::BlockDevice),
            FileType::Unknown => None,
        }
    }

    /// The name `stat` prints: `file`, `directory`, `fifo`, `socket`, `char_device`, …
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::File => "file",
            NodeKind::Directory => "directory",
            NodeKind::Symlink => "symlink",
            NodeKind::Fifo => "fifo",
            NodeKind::Socket => "socket",
            NodeKind::CharDevice => "char_device",
            NodeKind::BlockDevice => "block_device",
            NodeKind::Unknown => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_mode_is_never_taken_for_a_regular_file() {
        // SAFETY: Stat is a plain C struct, for which all zeroes is a valid value.
        let mut st: Stat = unsafe { std::mem::zeroed() };
        st.st_mode = 0o100_644;
        assert_eq!(NodeKind::of(&st), NodeKind::File);
        // 0o160000 is no file type Linux defines (S_IFMT less the seven known ones).
        st.st_mode = 0o160_644;
        assert_eq!(NodeKind::of(&st), NodeKind::Unknown);
        st.st_mode = 0o644;
        assert_eq!(NodeKind::of(&st), NodeKind::Unknown);
        assert_eq!(NodeKind::Unknown.name(), "unknown");
    }
}
