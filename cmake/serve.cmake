# vmhost serve: the HTTP server is libmicrohttpd (Debian's libmicrohttpd-dev); docs/serve.md says why.
# It is loaded by serve alone (src/net/mhd.h), not linked: linked, GnuTLS and the libraries under it
# would be loaded and initialised by every command. The build takes the headers and the soname.
include(${CMAKE_CURRENT_LIST_DIR}/lib/loaded_library.cmake)
vmhost_loaded_library(MICROHTTPD libmicrohttpd microhttpd VMHOST_MHD_SONAME)
