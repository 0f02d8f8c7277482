# vmhost serve --web-config: basic auth's bcrypt hashes are checked with crypt(3) from libxcrypt
# (Debian's libcrypt-dev), loaded by serve when there are users (src/net/xcrypt.h), not linked;
# TLS is libmicrohttpd's own GnuTLS support (cmake/serve.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/lib/loaded_library.cmake)
vmhost_loaded_library(CRYPT libcrypt crypt VMHOST_CRYPT_SONAME)
