package postgres_test

import (
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/storetest"
)

func TestRouting(t *testing.T) {
	t.Parallel()
	storetest.RunRouting(t, func(t *testing.T) storetest.RoutingStore { return testdb.PostgresDB(t) })
}
