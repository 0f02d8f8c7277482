#!/bin/bash
# Writes the seed corpus of every fuzz target into fuzz/corpus/<target>/ from the fixture trees
# (tests/fixtures/**) and, where no fixture holds such input (INI, --listen, Accept), from the
# examples in docs/ and contrib/. Seeds are named seed-<sha1>; it only adds files, so the
# regression inputs (bug-*) stay. Run it again when fixtures are added.
set -e
src=$(cd "$(dirname "$0")/.." && pwd)
fx=$src/tests/fixtures
out=$src/fuzz/corpus

# seed TARGET: one seed from standard input (at most 16 KiB: enough for any fixture's shape).
seed() {
	local tmp
	tmp=$(mktemp)
	head -c 16384 >"$tmp"
	mkdir -p "$out/$1"
	mv "$tmp" "$out/$1/seed-$(sha1sum <"$tmp" | cut -c1-16)"
	chmod 644 "$out/$1"/seed-*
}

# files TARGET NAME...: every fixture file with one of these names.
files() {
	local target=$1
	shift
	local args=()
	for n in "$@"; do args+=(-o -name "$n"); done
	find "$fx" -type f \( "${args[@]:1}" \) -print0 | while IFS= read -r -d '' f; do
		seed "$target" <"$f"
	done
}

files meminfo meminfo
files status status 'status-*'
files ksm_stat 'ksm_stat*'
files smaps_rollup smaps_rollup
files stat stat 'stat-*'
files schedstat schedstat
files cgroup cgroup 'cgroup-*'
files maps maps smaps
files smaps smaps
files io_stat io io.stat blkio.throttle.io_service_bytes memory.numa_stat dev
find "$fx" -path '*/fdinfo/*' -type f -print0 | while IFS= read -r -d '' f; do seed io_stat <"$f"; done
files cpu_list online possible present
files sysfs_choice advisor_mode enabled
find "$fx" -type f -path '*/mm/ksm/*' ! -name advisor_mode -print0 | while IFS= read -r -d '' f; do
	seed i64 <"$f"
done

# KVM debugfs: the counter files, and the VM, vCPU and counter names.
find "$fx" -path '*/debug/kvm/*' -print0 | while IFS= read -r -d '' f; do
	if [ -f "$f" ]; then
		seed debugfs <"$f"
	fi
	printf '%s' "$(basename "$f")" | seed debugfs
done

# VM command lines: /proc/PID/cmdline files, and the cmdlines/*.args corpus (one argument a
# line after its "# " header) joined by NULs, for cmdline, qemu_cmdline and qemu_disks; each
# option argument also seeds qemu_opt, and each size in one seeds qemu_size.
files cmdline cmdline
for f in "$fx"/cmdlines/*.args; do
	grep -v '^# ' "$f" | tr '\n' '\0' | seed cmdline
	grep -v '^# ' "$f" | tr '\n' '\0' | seed qemu_disks
	grep -v '^# ' "$f" | tr '\n' '\0' | seed qemu_cmdline
	grep -v '^# ' "$f" | grep -v '^-' | while IFS= read -r arg; do
		printf '%s' "$arg" | seed qemu_opt
		printf '%s\n' "$arg" | tr ',' '\n' | sed -n 's/^\(size\|requested-size\)=//p; /^[0-9][0-9.]*[a-zA-Z]*$/p' |
			while IFS= read -r size; do printf '%s' "$size" | seed qemu_size; done
	done
done

# QMP replies (fuzz_json.c) and tracefs format files.
for f in "$fx"/qmp/*.json; do seed json <"$f"; done
# A QMP peer (fuzz_qmp_peer.c): a whole visit's conversation as QEMU 7.2 holds it (the greeting,
# then a reply to each call in the target's order), one with events between, one ending in errors.
q=$fx/qmp
{ cat "$q/greeting-7.2.json"; printf '{"return": {}}\r\n'
	cat "$q/schemas-kvm-x86.json" "$q/stats-vm.json" "$q/stats-vcpu.json" "$q/cpus.json"
	printf '{"return": {"actual": 67108864}}\r\n'; cat "$q/query-blockstats.json"; } | seed qmp_peer
{ cat "$q/greeting-7.2.json"; printf '{"return": {}, "id": 1}\r\n{"event": "BALLOON_CHANGE", "data": {"actual": 1}, "timestamp": {"seconds": 1, "microseconds": 2}}\r\n'
	cat "$q/tcg-query-stats.json"; } | seed qmp_peer
{ cat "$q/greeting-7.2.json"; printf '{"return": {}}\r\n'; cat "$q/error-command-not-found.json" "$q/error-bad-target.json"; } | seed qmp_peer
files trace_format format

# INI: the documented ksm tune configuration, and small variants of its syntax.
sed -n '/^```ini$/,/^```$/p' "$src/docs/ksm.md" | sed '1d;$d' | seed ini
seed ini <"$src/contrib/ksm-tune.ini"
printf '; comment\n[tune]\ncpu_budget=15 ; why\n\n[other]\nname = a#b\n' | seed ini
printf '[tune]\r\ninterval = 0.5\r\n' | seed ini

# --listen: the socket unit's address and the forms docs/serve.md names.
sed -n 's/^ListenStream=//p' "$src"/contrib/systemd/*.socket | while IFS= read -r a; do printf '%s' "$a" | seed listen; done
for a in 127.0.0.1:9464 '[::1]:9464' :9464 localhost:0 0.0.0.0:80 '[fe80::1]:65535'; do
	printf '%s' "$a" | seed listen
done

# Accept: what Prometheus 2.x, curl and the tests send; two lists split by a NUL.
for h in 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' \
	'application/openmetrics-text; version=1.0.0' '*/*' 'text/plain;version=0.0.4' \
	'text/plain;q=0.9, application/openmetrics-text;q=0.5' 'text/*;q=0.3, application/openmetrics-text;q=0.300'; do
	printf '%s' "$h" | seed accept
done
printf 'application/openmetrics-text;q=0.5\0text/plain;q=0.5' | seed accept

# Web config (serve --web-config): the contrib example, the one in docs/serve.md, and the
# syntax variants the parser reads (quotes, escapes, comments, CRLF, empty sections).
seed web_config <"$src/contrib/web-config.yml"
sed -n '/^```yaml$/,/^```$/p' "$src/docs/serve.md" | sed '1d;$d' | seed web_config
h='$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi'
seed web_config <<'YAML'
---
tls_server_config:
  cert_file: "a \"b\"\t.crt"
  key_file: 'k''s.key' # c
  min_version: TLS13
  max_version: TLS13
YAML
printf 'basic_auth_users:\r\n    "al ice": %s\r\n    bob: "%s"\r\n' "$h" "$h" | seed web_config
printf 'tls_server_config:\n  client_auth_type: NoClientCert\n  cert_file: c\n  key_file: k\nbasic_auth_users: {}\n' | seed web_config
printf 'tls_server_config:\n  cert_file: c\n  key_file: k\n  foo: [1, 2]\n' | seed web_config
