# What the host could take back from each VM, and how many more VMs fit (issue 44): the formula,
# the capacity command, and the live checks on TCG guests with a virtio balloon.
vmhost_unit_test(test_reclaim)
vmhost_script_test(e2e_reclaim e2e/reclaim.sh "e2e")
set_tests_properties(e2e_reclaim PROPERTIES TIMEOUT 400)
vmhost_unit_test(test_capacity)
vmhost_script_test(cli_capacity cli/capacity.sh "cli;sanitize")
vmhost_script_test(e2e_capacity e2e/capacity.sh "e2e")
set_tests_properties(e2e_capacity PROPERTIES TIMEOUT 600)
