#!/bin/sh
# Writes a 64 KiB firmware for `qemu-system-x86_64 -machine pc,accel=kvm -bios FW`.
#   mkfw.sh OUT        zeros, and at the reset vector (offset 0xFFF0, the last 16 bytes)
#                      `out 0x80, al; jmp` back to the out: E6 80 EB FC. The guest then exits to
#                      KVM on every port write, forever (~130,000 exits/s measured on PVM).
#   mkfw.sh OUT halt   a guest that halts in a timer loop, so that KVM halts and polls it: at
#                      F000:0000 (the reset vector jumps there) it turns the local APIC off
#                      (IA32_APIC_BASE bit 11: the 8259 then reaches the CPU), points vector 0x20
#                      at an EOI-and-iret handler, sets up the 8259 (base 0x20, only IRQ 0) and
#                      the PIT (channel 0, rate generator, divisor 119: 10 kHz), then `sti; hlt;
#                      jmp hlt`. Measured on PVM: ~5,000 halts/s (real mode is emulated, so the
#                      guest takes every other tick), halt_wait_ns ~96% of the time.
#   mkfw.sh OUT idle   an idle guest: `hlt; jmp` back to the hlt at the reset vector (F4 EB FD),
#                      interrupts off, so it halts once and sleeps.
set -eu
out=${1:?usage: mkfw.sh OUT [halt|idle]}
# at_reset CODE: zeros, CODE (printf escapes) at the reset vector, zeros to 64 KiB
at_reset() {
	head -c 65520 /dev/zero
	printf "$1"
	head -c $((16 - $(printf "$1" | wc -c))) /dev/zero
}
case ${2:-} in
halt)
	# cli; xor ax,ax; mov ds,ax; mov ss,ax; mov sp,0x7000
	# mov ecx,0x1b; rdmsr; and ax,0xf7ff; wrmsr
	# mov word [0x80],handler; mov word [0x82],0xf000
	# ICW1-4 and the mask to ports 0x20/0x21; 0x34, 119, 0 to ports 0x43/0x40
	# sti; hlt; jmp hlt; handler: push ax; mov al,0x20; out 0x20,al; pop ax; iret
	code='\372\061\300\216\330\216\320\274\000\160\146\271\033\000\000\000\017\062\045\377\367\017\060'
	code=$code'\307\006\200\000\107\000\307\006\202\000\000\360'
	code=$code'\260\021\346\040\260\040\346\041\260\004\346\041\260\001\346\041\260\376\346\041'
	code=$code'\260\064\346\103\260\167\346\100\260\000\346\100'
	code=$code'\373\364\353\375\120\260\040\346\040\130\317'
	{
		printf "$code"
		head -c $((65520 - 78)) /dev/zero
		printf '\352\000\000\000\360' # jmp far F000:0000
		head -c 11 /dev/zero
	} >"$out"
	;;
'') at_reset '\346\200\353\374' >"$out" ;;
idle) at_reset '\364\353\375' >"$out" ;;
*) echo "mkfw.sh: unknown kind '$2' (halt, idle, or none)" >&2; exit 2 ;;
esac
[ "$(wc -c <"$out")" -eq 65536 ] || { echo "mkfw.sh: $out is not 64 KiB" >&2; exit 1; }
