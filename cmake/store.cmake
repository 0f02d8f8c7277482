# The history database (src/store/): SQLite, loaded by the commands that open a database
# (src/store/sqlite.h), not linked: linked, every command paid for it at start. The tests that
# open a database themselves link it (tests/store.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/lib/loaded_library.cmake)
vmhost_loaded_library(SQLITE sqlite3 sqlite3 VMHOST_SQLITE_SONAME)
