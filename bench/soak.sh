#!/bin/bash
# A soak of the exporter and the recorder, run for MINUTES as an operator runs them for months:
# `vmhost serve --db` and `vmhost record` side by side, each on a database of its own and at the
# same 2 s pace, while guests start and stop (8 steady fake guests, and tests/helpers/churn.sh
# starting one every 2 s that lives up to 40 s: about 20 VMs at a time), a firmware KVM guest
# (idle, under QEMU) and a libvirt domain where the host has them, and a scraper at Prometheus'
# pace (one scrape a second) with a burst of 12 at once every 30 s. Every 10 s it reads each
# process's RSS, open fds and threads, and each database's size and free pages. It prints, at the
# start and the end and as a slope per hour (least squares over every reading, and that slope as a
# share of the start), those figures and the scrapes' latency (p50 and p99 a minute); then the
# samples missing (rows a database should hold, from its pace and the steady guests, against the
# rows it holds) and the scrapes that failed. One line a figure, "NAME START END SLOPE/H PCT",
# parsed by tests/live/soak_slice.sh (the 2-minute slice make check runs).
#   bench/soak.sh [MINUTES] [BUILD_DIR]        (defaults 30 minutes, build)
set -u
minutes=${1:-30}
build=${2:-build}
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "soak: $*" >&2; }
for tool in curl sqlite3 awk; do command -v $tool >/dev/null || die "$tool is missing"; done
[ -x "$vmhost" ] && [ -x "$fake" ] || die "no $vmhost or $fake (build first)"
PACE=2 PROBE_EVERY=10 STEADY=8
end_at=$((SECONDS + minutes * 60))

# --- the guests: steady ones, the churn, the firmware guest, the libvirt domain ---------------
on_cleanup '[ -f "$tmp/churned" ] && while read -r p _; do kill "$p" 2>/dev/null; done <"$tmp/churned"'
for i in $(seq $STEADY); do fake_guest_start "soak-steady$i" -m 16M -fake-guest "$i" -fake-nomerge; done
fake_guest_ready $(seq -f 'soak-steady%g' $STEADY)
: >"$tmp/churned"
spawn bash "$here/tests/helpers/churn.sh" "$fake" "$tmp/churned" 2 40
fw=no
if [ -c /dev/kvm ] && command -v qemu-system-x86_64 >/dev/null; then
	fw_qemu --name soak-fw --kind idle --qmp "$tmp/fw.sock"
	fw=yes
fi
libvirt=no DOMAIN_UP=0
if [ "$(id -u)" = 0 ] && command -v libvirtd >/dev/null && command -v virtlogd >/dev/null &&
	command -v virsh >/dev/null && [ -c /dev/kvm ]; then
	. "$here/tests/e2e/libvirt_lib.sh"
	on_cleanup '[ "$DOMAIN_UP" = 1 ] && $VIRSH destroy soak-libvirt >/dev/null 2>&1; for pid in $STARTED; do stop_pid "$pid"; done'
	libvirt_up
	# libvirt's QEMU runs as libvirt-qemu: /dev/kvm its group's for the run, as libvirt_kvm.sh sets it
	kvm_mode=$(stat -c '%a %G' /dev/kvm)
	on_cleanup 'chmod "${kvm_mode% *}" /dev/kvm; chgrp "${kvm_mode#* }" /dev/kvm'
	getent group kvm >/dev/null && chgrp kvm /dev/kvm && chmod 660 /dev/kvm
	fw_image idle
	chmod 755 "$tmp" && chmod 644 "$FW_IMAGE"
	fw_domain_xml soak-libvirt kvm none >"$tmp/domain.xml"
	$VIRSH create "$tmp/domain.xml" >/dev/null 2>"$tmp/create.err" && DOMAIN_UP=1 libvirt=yes ||
		say "no libvirt domain: $(cat "$tmp/create.err")"
fi

# --- the exporter and the recorder ---------------------------------------------------------------
spawn "$vmhost" serve --listen 127.0.0.1:0 --db "$tmp/serve.db" --db-interval $PACE 2>"$tmp/serve.log"
SERVE=$SPAWNED
for _ in $(seq 300); do
	PORT=$(sed -n 's|.*listening on http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$tmp/serve.log")
	[ -n "$PORT" ] && break
	kill -0 "$SERVE" 2>/dev/null || break
	sleep 0.1
done
[ -n "$PORT" ] || die "serve did not start: $(cat "$tmp/serve.log")"
spawn "$vmhost" --json record --db "$tmp/record.db" --interval $PACE >"$tmp/record.json" 2>"$tmp/record.log"
RECORD=$SPAWNED

# --- the scraper: one a second, 12 at once every 30 s; "EPOCH CODE SECONDS" a scrape ------------
scrape() { curl -s -o /dev/null -m 20 -w "$EPOCHSECONDS %{http_code} %{time_total}\n" "http://127.0.0.1:$PORT/metrics"; }
scraper() {
	local n=0 i
	while :; do
		n=$((n + 1))
		if [ $((n % 30)) = 0 ]; then
			for i in $(seq 12); do scrape & done
			wait
		else
			scrape
		fi
		sleep 1
	done >>"$tmp/scrapes"
}
scraper &
SCRAPER=$!
adopt "$SCRAPER"

# --- the readings: "EPOCH NAME VALUE" every PROBE_EVERY s ----------------------------------------
proc_figures() { # LABEL PID
	local rss thr fds
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$2/status" 2>/dev/null)
	thr=$(awk '/^Threads:/ { print $2 }' "/proc/$2/status" 2>/dev/null)
	fds=$(ls "/proc/$2/fd" 2>/dev/null | wc -l)
	[ -n "$rss" ] || return 0
	echo "$EPOCHSECONDS ${1}_rss_kib $rss"
	echo "$EPOCHSECONDS ${1}_fds $fds"
	echo "$EPOCHSECONDS ${1}_threads $thr"
}
db_figures() { # LABEL FILE: its size with the WAL's, and the pages free in it
	local size pages free
	size=$(stat -c %s "$2" "$2-wal" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
	read -r pages free < <(sqlite3 "file:$2?mode=ro" 'SELECT (SELECT page_count FROM pragma_page_count), (SELECT freelist_count FROM pragma_freelist_count)' 2>/dev/null | tr '|' ' ')
	echo "$EPOCHSECONDS ${1}_db_bytes $size"
	[ -n "$free" ] && echo "$EPOCHSECONDS ${1}_db_free_pages $free"
}
say "soaking for $minutes min: serve (pid $SERVE, port $PORT) and record (pid $RECORD), firmware guest: $fw, libvirt domain: $libvirt"
while [ $SECONDS -lt $end_at ]; do
	{
		proc_figures serve "$SERVE"
		proc_figures record "$RECORD"
		db_figures serve "$tmp/serve.db"
		db_figures record "$tmp/record.db"
		echo "$EPOCHSECONDS host_processes $(ls -d /proc/[0-9]* 2>/dev/null | wc -l)"
	} >>"$tmp/readings"
	sleep $PROBE_EVERY
done
kill -0 "$SERVE" 2>/dev/null || say "serve died: $(tail -3 "$tmp/serve.log")"
kill -0 "$RECORD" 2>/dev/null || say "record died: $(tail -3 "$tmp/record.log")"
stop_pid "$SCRAPER"
stop_pid "$RECORD"
stop_pid "$SERVE"

# --- the figures ------------------------------------------------------------------------------------
# Latency: p50 and p99 of each minute's scrapes, in ms, as readings of their own.
awk '$2 == 200 { m = int($1 / 60); n[m]++; v[m, n[m]] = $3 * 1000 }
	END { for (k in n) { c = n[k]; for (i = 1; i <= c; i++) a[i] = v[k, i]
		for (i = 2; i <= c; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
		printf "%d scrape_p50_ms %.2f\n%d scrape_p99_ms %.2f\n", k * 60 + 30, a[int((c + 1) * 0.5)], k * 60 + 30, a[int(c * 0.99) > 0 ? int(c * 0.99) : 1] } }' \
	"$tmp/scrapes" >>"$tmp/readings"
echo "soak: $minutes min, serve --db (--db-interval $PACE) and record --interval $PACE; $STEADY steady guests and" \
	"$(wc -l <"$tmp/churned") churned (one every 2 s, up to 40 s each); firmware KVM guest $fw, libvirt domain $libvirt;" \
	"$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-26s %14s %14s %14s %9s\n' figure start end slope/h "% start/h"
# Per figure: the first and last reading and the least-squares slope over all of them, per hour.
awk '{ k = $2; if (!(k in n)) order[++m] = k; n[k]++; if (n[k] == 1) { first[k] = $3; t0[k] = $1 }
	last[k] = $3; t = ($1 - t0[k]) / 3600; st[k] += t; sv[k] += $3; stt[k] += t * t; stv[k] += t * $3 }
	END { for (i = 1; i <= m; i++) { k = order[i]; d = n[k] * stt[k] - st[k] * st[k]
		s = d > 0 ? (n[k] * stv[k] - st[k] * sv[k]) / d : 0
		printf "%-26s %14.2f %14.2f %14.2f %9.2f\n", k, first[k], last[k], s, first[k] ? 100 * s / first[k] : 0 } }' \
	<(sort -n -s -k1,1 "$tmp/readings")

# Samples missing: a gap over 1.5 times the pace counts the samples that should be in it; each
# steady guest should have a row in every sample from its first to its last.
missing() { # DB
	sqlite3 "$1" "WITH t AS (SELECT t_ms, lag(t_ms) OVER (ORDER BY t_ms) AS prev FROM samples WHERE resolution = 0)
		SELECT coalesce(sum(CAST(round((t_ms - prev) / ($PACE * 1000.0)) AS INTEGER) - 1), 0) FROM t
		WHERE t_ms - prev > $PACE * 1500;"
}
vm_rows_missing() { # DB
	sqlite3 "$1" "SELECT coalesce(sum(want - have), 0) FROM (SELECT v.id,
		(SELECT count(*) FROM samples s WHERE s.resolution = 0 AND s.t_ms BETWEEN min(x.t_ms) AND max(x.t_ms)) AS want,
		count(*) AS have FROM vms v JOIN vm_samples x ON x.vm_id = v.id AND x.resolution = 0
		WHERE v.name LIKE 'soak-steady%' GROUP BY v.id)"
}
for db in serve record; do
	printf '%-26s %14s of %s (steady guests: %s rows missing)\n' "${db}_samples_missing" \
		"$(missing "$tmp/$db.db")" "$(sqlite3 "$tmp/$db.db" 'SELECT count(*) FROM samples')" "$(vm_rows_missing "$tmp/$db.db")"
done
printf '%-26s %14s\n' record_dropped "$(jq '.dropped_samples // "?"' "$tmp/record.json" 2>/dev/null || echo '?')"
printf '%-26s %14s of %s\n' scrapes_failed "$(awk '$2 != 200' "$tmp/scrapes" | wc -l)" "$(wc -l <"$tmp/scrapes")"
