#!/usr/bin/python3
"""faultyfs.py - a FUSE filesystem that passes through to a backing
directory and injects faults on demand, for tests that need a real device
error (EIO) or a real slow disk without device-mapper.

    faultyfs.py BACKING_DIR MOUNTPOINT CONTROL_FILE

CONTROL_FILE (outside the mount) holds one word, re-read on every request:
    ok          pass everything through
    eio         reads and writes of regular files fail with EIO
    enospc      writes of regular files fail with ENOSPC, reads pass (a full
                copy-on-write filesystem or thin volume: an overwrite needs
                free space)
    delay SECS  every read and write sleeps SECS first (requests are served
                one at a time, so the delay queues like a slow disk)
    frac F SECS a fraction F (0-1) of the reads and writes sleeps SECS first,
                evenly spread (request i sleeps when floor(i*F) steps up): a
                fat tail with the median unchanged
    every PERIOD N SECS [START]
                every read and write sleeps SECS first while the window
                floor((now - START) / PERIOD) is a multiple of N (START: a
                Unix time, default 0): a fault that comes and goes, e.g. one
                probe round in three
Any mode may be preceded by "base SECS": every read and write sleeps SECS
first (a healthy disk's latency floor, e.g. 4 ms for an HDD-like one, well
above the server's own jitter), then the mode applies, e.g.
"base 0.004 frac 0.03 0.02" or "base 0.004 ok".
Runs in the foreground; unmount with `fusermount -u MOUNTPOINT` or
`umount MOUNTPOINT`. Uses Debian's python3-fusepy (libfuse2); mounted with
direct_io so O_DIRECT reaches it and nothing is served from the page cache.
"""
import errno
import os
import sys
import time

from fusepy import FUSE, FuseOSError, Operations


class Faulty(Operations):
    def __init__(self, root, control):
        self.root = root
        self.control = control
        self.requests = 0

    def _p(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def _fault(self, writing=False):
        try:
            with open(self.control) as f:
                word = f.read().split()
        except OSError:
            return
        if len(word) > 2 and word[0] == "base":
            time.sleep(float(word[1]))
            word = word[2:]
        if not word:
            return
        if word[0] == "eio":
            raise FuseOSError(errno.EIO)
        if word[0] == "enospc" and writing:
            raise FuseOSError(errno.ENOSPC)
        if word[0] == "delay" and len(word) > 1:
            time.sleep(float(word[1]))
        if word[0] == "frac" and len(word) > 2:
            f = float(word[1])
            self.requests += 1
            if int(self.requests * f) > int((self.requests - 1) * f):
                time.sleep(float(word[2]))
        if word[0] == "every" and len(word) > 3:
            period, n = float(word[1]), int(word[2])
            start = float(word[4]) if len(word) > 4 else 0.0
            if int((time.time() - start) // period) % n == 0:
                time.sleep(float(word[3]))

    # metadata: plain pass-through
    def getattr(self, path, fh=None):
        st = os.lstat(self._p(path))
        keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size",
                "st_atime", "st_mtime", "st_ctime", "st_blocks")
        return {k: getattr(st, k) for k in keys}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._p(path))

    def statfs(self, path):
        s = os.statvfs(self._p(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail",
                "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")
        return {k: getattr(s, k) for k in keys}

    def mkdir(self, path, mode):
        os.mkdir(self._p(path), mode)

    def rmdir(self, path):
        os.rmdir(self._p(path))

    def unlink(self, path):
        os.unlink(self._p(path))

    def chmod(self, path, mode):
        os.chmod(self._p(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self._p(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self._p(path), times)

    def truncate(self, path, length, fh=None):
        os.truncate(self._p(path), length)

    def open(self, path, flags):
        return os.open(self._p(path), flags & ~os.O_DIRECT)

    def create(self, path, mode, fi=None):
        return os.open(self._p(path), os.O_RDWR | os.O_CREAT | os.O_EXCL, mode)

    def release(self, path, fh):
        os.close(fh)

    def fsync(self, path, datasync, fh):
        os.fsync(fh)

    def flush(self, path, fh):
        return 0

    # data: where faults happen
    def read(self, path, size, offset, fh):
        self._fault()
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        self._fault(writing=True)
        return os.pwrite(fh, data, offset)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    root, mnt, control = sys.argv[1:]
    FUSE(Faulty(os.path.abspath(root), os.path.abspath(control)), mnt,
         foreground=True, nothreads=True, direct_io=True, allow_other=False)
