"""Output files, with the same rules as the graft command: a regular file is replaced
atomically (a temporary file beside it, then a rename; its mode is kept), a symlink is followed
and its target replaced the same way, a device or FIFO is written into directly, and '-' is
stdout. A folder, a missing folder or an unwritable place is refused before any work."""
import os
import stat
import sys
import tempfile


class OutputError(Exception):
    """An output path graft cannot write."""


def check_output_path(path):
    """Return ("stdout" | "in_place" | "replace", the path that will change)."""
    if path == "-":
        return "stdout", path
    if not path:
        raise OutputError("the output path is empty")
    real = os.path.realpath(path)  # follows every link, dangling ones included
    if os.path.islink(real):
        raise OutputError(f"{path}: too many levels of symbolic links")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{path}: is a folder, not a file" if not os.path.islink(path)
                          else f"{path}: leads to a folder ('{real}'), not a file")
    if st is not None and not stat.S_ISREG(st.st_mode):
        if not os.access(real, os.W_OK):
            raise OutputError(f"{path}: cannot write: permission denied")
        return "in_place", real
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise OutputError(f"{path}: the folder '{folder}' does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: cannot create files in '{folder}': permission denied")
    if st is not None and not os.access(real, os.W_OK):
        raise OutputError(f"{path}: the file is not writable")
    return "replace", real


def _mode_for(path):
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_output(path, data):
    """Write `data` (bytes) to `path` by the rules above."""
    kind, real = check_output_path(path)
    if kind == "stdout":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    if kind == "in_place":  # no O_CREAT, no O_TRUNC: the device or FIFO is written, never replaced
        fd = os.open(real, os.O_WRONLY | os.O_NOCTTY)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return
    fd, tmp = tempfile.mkstemp(prefix=".graft-", suffix=".tmp", dir=os.path.dirname(real))
    try:
        os.chmod(tmp, _mode_for(real))  # mkstemp makes 0600; keep the old file's mode instead
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, real)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
