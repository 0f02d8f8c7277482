# The libvirt source (exits, top, serve, record: KVM counters of libvirt's domains): libvirt's C
# API through libvirt.so.0, loaded by the commands that read it (src/io/peer/virt.h), not linked.
# Debian's libvirt-dev gives the headers (scripts/deps/build.txt); the build takes the soname.
include(${CMAKE_CURRENT_LIST_DIR}/lib/loaded_library.cmake)
vmhost_loaded_library(LIBVIRT libvirt virt VMHOST_LIBVIRT_SONAME)
