# The live view on a real terminal: vmhost exits runs in a tmux pane (a pseudo-terminal), the
# counters change between refreshes, and the screen is read back with capture-pane.
. "$VMHOST_TESTS/lib.sh"
command -v tmux >/dev/null || die "tmux is not installed (scripts/deps/test/terminal.txt lists it)"

cp -a "$VMHOST_FIXTURES/exits-intel" "$TEST_TMP/fx"
R=$TEST_TMP/fx
K=$R/sys/kernel/debug/kvm
SOCK=vmhost-exits-$$
# After each read, db1's io_exits grows by 50000: the busiest counter, on top of the view.
HOOK="f=$K/12345-15/io_exits; echo \$((\$(cat \$f) + 50000)) > \$f; f=$K/io_exits; echo \$((\$(cat \$f) + 50000)) > \$f"
cat >"$TEST_TMP/run.sh" <<RUN
export VMHOST_EXITS_TEST_HOOK='$HOOK'
"$VMHOST" exits --sys-root "$R/sys" --proc-root "$R/proc" --interval 0.3
echo "vmhost-exited rc=\$?" > "$TEST_TMP/done"
echo "shell prompt is back"
sleep 60
RUN
tmux -L "$SOCK" -f /dev/null new-session -d -x 160 -y 40 "bash $TEST_TMP/run.sh"
server=$(tmux -L "$SOCK" display-message -p '#{pid}')
adopt "$server"

screen() { tmux -L "$SOCK" capture-pane -p; }
# Wait for a few refreshes (the hook has run at least twice).
for i in $(seq 100); do
	screen >"$TEST_TMP/screen"
	grep -q '^io_exits' "$TEST_TMP/screen" && [ "$(awk '/^io_exits/ { print $3 }' "$TEST_TMP/screen")" = 50000 ] && break
	sleep 0.1
done
check "live: header with the VM names" grep -q 'vmhost exits .* 4 VMs: web1, db1, build, pid 4242' "$TEST_TMP/screen"
check "live: table heading with a column per VM" grep -Eq '^EVENT +TOTAL +DELTA +PER SEC +web1 +db1 +build +pid 4242' "$TEST_TMP/screen"
check "live: sorted by rate, busiest first" test "$(grep -A1 '^EVENT' "$TEST_TMP/screen" | tail -1 | awk '{print $1}')" = io_exits
check "live: rate in the VM's own column" test "$(awk '/^io_exits/ { print ($4 > 0 && $6 > 0 && $5 == "0.0" && $7 == "0.0") }' "$TEST_TMP/screen")" = 1
check "live: times as percent" grep -Eq '^halt_wait_ns +7h28m +0us +0\.0%' "$TEST_TMP/screen"
check "live: fits the terminal" test "$(awk '{ if (length($0) > w) w = length($0) } END { print w <= 160 }' "$TEST_TMP/screen")" = 1
check "live: says how to quit" grep -q 'q quits' "$TEST_TMP/screen"

tmux -L "$SOCK" send-keys q
for i in $(seq 50); do [ -f "$TEST_TMP/done" ] && break; sleep 0.1; done
check "live: q quits with status 0" grep -q 'vmhost-exited rc=0' "$TEST_TMP/done"
# the shell's line on the screen, not 0.2 s after the file
for i in $(seq 100); do screen >"$TEST_TMP/after"; grep -q 'shell prompt is back' "$TEST_TMP/after" && break; sleep 0.1; done
check "live: the terminal is restored (table gone, shell output back)" bash -c "grep -q 'shell prompt is back' '$TEST_TMP/after' && ! grep -q '^EVENT' '$TEST_TMP/after'"

# A narrow terminal: VM columns that do not fit are left out and counted.
rm -f "$TEST_TMP/done"
tmux -L "$SOCK" new-window -t "$SOCK" "bash $TEST_TMP/run.sh" 2>/dev/null || tmux -L "$SOCK" new-window "bash $TEST_TMP/run.sh"
tmux -L "$SOCK" resize-window -x 90 -y 30 2>/dev/null
for i in $(seq 100); do
	screen >"$TEST_TMP/narrow"
	grep -q '^EVENT' "$TEST_TMP/narrow" && break
	sleep 0.1
done
check "narrow: no line wider than the terminal" test "$(awk '{ if (length($0) > w) w = length($0) } END { print w <= 90 }' "$TEST_TMP/narrow")" = 1
check "narrow: hidden VMs are counted" grep -q 'more VMs not shown' "$TEST_TMP/narrow"
tmux -L "$SOCK" send-keys C-c
for i in $(seq 50); do [ -f "$TEST_TMP/done" ] && break; sleep 0.1; done
check "live: Ctrl-C stops it cleanly" grep -q 'vmhost-exited rc=0' "$TEST_TMP/done"

tmux -L "$SOCK" kill-server 2>/dev/null
finish
