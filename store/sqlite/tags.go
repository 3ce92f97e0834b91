package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/linkforge/linkforge"
)

// RenameTag replaces from by to on the tenant's links in one write
// transaction (linkforge.TagStore); the tag count triggers follow.
func (db *DB) RenameTag(ctx context.Context, tenantID int64, from, to string) (int64, error) {
	return db.retag(ctx, tenantID, from, to)
}

// DeleteTag removes tag from the tenant's links in one write transaction.
func (db *DB) DeleteTag(ctx context.Context, tenantID int64, tag string) (int64, error) {
	return db.retag(ctx, tenantID, tag, "")
}

// tagged is a link carrying the tag being changed.
type tagged struct {
	id      int64
	tags    []string
	updated int64
}

func (db *DB) retag(ctx context.Context, tenantID int64, from, to string) (int64, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sqlite: retag: %w", err)
	}
	defer tx.Rollback()
	links, err := query(ctx, tx, func(r scanner) (tagged, error) {
		var (
			t    tagged
			tags string
		)
		if err := r.Scan(&t.id, &tags, &t.updated); err != nil {
			return t, err
		}
		return t, decodeTags(tags, &t.tags)
	}, `SELECT l.id, l.tags, l.updated_at FROM links l
		WHERE l.tenant_id = ? AND EXISTS (SELECT 1 FROM json_each(l.tags) WHERE value = ?)`, tenantID, from)
	if err != nil {
		return 0, fmt.Errorf("sqlite: retag: %w", err)
	}
	if len(links) == 0 {
		return 0, notFound("tag")
	}
	ts := now()
	for _, l := range links {
		tags, err := encodeTags(linkforge.Retag(l.tags, from, to))
		if err != nil {
			return 0, fmt.Errorf("sqlite: retag: %w", err)
		}
		// updated_at only moves forward, as UpdateLink's.
		at := max(toMicros(ts), l.updated+1)
		if _, err := tx.ExecContext(ctx, `UPDATE links SET tags = ?, updated_at = ? WHERE id = ?`, tags, at, l.id); err != nil {
			return 0, fmt.Errorf("sqlite: retag: %w", err)
		}
	}
	w := db.writes.Begin()
	if to == "" {
		err = w.TagDeleted(ctx, writeTx{tx}, tenantID, from, ts)
	} else {
		err = w.TagRenamed(ctx, writeTx{tx}, tenantID, from, to, ts)
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: retag: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("sqlite: retag: %w", err)
	}
	w.Committed()
	return int64(len(links)), nil
}

// decodeTags reads a tags column into dst.
func decodeTags(s string, dst *[]string) error {
	if err := json.Unmarshal([]byte(s), dst); err != nil {
		return fmt.Errorf("decode tags: %w", err)
	}
	return nil
}
