package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// QR settings (migration 00052): one row per tenant (domain_id 0) and per
// domain that has any.

func qrSettings(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, tenantID, domainID int64, lock string) (linkforge.QRSettings, error) {
	var (
		s      linkforge.QRSettings
		margin *int32
	)
	err := q.QueryRow(ctx, `SELECT fg, bg, ec, margin, logo, logo_type FROM qr_settings
		WHERE tenant_id = $1 AND domain_id = $2 `+lock, tenantID, domainID).Scan(&s.FG, &s.BG, &s.EC, &margin, &s.Logo, &s.LogoType)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.QRSettings{}, nil
	}
	if err != nil {
		return linkforge.QRSettings{}, err
	}
	if margin != nil {
		m := int(*margin)
		s.Margin = &m
	}
	if len(s.Logo) == 0 {
		s.Logo = nil
	}
	return s, nil
}

// QRSettings returns the tenant's or its domain's QR settings.
func (db *DB) QRSettings(ctx context.Context, tenantID, domainID int64) (linkforge.QRSettings, error) {
	s, err := qrSettings(ctx, db.pool, tenantID, domainID, "")
	if err != nil {
		return linkforge.QRSettings{}, wrap("qr settings", err)
	}
	return s, nil
}

// UpdateQRSettings changes them with fn in one transaction. A domain's row
// is locked FOR SHARE first, so that DeleteDomain (FOR UPDATE) cannot
// delete it between the check and the write and leave settings behind; the
// settings row is locked FOR UPDATE, and a first insert that races another
// is answered by ON CONFLICT.
func (db *DB) UpdateQRSettings(ctx context.Context, tenantID, domainID int64, fn func(*linkforge.QRSettings) error) (linkforge.QRSettings, error) {
	var s linkforge.QRSettings
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var host string // the audit event's target: "" for the tenant's own
		if domainID != linkforge.PublicDomainID {
			err := tx.QueryRow(ctx, `SELECT host FROM domains WHERE id = $1 AND tenant_id = $2 FOR SHARE`, domainID, tenantID).Scan(&host)
			if errors.Is(err, pgx.ErrNoRows) {
				return notFound("domain")
			}
			if err != nil {
				return err
			}
		}
		var err error
		if s, err = qrSettings(ctx, tx, tenantID, domainID, "FOR UPDATE"); err != nil {
			return err
		}
		if err := fn(&s); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO qr_settings (tenant_id, domain_id, fg, bg, ec, margin, logo, logo_type)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (tenant_id, domain_id) DO UPDATE SET fg = excluded.fg, bg = excluded.bg, ec = excluded.ec,
				margin = excluded.margin, logo = excluded.logo, logo_type = excluded.logo_type`,
			tenantID, domainID, s.FG, s.BG, s.EC, s.Margin, s.Logo, s.LogoType)
		if err != nil {
			return err
		}
		return db.writes.Begin().QRSettingsUpdated(ctx, writeTx{tx}, tenantID, host, now())
	})
	if err != nil {
		return linkforge.QRSettings{}, wrap("update qr settings", err)
	}
	return s, nil
}
