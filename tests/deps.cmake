# What make, make run and make check install (scripts/deps/, scripts/install-deps.sh).
vmhost_script_test(deps cli/deps.sh "cli")
