"""The resident process of `docs-mcp serve --shared`: imports the server once, forks a child per session.

Started by a launcher (shared_session.py) that found none for its index and options, in a session of
its own, logging to a file beside its socket. It imports the server's modules (the MCP SDK, lancedb,
pyarrow, numpy and docs-mcp's own), freezes them out of the garbage collector's walks
(so the children's collections do not write to the shared pages), and listens on a Unix socket. For
each launcher that connects and hands over its stdin, stdout and stderr, it forks a child that runs
`docs-mcp serve` on them exactly as a plain server does: reads metadata.json, opens the index, loads
the query model, follows republishes. The forked memory stays shared copy-on-write between children.

Why the resident opens nothing itself: a process must not fork once it has started threads (LanceDB's
runtime, onnxruntime's pools, the model loader, an event loop), as a child gets the memory of those
threads' locks and none of the threads. The resident stays single-threaded (checked before each fork);
each child starts its own threads. So a child always serves the index as it is published when the
session starts, and a republish reaches it the way it reaches a plain server. The query model is not
loaded here either: `import onnxruntime` starts a thread of its own, so each child imports it and loads
the model in the background, as a plain server does (the model file is a shared memory map anyway).

The child watches the connection to its launcher: when the launcher dies (its client killed it), the
child ends too. It tells the launcher its exit code before it ends; when it dies by a signal, the
resident tells it. A child crashing takes no other session with it, and killing the resident leaves
its children serving (each is in a process group of its own). With no session for the idle timeout,
the resident removes its socket and exits.
"""

from __future__ import annotations

import fcntl
import gc
import os
import selectors
import signal
import socket
import sys
import threading
import time
import warnings

from . import shared_session
from .process import before_exit, own_process

POLL = 0.05  # seconds between looks for the socket, for a resident that another one beat to the lock
# No thread may be running when the resident forks. OpenBLAS (numpy) starts a pool of one thread per
# core at import, Arrow's jemalloc a background purging thread: one BLAS thread (a search's products
# are of a query vector, too small to split) and purging done inline instead. The one thread left,
# LanceDB's background event loop, sits idle in epoll; lancedb restarts it in a forked child itself
# (os.register_at_fork), with a warning filtered here.
QUIET_ENV = {"OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}


def log(message: str) -> None:
    print(
        f"{time.strftime('%Y-%m-%d %H:%M:%S')} docs-mcp resident {os.getpid()}: {message}", file=sys.stderr, flush=True
    )


def warm() -> int:
    """Import what a session's server imports (no thread started, nothing opened); returns the modules loaded.
    Not onnxruntime: its import starts a thread."""
    import anyio._backends._asyncio  # noqa: F401 - anyio.run's backend, loaded on first use
    import lancedb  # noqa: F401
    import mcp.server.stdio  # noqa: F401
    import pyarrow  # noqa: F401
    import tokenizers  # noqa: F401

    from . import cli  # noqa: F401
    from .embedding import local_onnx, query  # noqa: F401
    from .search import engine  # noqa: F401
    from .server import app, stdio_pipes  # noqa: F401
    from .versions import lockfiles, pinning, serving  # noqa: F401 - lockfile readers: a versioned corpus's

    return len(sys.modules)


def threads() -> int:
    return len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else threading.active_count()


def serve_child(conn: socket.socket, fds: list[int], args: list[str]) -> None:
    """In the forked child: serve the session on the launcher's descriptors, as `docs-mcp serve` does."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.setpgid(0, 0)  # a signal to the resident's group does not reach the sessions
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    conn.sendall(f"pid {os.getpid()}\n".encode())

    def tell(code: int) -> None:
        conn.sendall(f"exit {code}\n".encode())

    def watch_launcher() -> None:
        try:
            while conn.recv(64):
                pass
        except OSError:
            pass
        os._exit(0)  # the launcher is gone (its client killed it): so is the session

    before_exit(tell)
    threading.Thread(target=watch_launcher, name="launcher-watch", daemon=True).start()
    from . import cli
    from .search import engine

    engine.FIRST_SEARCHES_FROM_TABLE = True  # LanceDB is imported here already (warm)
    sys.argv = ["docs-mcp", *args]
    code = 1
    try:
        cli.main(args, prog_name="docs-mcp")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - shown on the session's stderr, then the child ends
        import traceback

        traceback.print_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    from .process import exit_now

    exit_now(code)


class Resident:
    def __init__(self, listener: socket.socket, lock: int, args: list[str], idle: float, quiet: int) -> None:
        self.listener = listener
        self.quiet = quiet  # threads after the imports: the main one and LanceDB's idle loop
        self.lock = lock  # held while this resident lives: a child must not keep it
        self.args = args
        self.idle = idle
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ, None)
        self.children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection to its launcher)
        self.idle_since = time.monotonic()

    def run(self) -> None:
        while True:
            timeout = None if self.children else max(0.0, self.idle_since + self.idle - time.monotonic())
            events = self.selector.select(timeout)
            if not events and not self.children and time.monotonic() >= self.idle_since + self.idle:
                log(f"no session for {self.idle:.0f} s: exiting")
                return
            for event, _ in events:
                if event.fileobj is self.listener:
                    self.accept()
                else:
                    self.reap(event.fd)

    def accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        try:
            conn.settimeout(10)
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            uid = int.from_bytes(creds[4:8], sys.byteorder)
            if uid != os.getuid():
                log(f"refused a connection from user {uid}")
                conn.close()
                return
            message, fds, _, _ = socket.recv_fds(conn, 64, 3)
        except OSError as exc:
            log(f"a launcher's connection failed: {exc}")
            conn.close()
            return
        if not message.startswith(b"attach") or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        conn.settimeout(None)
        if threads() != self.quiet:  # never reached: nothing here starts a thread; a fork then would be unsafe
            log(f"{threads()} threads: cannot fork a session safely; refusing it (the launcher serves it)")
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                self.selector.close()
                self.listener.close()
                os.close(self.lock)
                for pidfd, (_, other) in self.children.items():
                    os.close(pidfd)
                    other.close()
                serve_child(conn, fds, self.args)
            finally:
                os._exit(1)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = (pid, conn)
        self.selector.register(pidfd, selectors.EVENT_READ, None)
        log(f"session {pid} started ({len(self.children)} live)")

    def reap(self, pidfd: int) -> None:
        pid, conn = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code < 0:  # ended by a signal: the child could not say so itself
            try:
                conn.sendall(f"exit {code}\n".encode())
            except OSError:
                pass
            log(f"session {pid} ended by signal {-code}")
        conn.close()
        if not self.children:
            self.idle_since = time.monotonic()


def listen(path: str) -> socket.socket:
    """Listen on `path`, replacing a socket a dead resident left (the lock says none lives)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(64)
    return listener


def wait_for_other(path: str) -> None:
    """Another resident holds the lock: once it listens, the launcher that started this one can connect."""
    deadline = time.monotonic() + shared_session.START_WAIT
    while time.monotonic() < deadline:
        sock = shared_session.connect(path)
        if sock is not None:
            sock.close()
            return
        time.sleep(POLL)


def say_ready(fd: int) -> None:
    """Tell the launcher that started this resident that it listens (it may have gone: then nobody hears)."""
    try:
        os.write(fd, b"ready\n")
    except OSError:
        pass
    os.close(fd)


def main(argv: list[str]) -> int:
    """`python -m docs_mcp_core.resident NAME IDLE READY_FD -- serve ARGS…` (started by shared_session)."""
    name, idle, ready_fd, _, *args = argv
    ready = int(ready_fd)
    own_process()
    where = shared_session.paths(shared_session.place(), name)
    lock = open(where["lock"], "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log("another resident holds the lock: waiting for it to listen")
        wait_for_other(where["sock"])
        say_ready(ready)
        return 0
    started = time.monotonic()
    for name, value in QUIET_ENV.items():
        os.environ.setdefault(name, value)
    warnings.filterwarnings("ignore", message="lancedb fork support is experimental")  # said in every child
    modules = warm()
    quiet = threads()
    gc.freeze()  # the children's collections leave the imported objects (and their shared pages) alone
    listener = listen(where["sock"])
    socket_id = os.stat(where["sock"]).st_ino
    log(
        f"serving {' '.join(args)} in {os.getcwd()}: {modules} modules imported in "
        f"{time.monotonic() - started:.2f} s; {quiet} threads"
    )
    say_ready(ready)

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        Resident(listener, lock.fileno(), args, float(idle), quiet).run()
    finally:
        try:
            if os.stat(where["sock"]).st_ino == socket_id:
                os.unlink(where["sock"])
        except FileNotFoundError:
            pass
        listener.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
