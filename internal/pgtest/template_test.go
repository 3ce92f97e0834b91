package pgtest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestNewFromTemplate: the template is filled once for parallel callers;
// each gets a copy holding what fill wrote, and a write to one copy is
// seen neither in another copy nor in one made afterwards.
func TestNewFromTemplate(t *testing.T) {
	t.Parallel()
	var fills atomic.Int64
	key := fmt.Sprintf("test-%p", &fills)
	fill := func(ctx context.Context, url string) error {
		fills.Add(1)
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, `CREATE TABLE seeded (v text); INSERT INTO seeded VALUES ('from the template')`)
		return err
	}
	const copies = 4
	t.Run("copies", func(t *testing.T) {
		for i := range copies {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				conn := mustConnect(t, NewFromTemplate(t, key, fill))
				if n := mustQueryInt(t, conn, `SELECT count(*) FROM seeded WHERE v = 'from the template'`); n != 1 {
					t.Errorf("copy %d holds %d seeded rows, want 1", i, n)
				}
				mustExec(t, conn, fmt.Sprintf(`INSERT INTO seeded VALUES ('only in copy %d')`, i))
				if n := mustQueryInt(t, conn, `SELECT count(*) FROM seeded`); n != 2 {
					t.Errorf("copy %d holds %d rows after its own write, want 2: the template's and its own", i, n)
				}
			})
		}
	})
	if n := fills.Load(); n != 1 {
		t.Errorf("fill ran %d times for %d copies, want once", n, copies)
	}
	later := mustConnect(t, NewFromTemplate(t, key, fill))
	if n := mustQueryInt(t, later, `SELECT count(*) FROM seeded`); n != 1 {
		t.Errorf("a copy made after a write to another holds %d rows, want only the template's", n)
	}
}
