"""A read-only FUSE passthrough for readbox's tests, that looks names up as the vfat and exFAT
drivers and Windows shares do, and that has a file whose reads block.

    aliasfs.py SOURCE MOUNTPOINT

- A name is found with its trailing dots and spaces dropped and regardless of case: `.ENV.`,
  `.env ` and `Server.PEM.` open `.env` and `server.pem`. A short name `STEM~N` (up to six
  letters or digits, as 8.3 names are made) opens the Nth entry, in sorted order, whose name
  without dots starts with STEM in capitals: `SSH~1` opens `.ssh`. Listings give the real names.
- Inode numbers are the source's (`use_ino`), so every name of an object gives the same one.
- Reading any file named `slow*`, or asking for the file system's figures (`statfs`) through a
  directory named `slow*`, blocks until the file system is unmounted (or for an hour): a call
  that holds its caller in the kernel.

It needs the mfusepy package (libfuse 3 through ctypes) and /dev/fuse; it prints `ready` on
standard output once mounted.
"""

import errno
import os
import sys
import threading

import mfusepy as fuse


class AliasFS(fuse.Operations):
    def __init__(self, source):
        self.source = os.path.realpath(source)
        self.unmounted = threading.Event()

    def _entry(self, directory, name):
        names = sorted(os.listdir(directory))
        if name in names:
            return name
        want = name.rstrip(". ").casefold()
        for n in names:
            if n.rstrip(". ").casefold() == want:
                return n
        stem, tilde, number = name.partition("~")
        if tilde and number.isdigit() and 0 < len(stem) <= 6:
            alike = [n for n in names if n.replace(".", "").upper().startswith(stem.upper())]
            if int(number) <= len(alike):
                return alike[int(number) - 1]
        raise fuse.FuseOSError(errno.ENOENT)

    def _real(self, path):
        real = self.source
        for name in [p for p in path.split("/") if p]:
            if not os.path.isdir(real) or os.path.islink(real):
                raise fuse.FuseOSError(errno.ENOTDIR)
            real = os.path.join(real, self._entry(real, name))
        return real

    def getattr(self, path, fh=None):
        st = os.lstat(self._real(path))
        keys = ("st_mode", "st_ino", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime",
                "st_mtime", "st_ctime")
        return {k: getattr(st, k) for k in keys}

    def readdir(self, path, fh):
        return [".", ".."] + sorted(os.listdir(self._real(path)))

    def readlink(self, path):
        return os.readlink(self._real(path))

    def open(self, path, flags):
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise fuse.FuseOSError(errno.EROFS)
        return os.open(self._real(path), os.O_RDONLY)

    def read(self, path, size, offset, fh):
        if os.path.basename(self._real(path)).startswith("slow"):
            self.unmounted.wait(3600)
            raise fuse.FuseOSError(errno.EIO)
        return os.pread(fh, size, offset)

    def release(self, path, fh):
        os.close(fh)
        return 0

    def statfs(self, path):
        if os.path.basename(self._real(path)).startswith("slow"):
            self.unmounted.wait(3600)
            raise fuse.FuseOSError(errno.EIO)
        st = os.statvfs(self.source)
        return {k: getattr(st, k) for k in ("f_bsize", "f_frsize", "f_blocks", "f_bfree",
                                            "f_bavail", "f_files", "f_ffree", "f_namemax")}

    def init(self, path):
        print("ready", flush=True)

    def destroy(self, path):
        self.unmounted.set()


def main():
    source, mountpoint = sys.argv[1], sys.argv[2]
    fs = AliasFS(source)
    fuse.FUSE(fs, mountpoint, foreground=True, ro=True, use_ino=True, nothreads=False,
              default_permissions=True)


if __name__ == "__main__":
    main()
