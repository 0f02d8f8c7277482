# The hostile suite: forged processes and hostile peers, what a local user can set against a root
# tool (issue 41). Labels hostile and live (they start processes), sanitize and tsan: they run
# under ASan and ThreadSanitizer too (make check-asan, check-tsan), where a report fails them.
# Each fails on the code before the defence it checks.

# tests/hostile/qmp_*.sh: forged QEMUs and the monitors their command lines name (56bcd57).
vmhost_script_test(hostile_qmp_other_listener hostile/qmp_other_listener.sh "hostile;live;sanitize")
set_tests_properties(hostile_qmp_other_listener PROPERTIES TIMEOUT 600)
vmhost_script_test(hostile_qmp_own_socket hostile/qmp_own_socket.sh "hostile;live;sanitize")
set_tests_properties(hostile_qmp_own_socket PROPERTIES TIMEOUT 600)
vmhost_script_test(hostile_qmp_many_forged hostile/qmp_many_forged.sh "hostile;live;sanitize")
set_tests_properties(hostile_qmp_many_forged PROPERTIES TIMEOUT 600)
vmhost_script_test(hostile_qmp_forged_first hostile/qmp_forged_first.sh "hostile;live;sanitize")
set_tests_properties(hostile_qmp_forged_first PROPERTIES TIMEOUT 600)
vmhost_tsan(hostile_qmp_other_listener hostile_qmp_own_socket hostile_qmp_many_forged hostile_qmp_forged_first)
