package people_test

import (
	"testing"

	"github.com/linkforge/linkforge/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }
