/* What the store's other files (store_share.c) share with store.c: its SQLite handle and the
 * one mapping of SQLite's result codes to negative errno values. */
#ifndef VMHOST_STORE_PRIVATE_H
#define VMHOST_STORE_PRIVATE_H

#include "store/sqlite.h"
#include "store/store.h"

sqlite3 *store_sqlite(struct store *s);
int store_sqlite_errno(struct store *s, int rc);

#endif
