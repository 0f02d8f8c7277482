#!/bin/bash
# Who may gather and who may write, read off the sources: serve's HTTP side (src/net) renders
# the sampler's samples and nothing else; the sampler (src/core/sample/sampler*.c) is the only code
# that takes and records samples, record's loop its only other driver; the floors hold (core
# includes neither store nor net). With serve's threads this means no HTTP worker can touch
# SQLite: net cannot reach the store, and only the sampler's thread calls it
# (test_serve_sampler checks the thread at run time). The KVM reader, which the sampler's thread
# grows, is not reachable from the HTTP side either: a sample names its own counters.
. "$VMHOST_TESTS/lib.sh"
SRC=$VMHOST_TESTS/../src
[ -d "$SRC/net" ] && [ -d "$SRC/core" ] || die "no sources at $SRC"

# nothing_but PATTERN ALLOWED_REGEX: every file of src/ that matches PATTERN is an allowed one.
nothing_but() {
	local bad
	bad=$(cd "$SRC" && grep -rlE "$1" --include='*.c' --include='*.h' . | sed 's|^\./||' | grep -vE "$2")
	[ -z "$bad" ] || { say "'$1' in: $bad"; return 1; }
}

check "src/net includes nothing of src/store" sh -c "! grep -rn '#include \"store/' '$SRC/net'"
check "src/core includes neither store nor net" sh -c "! grep -rnE '#include \"(store|net)/' '$SRC/core'"
check "only the store itself names its write calls (the sampler reaches them through store_sink)" \
	nothing_but '\bstore_write_(sample|snapshot)\b' '^store/store(_write)?\.[ch]$'
check "only the sampler and record's loop take and record samples" \
	nothing_but '\bsampler_(take|record)\b' '^(core/sample/sampler(_feed)?\.[ch]|cmd/record\.c)$'
check "serve's HTTP side and command gather nothing themselves" sh -c "
	! grep -nE '\b(snapshot_take|calib_apply|kvm_reader_sample|kvm_change|sampler_take)\b' \
		'$SRC'/net/*.[ch] '$SRC/cmd/serve.c'"
check "serve's HTTP side names KVM counters from the sample, never from the sampler's reader" sh -c "
	! grep -nE '\b(kvm_reader_[a-z_]+|kvm_counter_(name|kind|index)|sampler_kvm_reader)\b' \
		'$SRC'/net/*.[ch] '$SRC/out/prom_metrics.c' '$SRC/cmd/serve.c'"
check "the host-wide KVM totals are summed in core only" nothing_but '\bkvm_host_accumulate\b' '^core/'
finish
