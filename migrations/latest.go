package migrations

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Latest returns the newest schema version this binary carries for
// dialect: a database at a higher version was written by a newer release,
// whose schema this one does not understand (a restore refuses it).
func Latest(dialect Dialect) (int64, error) {
	entries, err := fs.ReadDir(files, string(dialect))
	if err != nil {
		return 0, fmt.Errorf("migrations for %s: %w", dialect, err)
	}
	var latest int64
	for _, e := range entries {
		// goose's file names: NNNNN_description.sql.
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration file %s/%s: %w", dialect, e.Name(), err)
		}
		latest = max(latest, v)
	}
	if latest == 0 {
		return 0, fmt.Errorf("no migrations for %s", dialect)
	}
	return latest, nil
}
