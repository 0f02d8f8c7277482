# vmhost_loaded_library(PREFIX MODULE NAME DEFINE): a library loaded (dlopen) by the commands that
# use it rather than linked (src/io/dynlib.h). The build takes its headers and flags from
# pkg-config MODULE and defines DEFINE as the soname of libNAME.so, as the run time opens it.
include_guard(GLOBAL)
function(vmhost_loaded_library prefix module name define)
  pkg_check_modules(${prefix} REQUIRED IMPORTED_TARGET ${module}) # PkgConfig::PREFIX: for tests
  find_library(${prefix}_LIBRARY NAMES ${name} HINTS ${${prefix}_LIBRARY_DIRS} REQUIRED)
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${${prefix}_LIBRARY} OUTPUT_VARIABLE dynamic
                  COMMAND_ERROR_IS_FATAL ANY)
  string(REGEX MATCH "SONAME +([^ \n]+)" soname_line "${dynamic}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "no SONAME in ${${prefix}_LIBRARY}")
  endif()
  target_include_directories(vmhostcore PUBLIC ${${prefix}_INCLUDE_DIRS})
  target_compile_options(vmhostcore PUBLIC ${${prefix}_CFLAGS_OTHER})
  target_compile_definitions(vmhostcore PRIVATE ${define}="${CMAKE_MATCH_1}")
  target_link_libraries(vmhostcore PUBLIC ${CMAKE_DL_LIBS})
endfunction()
