# The hostile suite (issue 41, item 8): vmhost on a shared host, run against what a local user
# can do to it (tests/hostile/): forged processes and hostile peers, locks, files. Label
# "hostile"; "live" where a test starts processes; those that change KSM take the machine-wide KSM
# lock (label ksm); the QMP ones also run under ASan and ThreadSanitizer (sanitize, tsan), where a
# report fails them. Root where needed; the other user is nobody, by `setpriv --reuid=nobody
# --regid=nogroup --clear-groups`. Each fails on the code before the defence it checks.
# The plain build is hardened as the .deb is: hardening-check finds every defence.
vmhost_script_test(hostile_hardening hostile/hardening.sh "hostile")
# No test hook in a build without the tests: every VMHOST_ variable read through io_test_hook.
vmhost_script_test(hostile_test_hooks hostile/test_hooks.sh "hostile;cli")
# The database follows no link and takes no other user's file; share writes one only with --db.
vmhost_script_test(hostile_db_paths hostile/db_paths.sh "hostile;live")
# A tuner killed outright (SIGKILL), one whose log is closed (SIGPIPE), one that crashes: KSM put
# back, by the next tuner or `ksm status --restore`. Changes KSM: under the KSM lock.
vmhost_script_test(hostile_ksm_crash hostile/ksm_crash.sh "hostile;live" ksm)
# Every lock file vmhost used to take, held by nobody: tune, sweep and record run all the same.
vmhost_script_test(hostile_locks hostile/locks.sh "hostile;live" ksm)

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
