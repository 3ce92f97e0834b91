package postgres_test

import (
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/storetest"
)

func TestTLSStore(t *testing.T) {
	storetest.RunTLS(t, func(t *testing.T) linkforge.TLSStore { return mustOpen(t) })
}
