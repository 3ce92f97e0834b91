package postgres_test

import (
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/storetest"
)

func TestInstanceStore(t *testing.T) {
	storetest.RunInstance(t, func(t *testing.T) linkforge.InstanceStore { return testdb.PostgresDB(t) })
}

// TestInitializedBeforeMigrate: a database that no migration ran on is no
// LinkForge database (the CLI refuses it rather than making one).
func TestInitializedBeforeMigrate(t *testing.T) {
	db, err := postgres.Open(t.Context(), pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if ok, err := db.Initialized(t.Context()); err != nil || ok {
		t.Errorf("Initialized before Migrate = %v, %v; want false", ok, err)
	}
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.Initialized(t.Context()); err != nil || !ok {
		t.Errorf("Initialized after Migrate = %v, %v; want true", ok, err)
	}
}
