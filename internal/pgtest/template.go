package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// templates are the databases NewFromTemplate copies, one per key, made on
// the shared server once per process and dropped by Shutdown.
var templates struct {
	mu     sync.Mutex
	byKey  map[string]*template
	made   []string // names of the databases created, for Shutdown
	closed bool
}

type template struct {
	once sync.Once
	name string
	err  error
}

// NewFromTemplate is New with a copy of a template database instead of an
// empty one: the first call for key creates the template and fills it
// through fill (migrations, say), which must close every connection it
// opened; every call then gets its own copy (CREATE DATABASE ... TEMPLATE),
// dropped when t ends. Copying is a file copy on the server, where filling
// each database anew would repeat fill's work per test.
func NewFromTemplate(t testing.TB, key string, fill func(ctx context.Context, url string) error) string {
	t.Helper()
	shared.once.Do(setup)
	switch {
	case shared.skip != "":
		unavailable(t, shared.skip)
	case shared.err != nil:
		t.Fatalf("pgtest: %v", shared.err)
	}
	templates.mu.Lock()
	if templates.byKey == nil {
		templates.byKey = map[string]*template{}
	}
	tp := templates.byKey[key]
	if tp == nil {
		tp = &template{}
		templates.byKey[key] = tp
	}
	templates.mu.Unlock()
	tp.once.Do(func() { tp.name, tp.err = makeTemplate(key, fill) })
	if tp.err != nil {
		t.Fatalf("pgtest: %v", tp.err)
	}
	return newDatabaseFrom(t, shared.adminURL, shared.urlFor, tp.name)
}

func makeTemplate(key string, fill func(ctx context.Context, url string) error) (string, error) {
	var b [8]byte
	rand.Read(b[:])
	name := "linkforge_template_" + hex.EncodeToString(b[:])
	templates.mu.Lock()
	if templates.closed {
		templates.mu.Unlock()
		return "", fmt.Errorf("template %s: the harness was shut down", key)
	}
	templates.made = append(templates.made, name)
	templates.mu.Unlock()
	if err := adminExec(shared.adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("template %s: create database %s: %w", key, name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := fill(ctx, shared.urlFor(name)); err != nil {
		return "", fmt.Errorf("template %s: fill %s: %w", key, name, err)
	}
	return name, nil
}

// newDatabaseFrom creates a uniquely named copy of database template
// through adminURL and drops it when t ends. PostgreSQL refuses the copy
// while another session is connected to the template; it waits a few
// seconds for sessions that are ending, such as those fill closed.
func newDatabaseFrom(t testing.TB, adminURL string, urlFor func(string) string, template string) string {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	name := "linkforge_test_" + hex.EncodeToString(b[:])
	stmt := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	if err := adminExec(adminURL, stmt); err != nil {
		t.Fatalf("pgtest: create database %s from %s: %v", name, template, err)
	}
	t.Cleanup(func() {
		if err := adminExec(adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return urlFor(name)
}

// closeTemplates stops NewFromTemplate from making templates and, with
// drop (an external server), drops those made; a throwaway server's go
// with its directory.
func closeTemplates(adminURL string, drop bool) error {
	templates.mu.Lock()
	defer templates.mu.Unlock()
	templates.closed = true
	if !drop {
		return nil
	}
	var errs []error
	for _, name := range templates.made {
		if err := adminExec(adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			errs = append(errs, fmt.Errorf("drop template %s: %w", name, err))
		}
	}
	templates.made = nil
	return errors.Join(errs...)
}
