package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/linkforge/linkforge"
)

// SetLinkHealth implements linkforge.HealthStore.
func (db *DB) SetLinkHealth(ctx context.Context, id int64, h linkforge.LinkHealth) (linkforge.Link, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: link health: %w", err)
	}
	defer tx.Rollback()
	l, err := scanLink(tx.QueryRowContext(ctx, `SELECT `+linkColumns+`, `+clicksColumn+` FROM links l WHERE l.id = ?`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Link{}, notFound("link")
	}
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: link health: %w", err)
	}
	turned := h.State == linkforge.HealthBroken && l.Health.Stated() != linkforge.HealthBroken
	l.Health = &h
	var state any
	if h.State != "" {
		state = h.State
	}
	if _, err := tx.ExecContext(ctx, `UPDATE links SET health_state = ?, health_status = ?, health_checked_at = ?, health_error = ?
		WHERE id = ?`, state, h.Status, nullMicros(&h.CheckedAt), h.Error, id); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: link health: %w", err)
	}
	w := db.writes.Begin()
	if turned {
		if err := w.LinkBroken(ctx, writeTx{tx}, l, h.CheckedAt); err != nil {
			return linkforge.Link{}, fmt.Errorf("sqlite: link health: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: link health: %w", err)
	}
	w.Committed()
	return l, nil
}
