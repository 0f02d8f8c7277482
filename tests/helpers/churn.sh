#!/bin/bash
# VMs that come and go, until killed: a fake QEMU guest started every EVERY seconds (0.02 by
# default), each killed after a random fifth to all of LIFE seconds (0.5 by default: 0.1-0.5 s,
# about 20 alive at a time); "PID NAME" of each appended to LOG.
#   churn.sh FAKEGUEST LOG [EVERY [LIFE]]     (bench/soak.sh: a guest every 2 s living up to 40 s)
fake=$1 log=$2 every=${3:-0.02} life=${4:-0.5} i=0 p=
# Stopped (TERM) between starting a guest and logging it or arming its killer, that guest would
# outlive the test: the last one started ($!, or $p once taken) goes with the loop, and so do the
# killers still waiting (up to LIFE seconds, then a kill of a pid that may be another's by then).
trap 'kill "$!" $p $(jobs -p) 2>/dev/null; exit 0' TERM
while :; do
	i=$((i + 1))
	bash -c 'exec -a qemu-system-x86_64 "$0" "$@"' "$fake" -name "churn$i" -m 4M -fake-guest "$i" -fake-nomerge \
		>/dev/null 2>&1 &
	p=$!
	echo "$p churn$i" >>"$log"
	if [ "$life" = 0.5 ]; then
		(sleep "0.$((RANDOM % 5 + 1))"; kill "$p" 2>/dev/null) &
	else
		(sleep "$(awk -v l="$life" -v r=$((RANDOM % 5 + 1)) 'BEGIN { print l * r / 5 }')"; kill "$p" 2>/dev/null) &
	fi
	sleep "$every"
done
