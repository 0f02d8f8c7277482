#!/usr/bin/env python3
"""A QMP proxy for tests: listens on a unix socket, relays each client to QEMU's own monitor
socket (one connection there per client) and logs, for every command a client sends, one line
'MONOTONIC_SECONDS COMMAND TARGET PID' (TARGET: query-stats' target, else -; PID: the client's,
so that a test counts its own reader's commands and not those of another program on the host
that found the socket on QEMU's command line). Runs until killed.
  qmp_proxy.py LISTEN_SOCKET QEMU_SOCKET LOG"""
import json, os, socket, struct, sys, threading, time

listen_path, qemu_path, log_path = sys.argv[1:4]
log = open(log_path, "a", buffering=1)
lock = threading.Lock()

def note(line, pid):
    try:
        cmd = json.loads(line)
    except ValueError:
        return
    target = cmd.get("arguments", {}).get("target", "-") if isinstance(cmd.get("arguments"), dict) else "-"
    with lock:
        log.write("%.6f %s %s %d\n" % (time.monotonic(), cmd.get("execute", "?"), target, pid))

def pump(src, dst, watch, pid=0):
    buf = b""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if watch:
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    note(line.decode(errors="replace"), pid)
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

def serve(client):
    qemu = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        qemu.connect(qemu_path)
    except OSError:
        client.close()
        return
    t = threading.Thread(target=pump, args=(qemu, client, False), daemon=True)
    t.start()
    pid = struct.unpack("3i", client.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[0]
    pump(client, qemu, True, pid)
    t.join()
    client.close()
    qemu.close()

if os.path.exists(listen_path):
    os.unlink(listen_path)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(listen_path)
srv.listen(8)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
