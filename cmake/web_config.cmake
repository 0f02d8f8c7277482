# vmhost serve --web-config: basic auth's bcrypt hashes are checked with crypt(3) from libxcrypt
# (Debian's libcrypt-dev); TLS is libmicrohttpd's own GnuTLS support (cmake/serve.cmake).
pkg_check_modules(CRYPT REQUIRED IMPORTED_TARGET libcrypt)
target_link_libraries(vmhostcore PUBLIC PkgConfig::CRYPT)
