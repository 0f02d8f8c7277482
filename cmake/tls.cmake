# share plan --from https://: the TLS client is GnuTLS (Debian's libgnutls28-dev), the library
# libmicrohttpd's TLS already uses. Loaded by the commands that fetch over TLS (src/io/peer/tls.h), not
# linked, for the same reason as libmicrohttpd (cmake/serve.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/lib/loaded_library.cmake)
vmhost_loaded_library(GNUTLS gnutls gnutls VMHOST_GNUTLS_SONAME)
