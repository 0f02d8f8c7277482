# vmhost top on a real terminal (a tmux pane) and real processes: fake QEMUs, one of them in a
# libvirt-like cgroup scope with two helpers (swtpm, and a virtiofsd that burns some CPU), a real
# QEMU under TCG and, where /dev/kvm works, the KVM firmware guest whose exits QMP reports.
# Checked: sorting by each column (keys and --sort), the filter, helpers under their VM, resize,
# a narrow terminal, NO_COLOR, q, SIGTERM and SIGINT leaving the terminal as it was, --batch.
. "$VMHOST_TESTS/lib.sh"
command -v tmux >/dev/null || die "tmux is not installed (scripts/deps/test/terminal.txt lists it)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/deps/test/qemu.txt)"
[ "$(id -u)" = 0 ] || skip "needs root (cgroup scopes for the helpers)"
SOCK=vmhost-top-$$

# A per-VM scope as libvirt makes it: the unified tree's (pressure) and, on hybrid hosts, the v1
# memory controller's (cgroup memory).
SCOPE='machine.slice/machine-qemu\x2d1\x2dtop'$$'.scope'
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then V2=/sys/fs/cgroup; else V2=/sys/fs/cgroup/unified; fi
V1=/sys/fs/cgroup/memory
SCOPES="$V2/$SCOPE"
[ -d "$V1" ] && SCOPES="$SCOPES $V1/$SCOPE"
top_cleanup() {
	tmux -L "$SOCK" kill-server 2>/dev/null
	for d in $SCOPES; do rmdir "$d" 2>/dev/null; rmdir "$(dirname "$d")" 2>/dev/null; done
}
on_cleanup top_cleanup
for d in $SCOPES; do mkdir -p "$d" || die "cannot make the scope $d"; done
into_scope() { for d in $SCOPES; do echo "$1" >"$d/cgroup.procs" || die "cannot move $1 into $d"; done; }

fake() { fake_guest_start "$1" -m "$2" -fake-vcpus 2; }
fake web1 96M; WEB=$SPAWNED
fake db1 64M; DB=$SPAWNED
fake build 32M; BUILD=$SPAWNED
into_scope "$DB"
cp /bin/sleep "$TEST_TMP/swtpm" && cp /bin/bash "$TEST_TMP/virtiofsd"
spawn "$TEST_TMP/swtpm" 600; SWTPM=$SPAWNED
mkfifo "$TEST_TMP/idle"
# No child processes (they would be helpers too): the pause is a read that times out on a fifo.
spawn "$TEST_TMP/virtiofsd" -c 'exec 3<>"$0"; while :; do i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); done; read -r -t 0.1 -u 3; done' "$TEST_TMP/idle"
VIRTIOFSD=$SPAWNED
into_scope "$SWTPM"
into_scope "$VIRTIOFSD"
# A real QEMU under TCG, idle: its firmware halts at the reset vector (hlt; jmp back).
fw_qemu --name tcgguest --accel tcg --kind idle --qmp "$TEST_TMP/tcg.sock"
TCG=$SPAWNED
for i in $(seq 100); do grep -q ready "$TEST_TMP/web1.out" "$TEST_TMP/db1.out" "$TEST_TMP/build.out" 2>/dev/null &&
	[ "$(cat "$TEST_TMP"/*.out | grep -c ready)" = 3 ] && break; sleep 0.1; done

# ---- --batch: parsable frames, every --sort column ----
"$VMHOST" top --batch --iterations 2 --interval 0.5 >"$TEST_TMP/batch" 2>"$TEST_TMP/batch.err"
rc=$?
check "batch: exit 0, nothing on stderr" sh -c "[ $rc = 0 ] && ! [ -s '$TEST_TMP/batch.err' ]"
check "batch: two frames, each a '# vmhost top' line, a '# host' line, a heading and an empty line" \
	test "$(grep -c '^# vmhost top time_unix=' "$TEST_TMP/batch") $(grep -c '^# host mem_total_bytes=[0-9]' "$TEST_TMP/batch") $(grep -c '^kind	pid	vm_pid	name	cpu	delay	rss	pss	ksm	overhead	exits	cgroup	mempsi	cpupsi	iopsi	cost	ksmd	read	write	netrx	nettx	poll	stall$' "$TEST_TMP/batch") $(grep -c '^$' "$TEST_TMP/batch")" = "2 2 2 2"
check "batch: every row has the heading's 23 fields" \
	test "$(awk -F'\t' '/^(vm|helper)\t/ && NF != 23 { bad++ } END { print bad + 0 }' "$TEST_TMP/batch")" = 0
check "batch: the VMs, the TCG guest among them" \
	sh -c "for n in web1 db1 build tcgguest; do awk -F'\t' -v n=\$n '\$1 == \"vm\" && \$4 == n { f = 1 } END { exit !f }' '$TEST_TMP/batch' || exit 1; done"
check "batch: db1's helpers are rows right under it, with its pid as vm_pid" \
	test "$(awk -F'\t' -v db="$DB" 'NR > 4 && /^$/ { exit } $1 == "vm" { cur = $2 } $1 == "helper" { print $4, (cur == db && $3 == db) }' "$TEST_TMP/batch" | sort | tr '\n' ' ')" = "swtpm 1 virtiofsd 1 "
# Among this test's guests: other VMs on the host (a loaded CI runs other tests' spinning guests
# beside this one) may well burn more.
ours="$WEB $DB $BUILD $TCG"
"$VMHOST" top --batch --iterations 1 --interval 0.5 --sort cpu >"$TEST_TMP/cpu" 2>/dev/null
say "--sort cpu, our VMs (name cpu%): $(awk -F'\t' -v ours=" $ours " '$1 == "vm" && index(ours, " " $2 " ") { printf "%s %s, ", $4, $5 }' "$TEST_TMP/cpu")"
check "batch: db1 burns CPU through its helper: first of ours by --sort cpu" \
	test "$(awk -F'\t' -v ours=" $ours " '$1 == "vm" && index(ours, " " $2 " ") { print $4; exit }' "$TEST_TMP/cpu")" = db1
check "batch: db1's cgroup memory and pressure are read" \
	test "$(awk -F'\t' -v db="$DB" '$1 == "vm" && $2 == db { print ($12 != "n/a") ($13 != "n/a") }' "$TEST_TMP/batch" | tail -1)" = 11
# sorted(KEY, FIELD): the VM rows of a frame in order of FIELD (largest first, n/a last; names A-Z),
# and the four guests at least among them (an empty frame is not sorted).
sorted() {
	"$VMHOST" top --batch --iterations 1 --interval 0.3 --sort "$1" >"$TEST_TMP/s.$1" &&
		awk -F'\t' -v f="$2" -v name="${3:-}" '$1 == "vm" { rows++; v = $f
			if (v == "n/a") { na = 1; next }
			if (na) bad = 1
			if (n++ && (name ? tolower(v) < tolower(p) : v + 0 > p + 0)) bad = 1
			p = v }
			END { exit bad || rows < 4 }' "$TEST_TMP/s.$1"
}
col=5
for key in cpu delay rss pss ksm overhead exits cgroup mempsi cpupsi iopsi; do
	check "batch: --sort $key orders the VMs by it" sorted $key $col
	col=$((col + 1))
done
check "batch: --sort stall orders the VMs by it" sorted stall 23
check "batch: --sort wait, the deprecated name of delay, orders by DELAY%" sorted wait 6
check "batch: --sort name is A-Z" sorted name 4 1
check "batch: --sort pid" sorted pid 2
check "batch: --filter keeps the matching VM and its helpers only" \
	test "$("$VMHOST" top --batch --iterations 1 --interval 0.3 --filter DB | awk -F'\t' '/^(vm|helper)/ { print $4 }' | tr '\n' ' ')" = "db1 virtiofsd swtpm "
"$VMHOST" --json top --batch --iterations 2 --interval 0.3 >"$TEST_TMP/batch.json"
check "batch --json: one document a line, db1 with its two helpers" \
	test "$(jq -c 'select(.host.mem_total_bytes > 0) | [.vms[] | select(.name == "db1") | .helpers | length]' "$TEST_TMP/batch.json" | tr -d '\n')" = "[2][2]"
check "batch --json: vcpu_delay_percent, and vcpu_wait_percent as its deprecated alias" \
	jq -se 'map(.vms[]) | length > 0 and all(has("vcpu_delay_percent") and .vcpu_wait_percent == .vcpu_delay_percent)' "$TEST_TMP/batch.json"

# ---- the live view in tmux ----
# run.sh TAG ARGS...: vmhost top ARGS in the pane; its pid, exit status and stty before and after.
cat >"$TEST_TMP/run.sh" <<RUN
t=$TEST_TMP/\$1; shift
stty -g >"\$t.stty0"
sh -c 'echo \$\$ >"\$0"; exec "\$@"' "\$t.pid" "$VMHOST" top "\$@"
echo "vmhost-exited rc=\$?" >"\$t.done"
stty -g >"\$t.stty1"
echo "shell prompt is back"
sleep 600
RUN
screen() { tmux -L "$SOCK" capture-pane -p "$@"; }
wait_screen() { # PATTERN: until the screen shows it (10 s at most)
	for i in $(seq 100); do screen >"$TEST_TMP/screen"; grep -Eq "$1" "$TEST_TMP/screen" && return 0; sleep 0.1; done
	return 1
}
wait_done() { for i in $(seq 50); do [ -f "$TEST_TMP/$1.done" ] && return 0; sleep 0.1; done; return 1; }
restored() { # TAG: status 0, stty as before, the main screen back with its cursor
	grep -q 'vmhost-exited rc=0' "$TEST_TMP/$1.done" && cmp -s "$TEST_TMP/$1.stty0" "$TEST_TMP/$1.stty1" &&
		[ "$(tmux -L "$SOCK" display-message -p '#{alternate_on} #{cursor_flag}')" = "0 1" ] &&
		screen | grep -q 'shell prompt is back' && ! screen | grep -q '^NAME'
}
# wait_restored TAG: until restored (5 s at most): the pane's shell writes TAG.done before its stty
# and its prompt, which a loaded host shows later.
wait_restored() { for i in $(seq 50); do restored "$1" && return 0; sleep 0.1; done; return 1; }
# The VM rows on the screen ordered by value K of their line (0: the name): largest first, n/a last.
screen_sorted() {
	awk -v k="$1" 'function num(v, u) { m = 1
			if (u == "KiB") m = 1024; else if (u == "MiB") m = 1048576; else if (u == "GiB") m = 1073741824
			if (v ~ /k$/) m *= 1000; else if (v ~ /M$/) m *= 1e6
			return v * m }
		/^NAME/ { on = 1; next }
		on && ($0 ~ /^ *$/ || $1 ~ /^[(]|^EXITS|^filter/) { exit }
		on && !/^  - / { n = 0
			for (i = 2; i <= NF; i++) { v = $i
				if (v != "n/a" && $(i + 1) ~ /^(B|KiB|MiB|GiB|TiB)$/) { v = num(v, $(i + 1)); i++ } else if (v != "n/a") v = num(v, "")
				val[++n] = v }
			v = k ? val[k] : tolower($1)
			if (v == "n/a") { na = 1; rows++; next }
			if (na) bad = 1
			if (rows++ && (k ? v + 0 > p + 0 : v < p)) bad = 1
			p = v }
		END { exit bad || rows < 4 }' "$TEST_TMP/screen"
}

tmux -L "$SOCK" -f /dev/null new-session -d -x 80 -y 30 "bash $TEST_TMP/run.sh q --interval 0.3"
adopt "$(tmux -L "$SOCK" display-message -p '#{pid}')"
wait_screen '^vmhost top .* VMs$' # a frame with rates
check "live: the header has host memory, KSM and ksmd" grep -Eq '^mem .*, avail .*  ksm ' "$TEST_TMP/screen"
check "live: 80 columns: name, CPU, wait, RSS, PSS, KSM, overhead, exits" \
	grep -Eq '^\*?NAME +\*?CPU% +\*?DELAY% +\*?RSS +\*?PSS +\*?KSM SAV +\*?OVERHEAD +\*?EXITS/S$' "$TEST_TMP/screen"
check "live: no line wider than the terminal" test "$(awk '{ if (length($0) > w) w = length($0) } END { print w < 80 }' "$TEST_TMP/screen")" = 1
check "live: db1's helpers right under it" test "$(grep -A2 '^db1 ' "$TEST_TMP/screen" | tail -2 | awk '{ print $2 }' | sort | tr '\n' ' ')" = "swtpm virtiofsd "
check "live: the TCG guest is a row" grep -q '^tcgguest ' "$TEST_TMP/screen"
check "live: sorted by CPU% at first" grep -q '^sorted by CPU% (largest first)' "$TEST_TMP/screen"
check "live: colour is on (bold heading, the sort column reversed)" sh -c "tmux -L '$SOCK' capture-pane -p -e | grep -q \"\$(printf '\\033\\\\[7m')\""
# > walks every column on screen; each time the rows follow it.
k=2
for title in 'DELAY%' RSS PSS 'KSM SAV' OVERHEAD 'EXITS/S' NAME 'CPU%'; do
	tmux -L "$SOCK" send-keys '>'
	wait_screen "^sorted by $title " || true
	[ "$title" = NAME ] && k=0
	[ "$title" = 'CPU%' ] && k=1
	check "live: > sorts by $title" screen_sorted $k
	k=$((k + 1))
done
tmux -L "$SOCK" send-keys r
wait_screen '^sorted by CPU% \(smallest first\)'
check "live: r reverses" grep -q '^sorted by CPU% (smallest first)' "$TEST_TMP/screen"
tmux -L "$SOCK" send-keys r '<'
wait_screen '^sorted by NAME \(A-Z\)'
check "live: < moves back (to NAME)" screen_sorted 0
tmux -L "$SOCK" send-keys o
wait_screen '^sorted by CPU%'
check "live: o moves on" grep -q '^sorted by CPU% (largest first)' "$TEST_TMP/screen"
# The filter.
tmux -L "$SOCK" send-keys / w e b
wait_screen '^filter: web_'
check "live: / shows the filter as it is typed, the rows follow" \
	sh -c "grep -q '^web1 ' '$TEST_TMP/screen' && ! grep -q '^db1 ' '$TEST_TMP/screen'"
tmux -L "$SOCK" send-keys Right Enter
wait_screen 'filter: web$'
check "live: an arrow types nothing into it, Enter keeps it" sh -c "grep -q 'filter: web$' '$TEST_TMP/screen' && ! grep -q '^build ' '$TEST_TMP/screen'"
tmux -L "$SOCK" send-keys / Escape
wait_screen '^build '
check "live: Esc clears it" sh -c "grep -q '^db1 ' '$TEST_TMP/screen' && grep -q '^build ' '$TEST_TMP/screen'"
tmux -L "$SOCK" send-keys e
wait_screen 'exact PSS'
check "live: e refreshes with exact PSS" grep -q 'exact PSS (this refresh)' "$TEST_TMP/screen"
# Resize: wider shows more columns, narrower fewer, each line fits.
tmux -L "$SOCK" resize-window -x 150 -y 30
wait_screen '^ +PID +NAME'
check "wide: PID, CG MEM and pressure appear" grep -Eq '^ +\*?PID +\*?NAME .* CG MEM +MEM PSI +CPU PSI +IO PSI +EXITS/S$' "$TEST_TMP/screen"
tmux -L "$SOCK" resize-window -x 50 -y 30
wait_screen '^NAME +\*?CPU% +\*?DELAY% +RSS +PSS$' || true
check "narrow (50): the first columns only, no line wider" \
	sh -c "grep -Eq '^\\*?NAME +\\*?CPU% +\\*?DELAY% +RSS +PSS$' '$TEST_TMP/screen' && [ \$(awk '{ if (length(\$0) > w) w = length(\$0) } END { print w + 0 }' '$TEST_TMP/screen') -lt 50 ]"
tmux -L "$SOCK" resize-window -x 80 -y 30
tmux -L "$SOCK" send-keys q
check "q quits with status 0 and restores the terminal (stty, main screen, cursor)" wait_restored q

# SIGTERM and SIGINT: the same restoring, NO_COLOR honoured meanwhile.
for sig in TERM INT; do
	tmux -L "$SOCK" respawn-pane -k "NO_COLOR=1 bash $TEST_TMP/run.sh $sig --interval 0.3"
	wait_screen '^db1 '
	if [ $sig = TERM ]; then
		check "NO_COLOR: no colour, the sort column starred" \
			sh -c "! tmux -L '$SOCK' capture-pane -p -e | grep -q \"\$(printf '\\033\\\\[7m')\" && grep -Eq '^NAME +\\*CPU%' '$TEST_TMP/screen'"
		kill -TERM "$(cat "$TEST_TMP/TERM.pid")"
	else
		tmux -L "$SOCK" send-keys C-c
	fi
	check "SIG$sig: status 0, the terminal restored (stty, main screen, cursor)" wait_restored $sig
done

# The KVM firmware guest: its exits per second through QMP (no debugfs here). A name no other
# test gives its guest: theirs (live_kvm_guest's fwguest) may run beside it, as fast.
if [ -c /dev/kvm ]; then
	fw_qemu --name fwtop --qmp "$TEST_TMP/kvm.sock"
	KVMQ=$SPAWNED
	"$VMHOST" top --batch --iterations 2 --interval 0.5 --filter fwtop >"$TEST_TMP/kvm.batch"
	rate=$(awk -F'\t' '$1 == "vm" { r = $11 } END { print r }' "$TEST_TMP/kvm.batch")
	poll=$(awk -F'\t' '$1 == "vm" { r = $22 } END { print r }' "$TEST_TMP/kvm.batch")
	say "fwtop: $rate exits/s, POLL% $poll in top"
	check "KVM guest: POLL% read through QMP, a number (its firmware never halts: 0.0), not n/a" \
		awk -v p="$poll" 'BEGIN { exit !(p ~ /^[0-9]+\.[0-9]$/) }'
	check "KVM guest: exits/s read (over 1000)" ge "${rate:-0}" 1000
	tmux -L "$SOCK" respawn-pane -k "bash $TEST_TMP/run.sh kvm --interval 0.3 --sort exits"
	wait_screen '^fwtop +[0-9.]+ .*[0-9.]+[kM]?$' || true
	# Above our other guests (no exits): other tests' KVM guests may well sort above it.
	check "KVM guest: above our other guests by EXITS/S on screen, with a rate" \
		sh -c "grep -Eq '^fwtop .* [0-9.]+[kM]?$' '$TEST_TMP/screen' && awk '/^NAME/ { on = 1; next }
			on && /^fwtop / { f = NR } on && /^(web1|db1|build|tcgguest) / && !o { o = NR } END { exit !(f && o && f < o) }' '$TEST_TMP/screen'"
	tmux -L "$SOCK" send-keys q
	wait_done kvm
	stop_pid "$KVMQ"
else
	skip_part "no /dev/kvm: the KVM guest's exits are not checked"
fi
stop_pid "$TCG"
finish
