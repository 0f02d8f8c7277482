# vmhost exits --reasons, serve --kvm-reasons: the exit reasons counted in the kernel by eBPF
# (src/bpf/kvm_reasons.bpf.c, src/core/kvm/kvm_bpf.c). The program is compiled here by clang
# -target bpf and embedded in vmhost as bytes; libbpf (Debian's libbpf-dev) is loaded on use
# (src/core/kvm/libbpf.h), so vmhost runs where libbpf1 is missing and counts by perf filters then.
# Without clang or libbpf's headers the feature is off: the build says so and vmhost uses perf.
include(${CMAKE_CURRENT_LIST_DIR}/lib/loaded_library.cmake)
find_program(VMHOST_BPF_CLANG NAMES clang clang-16 clang-15 clang-14)
pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf)
if(NOT VMHOST_BPF_CLANG OR NOT LIBBPF_FOUND)
  message(STATUS "eBPF exit reasons: off (clang: ${VMHOST_BPF_CLANG}, libbpf-dev found: ${LIBBPF_FOUND}); perf filters count them")
  target_compile_definitions(vmhostcore PRIVATE VMHOST_BPF=0)
  return()
endif()
message(STATUS "eBPF exit reasons: on (${VMHOST_BPF_CLANG})")
vmhost_loaded_library(LIBBPF libbpf bpf VMHOST_LIBBPF_SONAME)
target_compile_definitions(vmhostcore PRIVATE VMHOST_BPF=1)

set(bpf_src ${PROJECT_SOURCE_DIR}/src/bpf/kvm_reasons.bpf.c)
set(bpf_obj ${PROJECT_BINARY_DIR}/bpf/kvm_reasons.bpf.o)
set(bpf_embed ${PROJECT_BINARY_DIR}/bpf/kvm_reasons_object.c)
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch OUTPUT_VARIABLE multiarch OUTPUT_STRIP_TRAILING_WHITESPACE)
add_custom_command(OUTPUT ${bpf_obj}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/bpf
  COMMAND ${VMHOST_BPF_CLANG} -O2 -g -target bpf -Wall -Werror -I/usr/include/${multiarch}
          -I${PROJECT_SOURCE_DIR}/src ${LIBBPF_CFLAGS} -c ${bpf_src} -o ${bpf_obj}
  DEPENDS ${bpf_src} ${PROJECT_SOURCE_DIR}/src/bpf/kvm_reasons.h
  COMMENT "clang -target bpf: kvm_reasons.bpf.o" VERBATIM)
add_custom_command(OUTPUT ${bpf_embed}
  COMMAND ${CMAKE_COMMAND} -DIN=${bpf_obj} -DOUT=${bpf_embed} -P ${CMAKE_CURRENT_LIST_DIR}/lib/embed.cmake
  DEPENDS ${bpf_obj} ${CMAKE_CURRENT_LIST_DIR}/lib/embed.cmake
  COMMENT "embedding kvm_reasons.bpf.o" VERBATIM)
target_sources(vmhostcore PRIVATE ${bpf_embed})
