package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// reportColumns are a report's columns, with the reported link's slug
// and tenant (empty when it has none).
const reportColumns = `r.id, COALESCE(r.link_id, 0), COALESCE(l.slug, ''), COALESCE(t.name, ''), r.url, r.reason, r.email,
	r.created_at, r.resolved_at, COALESCE(r.resolution, '')`

const reportFrom = ` FROM abuse_reports r LEFT JOIN links l ON l.id = r.link_id LEFT JOIN tenants t ON t.id = l.tenant_id`

func scanReport(row pgx.Row) (linkforge.Report, error) {
	var r linkforge.Report
	if err := row.Scan(&r.ID, &r.LinkID, &r.Slug, &r.Tenant, &r.URL, &r.Reason, &r.Email, &r.CreatedAt, &r.ResolvedAt, &r.Resolution); err != nil {
		return r, err
	}
	r.CreatedAt = r.CreatedAt.UTC()
	if r.ResolvedAt != nil {
		at := r.ResolvedAt.UTC()
		r.ResolvedAt = &at
	}
	return r, nil
}

// CreateReport implements linkforge.ReportStore.
func (db *DB) CreateReport(ctx context.Context, r linkforge.Report) (linkforge.Report, error) {
	var link *int64
	if r.LinkID != 0 {
		link = &r.LinkID
	}
	var id int64
	if err := db.pool.QueryRow(ctx, `INSERT INTO abuse_reports (link_id, url, reason, email, created_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, link, r.URL, r.Reason, r.Email, now()).Scan(&id); err != nil {
		return linkforge.Report{}, fmt.Errorf("postgres: create report: %w", err)
	}
	out, err := scanReport(db.pool.QueryRow(ctx, `SELECT `+reportColumns+reportFrom+` WHERE r.id = $1`, id))
	if err != nil {
		return linkforge.Report{}, fmt.Errorf("postgres: create report: %w", err)
	}
	return out, nil
}

// Reports implements linkforge.ReportStore.
func (db *DB) Reports(ctx context.Context, open bool, limit int, before int64) ([]linkforge.Report, error) {
	q := `SELECT ` + reportColumns + reportFrom + ` WHERE TRUE`
	var args []any
	if open {
		q += ` AND r.resolved_at IS NULL`
	}
	if before > 0 {
		args = append(args, before)
		q += ` AND r.id < $` + strconv.Itoa(len(args))
	}
	args = append(args, limit)
	q += ` ORDER BY r.id DESC LIMIT $` + strconv.Itoa(len(args))
	out, err := query(ctx, db.pool, scanReport, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: reports: %w", err)
	}
	return out, nil
}

// ResolveReport implements linkforge.ReportStore.
func (db *DB) ResolveReport(ctx context.Context, id int64, resolution string) (linkforge.Report, error) {
	var r linkforge.Report
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		r, err = scanReport(tx.QueryRow(ctx, `SELECT `+reportColumns+reportFrom+` WHERE r.id = $1 FOR UPDATE OF r`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("report")
		}
		if err != nil {
			return err
		}
		if r.ResolvedAt != nil {
			return linkforge.Errorf(linkforge.EConflict, "the report is resolved already (%s)", r.Resolution)
		}
		at := now()
		if _, err := tx.Exec(ctx, `UPDATE abuse_reports SET resolved_at = $1, resolution = $2 WHERE id = $3`, at, resolution, id); err != nil {
			return err
		}
		r.ResolvedAt, r.Resolution = &at, resolution
		return db.writes.Begin().ReportResolved(ctx, writeTx{tx}, r, at)
	})
	if err != nil {
		return linkforge.Report{}, wrap("resolve report", err)
	}
	return r, nil
}
