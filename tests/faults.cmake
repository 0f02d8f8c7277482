# Faults and privileges (issue 16 items 4 and 5): the database failing under a recorder, bad and
# huge /proc and /sys input, a broken pipe, clock steps, and each command without root.
vmhost_script_test(db_faults live/db_faults.sh "live")
vmhost_unit_test(test_store_faults)
target_link_options(test_store_faults PRIVATE -Wl,--wrap=unlink,--wrap=unlinkat)
vmhost_script_test(clock_jump cli/clock_jump.sh "cli;sanitize")
vmhost_script_test(proc_faults cli/proc_faults.sh "cli;sanitize")
vmhost_script_test(proc_huge live/proc_huge.sh "live")
vmhost_script_test(privileges live/privileges.sh "live" ksm)
vmhost_script_test(privileges_exits live/privileges_exits.sh "live")
