package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

const utmTemplateColumns = `id, tenant_id, name, utm_source, utm_medium, utm_campaign, utm_term, utm_content, created_at`

// UTMTemplates lists the tenant's UTM templates by name (in byte order,
// as SQLite sorts).
func (db *DB) UTMTemplates(ctx context.Context, tenantID int64) ([]linkforge.UTMTemplate, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+utmTemplateColumns+` FROM utm_templates WHERE tenant_id = $1
		ORDER BY name COLLATE "C"`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("postgres: utm templates: %w", err)
	}
	defer rows.Close()
	out := []linkforge.UTMTemplate{}
	for rows.Next() {
		t, err := scanUTMTemplate(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: utm templates: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: utm templates: %w", err)
	}
	return out, nil
}

func scanUTMTemplate(r pgx.Row) (linkforge.UTMTemplate, error) {
	var t linkforge.UTMTemplate
	err := r.Scan(&t.ID, &t.TenantID, &t.Name, &t.UTM.Source, &t.UTM.Medium, &t.UTM.Campaign,
		&t.UTM.Term, &t.UTM.Content, &t.CreatedAt)
	t.CreatedAt = t.CreatedAt.UTC()
	return t, err
}

// CreateUTMTemplate stores t and its audit event in one transaction; a
// name the tenant has is EConflict.
func (db *DB) CreateUTMTemplate(ctx context.Context, t linkforge.UTMTemplate) (linkforge.UTMTemplate, error) {
	t.CreatedAt = now()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO utm_templates (tenant_id, name, utm_source, utm_medium, utm_campaign,
			utm_term, utm_content, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			t.TenantID, t.Name, t.UTM.Source, t.UTM.Medium, t.UTM.Campaign, t.UTM.Term, t.UTM.Content,
			t.CreatedAt).Scan(&t.ID)
		switch pgCode(err) {
		case uniqueViolation:
			return &linkforge.Error{Code: linkforge.EConflict, Message: "a UTM template of that name exists", Err: err}
		case foreignKeyViolation:
			return &linkforge.Error{Code: linkforge.ENotFound, Message: "tenant not found", Err: err}
		}
		if err != nil {
			return err
		}
		return db.writes.Begin().UTMTemplateCreated(ctx, writeTx{tx}, t)
	})
	if err != nil {
		return linkforge.UTMTemplate{}, wrap("create utm template", err)
	}
	return t, nil
}

// DeleteUTMTemplate deletes the tenant's template id with its audit event.
func (db *DB) DeleteUTMTemplate(ctx context.Context, tenantID, id int64) (linkforge.UTMTemplate, error) {
	var t linkforge.UTMTemplate
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		t, err = scanUTMTemplate(tx.QueryRow(ctx, `DELETE FROM utm_templates WHERE tenant_id = $1 AND id = $2
			RETURNING `+utmTemplateColumns, tenantID, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("UTM template")
		}
		if err != nil {
			return err
		}
		return db.writes.Begin().UTMTemplateDeleted(ctx, writeTx{tx}, t, now())
	})
	if err != nil {
		return linkforge.UTMTemplate{}, wrap("delete utm template", err)
	}
	return t, nil
}

// Campaigns sums the clicks in q's range of the tenant's links with a
// campaign (found by the partial index links_utm_campaign) by campaign,
// source and medium: whole days from link_daily, the hours at the ends
// from link_hourly, as TopLinks reads them; with a traffic, that value's
// rows of the traffic dimension instead (link_dims_daily, click_dims).
// One statement: one snapshot.
func (db *DB) Campaigns(ctx context.Context, q linkforge.CampaignQuery) ([]linkforge.CampaignCount, error) {
	if err := linkforge.CheckHourRange(q.From, q.To, 1); err != nil {
		return nil, err
	}
	automated, ok := linkforge.TrafficFilter(q.Traffic)
	if !ok {
		return nil, linkforge.CheckTraffic(q.Traffic)
	}
	sp := linkforge.SplitDays(q.From, q.To)
	// $1 tenant, [$2, $3) and [$6, $7) the hours at the ends, [$4, $5)
	// the days, $8 the traffic dimension, $9 its value.
	args := []any{q.TenantID, q.From, sp.HeadTo, sp.DayFrom, sp.DayTo, sp.TailFrom, q.To}
	counts := `SELECT link_id, count FROM link_daily WHERE link_id IN (SELECT id FROM c) AND day >= $4 AND day < $5
			UNION ALL
			SELECT link_id, count FROM link_hourly WHERE link_id IN (SELECT id FROM c)
			AND ((hour >= $2 AND hour < $3) OR (hour >= $6 AND hour < $7))`
	if automated != nil {
		args = append(args, linkforge.DimTraffic.String(), q.Traffic)
		counts = `SELECT link_id, count FROM link_dims_daily WHERE link_id IN (SELECT id FROM c)
			AND dimension = $8 AND value = $9 AND day >= $4 AND day < $5
			UNION ALL
			SELECT link_id, count FROM click_dims WHERE link_id IN (SELECT id FROM c)
			AND dimension = $8 AND value = $9 AND ((hour >= $2 AND hour < $3) OR (hour >= $6 AND hour < $7))`
	}
	rows, err := db.pool.Query(ctx, `WITH c AS (
			SELECT id FROM links WHERE tenant_id = $1 AND utm_campaign <> ''
		), r AS (`+counts+`
		), g AS (
			SELECT link_id, SUM(count)::bigint AS n FROM r GROUP BY link_id HAVING SUM(count) > 0
		)
		SELECT l.utm_campaign, l.utm_source, l.utm_medium, count(*), SUM(g.n)::bigint
		FROM g JOIN links l ON l.id = g.link_id
		GROUP BY l.utm_campaign, l.utm_source, l.utm_medium`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: campaigns: %w", err)
	}
	defer rows.Close()
	out := []linkforge.CampaignCount{}
	for rows.Next() {
		var c linkforge.CampaignCount
		if err := rows.Scan(&c.Campaign, &c.Source, &c.Medium, &c.Links, &c.Clicks); err != nil {
			return nil, fmt.Errorf("postgres: campaigns: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: campaigns: %w", err)
	}
	linkforge.SortCampaigns(out)
	return out, nil
}
