/* Opening and closing the history database (store.h): SQLite loaded, the file checked to be ours
 * (a writer's: the user's own file, no link, REVIEW S-M5; any: a vmhost database, opened defensive),
 * its schema migrated by a writer, the writers' lock, a deleted file followed to the new one at
 * its path, and SQLite's result codes as negative errno values. Writing is store_write.c,
 * reading store_read.c. */
#include "store/store_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/file.h"
#include "io/state.h"
#include "store/store_schema.h"

/* "vmhs": marks the file as a vmhost database (PRAGMA application_id). */
#define STORE_APPLICATION_ID 0x766d6873
/* How long a writer waits for SQLite's lock held by another program before it drops the sample:
 * short, because serve's scrapes wait behind the recording of a sample. Readers wait 5 s. */
#define WRITER_BUSY_MS 500
#define READER_BUSY_MS 5000
/* A writer's page cache, bounded: a sample touches the right-most pages of a few B-trees, and the
 * whole file is in the kernel's page cache anyway. SQLite's default (2000 KiB a connection) filled
 * over the first half hour of a recorder's life, read as serve's RSS growing ~100 KiB a minute
 * (issue 42); at this size it is full within minutes and stays so. */
#define WRITER_CACHE_SIZE "-512" /* KiB (negative: a size, not pages) */
/* The oldest schema a reader reads as it is (a writer migrates it): 5 has the vCPUs' delay as
 * vcpu_wait_ms and no disks. */
#define READ_OLDEST_VERSION 5

static int errno_from_sqlite(sqlite3 *db, int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK: return 0;
	case SQLITE_FULL: return -ENOSPC;
	case SQLITE_READONLY: return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH: return -EACCES;
	case SQLITE_BUSY:
	case SQLITE_LOCKED: return -EAGAIN; /* a non-vmhost program's lock: ours is the flock */
	case SQLITE_NOMEM: return -ENOMEM;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
	case SQLITE_FORMAT: return -EPROTO;
	case SQLITE_CANTOPEN: {
		int e = db ? sq.system_errno(db) : 0;
		return e > 0 ? -e : -EIO;
	}
	case SQLITE_IOERR: {
		int e = db ? sq.system_errno(db) : 0;
		if (e == ENOSPC || e == EDQUOT)
			return -ENOSPC;
		if (e == EROFS || e == EACCES || e == EPERM)
			return -e;
		return -EIO;
	}
	default: return -EIO;
	}
}

const char *store_strerror(int err)
{
	switch (err) {
	case -EBUSY: return "another recorder is writing to this database (one writer at a time)";
	case -EAGAIN: return "the database is locked by another program (a sqlite3 shell in a transaction?)";
	case -EROFS: return "the database is read-only";
	case -EACCES: return "permission denied";
	case -ELOOP: return "a symbolic link: vmhost writes a database only at a file's own name";
	case -EPERM: return "not this user's own file (another user's, or writable by others): refused";
	case -ENOLCK: return "the writers' lock in the runtime directory is refused (a link, another user's, or "
			     "writable by others)";
	case -ENOSPC: return "disk full (no space left on device)";
	case -EPROTO: return "not a vmhost database, or it is damaged";
	case -EPROTONOSUPPORT: return "written by a newer vmhost (unknown schema version)";
	case -ESTALE: return "written by an older vmhost: 'vmhost record' into it once migrates it";
	case -ENODATA: return "no samples recorded yet";
	case -ELIBACC: return sqlite_load_error() ? sqlite_load_error() : strerror(-err);
	default: return strerror(-err);
	}
}

int store_sqlite_errno(struct store *s, int rc) { return errno_from_sqlite(s->db, rc); }

static int query_int(struct store *s, const char *sql, int64_t *ret)
{
	sqlite3_stmt *st;
	int r = sql_prepare(s, sql, &st);
	if (r < 0)
		return r;
	int rc = sq.step(st);
	if (rc == SQLITE_ROW)
		*ret = sq.column_int64(st, 0);
	else
		r = rc == SQLITE_DONE ? -ENODATA : store_sqlite_errno(s, rc);
	sq.finalize(st);
	return r;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->db) { /* statements only with a database: SQLite may not even be loaded */
		for (size_t i = 0; i < ST_COUNT; i++)
			sq.finalize(s->stmt[i]);
		sq.close_v2(s->db);
	}
	/* Only now: closing any fd of the file drops SQLite's POSIX locks on it. */
	if (s->db_fd >= 0)
		close(s->db_fd);
	io_lock_remove(s->lock_path, s->lock_fd);
	free(s->lock_path);
	store_write_forget(s);
	free(s->keys);
	free(s->kvm_last);
	free(s->path);
	free(s);
}

/* Checks the file is ours (or empty) and returns its schema version. */
static int check_identity(struct store *s, int64_t *ret_version)
{
	int64_t app = 0, version = 0, tables = 0;
	int r = query_int(s, "PRAGMA application_id", &app);
	if (r == 0)
		r = query_int(s, "PRAGMA user_version", &version);
	if (r == 0)
		r = query_int(s, "SELECT count(*) FROM sqlite_master", &tables);
	if (r < 0)
		return r;
	if (app != STORE_APPLICATION_ID && (app != 0 || tables > 0))
		return -EPROTO;
	if (version > STORE_SCHEMA_VERSION)
		return -EPROTONOSUPPORT;
	*ret_version = version;
	return 0;
}

static int migrate(struct store *s, int64_t version)
{
	for (int64_t v = version; v < STORE_SCHEMA_VERSION; v++) {
		int r = sql_exec(s, "BEGIN IMMEDIATE");
		if (r < 0)
			return r;
		/* Another writer (a recorder beside `share`) may have migrated it meanwhile. */
		int64_t now = v;
		r = query_int(s, "PRAGMA user_version", &now);
		if (r == 0 && now > v) {
			v = now - 1;
			r = sql_exec(s, "COMMIT");
			if (r < 0)
				return r;
			continue;
		}
		if (r == 0)
			r = sql_exec(s, store_migrations[v]);
		if (r == 0) {
			char sql[96];
			snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %lld",
				 STORE_APPLICATION_ID, (long long)(v + 1));
			r = sql_exec(s, sql);
		}
		if (r == 0)
			r = sql_exec(s, "COMMIT");
		if (r < 0) {
			sql_exec(s, "ROLLBACK");
			return r;
		}
	}
	return 0;
}

static int store_new(struct store **ret)
{
	struct store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->db_fd = -1;
	s->lock_fd = -1;
	s->retention = store_retention_default;
	*ret = s;
	return 0;
}

/* Opens the database at path (a file name, or a URI with SQLITE_OPEN_URI) with flags, refusing a
 * read-write open that SQLite could only make read-only, and checks the file is ours. */
static int open_db(struct store *s, const char *path, int flags, int64_t *ret_version)
{
	int rc = sq.open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK)
		return store_sqlite_errno(s, rc);
	/* The file is data, never code (REVIEW S-M5): no writing the schema behind SQLite's back
	 * (defensive), and no function with side effects run from a view or trigger it carries. */
	if (sq.db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL) != SQLITE_OK ||
	    sq.db_config(s->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL) != SQLITE_OK)
		return -ENOTSUP;
	sq.extended_result_codes(s->db, 1);
	sq.busy_timeout(s->db, (flags & SQLITE_OPEN_READWRITE) ? WRITER_BUSY_MS : READER_BUSY_MS);
	if ((flags & SQLITE_OPEN_READWRITE) && sq.db_readonly(s->db, "main") == 1)
		return -EROFS;
	return check_identity(s, ret_version);
}

/* The -wal and -shm files at path, left by a database deleted under its writer: removed only
 * while we hold the lock of the file now at the path and it is still empty (ours, just made), so
 * a writer that made a new database there meanwhile keeps its WAL (it holds the lock: -EBUSY
 * came first). Else SQLite would replay the old WAL into the new file. */
static void remove_stale_sides(const struct store *s)
{
	struct stat st;
	if (fstat(s->db_fd, &st) < 0 || st.st_size != 0)
		return;
	char side[4200];
	snprintf(side, sizeof(side), "%s-wal", s->path);
	io_remove(side);
	snprintf(side, sizeof(side), "%s-shm", s->path);
	io_remove(side);
}

/* The writers' lock: one recorder (or serve --db) per database file. A file named by the
 * database's device and inode in the runtime directory (root's /run/vmhost, which no other user can
 * open, REVIEW S-M3: a flock on the 0644 database itself, any reader could hold), so every path to
 * the file shares it and a file made anew at the path (store_follow_path) has its own, as when the
 * file itself was locked; store_close removes it. Without a runtime directory (not root, no
 * XDG_RUNTIME_DIR), or one a user other than root may not use, the database file itself is locked,
 * as before. 0, -EBUSY while another writer
 * holds it, -ENOLCK for a lock refused, or a negative errno. */
static int writers_lock(struct store *s)
{
	struct stat st;
	char dir[4096], path[4200];
	if (fstat(s->db_fd, &st) < 0)
		return -errno;
	if (!io_runtime_dir(dir, sizeof(dir)))
		return io_lock_fd(s->db_fd, 0);
	snprintf(path, sizeof(path), "%s/db-%llx-%llu.lock", dir, (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	if (!(s->lock_path = strdup(path)))
		return -ENOMEM;
	int fd = io_lock(path, 0);
	/* Not root, and the runtime directory not ours to use (another user's, not writable): the
	 * database file itself, as without one; root's /run/vmhost has no such excuse. */
	if (fd < 0 && geteuid() != 0 && (fd == -EACCES || fd == -EPERM)) {
		free(s->lock_path);
		s->lock_path = NULL;
		return io_lock_fd(s->db_fd, 0);
	}
	if (fd < 0)
		return fd == -EPERM ? -ENOLCK : fd;
	s->lock_fd = fd;
	return 0;
}

/* SQLite opened the path itself, never through a link (SQLITE_OPEN_NOFOLLOW); the file there must
 * still be the one checked and locked, not one swapped in between. */
static int still_at_path(const struct store *s)
{
	struct stat at, ours;
	if (lstat(s->path, &at) < 0 || fstat(s->db_fd, &ours) < 0)
		return -errno;
	return at.st_dev == ours.st_dev && at.st_ino == ours.st_ino ? 0 : -EPERM;
}

/* store_open's work; after_delete: the database at path was deleted under us (store_follow_path);
 * side: store_open_side, without the recorders' lock. */
static int open_writer(const char *path, bool after_delete, bool side, struct store **ret)
{
	/* SQLite first: without it, no file is made. */
	int r = sqlite_load(NULL, 0);
	if (r < 0)
		return r;
	struct store *s;
	r = store_new(&s);
	if (r < 0)
		return r;
	s->writer = true;
	s->path = strdup(path);
	if (!s->path) {
		r = -ENOMEM;
		goto fail;
	}
	/* The user's own file, never one through a link (REVIEW S-M5), made here when missing. */
	s->db_fd = io_open_owned(path, 0644);
	r = s->db_fd < 0 ? s->db_fd : side ? 0 : writers_lock(s);
	if (r < 0)
		goto fail;
	if (after_delete)
		remove_stale_sides(s);
	int64_t version;
	r = open_db(s, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, &version);
	if (r == 0)
		r = still_at_path(s);
	if (r < 0)
		goto fail;
	if (side) /* one transaction now and then: it may wait for a recorder's sample */
		sq.busy_timeout(s->db, READER_BUSY_MS);
	/* WAL: readers never block the recorder; NORMAL sync: a crash loses at most the last commits
	 * (power loss), never consistency. */
	r = sql_exec(s, "PRAGMA journal_mode = WAL");
	if (r == 0)
		r = sql_exec(s, "PRAGMA synchronous = NORMAL");
	if (r == 0)
		r = sql_exec(s, "PRAGMA cache_size = " WRITER_CACHE_SIZE);
	if (r == 0)
		r = migrate(s, version);
	s->version = STORE_SCHEMA_VERSION;
	if (r == 0)
		r = store_write_prepare(s);
	if (r < 0)
		goto fail;
	*ret = s;
	return 0;
fail:
	store_close(s);
	return r;
}

int store_open(const char *path, struct store **ret) { return open_writer(path, false, false, ret); }

int store_open_side(const char *path, struct store **ret) { return open_writer(path, false, true, ret); }

/* A file: URI for path (percent-escaping what URIs reserve), with query. */
static int file_uri(const char *path, const char *query, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "file:");
	for (const char *p = path; *p && n + 4 < cap; p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			n += (size_t)snprintf(buf + n, cap - n, "%%%02X", (unsigned char)*p);
		else
			buf[n++] = *p;
	}
	int w = snprintf(buf + n, cap - n, "?%s", query);
	return w < 0 || (size_t)w >= cap - n ? -ENAMETOOLONG : 0;
}

static int open_read_uri(const char *uri, struct store **ret)
{
	struct store *s;
	int r = store_new(&s);
	if (r < 0)
		return r;
	int64_t version;
	r = open_db(s, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &version);
	if (r == 0 && version < READ_OLDEST_VERSION)
		r = version == 0 ? -ENODATA : -ESTALE; /* old schema: a writer migrates it */
	s->version = version;
	if (r < 0) {
		store_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

int store_open_read(const char *path, struct store **ret)
{
	int r = sqlite_load(NULL, 0);
	if (r < 0)
		return r;
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	char uri[4200];
	r = file_uri(path, "mode=ro", uri, sizeof(uri));
	if (r < 0)
		return r;
	r = open_read_uri(uri, ret);
	/* A WAL database on read-only media (no -shm can be made): nobody can be writing it, so
	 * it may be read as immutable. */
	if (r == -ENOENT || r == -EROFS || r == -EACCES || r == -EIO) {
		if (file_uri(path, "mode=ro&immutable=1", uri, sizeof(uri)) == 0 && open_read_uri(uri, ret) == 0)
			return 0;
	}
	return r;
}

int store_follow_path(struct store *s)
{
	struct stat st;
	if (fstat(s->db_fd, &st) < 0)
		return -errno;
	if (st.st_nlink > 0)
		return 0;
	struct store *fresh;
	for (size_t i = 0; i < ST_COUNT; i++) {
		sq.finalize(s->stmt[i]);
		s->stmt[i] = NULL;
	}
	sq.close_v2(s->db);
	s->db = NULL;
	close(s->db_fd);
	s->db_fd = -1;
	io_lock_remove(s->lock_path, s->lock_fd); /* the deleted file's */
	s->lock_fd = -1;
	int r = open_writer(s->path, true, false, &fresh);
	if (r < 0)
		return r;
	/* fresh's handles into s, which the caller keeps using; its caches start empty too */
	s->db = fresh->db;
	s->db_fd = fresh->db_fd;
	s->lock_fd = fresh->lock_fd;
	free(s->lock_path);
	s->lock_path = fresh->lock_path;
	memcpy(s->stmt, fresh->stmt, sizeof(s->stmt));
	fresh->db = NULL;
	fresh->db_fd = -1;
	fresh->lock_fd = -1;
	fresh->lock_path = NULL;
	memset(fresh->stmt, 0, sizeof(fresh->stmt));
	store_close(fresh);
	store_write_forget(s);
	return 1;
}
