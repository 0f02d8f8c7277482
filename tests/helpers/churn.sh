#!/bin/bash
# VMs that come and go, until killed: a fake QEMU guest started every 20 ms, each killed after
# 0.1-0.5 s (about 20 alive at a time); "PID NAME" of each appended to LOG.
#   churn.sh FAKEGUEST LOG
fake=$1 log=$2 i=0 p=
# Stopped (TERM) between starting a guest and logging it or arming its killer, that guest would
# outlive the test: the last one started ($!, or $p once taken) goes with the loop.
trap 'kill "$!" $p 2>/dev/null; exit 0' TERM
while :; do
	i=$((i + 1))
	bash -c 'exec -a qemu-system-x86_64 "$0" "$@"' "$fake" -name "churn$i" -m 4M -fake-guest "$i" -fake-nomerge \
		>/dev/null 2>&1 &
	p=$!
	echo "$p churn$i" >>"$log"
	(sleep "0.$((RANDOM % 5 + 1))"; kill "$p" 2>/dev/null) &
	sleep 0.02
done
