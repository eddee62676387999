"""`docs-mcp serve --shared`: a stdio session served by a fork of a resident process (resident.py).

Each stdio session of a plain server imports the MCP SDK, lancedb, pyarrow and onnxruntime, opens
the index and loads the model itself: over a second of CPU before its first answer and a few
hundred MB that every session holds a copy of. With `--shared` the process the client starts is a
launcher that imports the standard library only: it connects to a resident process for the same
index and options over a Unix socket, hands it its stdin, stdout and stderr (SCM_RIGHTS) and waits.
The resident, which has imported the server's modules once, forks a child that serves the session
on those descriptors; the imported modules' memory stays shared between the children.

The launcher stays for the session: it forwards SIGTERM, SIGINT and SIGHUP to its child, exits with
the child's exit code (128 + N for a child ended by signal N), and its death ends the child (which
watches the connection). With no resident running, the launcher starts one (detached, logging to
a file beside its socket) and waits for it; whatever goes wrong on the way, it serves the session
itself the plain way (exec), so `--shared` never costs a session.

This module is imported before anything else in that process: standard library only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import sys

DIR_ENV = "DOCS_MCP_SHARED_DIR"  # where the sockets, locks and logs go (default: per user, private)
FIRST_ENV = "DOCS_MCP_SHARED_FIRST"  # "wait" (default) for a starting resident, or "serve" the first session plainly
IDLE_DEFAULT = 600.0  # seconds a resident with no session stays
START_WAIT = 120.0  # seconds a launcher waits for a resident it started to listen
# The environment a server reads (config, model cache, object store, failpoints): launchers that
# differ in it get different residents. Anything else (TERM, the editor's own variables) does not matter.
KEY_ENV_PREFIXES = (
    "DOCS_MCP_",
    "LANCEDB_",
    "AWS_",
    "OPENAI_",
    "HF_",
    "TRANSFORMERS_",
    "OMP_",
    "OPENBLAS_",
    "JE_",
    "ARROW_",
    "PYTHON",
)
KEY_ENV_NAMES = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
# glibc gives each thread that allocates an arena of its own; a session's LanceDB and model threads do
# little allocating, and each arena is memory a session holds alone. Read at a process's start: so
# set for the resident, whose sessions inherit it.
RESIDENT_ENV = {"MALLOC_ARENA_MAX": "2"}
OPTION = "--shared"
IDLE_OPTION = "--shared-idle-timeout"


def _sha256_hex(data: bytes) -> str:
    """SHA-256 from the interpreter's built-in module: hashlib would load OpenSSL, a tenth of this process's start."""
    try:
        builtin = __import__("_sha2" if sys.version_info >= (3, 12) else "_sha256")
    except ImportError:
        import hashlib

        return hashlib.sha256(data).hexdigest()
    return str(builtin.sha256(data).hexdigest())


class LauncherError(Exception):
    """Something that makes `--shared` impossible: said on one line, then the session is served plainly."""


def split_options(argv: list[str]) -> tuple[list[str], float]:
    """`serve …` arguments without --shared and --shared-idle-timeout, and that timeout."""
    rest, idle, i = [], IDLE_DEFAULT, 0
    while i < len(argv):
        arg = argv[i]
        if arg == OPTION:
            pass
        elif arg == IDLE_OPTION or arg.startswith(IDLE_OPTION + "="):
            value = arg.split("=", 1)[1] if "=" in arg else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 0 if "=" in arg else 1
            try:
                idle = float(value)
            except ValueError:
                idle = -1.0
            if not idle > 0:
                raise SystemExit(f"error: {IDLE_OPTION} {value!r}: give a number of seconds above 0")
        else:
            rest.append(arg)
        i += 1
    return rest, idle


def wants_http(args: list[str]) -> bool:
    for i, arg in enumerate(args):
        if arg == "--transport=http" or (arg == "--transport" and args[i + 1 : i + 2] == ["http"]):
            return True
    return False


def place() -> str:
    """The private folder (0700, ours) for the sockets: $DOCS_MCP_SHARED_DIR, else $XDG_RUNTIME_DIR/docs-mcp,
    else docs-mcp-UID in the temporary folder. One that another user owns or can enter is refused."""
    folder = os.environ.get(DIR_ENV)
    if not folder:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        if runtime and os.path.isdir(runtime):
            folder = os.path.join(runtime, "docs-mcp")
        else:
            folder = os.path.join(os.environ.get("TMPDIR") or "/tmp", f"docs-mcp-{os.getuid()}")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise LauncherError(f"cannot create {folder}: {exc.strerror}") from None
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise LauncherError(
            f"{folder} must be a folder of yours that only you can enter (mode 700); remove it or set {DIR_ENV}"
        )
    return folder


def key(args: list[str]) -> str:
    """What makes two sessions servable by one resident: the arguments, the folder they are relative to,
    the environment a server reads, and the Python and docs-mcp that serve them."""
    from . import __version__

    env = {k: v for k, v in os.environ.items() if k.startswith(KEY_ENV_PREFIXES) or k in KEY_ENV_NAMES}
    what = [args, os.getcwd(), sorted(env.items()), sys.executable, os.path.dirname(__file__), __version__]
    return _sha256_hex(json.dumps(what).encode())[:24]


def paths(folder: str, name: str) -> dict[str, str]:
    return {kind: os.path.join(folder, f"{name}.{kind}") for kind in ("sock", "lock", "log")}


def connect(path: str) -> socket.socket | None:
    """A connection to the resident listening on `path`, or None when none does (no socket, or a stale one)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:  # ENOENT: none yet; ECONNREFUSED: a socket its resident left behind
        sock.close()
        return None
    return sock


def start_resident(args: list[str], name: str, where: dict[str, str], idle: float) -> int:
    """Start a resident in a session of its own, detached (double fork: no zombie is left to the client's
    process); returns the read end of a pipe it writes a line to once it listens (EOF: it did not start)."""
    ready_r, ready_w = os.pipe()
    log = os.open(where["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    command = [sys.executable, "-m", "docs_mcp_core.resident", name, str(idle), str(ready_w), "--", *args]
    pid = os.fork()
    if pid == 0:  # the launcher has no threads: forking it is safe
        try:
            os.setsid()
            if os.fork() == 0:
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(log, 1)
                os.dup2(log, 2)
                os.close(ready_r)
                os.set_inheritable(ready_w, True)
                os.execve(sys.executable, command, {**RESIDENT_ENV, **os.environ})
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(log)
    os.waitpid(pid, 0)
    return ready_r


def wait_ready(ready: int) -> bool:
    """Whether the resident listens (it wrote its line) rather than exited (EOF), within START_WAIT."""
    import select

    try:
        readable, _, _ = select.select([ready], [], [], START_WAIT)
        return bool(readable) and os.read(ready, 64).startswith(b"ready")
    finally:
        os.close(ready)


def hand_over(sock: socket.socket) -> int | None:
    """Send stdin, stdout and stderr; wait for the child's pid, then its exit code (-N: ended by signal N).
    None: no child took the session (the resident went away before one did), so the descriptors are still
    this process's to serve."""
    try:
        socket.send_fds(sock, [b"attach\n"], [0, 1, 2])
        reader = sock.makefile("rb")
        first = reader.readline()
    except OSError:
        return None
    if not first.startswith(b"pid "):
        return None
    child = int(first.split()[1])
    null = os.open(os.devnull, os.O_RDWR)  # the client's pipes are the child's now: EOF reaches it and the client alike
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    forwarded: list[int] = []

    def forward(signum: int, frame: object) -> None:
        forwarded.append(signum)
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    while True:
        try:
            line = reader.readline()
        except OSError:
            line = b""
        if line.startswith(b"exit "):
            return int(line.split()[1])
        if not line:  # the child and the resident are both gone without saying how the child ended
            if forwarded:
                return -forwarded[-1]
            print("docs-mcp: the shared server's session ended without an exit status", file=sys.stderr)
            return 1


def end_as(code: int) -> None:
    """Exit as the child did: with its code, or by the signal that ended it (as a plain server would)."""
    if code < 0:
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code
    sys.stderr.flush()
    os._exit(code)


def serve_plainly(args: list[str]) -> None:
    """Serve this session in this process, the ordinary way (never returns)."""
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "docs_mcp_core.cli", *args])


def main(argv: list[str]) -> None:
    """`docs-mcp serve … --shared` (argv without the program name): attach to the resident, or start one."""
    args, idle = split_options(argv)
    if wants_http(args):
        raise SystemExit(f"error: {OPTION} is for stdio sessions; an HTTP server is shared by its clients already")
    if not sys.platform.startswith("linux"):  # the resident watches its children through pidfds
        print(f"docs-mcp: {OPTION} works on Linux only; serving this session on its own", file=sys.stderr)
        serve_plainly(args)
    try:
        folder = place()
    except LauncherError as exc:
        print(f"docs-mcp: {OPTION}: {exc}; serving this session on its own", file=sys.stderr)
        serve_plainly(args)
    name = key(args)
    where = paths(folder, name)
    for _ in range(2):  # a resident that was going idle as this one connected: once more, with a new one
        sock = connect(where["sock"])
        if sock is None:
            ready = start_resident(args, name, where, idle)
            if os.environ.get(FIRST_ENV) == "serve":
                os.close(ready)
                serve_plainly(args)
            if not wait_ready(ready):
                break
            sock = connect(where["sock"])
            if sock is None:
                continue
        code = hand_over(sock)
        if code is not None:
            end_as(code)
    print(
        f"docs-mcp: {OPTION}: no resident server answered (its log: {where['log']}); serving this session on its own",
        file=sys.stderr,
    )
    serve_plainly(args)
