# vmhost serve: the HTTP server is libmicrohttpd (Debian's libmicrohttpd-dev); docs/serve.md says why.
# It is loaded by serve alone (src/net/mhd.h), not linked: linked, GnuTLS and the libraries under it
# would be loaded and initialised by every command. The build takes the headers and the soname.
pkg_check_modules(MICROHTTPD REQUIRED libmicrohttpd)
find_library(MICROHTTPD_LIBRARY NAMES microhttpd HINTS ${MICROHTTPD_LIBRARY_DIRS} REQUIRED)
execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${MICROHTTPD_LIBRARY} OUTPUT_VARIABLE MICROHTTPD_DYNAMIC
                COMMAND_ERROR_IS_FATAL ANY)
string(REGEX MATCH "SONAME +([^ \n]+)" MICROHTTPD_SONAME_LINE "${MICROHTTPD_DYNAMIC}")
if(NOT CMAKE_MATCH_1)
  message(FATAL_ERROR "no SONAME in ${MICROHTTPD_LIBRARY}")
endif()
target_include_directories(vmhostcore PUBLIC ${MICROHTTPD_INCLUDE_DIRS})
target_compile_options(vmhostcore PUBLIC ${MICROHTTPD_CFLAGS_OTHER})
target_compile_definitions(vmhostcore PRIVATE VMHOST_MHD_SONAME="${CMAKE_MATCH_1}")
target_link_libraries(vmhostcore PUBLIC ${CMAKE_DL_LIBS})
