package sqlite

import "database/sql"

// Writer exposes the write handle to the package's external tests, which
// check the schema version.
func (db *DB) Writer() *sql.DB { return db.writer }

// SetSearchDriveLimit sets searchDriveLimit for one test, so that small
// data takes the path of many matches.
func SetSearchDriveLimit(n int) (restore func()) {
	old := searchDriveLimit
	searchDriveLimit = n
	return func() { searchDriveLimit = old }
}

// Reader exposes the read pool to the package's external tests.
func (db *DB) Reader() *sql.DB { return db.reader }

// DomainByIDQuery is DomainByID's statement, for the test of its plan.
const DomainByIDQuery = domainByIDQuery
