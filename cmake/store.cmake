# The history database (src/store/): SQLite.
pkg_check_modules(SQLITE REQUIRED IMPORTED_TARGET sqlite3)
target_link_libraries(vmhostcore PUBLIC PkgConfig::SQLITE)
