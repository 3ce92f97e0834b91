package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// RenameLink renames the tenant's link and keeps the old slug as its
// alias, in one transaction (linkforge.AliasStore).
func (db *DB) RenameLink(ctx context.Context, tenantID, domainID int64, slug, to string) (linkforge.Link, error) {
	var l linkforge.Link
	w := db.writes.Begin()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		l, err = scanLink(tx.QueryRow(ctx,
			`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l
			 WHERE l.slug = $1 AND l.tenant_id = $2 AND l.domain_id = $3 FOR UPDATE OF l`, slug, tenantID, domainID), true)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("link")
		}
		if err != nil {
			return err
		}
		var owner int64
		switch err := tx.QueryRow(ctx, `SELECT link_id FROM link_aliases WHERE domain_id = $1 AND slug = $2 FOR UPDATE`, domainID, to).Scan(&owner); {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case owner != l.ID:
			return linkforge.SlugTakenError(to, nil)
		default: // the link takes an old slug of its own back
			if _, err := tx.Exec(ctx, `DELETE FROM link_aliases WHERE domain_id = $1 AND slug = $2`, domainID, to); err != nil {
				return err
			}
		}
		ts := now()
		if !ts.After(l.UpdatedAt) {
			ts = l.UpdatedAt.Add(time.Microsecond)
		}
		if _, err := tx.Exec(ctx, `UPDATE links SET slug = $1, updated_at = $2 WHERE id = $3`, to, ts, l.ID); err != nil {
			if pgCode(err) == uniqueViolation {
				return linkforge.SlugTakenError(to, err)
			}
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO link_aliases (domain_id, slug, link_id, created_at) VALUES ($1, $2, $3, $4)`,
			domainID, slug, l.ID, ts); err != nil {
			return fmt.Errorf("alias: %w", err)
		}
		l.Slug, l.UpdatedAt = to, ts
		return w.LinkRenamed(ctx, writeTx{tx}, l, slug)
	})
	if err != nil {
		return linkforge.Link{}, wrap("rename link", err)
	}
	w.Committed()
	return l, nil
}

// LinkAliases returns the link's aliases in byte order.
func (db *DB) LinkAliases(ctx context.Context, linkID int64) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT slug FROM link_aliases WHERE link_id = $1 ORDER BY slug COLLATE "C"`, linkID)
	if err != nil {
		return nil, fmt.Errorf("postgres: link aliases: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: link aliases: %w", err)
	}
	return out, nil
}

// DeleteAlias removes alias from the tenant's link slug.
func (db *DB) DeleteAlias(ctx context.Context, tenantID, domainID int64, slug, alias string) error {
	w := db.writes.Begin()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM link_aliases a USING links l
			WHERE a.domain_id = $1 AND a.slug = $2 AND a.link_id = l.id AND l.tenant_id = $3 AND l.domain_id = $1 AND l.slug = $4`,
			domainID, alias, tenantID, slug)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("alias")
		}
		return w.AliasDeleted(ctx, writeTx{tx}, tenantID, slug, alias, now())
	})
	if err != nil {
		return wrap("delete alias", err)
	}
	return nil
}

// aliasLink is LinkBySlug's second read: the link slug is an alias of.
func (db *DB) aliasLink(ctx context.Context, domainID int64, slug string) (linkforge.Link, error) {
	return scanLinkWith(db.pool.QueryRow(ctx,
		`SELECT `+linkColumns+`, `+tenantSuspended+` FROM link_aliases a JOIN links l ON l.id = a.link_id
		 WHERE a.domain_id = $1 AND a.slug = $2`, domainID, slug), suspendedDest)
}
