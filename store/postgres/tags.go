package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// RenameTag replaces from by to on the tenant's links in one transaction
// (linkforge.TagStore); the tag count trigger follows.
func (db *DB) RenameTag(ctx context.Context, tenantID int64, from, to string) (int64, error) {
	return db.retag(ctx, tenantID, from, to)
}

// DeleteTag removes tag from the tenant's links in one transaction.
func (db *DB) DeleteTag(ctx context.Context, tenantID int64, tag string) (int64, error) {
	return db.retag(ctx, tenantID, tag, "")
}

func (db *DB) retag(ctx context.Context, tenantID int64, from, to string) (int64, error) {
	var n int64
	w := db.writes.Begin()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		type tagged struct {
			id      int64
			tags    []string
			updated time.Time
		}
		// FOR UPDATE: a concurrent UpdateLink of one of them waits, and
		// neither overwrites the other's tags.
		rows, err := tx.Query(ctx, `SELECT id, tags, updated_at FROM links
			WHERE tenant_id = $1 AND tags @> ARRAY[$2]::text[] ORDER BY id FOR UPDATE`, tenantID, from)
		if err != nil {
			return err
		}
		links, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tagged, error) {
			var t tagged
			err := r.Scan(&t.id, &t.tags, &t.updated)
			return t, err
		})
		if err != nil {
			return err
		}
		if len(links) == 0 {
			return notFound("tag")
		}
		ts := now()
		for _, l := range links {
			// updated_at only moves forward, as UpdateLink's.
			at := ts
			if !at.After(l.updated) {
				at = l.updated.Add(time.Microsecond)
			}
			if _, err := tx.Exec(ctx, `UPDATE links SET tags = $1, updated_at = $2 WHERE id = $3`,
				linkforge.Retag(l.tags, from, to), at, l.id); err != nil {
				return err
			}
		}
		n = int64(len(links))
		if to == "" {
			return w.TagDeleted(ctx, writeTx{tx}, tenantID, from, ts)
		}
		return w.TagRenamed(ctx, writeTx{tx}, tenantID, from, to, ts)
	})
	if err != nil {
		return 0, wrap("retag", err)
	}
	w.Committed()
	return n, nil
}
