# A real libvirt (Debian's libvirtd and virtlogd, a transient TCG domain) against vmhost mem and
# vmhost serve.
vmhost_script_test(e2e_libvirt e2e/libvirt.sh "e2e")
set_tests_properties(e2e_libvirt PROPERTIES TIMEOUT 300)
