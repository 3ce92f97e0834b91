package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/rules"
)

// The UTM builder's API: a tenant's templates, which the link editor
// fills a link's utm from, and the campaigns report. A link's own utm is
// a routing member of the link bodies (routingbody.go).

const (
	pathUTMTemplates = apiPrefix + "/utm-templates"
	pathUTMTemplate  = pathUTMTemplates + "/:id"
	pathCampaigns    = pathStats + "/campaigns"
)

// utmTemplateJSON is the schema UTMTemplate.
type utmTemplateJSON struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	UTM       linkforge.UTM `json:"utm"`
	CreatedAt time.Time     `json:"created_at"`
}

func renderUTMTemplate(t linkforge.UTMTemplate) utmTemplateJSON {
	return utmTemplateJSON{ID: strconv.FormatInt(t.ID, 10), Name: t.Name, UTM: t.UTM, CreatedAt: t.CreatedAt.UTC()}
}

// listUTMTemplates answers GET /api/v1/utm-templates: the tenant's
// templates by name.
func (s *Server) listUTMTemplates(c echo.Context) error {
	list, err := s.store.UTMTemplates(c.Request().Context(), tenantID(c))
	if err != nil {
		return fmt.Errorf("list utm templates: %w", err)
	}
	out := make([]utmTemplateJSON, len(list))
	for i, t := range list {
		out[i] = renderUTMTemplate(t)
	}
	return c.JSON(http.StatusOK, map[string][]utmTemplateJSON{"templates": out})
}

// createUTMTemplate answers POST /api/v1/utm-templates {"name","utm"}:
// 201 with the template; a name the tenant has is 409.
func (s *Server) createUTMTemplate(c echo.Context) error {
	members, err := readObject(c.Request().Body)
	if err != nil {
		return err
	}
	var (
		fe      fieldErrors
		t       = linkforge.UTMTemplate{TenantID: tenantID(c)}
		scratch linkforge.Link
	)
	for _, m := range members {
		switch m.name {
		case "name":
			fe.str(m, &t.Name)
		case "utm":
			// The link bodies' decoding: the same document, the same errors.
			fe = append(fe, rules.DecodeField("utm", m.value, &scratch)...)
			t.UTM = scratch.UTMs()
		default:
			fe.add(fieldName(m.name), `unknown field; the fields are "name" and "utm"`)
		}
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return err
	}
	if err := linkforge.ValidateUTMTemplate(t); err != nil {
		return err
	}
	t, err = s.store.CreateUTMTemplate(c.Request().Context(), t)
	if err != nil {
		return fmt.Errorf("create utm template: %w", err)
	}
	return c.JSON(http.StatusCreated, renderUTMTemplate(t))
}

// deleteUTMTemplate answers DELETE /api/v1/utm-templates/{id}: 204, or
// 404 for an id the tenant has no template of.
func (s *Server) deleteUTMTemplate(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return &linkforge.Error{Code: linkforge.ENotFound, Message: "UTM template not found"}
	}
	if _, err := s.store.DeleteUTMTemplate(c.Request().Context(), tenantID(c), id); err != nil {
		return fmt.Errorf("delete utm template: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}

// campaignJSON is one row of the schema Campaigns.
type campaignJSON struct {
	Campaign string `json:"campaign"`
	Source   string `json:"source"`
	Medium   string `json:"medium"`
	Links    int64  `json:"links"`
	Clicks   int64  `json:"clicks"`
}

// campaigns answers GET /api/v1/stats/campaigns?from=&to=&traffic=: the
// tenant's clicks in the range by their links' utm campaign, source and
// medium, most clicked first. The range and traffic are read as by the
// other analytics operations (parseAnalyticsRange).
func (s *Server) campaigns(c echo.Context) error {
	r, err := s.parseAnalyticsRange(c)
	if err != nil {
		return err
	}
	rows, err := s.store.Campaigns(c.Request().Context(), linkforge.CampaignQuery{
		TenantID: tenantID(c), From: r.from, To: r.to, Traffic: r.traffic,
	})
	if err != nil {
		return fmt.Errorf("campaigns: %w", err)
	}
	out := make([]campaignJSON, len(rows))
	for i, row := range rows {
		out[i] = campaignJSON(row)
	}
	return c.JSON(http.StatusOK, struct {
		From      time.Time      `json:"from"`
		To        time.Time      `json:"to"`
		Campaigns []campaignJSON `json:"campaigns"`
	}{r.from, r.to, out})
}
