# vmhost serve: the HTTP server is libmicrohttpd (Debian's libmicrohttpd-dev); docs/serve.md says why.
pkg_check_modules(MICROHTTPD REQUIRED IMPORTED_TARGET libmicrohttpd)
target_link_libraries(vmhostcore PUBLIC PkgConfig::MICROHTTPD)
