#!/bin/bash
# Bash completion (contrib/bash-completion/vmhost) driven as bash drives it: COMP_WORDS and
# COMP_CWORD set, the function that `complete -p vmhost` names called, COMPREPLY read back.
. "$VMHOST_TESTS/lib.sh"
[ -r /usr/share/bash-completion/bash_completion ] || die "bash-completion missing (scripts/deps/package/package.txt)"
. /usr/share/bash-completion/bash_completion
. "$VMHOST_TESTS/../contrib/bash-completion/vmhost"
PATH=$(dirname "$VMHOST"):$PATH
FIX=$VMHOST_FIXTURES/serve

spec=$(complete -p vmhost 2>/dev/null)
check "complete -p vmhost names a function" [ "${spec% vmhost}" != "$spec" ]
func=$(sed -n 's/.*-F \([^ ]*\) vmhost$/\1/p' <<<"$spec")

# complete LINE: sets COMPREPLY to the candidates for the last word of LINE (a trailing space:
# a new word), in this shell, as bash would (the completion's help cache lives on here too).
complete_line() {
	local line=$1
	read -r -a COMP_WORDS <<<"$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line COMP_POINT=${#line}
	COMPREPLY=()
	# (compopt complains outside a real completion: its message is not the test's concern)
	"$func" vmhost "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
}
# got LINE: the candidates, sorted, one a line.
got() { complete_line "$1"; printf '%s\n' "${COMPREPLY[@]}" | sort; }
# has LINE WORD...: every WORD is among the candidates; lacks LINE WORD...: none is.
has() {
	local w line=$1
	shift
	complete_line "$line"
	for w; do printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$w" || { say "'$w' not offered: ${COMPREPLY[*]}"; return 1; }; done
}
lacks() {
	local w line=$1
	shift
	complete_line "$line"
	for w; do ! printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$w" || { say "'$w' offered: ${COMPREPLY[*]}"; return 1; }; done
}

commands=$("$VMHOST" help | awk '/^commands:$/ {on=1; next} on && /^$/ {on=0} on && $1 != "help" {print $1}')
check "every command of 'vmhost help' is offered, and nothing else" \
	[ "$(got 'vmhost ')" = "$(sort <<<"$commands")" ]
check "a prefix narrows the commands" [ "$(got 'vmhost re')" = "$(printf 'record\nreport')" ]
check "ksm's subcommands" [ "$(got 'vmhost ksm ')" = "$(printf 'status\nsweep\ntune')" ]
check "bench's subcommands" [ "$(got 'vmhost bench ')" = "$(printf 'accounting\nalloc\nksm')" ]
check "subcommands after global options" has 'vmhost --json --proc-root /proc ksm t' tune

# Options, against the contract (../shared/docs/INTERFACE.md), not against the help parser.
check "mem options and the global ones" has 'vmhost mem --' --pid --exact --json --csv --proc-root --sys-root
check "ksm tune options, not sweep's" has 'vmhost ksm tune --' --cpu-budget --interval --dry-run --config
check "  ... and not sweep's" lacks 'vmhost ksm tune --' --settings --scans
check "ksm sweep options" has 'vmhost ksm sweep --' --settings --scans --svg
check "bench alloc options" has 'vmhost bench alloc --' --sizes --threads --strategies --qemu --svg
check "bench ksm options" has 'vmhost bench ksm --' --quick
check "exits options" has 'vmhost exits --' --once --log --interval --vm --pid --fields
check "record options" has 'vmhost record --' --db --interval --duration
check "growth options" has 'vmhost growth --' --db --window
check "report options" has 'vmhost report --' --db --out
check "serve options" has 'vmhost serve --' --listen --db
check "doctor options" has 'vmhost doctor --' --db --json --fail-on
check "doctor --skip offers the rule ids (current ones: the old vcpu-wait-high is not offered)" \
	[ "$(got 'vmhost doctor --skip vcpu-')" = "vcpu-delay-high" ]
check "doctor --fail-on offers its levels" [ "$(got 'vmhost doctor --fail-on ')" = "$(printf 'critical\ninfo\nwarning')" ]
check "share plan options" has 'vmhost share plan --' --from --sketch --auth-file --ca-file --cert --key
check "top options" has 'vmhost top --' --interval --sort --batch --iterations --filter
check "capacity options" has 'vmhost capacity --' --size --image --reserve --json
check "a command prefix is resolved as vmhost resolves it" has 'vmhost me --' --exact
for topic in mem ksm "ksm tune" "ksm sweep" "bench accounting" "bench ksm" "bench alloc" exits record growth capacity report serve doctor top \
	share "share plan"; do
	want=$("$VMHOST" help $topic | sed -n 's/^  *\(--[a-z][a-z0-9-]*\).*/\1/p' | sort -u)
	check "$topic: each option its help lists" has "vmhost $topic --" $want
done

# Values.
cd "$TEST_TMP" || die "no temp dir"
mkdir sub && touch history.db notes.txt
check "--db completes files" has 'vmhost record --db ' history.db notes.txt sub
check "--out completes files" has 'vmhost report --out h' history.db
check "--config completes files" has 'vmhost ksm tune --config n' notes.txt
check "--auth-file completes files" has 'vmhost share plan --auth-file n' notes.txt
check "--svg completes files" has 'vmhost ksm sweep --svg ' history.db
check "--proc-root completes directories only" has 'vmhost --proc-root ' sub
check "  ... not files" lacks 'vmhost --proc-root ' history.db
check "--pid offers this shell's pid" has 'vmhost mem --pid ' $$
complete_line 'vmhost mem --pid '
check "--pid offers only pids, and some" sh -c '[ $# -gt 0 ] && ! printf "%s\n" "$@" | grep -qv "^[0-9][0-9]*\$"' _ "${COMPREPLY[@]}"
check "--vm offers the VM names discovery finds (fixture host via --proc-root)" \
	has "vmhost --proc-root $FIX/proc --sys-root $FIX/sys exits --vm " vm1
check "--vm narrows by prefix" [ "$(got "vmhost --proc-root $FIX/proc exits --vm v")" = vm1 ]
check "an option's value is not completed as an option" [ -z "$(got 'vmhost exits --interval ')" ]
check "after '--' a command line: commands" has 'vmhost exits -- bas' bash
finish
