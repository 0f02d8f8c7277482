# The plain build hardened as Debian's hardening=+all hardens the package (REVIEW S-L13): vmhost
# runs as root and reads what any local user can write (command lines, guest RAM, monitors), so
# `make` and `make install` get the same defences as the .deb, checked by
# `hardening-check build/vmhost` (tests/hostile/hardening.sh). Included by CMakeLists.txt before
# any target, so every program gets them:
#   -D_FORTIFY_SOURCE=3           bounds-checked libc calls (needs -O: the optimised build types;
#                                 the sanitizer builds are -O0 and bring their own checks)
#   -fstack-protector-strong      canaries on frames with arrays or address-taken locals
#   -fstack-clash-protection      stack probes, so a large frame cannot jump the guard page
#   -fcf-protection               CET's shadow stack and indirect branch marks (x86 only)
#   PIE                           the program at a random address too
#   -z relro -z now               relocations read-only after start, all bound at start
include_guard(GLOBAL)
include(CheckCCompilerFlag)
include(CheckPIESupported)

# No build type: the optimised one with symbols, as the Makefile asks (fortify needs -O).
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$" AND NOT VMHOST_SANITIZE
   AND NOT VMHOST_SANITIZE_THREAD)
  # -U first: a level the environment's CFLAGS set (dpkg-buildflags says 2) is replaced, not redefined.
  add_compile_options(-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3)
endif()
foreach(flag -fstack-protector-strong -fstack-clash-protection -fcf-protection)
  string(MAKE_C_IDENTIFIER "VMHOST_CC_HAS${flag}" var)
  check_c_compiler_flag(${flag} ${var})
  if(${var})
    add_compile_options(${flag})
  endif()
endforeach()

set(CMAKE_POSITION_INDEPENDENT_CODE ON)
check_pie_supported()
add_link_options(-Wl,-z,relro,-z,now)
