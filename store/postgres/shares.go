package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// shareColumns are a share's columns with its link's slug ("" for a tag's).
const shareColumns = `s.id, s.tenant_id, COALESCE(s.link_id, 0), COALESCE(l.slug, ''), COALESCE(l.domain_id, 0), s.tag, s.prefix, s.token_hash,
	s.password_hash, s.expires_at, s.created_at`

func shareScan(r pgx.Row) (linkforge.Share, error) {
	var (
		sh      linkforge.Share
		expires *time.Time
	)
	if err := r.Scan(&sh.ID, &sh.TenantID, &sh.LinkID, &sh.Slug, &sh.DomainID, &sh.Tag, &sh.Prefix, &sh.Hash,
		&sh.PasswordHash, &expires, &sh.CreatedAt); err != nil {
		return sh, err
	}
	if expires != nil {
		t := expires.UTC()
		sh.ExpiresAt = &t
	}
	sh.CreatedAt = sh.CreatedAt.UTC()
	return sh, nil
}

// linkParam is a share's link_id: NULL for a tag's.
func linkParam(linkID int64) *int64 {
	if linkID == 0 {
		return nil
	}
	return &linkID
}

// CreateShare stores sh and its audit event in one transaction, within
// MaxSharesPerSubject shares of its link or tag: the tenant's row is
// locked, so that concurrent creates count one after the other.
func (db *DB) CreateShare(ctx context.Context, sh linkforge.Share) (linkforge.Share, error) {
	sh.CreatedAt = now()
	if sh.LinkID != 0 {
		sh.Tag = ""
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var one, n int
		err := tx.QueryRow(ctx, `SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE`, sh.TenantID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("tenant")
		}
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM stat_shares
			WHERE tenant_id = $1 AND link_id IS NOT DISTINCT FROM $2 AND tag = $3`,
			sh.TenantID, linkParam(sh.LinkID), sh.Tag).Scan(&n); err != nil {
			return err
		}
		if n >= linkforge.MaxSharesPerSubject {
			return linkforge.SharesQuotaExceeded()
		}
		err = tx.QueryRow(ctx, `INSERT INTO stat_shares
			(tenant_id, link_id, tag, prefix, token_hash, password_hash, expires_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			sh.TenantID, linkParam(sh.LinkID), sh.Tag, sh.Prefix, sh.Hash, sh.PasswordHash, sh.ExpiresAt,
			sh.CreatedAt).Scan(&sh.ID)
		if err != nil {
			if pgCode(err) == foreignKeyViolation {
				return notFound("link")
			}
			return err
		}
		return db.writes.Begin().ShareCreated(ctx, writeTx{tx}, sh)
	})
	if err != nil {
		return linkforge.Share{}, wrap("create share", err)
	}
	return sh, nil
}

// ListShares returns the shares of a link (or of a tag when linkID is 0).
func (db *DB) ListShares(ctx context.Context, tenantID, linkID int64, tag string) ([]linkforge.Share, error) {
	if linkID != 0 {
		tag = ""
	}
	out, err := query(ctx, db.pool, shareScan, `SELECT `+shareColumns+`
		FROM stat_shares s LEFT JOIN links l ON l.id = s.link_id
		WHERE s.tenant_id = $1 AND s.link_id IS NOT DISTINCT FROM $2 AND s.tag = $3
		ORDER BY s.created_at, s.id`, tenantID, linkParam(linkID), tag)
	if err != nil {
		return nil, fmt.Errorf("postgres: list shares: %w", err)
	}
	return out, nil
}

// DeleteShare deletes the share named by prefix of a link (or a tag).
func (db *DB) DeleteShare(ctx context.Context, tenantID, linkID int64, slug, tag, prefix string) error {
	if linkID != 0 {
		tag = ""
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		ct, err := tx.Exec(ctx, `DELETE FROM stat_shares
			WHERE tenant_id = $1 AND link_id IS NOT DISTINCT FROM $2 AND tag = $3 AND prefix = $4`,
			tenantID, linkParam(linkID), tag, prefix)
		if err != nil {
			return err
		}
		if ct.RowsAffected() == 0 {
			return notFound("share")
		}
		return db.writes.Begin().ShareDeleted(ctx, writeTx{tx}, tenantID, slug, tag, prefix, now())
	})
	if err != nil {
		return wrap("delete share", err)
	}
	return nil
}

// ShareByHash returns the share whose token hashes to hash.
func (db *DB) ShareByHash(ctx context.Context, hash []byte) (linkforge.Share, error) {
	sh, err := shareScan(db.pool.QueryRow(ctx, `SELECT `+shareColumns+`
		FROM stat_shares s LEFT JOIN links l ON l.id = s.link_id WHERE s.token_hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Share{}, notFound("share")
	}
	if err != nil {
		return linkforge.Share{}, fmt.Errorf("postgres: share: %w", err)
	}
	return sh, nil
}
