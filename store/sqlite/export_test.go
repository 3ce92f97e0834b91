package sqlite

import "database/sql"

// Writer exposes the write handle to the package's external tests, which
// check the schema version.
func (db *DB) Writer() *sql.DB { return db.writer }
