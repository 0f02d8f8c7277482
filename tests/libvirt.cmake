# A real libvirt (Debian's libvirtd and virtlogd, a transient TCG domain) against vmhost mem and
# vmhost serve.
vmhost_script_test(e2e_libvirt e2e/libvirt.sh "e2e")
set_tests_properties(e2e_libvirt PROPERTIES TIMEOUT 300)
# The libvirt source (issue 30): a type='kvm' firmware domain read through libvirt's C API, and a
# hung libvirtd (SIGSTOP) costing a reason within 2 s.
vmhost_script_test(e2e_libvirt_kvm e2e/libvirt_kvm.sh "e2e")
set_tests_properties(e2e_libvirt_kvm PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
# A --libvirt-uri that reaches no libvirt: top --batch, record and serve say so once and go on
# (a fake libvirt QEMU beside a QMP one; no libvirtd needed).
vmhost_script_test(libvirt_uri live/libvirt_uri.sh "live")
# doctor's balloon rules on libvirt domains (the guest view from libvirt's balloon statistics);
# ~100 s here: libvirtd's first virsh create after it starts took 36 s.
vmhost_script_test(e2e_libvirt_doctor e2e/libvirt_doctor.sh "e2e")
set_tests_properties(e2e_libvirt_doctor PROPERTIES TIMEOUT 300)
# io/peer/virt on libvirt's in-process test driver (test:///default): the hypervisor's version asked
# after the first answer, out of its deadline (issue 42).
vmhost_unit_test(test_virt)
# Not under the sanitizers: their builds do not load libvirt (io/dynlib), so it could only skip there.
set_tests_properties(test_virt PROPERTIES LABELS "unit")
# libvirt's first seconds (issue 42): a fresh libvirtd and domain read at once, in 3 rounds, and a
# busy domain (its QEMU stopped) said as such, not as a hung libvirtd. ~6 min here, where every
# virsh create on a fresh libvirtd re-probes QEMU (docs/exits.md); seconds on a host whose /dev/kvm
# libvirt's QEMU user may open.
vmhost_script_test(e2e_libvirt_first_reads e2e/libvirt_first_reads.sh "e2e")
set_tests_properties(e2e_libvirt_first_reads PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77)
