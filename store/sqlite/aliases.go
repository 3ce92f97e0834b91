package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
)

// RenameLink renames the tenant's link and keeps the old slug as its
// alias, in one write transaction (linkforge.AliasStore).
func (db *DB) RenameLink(ctx context.Context, tenantID, domainID int64, slug, to string) (linkforge.Link, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: rename link: %w", err)
	}
	defer tx.Rollback()
	l, err := tenantLink(ctx, tx, tenantID, domainID, slug)
	if err != nil {
		return linkforge.Link{}, wrapRead("rename link", err)
	}
	var owner int64
	switch err := tx.QueryRowContext(ctx, `SELECT link_id FROM link_aliases WHERE domain_id = ? AND slug = ?`, domainID, to).Scan(&owner); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return linkforge.Link{}, fmt.Errorf("sqlite: rename link: %w", err)
	case owner != l.ID:
		return linkforge.Link{}, linkforge.SlugTakenError(to, nil)
	default: // the link takes an old slug of its own back
		if _, err := tx.ExecContext(ctx, `DELETE FROM link_aliases WHERE domain_id = ? AND slug = ?`, domainID, to); err != nil {
			return linkforge.Link{}, fmt.Errorf("sqlite: rename link: %w", err)
		}
	}
	ts := now()
	if !ts.After(l.UpdatedAt) {
		ts = l.UpdatedAt.Add(time.Microsecond)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE links SET slug = ?, updated_at = ? WHERE id = ?`, to, toMicros(ts), l.ID); err != nil {
		if isUnique(err) {
			return linkforge.Link{}, linkforge.SlugTakenError(to, err)
		}
		return linkforge.Link{}, fmt.Errorf("sqlite: rename link: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO link_aliases (domain_id, slug, link_id, created_at) VALUES (?, ?, ?, ?)`,
		domainID, slug, l.ID, toMicros(ts)); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: rename link: alias: %w", err)
	}
	l.Slug, l.UpdatedAt = to, ts
	w := db.writes.Begin()
	if err := w.LinkRenamed(ctx, writeTx{tx}, l, slug); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: rename link: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: rename link: %w", err)
	}
	w.Committed()
	return l, nil
}

// LinkAliases returns the link's aliases in byte order.
func (db *DB) LinkAliases(ctx context.Context, linkID int64) ([]string, error) {
	out, err := query(ctx, db.reader, func(r scanner) (string, error) {
		var s string
		err := r.Scan(&s)
		return s, err
	}, `SELECT slug FROM link_aliases WHERE link_id = ? ORDER BY slug`, linkID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: link aliases: %w", err)
	}
	return out, nil
}

// DeleteAlias removes alias from the tenant's link slug.
func (db *DB) DeleteAlias(ctx context.Context, tenantID, domainID int64, slug, alias string) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: delete alias: %w", err)
	}
	defer tx.Rollback()
	l, err := tenantLink(ctx, tx, tenantID, domainID, slug)
	if err != nil {
		return wrapRead("delete alias", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM link_aliases WHERE domain_id = ? AND slug = ? AND link_id = ?`, domainID, alias, l.ID)
	if err != nil {
		return fmt.Errorf("sqlite: delete alias: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return notFound("alias")
	}
	w := db.writes.Begin()
	if err := w.AliasDeleted(ctx, writeTx{tx}, tenantID, slug, alias, now()); err != nil {
		return fmt.Errorf("sqlite: delete alias: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: delete alias: %w", err)
	}
	return nil
}

// aliasLink is LinkBySlug's second read: the link slug is an alias of.
func (db *DB) aliasLink(ctx context.Context, domainID int64, slug string) (linkforge.Link, error) {
	return scanLinkWith(db.reader.QueryRowContext(ctx,
		`SELECT `+linkColumns+`, `+tenantSuspended+` FROM link_aliases a JOIN links l ON l.id = a.link_id
		 WHERE a.domain_id = ? AND a.slug = ?`, domainID, slug), suspendedDest)
}
