"""What the data builders share: writing a LIBSVM file through a temporary file renamed into
place, so that nothing half-written is left behind."""
import os
import tempfile


def write_atomically(out, write):
    """Calls write(f) on a temporary file beside `out`, then renames it to `out`."""
    directory = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(out) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="ascii", newline="\n") as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise
