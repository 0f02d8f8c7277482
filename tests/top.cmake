# vmhost top: the view model (sort, filter, helpers, VMs coming and going) on hand-made readings,
# and the live view in tmux on real processes (fake QEMUs in their own cgroup scopes).
vmhost_unit_test(test_top)
# The live view's readings: the VMs it shows every time, the rest a slice at a time.
vmhost_unit_test(test_top_partial)
vmhost_script_test(top_live live/top_live.sh "live")
vmhost_script_test(top_cli cli/top_cli.sh "cli;sanitize")
