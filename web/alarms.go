package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// AlarmScheduler is what the API tells the expiry alarms' scheduler
// (*schedule.Scheduler): that a link write just stored an alarm due at due,
// so that its timer moves earlier if needed. Writes it is not told about
// are found by its periodic re-read of the store, later.
type AlarmScheduler interface {
	Reschedule(due time.Time)
}

// rescheduleAlarm nudges the scheduler after a write that stored an alarm:
// a link with an expiry (created, or patched, whether or not the expiry
// moved: a later due time never moves the timer later), or a replay.
func (s *Server) rescheduleAlarm(due *time.Time) {
	if s.alarms != nil && due != nil {
		s.alarms.Reschedule(*due)
	}
}

// alarmJSON is an alarm of GET /api/v1/alarms. Failures give each failed
// attempt's number and time but not its error text, which can name
// internal systems (database hosts, peers): operators find it in the
// alarm_failed log records.
type alarmJSON struct {
	ID        string             `json:"id"`
	Link      string             `json:"link"`
	State     string             `json:"state"`
	DueAt     time.Time          `json:"due_at"`
	Attempt   int                `json:"attempt"`
	Failures  []alarmFailureJSON `json:"failures"`
	CreatedAt time.Time          `json:"created_at"`
	UpdatedAt time.Time          `json:"updated_at"`
}

type alarmFailureJSON struct {
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
}

func toAlarmJSON(a linkforge.Alarm) alarmJSON {
	j := alarmJSON{
		ID:        strconv.FormatInt(a.ID, 10),
		Link:      a.Slug,
		State:     string(a.State),
		DueAt:     a.DueAt.UTC(),
		Attempt:   a.Attempt,
		Failures:  make([]alarmFailureJSON, len(a.Errors)),
		CreatedAt: a.CreatedAt.UTC(),
		UpdatedAt: a.UpdatedAt.UTC(),
	}
	for i, e := range a.Errors {
		j.Failures[i] = alarmFailureJSON{Attempt: e.Attempt, At: e.At.UTC()}
	}
	return j
}

// alarmListJSON is the body of GET /api/v1/alarms.
type alarmListJSON struct {
	Alarms []alarmJSON `json:"alarms"`
}

const (
	defaultAlarmLimit = 100
	maxAlarmLimit     = 1000
)

// listAlarms answers the tenant's alarms, earliest due first; state
// filters (schema AlarmState: scheduled, retrying, dead, done, and running).
func (s *Server) listAlarms(c echo.Context) error {
	state := linkforge.AlarmState(c.QueryParam("state"))
	if state != "" && !state.Valid() {
		return linkforge.InvalidField("state", "must be one of scheduled, running, retrying, dead, done")
	}
	limit := defaultAlarmLimit
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAlarmLimit {
			return linkforge.InvalidField("limit", fmt.Sprintf("must be an integer from 1 to %d", maxAlarmLimit))
		}
		limit = n
	}
	alarms, err := s.store.ListAlarms(c.Request().Context(), tenantID(c), state, limit)
	if err != nil {
		return fmt.Errorf("list alarms: %w", err)
	}
	out := alarmListJSON{Alarms: make([]alarmJSON, len(alarms))}
	for i, a := range alarms {
		out.Alarms[i] = toAlarmJSON(a)
	}
	return c.JSON(http.StatusOK, out)
}

// retryAlarm replays a dead alarm of the tenant: 202, for the alarm runs
// later, on whichever node claims it. Another tenant's or an unknown id
// answers 404; an alarm that is not dead 409, because replaying a scheduled
// or running alarm would reset its attempts behind the scheduler's back.
func (s *Server) retryAlarm(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return linkforge.Errorf(linkforge.ENotFound, "alarm not found")
	}
	a, err := s.store.RetryAlarm(c.Request().Context(), tenantID(c), id, s.now())
	if err != nil {
		return fmt.Errorf("retry alarm: %w", err)
	}
	s.rescheduleAlarm(&a.DueAt)
	return c.JSON(http.StatusAccepted, toAlarmJSON(a))
}
