//! The type of an object on disk ([`Kind`]), from its mode or from a directory listing.

use rustix::fs::{FileType, Stat};

/// The type of an object, from its mode (as `stat` names them in docs/contract.md#tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
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

impl Kind {
    /// The kind of the object described by `st`.
    pub fn of(st: &Stat) -> Kind {
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Directory,
            FileType::Symlink => Kind::Symlink,
            FileType::Fifo => Kind::Fifo,
            FileType::Socket => Kind::Socket,
            FileType::CharacterDevice => Kind::CharDevice,
            FileType::BlockDevice => Kind::BlockDevice,
            // Unsure what it is: not a regular file, so nothing opens it for reading.
            FileType::Unknown => Kind::Unknown,
        }
    }

    /// The kind a directory listing reports (`d_type`), if it reports one.
    pub fn from_file_type(t: FileType) -> Option<Kind> {
        match t {
            FileType::RegularFile => Some(Kind::File),
            FileType::Directory => Some(Kind::Directory),
            FileType::Symlink => Some(Kind::Symlink),
            FileType::Fifo => Some(Kind::Fifo),
            FileType::Socket => Some(Kind::Socket),
            FileType::CharacterDevice => Some(Kind::CharDevice),
            FileType::BlockDevice => Some(Kind::BlockDevice),
            FileType::Unknown => None,
        }
    }

    /// The name `stat` prints: `file`, `directory`, `fifo`, `socket`, `char_device`, …
    pub fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Directory => "directory",
            Kind::Symlink => "symlink",
            Kind::Fifo => "fifo",
            Kind::Socket => "socket",
            Kind::CharDevice => "char_device",
            Kind::BlockDevice => "block_device",
            Kind::Unknown => "unknown",
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
        assert_eq!(Kind::of(&st), Kind::File);
        // 0o160000 is no file type Linux defines (S_IFMT less the seven known ones).
        st.st_mode = 0o160_644;
        assert_eq!(Kind::of(&st), Kind::Unknown);
        st.st_mode = 0o644;
        assert_eq!(Kind::of(&st), Kind::Unknown);
        assert_eq!(Kind::Unknown.name(), "unknown");
    }
}
