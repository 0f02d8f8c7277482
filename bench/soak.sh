#!/bin/bash
# A soak of the exporter and the recorder, run for MINUTES as an operator runs them for months:
# `vmhost serve --db` and `vmhost record` side by side, each on a database of its own and at the
# same 2 s pace, while guests start and stop (8 steady fake guests, and tests/helpers/churn.sh
# starting one every 2 s that lives up to 40 s: about 20 VMs at a time), a firmware KVM guest
# (idle, under QEMU) and a libvirt domain where the host has them, and a scraper at Prometheus'
# pace (one scrape a second) with a burst of 12 at once every 30 s. Every 10 s it reads each
# process's RSS, open fds (all, and those not on a /proc/PID file: the database, sockets, its
# own) and threads, and each database's size and free pages. The start's and the end's readings
# are taken quiet, with the same guests: once both processes have written two samples and before
# the churn and the scraper start, and once they stopped, the churned guests are gone and both
# wrote two samples more. It prints, at the start and the end and as a slope per hour (least
# squares over every reading, that slope as a share of the start, and the slope over the second
# half of the readings alone), those figures and the
# scrapes' latency (p50 and p99 a minute); then the fds still held on the files of the churned
# guests, gone by then; the samples missing (rows a database should hold, from its pace and the
# steady guests, against the rows it holds) and the scrapes that failed. One line a figure,
# "NAME START END SLOPE/H PCT", parsed by tests/live/soak_slice.sh (the 2-minute slice make check
# runs), which also waits for its stage lines on stderr ("soak: ...").
#   bench/soak.sh [MINUTES] [BUILD_DIR]        (defaults 30 minutes, build)
# SOAK_PACE=SEC (whole seconds, default 2) sets both processes' pace: 1 writes twice the samples
# in the same minutes, for what grows with the samples written (SQLite's page cache, to its cap).
set -u
minutes=${1:-30}
build=${2:-build}
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "soak: $*" >&2; }
for tool in curl sqlite3 awk; do command -v $tool >/dev/null || die "$tool is missing"; done
[ -x "$vmhost" ] && [ -x "$fake" ] || die "no $vmhost or $fake (build first)"
PACE=${SOAK_PACE:-2} PROBE_EVERY=10 STEADY=8

# --- the guests: steady ones, the firmware guest, the libvirt domain (the churn comes later) ---
kill_churned() { [ -f "$tmp/churned" ] && while read -r p _; do kill "$p" 2>/dev/null; done <"$tmp/churned"; }
on_cleanup kill_churned
for i in $(seq $STEADY); do fake_guest_start "soak-steady$i" -m 16M -fake-guest "$i" -fake-nomerge; done
fake_guest_ready $(seq -f 'soak-steady%g' $STEADY)
: >"$tmp/churned"
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

# samples_in DB: the samples it holds at its own resolution (0 while it cannot be read).
samples_in() { sqlite3 "file:$1?mode=ro" 'SELECT count(*) FROM samples WHERE resolution = 0' 2>/dev/null || echo 0; }
# wait_samples N DB PID...: until each DB holds N samples or more, however long they take, while
# its writer PID lives (5 min at most: what a stuck writer gets): 1 if one did not get there.
wait_samples() {
	local n=$1 end=$((SECONDS + 300))
	shift
	while [ $# -ge 2 ]; do
		until [ "$(samples_in "$1")" -ge "$n" ] 2>/dev/null; do
			kill -0 "$2" 2>/dev/null && [ $SECONDS -lt $end ] || return 1
			sleep 0.2
		done
		shift 2
	done
}
wait_samples 2 "$tmp/serve.db" "$SERVE" "$tmp/record.db" "$RECORD" ||
	die "serve and record did not write 2 samples each: $(tail -3 "$tmp/serve.log" "$tmp/record.log")"

# --- the scraper: one a second, 12 at once every 30 s; "EPOCH CODE SECONDS" a scrape ------------
scrape() { curl -s -o /dev/null -m 20 -w "$EPOCHSECONDS %{http_code} %{time_total}\n" "http://127.0.0.1:$PORT/metrics"; }
scraper() { # until TMP/scraper.stop is there, so that no scrape is under way when it returns
	local n=0 i
	while [ ! -e "$tmp/scraper.stop" ]; do
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

# --- the readings: "EPOCH NAME VALUE" every PROBE_EVERY s ----------------------------------------
# Both hold the /proc files of every process on the host open (read again with pread), so their
# fds follow the host's processes; the others (the database, sockets, their own) should not move.
proc_figures() { # LABEL PID
	local rss anon thr fds own
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$2/status" 2>/dev/null)
	anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$2/status" 2>/dev/null)
	thr=$(awk '/^Threads:/ { print $2 }' "/proc/$2/status" 2>/dev/null)
	read -r fds own < <(find "/proc/$2/fd" -mindepth 1 -printf '%l\n' 2>/dev/null |
		awk '{ n++ } !/^\/proc\/[0-9]+\// { o++ } END { print n + 0, o + 0 }')
	[ -n "$rss" ] || return 0
	echo "$EPOCHSECONDS ${1}_rss_kib $rss"
	# its heap, apart from the pages of files it maps (SQLite's WAL index, the program)
	echo "$EPOCHSECONDS ${1}_rss_anon_kib ${anon:-0}"
	echo "$EPOCHSECONDS ${1}_fds $fds"
	echo "$EPOCHSECONDS ${1}_fds_not_proc $own"
	echo "$EPOCHSECONDS ${1}_threads $thr"
}
# fds_on_churned PID: the fds PID holds on /proc files of the churned guests (or their threads').
fds_on_churned() {
	find "/proc/$1/fd" -mindepth 1 -printf '%l\n' 2>/dev/null |
		awk 'NR == FNR { churned[$1]; next } split($0, p, "/") > 3 && p[2] == "proc" && p[3] in churned { n++ }
			END { print n + 0 }' "$tmp/churned" -
}
db_figures() { # LABEL FILE: its size with the WAL's, and the pages free in it
	local size pages free
	size=$(stat -c %s "$2" "$2-wal" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
	read -r pages free < <(sqlite3 "file:$2?mode=ro" 'SELECT (SELECT page_count FROM pragma_page_count), (SELECT freelist_count FROM pragma_freelist_count)' 2>/dev/null | tr '|' ' ')
	echo "$EPOCHSECONDS ${1}_db_bytes $size"
	[ -n "$free" ] && echo "$EPOCHSECONDS ${1}_db_free_pages $free"
}
reading() {
	{
		proc_figures serve "$SERVE"
		proc_figures record "$RECORD"
		db_figures serve "$tmp/serve.db"
		db_figures record "$tmp/record.db"
		echo "$EPOCHSECONDS host_processes $(ls -d /proc/[0-9]* 2>/dev/null | wc -l)"
	} >>"$tmp/readings"
}
say "serve and record wrote 2 samples each: the start's reading, before the churn"
reading
# Without fd 9, libvirt_lib.sh's lock: a killer's sleep that outlives the churn must not hold it.
spawn bash "$here/tests/helpers/churn.sh" "$fake" "$tmp/churned" 2 40 9>&-
CHURN=$SPAWNED
scraper &
SCRAPER=$!
adopt "$SCRAPER"
end_at=$((SECONDS + minutes * 60))
say "soaking for $minutes min: serve (pid $SERVE, port $PORT) and record (pid $RECORD), firmware guest: $fw, libvirt domain: $libvirt"
while sleep $PROBE_EVERY && [ $SECONDS -lt $end_at ]; do reading; done

# --- the end's reading: the churn and the scraper stopped, the churned guests gone, 2 samples more
touch "$tmp/scraper.stop"
wait "$SCRAPER"
stop_pid "$SCRAPER"
stop_pid "$CHURN"
kill_churned
# churned_alive: the churned guests still there (their pid still naming them: a pid can be reused).
churned_alive() {
	local p name
	while read -r p name; do
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -q -- "-name $name " && return 0
	done <"$tmp/churned"
	return 1
}
gone_by=$((SECONDS + 60))
while churned_alive && [ $SECONDS -lt $gone_by ]; do sleep 0.1; done
churned_alive && say "churned guests still there after 60 s"
say "the churn stopped and its $(wc -l <"$tmp/churned") guests are gone; waiting for 2 samples without them"
wait_samples $(($(samples_in "$tmp/serve.db") + 2)) "$tmp/serve.db" "$SERVE" || say "serve wrote no 2 samples more"
wait_samples $(($(samples_in "$tmp/record.db") + 2)) "$tmp/record.db" "$RECORD" || say "record wrote no 2 samples more"
reading
kill -0 "$SERVE" 2>/dev/null || say "serve died: $(tail -3 "$tmp/serve.log")"
kill -0 "$RECORD" 2>/dev/null || say "record died: $(tail -3 "$tmp/record.log")"
churned_fds="$(fds_on_churned "$SERVE") $(fds_on_churned "$RECORD")"
stop_pid "$RECORD"
stop_pid "$SERVE"
say "the end's reading taken and serve and record stopped: the figures"

# --- the figures ------------------------------------------------------------------------------------
# Latency: p50 and p99 of each minute's scrapes, in ms, as readings of their own.
awk '$2 == 200 { m = int($1 / 60); n[m]++; v[m, n[m]] = $3 * 1000 }
	END { for (k in n) { c = n[k]; for (i = 1; i <= c; i++) a[i] = v[k, i]
		for (i = 2; i <= c; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
		p99 = int(c * 0.99) > 0 ? int(c * 0.99) : 1 # a bare ">" among the arguments of printf redirects it
		printf "%d scrape_p50_ms %.2f\n%d scrape_p99_ms %.2f\n", k * 60 + 30, a[int((c + 1) * 0.5)], k * 60 + 30, a[p99] } }' \
	"$tmp/scrapes" >>"$tmp/readings"
echo "soak: $minutes min, serve --db (--db-interval $PACE) and record --interval $PACE; $STEADY steady guests and" \
	"$(wc -l <"$tmp/churned") churned (one every 2 s, up to 40 s each); firmware KVM guest $fw, libvirt domain $libvirt;" \
	"$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-26s %14s %14s %14s %9s %14s\n' figure start end slope/h "% start/h" "last half/h"
# Per figure: the first and last reading and the least-squares slope over all of them, per hour;
# then the slope over the readings of the run's second half (a cache that fills to a cap grows
# in the first and not in the second; a leak grows in both).
awk 'function fit(a, b,   d) { d = c[a] * ctt[a] - ct[a] * ct[a]; return d > 0 ? (c[a] * ctv[a] - ct[a] * cv[a]) / d : 0 }
	{ k = $2; if (!(k in n)) order[++m] = k; n[k]++; if (n[k] == 1) { first[k] = $3; t0[k] = $1 }
	last[k] = $3; tl[k] = $1; t = ($1 - t0[k]) / 3600; row[k, n[k]] = t " " $3
	c[k]++; ct[k] += t; cv[k] += $3; ctt[k] += t * t; ctv[k] += t * $3 }
	END { for (i = 1; i <= m; i++) { k = order[i]; s = fit(k); h = k SUBSEP "half"; half = (tl[k] - t0[k]) / 7200
		for (j = 1; j <= n[k]; j++) { split(row[k, j], p, " "); if (p[1] >= half) {
			c[h]++; ct[h] += p[1]; cv[h] += p[2]; ctt[h] += p[1] * p[1]; ctv[h] += p[1] * p[2] } }
		printf "%-26s %14.2f %14.2f %14.2f %9.2f %14.2f\n", k, first[k], last[k], s, first[k] ? 100 * s / first[k] : 0, fit(h) } }' \
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
steady_rows() { # DB
	sqlite3 "$1" "SELECT count(*) FROM vm_samples x JOIN vms v ON v.id = x.vm_id WHERE x.resolution = 0 AND v.name LIKE 'soak-steady%'"
}
printf '%-26s %14s of %s churned guests gone\n' serve_fds_on_gone_guests "${churned_fds% *}" "$(wc -l <"$tmp/churned")"
printf '%-26s %14s of %s churned guests gone\n' record_fds_on_gone_guests "${churned_fds#* }" "$(wc -l <"$tmp/churned")"
for db in serve record; do
	printf '%-26s %14s of %s (steady guests: %s rows missing of %s)\n' "${db}_samples_missing" \
		"$(missing "$tmp/$db.db")" "$(samples_in "$tmp/$db.db")" "$(vm_rows_missing "$tmp/$db.db")" "$(steady_rows "$tmp/$db.db")"
done
printf '%-26s %14s\n' record_dropped "$(jq '.dropped_samples // "?"' "$tmp/record.json" 2>/dev/null || echo '?')"
printf '%-26s %14s of %s\n' scrapes_failed "$(awk '$2 != 200' "$tmp/scrapes" | wc -l)" "$(wc -l <"$tmp/scrapes")"
