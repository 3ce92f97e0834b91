package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// TargetEntries returns the operator's blocklist and allowlist entries.
func (db *DB) TargetEntries(ctx context.Context) ([]linkforge.TargetEntry, error) {
	out, err := query(ctx, db.pool, func(r pgx.Row) (linkforge.TargetEntry, error) {
		var e linkforge.TargetEntry
		err := r.Scan(&e.ID, &e.List, &e.Host, &e.Note, &e.CreatedAt)
		e.CreatedAt = e.CreatedAt.UTC()
		return e, err
	}, `SELECT id, list, host, note, created_at FROM target_entries ORDER BY list, host`)
	if err != nil {
		return nil, fmt.Errorf("postgres: target entries: %w", err)
	}
	return out, nil
}

// AddTargetEntry stores e; EConflict when its list has the host.
func (db *DB) AddTargetEntry(ctx context.Context, e linkforge.TargetEntry) (linkforge.TargetEntry, error) {
	e.CreatedAt = now()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx,
			`INSERT INTO target_entries (list, host, note, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
			e.List, e.Host, e.Note, e.CreatedAt).Scan(&e.ID); err != nil {
			return err
		}
		return db.writes.Begin().TargetEntryAdded(ctx, writeTx{tx}, e, e.CreatedAt)
	})
	if pgCode(err) == uniqueViolation {
		return linkforge.TargetEntry{}, &linkforge.Error{Code: linkforge.EConflict,
			Message: fmt.Sprintf("the %slist has %s already", e.List, e.Host), Err: err}
	}
	if err != nil {
		return linkforge.TargetEntry{}, fmt.Errorf("postgres: add target entry: %w", err)
	}
	return e, nil
}

// DeleteTargetEntry deletes the host from the list; ENotFound when absent.
func (db *DB) DeleteTargetEntry(ctx context.Context, list, host string) (linkforge.TargetEntry, error) {
	var e linkforge.TargetEntry
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx,
			`DELETE FROM target_entries WHERE list = $1 AND host = $2 RETURNING id, list, host, note, created_at`, list, host).
			Scan(&e.ID, &e.List, &e.Host, &e.Note, &e.CreatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(list + "list entry")
		}
		if err != nil {
			return err
		}
		e.CreatedAt = e.CreatedAt.UTC()
		return db.writes.Begin().TargetEntryRemoved(ctx, writeTx{tx}, e, now())
	})
	var le *linkforge.Error
	if errors.As(err, &le) {
		return linkforge.TargetEntry{}, le
	}
	if err != nil {
		return linkforge.TargetEntry{}, fmt.Errorf("postgres: delete target entry: %w", err)
	}
	return e, nil
}
