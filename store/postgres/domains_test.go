package postgres_test

import (
	"github.com/linkforge/linkforge/internal/pgtest"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestDomainsMigrationDownUp: migration 00013 rebuilds links; its Down
// and Up keep the links, their alarms, the search index and the id
// sequence.
func TestDomainsMigrationDownUp(t *testing.T) {
	ctx := t.Context()
	url := pgtest.New(t)
	db := mustOpenURL(t, url)
	raw, p := testdb.Schema(t, migrations.Postgres, url)
	storetest.CheckDomainsMigration(t, db, func() {
		if _, err := p.DownTo(ctx, 12); err != nil {
			t.Fatalf("migrate down to 00012: %v", err)
		}
	}, func() {
		if _, err := p.Up(ctx); err != nil {
			t.Fatalf("migrate up again: %v", err)
		}
	}, func(table string) int {
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		return n
	})
}
