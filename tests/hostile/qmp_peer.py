#!/usr/bin/env python3
"""A hostile QMP peer for the tests in tests/hostile/qmp_*.sh: what a local user can put behind a
socket that a forged QEMU's command line names. Two ways to run it:
  as a forged QEMU serving its own monitor (argv[0] qemu-system-x86_64 and QEMU's options after
  the code, which Python leaves alone):
    python3 -c 'exec(open(PEER).read())' -name x -m 64M -qmp unix:SOCK,server=on,wait=off
  as a server of its own, another process than the VM whose command line names SOCK:
    python3 PEER -qmp unix:SOCK,server=on
Its behaviour is QMP_PEER's (environment):
  flood    QEMU's greeting, then asynchronous events without pause, whatever the client sends
  slow     the greeting at once, then each command answered QMP_PEER_DELAY seconds (0.25) after it
           with a plausible reply (a balloon, guest stats, a disk, KVM statistics whose exits grow
           by a million a reply): just inside a per-call deadline (mem's visits had 0.3 s a call,
           the KVM reader's 0.5), so before 56bcd57 every call got its answer and the figures were
           shown; a visit's deadline is up before it has them all
  endless  the greeting, then to the first command a JSON string that never ends
  sleep    no monitor at all (listens on nothing): a forged QEMU whose socket another serves
QMP_PEER_LOG (a file) gets a line per connection ("connected") and per read ("read N bytes: ..."),
so a test can tell that a client connected and sent nothing. Runs until killed."""
import json, os, queue, socket, sys, threading, time

MODE = os.environ.get("QMP_PEER", "flood")
DELAY = float(os.environ.get("QMP_PEER_DELAY", "0.25"))
LOG = os.environ.get("QMP_PEER_LOG")
GREETING = b'{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}, "package": ""}, "capabilities": ["oob"]}}\r\n'
# Events cheaper to send than to take: first one of 4 MiB, so the reader's buffer grows to hold it,
# then the smallest, a MiB at a time, each of which costs the reader a parse and a move of all it
# holds after it. A reader that looks at its clock only when the socket runs dry never does
# (REVIEW S-H1): the socket's ~200 KiB take it a good part of a second to get through.
BIG_EVENT = b'{"event":"X","data":{"pad":"' + b"x" * (4 << 20) + b'"}}\n'
EVENTS = b'{"event":"X"}\n' * (1 << 16)
log_lock = threading.Lock()
exits = [0]

def note(line):
    if LOG:
        with log_lock, open(LOG, "a") as f:
            f.write(line + "\n")

def socket_path():
    for i, arg in enumerate(sys.argv[:-1]):
        if arg == "-qmp" and sys.argv[i + 1].startswith("unix:"):
            return sys.argv[i + 1][5:].split(",")[0]
    sys.exit("qmp_peer: no -qmp unix:PATH among the arguments")

def answer(cmd):
    """A plausible QEMU reply's "return" to cmd (slow mode)."""
    name, args = cmd.get("execute"), cmd.get("arguments") or {}
    exits[0] += 1000000
    vcpu = {"provider": "kvm", "qom-path": "/machine/unattached/device[0]",
            "stats": [{"name": "exits", "value": exits[0]}, {"name": "halt_exits", "value": exits[0] // 2}]}
    replies = {
        "query-balloon": {"actual": 16 << 20},
        "qom-get": {"stats": {"stat-available-memory": 10 << 20, "stat-free-memory": 8 << 20,
                              "stat-disk-caches": 0, "stat-major-faults": 0}, "last-update": int(time.time())},
        "query-blockstats": [{"device": "drive0", "qdev": "/machine/peripheral/disk0/virtio-backend",
                              "stats": {"rd_bytes": 1 << 40, "wr_bytes": 1 << 40, "rd_operations": exits[0],
                                        "wr_operations": exits[0], "flush_operations": 0}}],
        "query-stats-schemas": [
            {"provider": "kvm", "target": "vm", "stats": [{"name": "remote_tlb_flush", "type": "cumulative", "exponent": 0}]},
            {"provider": "kvm", "target": "vcpu", "stats": [{"name": "exits", "type": "cumulative", "exponent": 0},
                                                            {"name": "halt_exits", "type": "cumulative", "exponent": 0}]}],
        "query-stats": [vcpu] if args.get("target") == "vcpu" else
                       [{"provider": "kvm", "stats": [{"name": "remote_tlb_flush", "value": exits[0]}]}],
        "query-cpus-fast": [{"thread-id": os.getpid(), "qom-path": "/machine/unattached/device[0]", "cpu-index": 0,
                             "target": "x86_64", "props": {"core-id": 0, "thread-id": 0, "socket-id": 0}}],
    }
    return replies.get(name, {})

def reader(conn, lines):
    """Logs every byte the client sends; hands whole lines to lines (None at the end)."""
    buf = b""
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            note("read %d bytes: %r" % (len(data), data[:200]))
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.strip():
                    lines.put(line)
    except OSError:
        pass
    lines.put(None)

def serve(conn):
    note("connected")
    lines = queue.Queue()
    threading.Thread(target=reader, args=(conn, lines), daemon=True).start()
    try:
        conn.sendall(GREETING)
        if MODE == "flood":
            conn.sendall(BIG_EVENT)
            while True:
                conn.sendall(EVENTS)
        while True:
            line = lines.get()
            if line is None:
                break
            try:
                cmd = json.loads(line)
            except ValueError:
                continue
            if MODE == "endless":
                conn.sendall(b'{"return": "')
                while True:
                    conn.sendall(b"A" * 65536)
            time.sleep(DELAY)
            conn.sendall(json.dumps({"return": answer(cmd), "id": cmd.get("id")}).encode() + b"\r\n")
    except OSError:
        pass
    conn.close()

if MODE == "sleep":
    while True:
        time.sleep(3600)
path = socket_path()
try:
    os.unlink(path)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o777)
srv.listen(16)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
