# Packaging: make install into a DESTDIR (man pages, units, completion, uninstall), the Debian
# package (dpkg-buildpackage, lintian, dpkg -i / -r on this machine), and bash completion.
vmhost_script_test(package_install package/install.sh "package")
vmhost_script_test(package_deb package/deb.sh "package")
set_tests_properties(package_deb PROPERTIES TIMEOUT 900)
vmhost_script_test(completion cli/completion.sh "cli")
