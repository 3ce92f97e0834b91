package web_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// rescheduler records what the API tells the alarm scheduler.
type rescheduler struct {
	mu  sync.Mutex
	due []time.Time
}

func (r *rescheduler) Reschedule(due time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.due = append(r.due, due)
}

// take returns the due times told since the last take.
func (r *rescheduler) take() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.due
	r.due = nil
	return d
}

// alarmBody is an alarm as the API returns it.
type alarmBody struct {
	ID       string    `json:"id"`
	Link     string    `json:"link"`
	State    string    `json:"state"`
	DueAt    time.Time `json:"due_at"`
	Attempt  int       `json:"attempt"`
	Failures []struct {
		Attempt int       `json:"attempt"`
		At      time.Time `json:"at"`
	} `json:"failures"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// mustKillAlarm claims the link's due alarm and records a last failure,
// as the scheduler does after the seventh.
func mustKillAlarm(t *testing.T, s linkforge.Store, l linkforge.Link, at time.Time) {
	t.Helper()
	ctx := context.Background()
	claimed, err := s.ClaimAlarms(ctx, "node-test", at, time.Minute, 100)
	if err != nil {
		t.Fatalf("ClaimAlarms: %v", err)
	}
	i := slices.IndexFunc(claimed, func(a linkforge.Alarm) bool { return a.LinkID == l.ID })
	if i < 0 {
		t.Fatalf("alarm of %q not claimed at %v", l.Slug, at)
	}
	ids, err := s.FailAlarms(ctx, []linkforge.AlarmFailure{{Lease: claimed[i].Lease(), At: at,
		Error: "postgres: dial 10.1.2.3:5432: connection refused", Dead: true}})
	if err != nil || len(ids) != 1 {
		t.Fatalf("FailAlarms = %v, %v; want the alarm", ids, err)
	}
}

func TestAlarmsAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		sched := &rescheduler{}
		e := newEnv(t, s, func(c *web.Config) { c.Alarms = sched })
		acme, tok := mustTenantToken(t, s, "acme")
		_, other := mustTenantToken(t, s, "globex")
		now := e.clock.Now()
		due := now.Add(-time.Minute).Truncate(time.Second)
		link := mustStoreLink(t, s, linkforge.Link{TenantID: acme, Slug: "dead-one", URL: "https://example.com/", ExpiresAt: &due})
		mustStoreLink(t, s, linkforge.Link{TenantID: acme, Slug: "later", URL: "https://example.com/", ExpiresAt: ptr(now.Add(time.Hour))})
		mustKillAlarm(t, s, link, now)

		t.Run("list dead", func(t *testing.T) {
			r := e.do(http.MethodGet, "/api/v1/alarms?state=dead", tok, "")
			mustStatus(t, r, http.StatusOK)
			got := mustJSON[struct{ Alarms []alarmBody }](t, r).Alarms
			if len(got) != 1 {
				t.Fatalf("dead alarms = %+v, want one", got)
			}
			a := got[0]
			if a.Link != "dead-one" || a.State != "dead" || !a.DueAt.Equal(due) || a.Attempt != 1 ||
				len(a.Failures) != 1 || a.Failures[0].Attempt != 1 || !a.Failures[0].At.Equal(now) || a.ID == "" {
				t.Errorf("dead alarm = %+v, want dead-one's, due %v, attempt 1, one failure at %v", a, due, now)
			}
			for _, secret := range []string{"10.1.2.3", "connection refused"} {
				if strings.Contains(string(r.body), secret) {
					t.Errorf("the listing shows the internal error text %q: %s", secret, r.body)
				}
			}
		})
		t.Run("list by state", func(t *testing.T) {
			for _, c := range []struct {
				query string
				want  []string
			}{
				{"", []string{"dead-one", "later"}},
				{"?state=scheduled", []string{"later"}},
				{"?state=done", []string{}},
				{"?limit=1", []string{"dead-one"}},
			} {
				got := mustJSON[struct{ Alarms []alarmBody }](t, e.do(http.MethodGet, "/api/v1/alarms"+c.query, tok, "")).Alarms
				links := []string{}
				for _, a := range got {
					links = append(links, a.Link)
				}
				if !slices.Equal(links, c.want) {
					t.Errorf("GET /api/v1/alarms%s = %q, want %q", c.query, links, c.want)
				}
			}
			r := e.do(http.MethodGet, "/api/v1/alarms?state=done", tok, "")
			if string(r.body) != `{"alarms":[]}`+"\n" {
				t.Errorf("empty listing = %q, want an empty array", r.body)
			}
		})
		t.Run("bad queries", func(t *testing.T) {
			mustProblem(t, e.do(http.MethodGet, "/api/v1/alarms?state=sleeping", tok, ""), http.StatusBadRequest, "state")
			mustProblem(t, e.do(http.MethodGet, "/api/v1/alarms?limit=0", tok, ""), http.StatusBadRequest, "limit")
			mustProblem(t, e.do(http.MethodGet, "/api/v1/alarms", "", ""), http.StatusUnauthorized, "")
		})
		t.Run("tenant isolation", func(t *testing.T) {
			got := mustJSON[struct{ Alarms []alarmBody }](t, e.do(http.MethodGet, "/api/v1/alarms", other, "")).Alarms
			if len(got) != 0 {
				t.Errorf("another tenant lists %+v, want nothing", got)
			}
			a := mustAlarmOf(t, s, acme, "dead-one")
			mustProblem(t, e.do(http.MethodPost, fmt.Sprintf("/api/v1/alarms/%d/retry", a.ID), other, ""), http.StatusNotFound, "")
			if got := mustAlarmOf(t, s, acme, "dead-one"); got.State != linkforge.AlarmDead {
				t.Errorf("alarm after another tenant's retry: %s, want still dead", got.State)
			}
		})
		t.Run("retry", func(t *testing.T) {
			sched.take()
			a := mustAlarmOf(t, s, acme, "dead-one")
			e.clock.Add(time.Minute)
			r := e.do(http.MethodPost, fmt.Sprintf("/api/v1/alarms/%d/retry", a.ID), tok, "")
			mustStatus(t, r, http.StatusAccepted)
			got := mustJSON[alarmBody](t, r)
			want := e.clock.Now()
			if got.State != "scheduled" || !got.DueAt.Equal(want) || got.Attempt != 0 || len(got.Failures) != 1 || got.Link != "dead-one" {
				t.Errorf("retried alarm = %+v, want scheduled at %v, attempt 0, its failure kept", got, want)
			}
			if told := sched.take(); len(told) != 1 || !told[0].Equal(want) {
				t.Errorf("scheduler told %v, want [%v]", told, want)
			}
			p := mustProblem(t, e.do(http.MethodPost, fmt.Sprintf("/api/v1/alarms/%d/retry", a.ID), tok, ""), http.StatusConflict, "")
			if p.Code != linkforge.EConflict {
				t.Errorf("retry of a scheduled alarm: code %q, want %q", p.Code, linkforge.EConflict)
			}
			for _, id := range []string{"999999999", "abc", "0", "-1"} {
				mustProblem(t, e.do(http.MethodPost, "/api/v1/alarms/"+id+"/retry", tok, ""), http.StatusNotFound, "")
			}
		})
		t.Run("link writes tell the scheduler", func(t *testing.T) {
			sched.take()
			e.mustCreate(tok, `{"slug":"soon","url":"https://example.com/","expires_at":"2099-01-01T00:00:00Z"}`)
			e.mustCreate(tok, `{"slug":"never","url":"https://example.com/"}`)
			mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/soon", tok, `{"expires_at":"2098-01-01T00:00:00Z"}`), http.StatusOK)
			mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/never", tok, `{"tags":["x"]}`), http.StatusOK)
			mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/soon", tok, ""), http.StatusNoContent)
			want := []time.Time{time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2098, 1, 1, 0, 0, 0, 0, time.UTC)}
			if told := sched.take(); !slices.EqualFunc(told, want, time.Time.Equal) {
				t.Errorf("scheduler told %v, want %v", told, want)
			}
			for _, a := range mustAlarmsOf(t, s, acme) {
				if a.Slug == "soon" || a.Slug == "never" {
					t.Errorf("alarm %+v left after delete / for a link without expiry", a)
				}
			}
		})
	})
}

func mustAlarmsOf(t *testing.T, s linkforge.Store, tenantID int64) []linkforge.Alarm {
	t.Helper()
	as, err := s.ListAlarms(context.Background(), tenantID, "", 1000)
	if err != nil {
		t.Fatalf("ListAlarms: %v", err)
	}
	return as
}

func mustAlarmOf(t *testing.T, s linkforge.Store, tenantID int64, slug string) linkforge.Alarm {
	t.Helper()
	for _, a := range mustAlarmsOf(t, s, tenantID) {
		if a.Slug == slug {
			return a
		}
	}
	t.Fatalf("no alarm for %q", slug)
	return linkforge.Alarm{}
}
