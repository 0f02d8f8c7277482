#!/bin/bash
# share plan --from against a hostile sketch server: a reply past the cap (here endless, as
# Content-Length says 2 GiB) is read no further than 256 MiB, and said so in one line, exit 1; a
# reply that claims values denser than a sketch can hold (1 bit each: 64 times its length in
# memory) is refused by the parser before anything is allocated for them.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
command -v /usr/bin/python3 >/dev/null || die "python3 is missing"

PORT=$(free_port)
cat >"$TEST_TMP/server.py" <<'PY'
import http.server, struct, sys

def dense_sketch():
    # Version 2, 1/2^20: the sample's space is 2^20 values, 2^14 at most by the density rule.
    # One VM claims 2^19 values, all 0 (gaps of 0, Rice k = 0: one bit each), 64 KiB coded.
    n, count = 1 << 20, 1 << 19
    coded = count // 8
    head = b"VMHSKTCH" + struct.pack("<IIQQqqIIHBB4x", 2, 64, n, 0, -1, -1, 4096, 1, 0, 0, 40)
    vm = struct.pack("<iBBBBqqqqqQQ", 1, 0, 0, 0, 0, count, count, 0, 0, 0, count, coded)
    return head + vm + bytes(coded)

class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if self.path == "/dense":
            body = dense_sketch()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(2 << 30))
        self.end_headers()
        chunk = bytes(1 << 20)
        try:
            for _ in range(2 << 10):
                self.wfile.write(chunk)
        except OSError:
            pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
spawn /usr/bin/python3 "$TEST_TMP/server.py" "$PORT"
SRV=$SPAWNED
wait_for 10 curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$PORT/dense" || die "the test server did not start"

start=$SECONDS
"$VMHOST" share plan --from "http://127.0.0.1:$PORT/endless" --timeout 60 >/dev/null 2>"$TEST_TMP/err"
rc=$?
check "an endless reply: exit 1 ($rc) after $((SECONDS - start)) s, in one line: $(cat "$TEST_TMP/err")" \
	sh -c "[ $rc = 1 ] && [ \$(wc -l <'$TEST_TMP/err') = 1 ] && grep -q 'a reply over 256 MiB' '$TEST_TMP/err'"

"$VMHOST" share plan --from "http://127.0.0.1:$PORT/dense" --timeout 60 >/dev/null 2>"$TEST_TMP/err"
rc=$?
check "values denser than a sketch can be: exit 1 ($rc), the parser's reason: $(cat "$TEST_TMP/err")" \
	sh -c "[ $rc = 1 ] && grep -q 'denser than a sketch can be' '$TEST_TMP/err'"
stop_pid "$SRV"
finish
