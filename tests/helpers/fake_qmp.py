#!/usr/bin/env python3
"""A scripted QEMU monitor for tests: listens on a unix socket, serves one client at a time with
QEMU's greeting, qmp_capabilities, query-balloon (actual = --balloon bytes) and qom-get of
guest-stats (reported --age seconds ago, now by default, with --available bytes, --free bytes (half
of it unless said) and --total bytes (absent unless said); --no-stats: never reported, last-update
0) and, with --polling SEC, of guest-stats-polling-interval. Any other command gets QEMU's
CommandNotFound error. Runs until killed.
  fake_qmp.py SOCKET --balloon BYTES [--available BYTES [--free BYTES] [--total BYTES] [--age SEC]
              | --no-stats] [--polling SEC] [--exec PROGRAM ARGS...]
With --exec the fake guest itself is the monitor's listener, as QEMU is of its own (vmhost speaks
only to a socket the VM process listens on, SO_PEERCRED): this process binds and listens, forks
a child that serves the monitor on the inherited listening socket (and ends with its parent), and
execs PROGRAM with argv[0] qemu-system-x86_64 in its own pid, keeping the listening socket open
across the exec as QEMU holds its own (vmhost asks /proc whether the VM holds it before it connects).
scripts/lib/common.sh's fake_guest_qmp starts a fake guest so."""
import argparse, ctypes, json, os, signal, socket, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("socket")
ap.add_argument("--balloon", type=int, required=True)
ap.add_argument("--available", type=int, default=0)
ap.add_argument("--no-stats", action="store_true")
ap.add_argument("--free", type=int)
ap.add_argument("--total", type=int)
ap.add_argument("--age", type=int, default=0)
ap.add_argument("--polling", type=int)
ap.add_argument("--exec", nargs=argparse.REMAINDER, metavar="PROGRAM ARGS")
a = ap.parse_args()

def reply(cmd):
    name = cmd.get("execute")
    if name == "qmp_capabilities":
        return {"return": {}}
    if name == "query-balloon":
        return {"return": {"actual": a.balloon}}
    if name == "qom-get" and cmd.get("arguments", {}).get("property") == "guest-stats":
        if a.no_stats:
            return {"return": {"stats": {"stat-available-memory": -1}, "last-update": 0}}
        stats = {"stat-available-memory": a.available,
                 "stat-free-memory": a.available // 2 if a.free is None else a.free,
                 "stat-disk-caches": 0, "stat-major-faults": 0}
        if a.total is not None:
            stats["stat-total-memory"] = a.total
        return {"return": {"stats": stats, "last-update": int(time.time()) - a.age}}
    if name == "qom-get" and a.polling is not None and \
            cmd.get("arguments", {}).get("property") == "guest-stats-polling-interval":
        return {"return": a.polling}
    return {"error": {"class": "CommandNotFound", "desc": "The command %s has not been found" % name}}

def serve(srv):
    while True:
        conn, _ = srv.accept()
        with conn:
            f = conn.makefile("rwb")
            f.write(b'{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}, "package": ""}, "capabilities": ["oob"]}}\r\n')
            f.flush()
            try:
                for line in f:
                    if not line.strip():
                        continue
                    f.write(json.dumps(reply(json.loads(line))).encode() + b"\r\n")
                    f.flush()
            except (ConnectionError, ValueError):
                pass

def serve_for_parent(srv, parent):
    """The child of --exec: ends when the fake guest (its parent) does (PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(0)
    try:
        serve(srv)
    finally:
        os._exit(0)

try:
    os.unlink(a.socket)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(a.socket)
srv.listen(4)
if not a.exec:
    serve(srv)
me = os.getpid()
if os.fork() == 0:
    serve_for_parent(srv, me)
os.set_inheritable(srv.fileno(), True)  # the fake guest holds its monitor's socket, as QEMU does
sys.stdout.flush()
os.execv(a.exec[0], ["qemu-system-x86_64"] + a.exec[1:])
