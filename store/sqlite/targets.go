package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/linkforge/linkforge"
)

// TargetEntries returns the operator's blocklist and allowlist entries.
func (db *DB) TargetEntries(ctx context.Context) ([]linkforge.TargetEntry, error) {
	out, err := query(ctx, db.reader, func(r scanner) (linkforge.TargetEntry, error) {
		var (
			e       linkforge.TargetEntry
			created int64
		)
		err := r.Scan(&e.ID, &e.List, &e.Host, &e.Note, &created)
		e.CreatedAt = fromMicros(created)
		return e, err
	}, `SELECT id, list, host, note, created_at FROM target_entries ORDER BY list, host`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: target entries: %w", err)
	}
	return out, nil
}

// AddTargetEntry stores e; EConflict when its list has the host.
func (db *DB) AddTargetEntry(ctx context.Context, e linkforge.TargetEntry) (linkforge.TargetEntry, error) {
	e.CreatedAt = now()
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx,
			`INSERT INTO target_entries (list, host, note, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
			e.List, e.Host, e.Note, toMicros(e.CreatedAt)).Scan(&e.ID); err != nil {
			return err
		}
		return db.writes.Begin().TargetEntryAdded(ctx, writeTx{tx}, e, e.CreatedAt)
	})
	if isUnique(err) {
		return linkforge.TargetEntry{}, &linkforge.Error{Code: linkforge.EConflict,
			Message: fmt.Sprintf("the %slist has %s already", e.List, e.Host), Err: err}
	}
	if err != nil {
		return linkforge.TargetEntry{}, fmt.Errorf("sqlite: add target entry: %w", err)
	}
	return e, nil
}

// DeleteTargetEntry deletes the host from the list; ENotFound when absent.
func (db *DB) DeleteTargetEntry(ctx context.Context, list, host string) (linkforge.TargetEntry, error) {
	var e linkforge.TargetEntry
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var created int64
		err := tx.QueryRowContext(ctx,
			`DELETE FROM target_entries WHERE list = ? AND host = ? RETURNING id, list, host, note, created_at`, list, host).
			Scan(&e.ID, &e.List, &e.Host, &e.Note, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(list + "list entry")
		}
		if err != nil {
			return err
		}
		e.CreatedAt = fromMicros(created)
		return db.writes.Begin().TargetEntryRemoved(ctx, writeTx{tx}, e, now())
	})
	return e, wrapWrite("delete target entry", err)
}
