package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// SetLinkHealth implements linkforge.HealthStore.
func (db *DB) SetLinkHealth(ctx context.Context, id int64, h linkforge.LinkHealth) (linkforge.Link, error) {
	var l linkforge.Link
	w := db.writes.Begin()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		l, err = scanLink(tx.QueryRow(ctx, `SELECT `+linkColumns+`, `+clicksColumn+` FROM links l WHERE l.id = $1 FOR UPDATE OF l`, id), true)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("link")
		}
		if err != nil {
			return err
		}
		turned := h.State == linkforge.HealthBroken && l.Health.Stated() != linkforge.HealthBroken
		l.Health = &h
		var state *string
		if h.State != "" {
			state = &h.State
		}
		var at any
		if !h.CheckedAt.IsZero() {
			at = h.CheckedAt
		}
		if _, err := tx.Exec(ctx, `UPDATE links SET health_state = $1, health_status = $2, health_checked_at = $3, health_error = $4
			WHERE id = $5`, state, h.Status, at, h.Error, id); err != nil {
			return err
		}
		if turned {
			return w.LinkBroken(ctx, writeTx{tx}, l, h.CheckedAt)
		}
		return nil
	})
	if err != nil {
		return linkforge.Link{}, wrap("link health", err)
	}
	w.Committed()
	return l, nil
}
