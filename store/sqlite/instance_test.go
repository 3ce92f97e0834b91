package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/store/storetest"
)

func TestInstanceStore(t *testing.T) {
	storetest.RunInstance(t, func(t *testing.T) linkforge.InstanceStore { return testdb.SQLiteDB(t) })
}

// TestInitializedBeforeMigrate: a file that no migration ran on is no
// LinkForge database (the CLI refuses it rather than making one).
func TestInitializedBeforeMigrate(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if ok, err := db.Initialized(t.Context()); err != nil || ok {
		t.Errorf("Initialized before Migrate = %v, %v; want false", ok, err)
	}
}
