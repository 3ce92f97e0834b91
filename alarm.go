package linkforge

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// AlarmState is the state of a durable alarm. It is a typed string that the
// schema constrains with a CHECK, so a typo cannot become a state nobody
// handles. See docs/adr/003-alarms.md for the transitions.
type AlarmState string

// The states of an alarm.
const (
	// AlarmScheduled waits for its due time (first run, after a reschedule
	// or after a replay).
	AlarmScheduled AlarmState = "scheduled"
	// AlarmRunning is claimed by a node until its lease expires.
	AlarmRunning AlarmState = "running"
	// AlarmRetrying failed at least once and waits for its backoff.
	AlarmRetrying AlarmState = "retrying"
	// AlarmDead failed on its last retry. It is kept, listed and alerted on,
	// and runs again only when replayed (RetryAlarm).
	AlarmDead AlarmState = "dead"
	// AlarmDone ran to completion.
	AlarmDone AlarmState = "done"
)

// Valid reports whether s is one of the known states.
func (s AlarmState) Valid() bool {
	switch s {
	case AlarmScheduled, AlarmRunning, AlarmRetrying, AlarmDead, AlarmDone:
		return true
	}
	return false
}

// AlarmError is the error of one failed attempt, kept with every other: the
// last error alone rarely explains why an alarm died.
type AlarmError struct {
	Attempt int       `json:"attempt"` // the run that failed, from 1
	At      time.Time `json:"at"`
	Error   string    `json:"error"`
}

// Alarm is the durable expiry alarm of one link: at most one per link, kept
// in the main store in the same transactions as the link itself.
type Alarm struct {
	ID       int64
	LinkID   int64
	TenantID int64
	// Slug is the link's slug, filled by ListAlarms and RetryAlarm (the
	// admin API names links by slug); ClaimAlarms leaves it empty.
	Slug  string
	DueAt time.Time
	State AlarmState
	// Attempt counts the runs started since the alarm was last scheduled
	// (created, moved or replayed). The run in progress has retry count
	// Attempt-1.
	Attempt int
	// Errors holds every failed attempt's error, oldest first, never nil.
	// Moving or replaying an alarm keeps its history.
	Errors []AlarmError
	// LeaseOwner and LeaseExpiresAt are set while the alarm is running.
	LeaseOwner     string
	LeaseExpiresAt *time.Time
	// LeaseSeq numbers the claims of the alarm and never goes back. With
	// LeaseOwner it names one claim: a handler whose claim was superseded
	// (its lease expired and another node took the alarm, or the link's
	// expiry moved and the alarm was claimed again) cannot complete or
	// fail the newer one.
	LeaseSeq  int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RetryCount is the retry count of the run in progress or last run: 0 for
// the first run.
func (a *Alarm) RetryCount() int { return max(0, a.Attempt-1) }

// Lease returns the claim that a handler completes or fails.
func (a *Alarm) Lease() AlarmLease {
	return AlarmLease{AlarmID: a.ID, Owner: a.LeaseOwner, Seq: a.LeaseSeq}
}

// AlarmLease names one claim of an alarm.
type AlarmLease struct {
	AlarmID int64
	Owner   string
	Seq     int64
}

// AlarmFailure is what FailAlarms records of a failed run.
type AlarmFailure struct {
	Lease AlarmLease
	At    time.Time
	Error string
	// Dead ends the alarm; otherwise it is retried at NextDue.
	Dead    bool
	NextDue time.Time
}

// AlarmStore keeps the links' expiry alarms. The link methods of LinkStore
// maintain them in the same transactions: CreateLink with an ExpiresAt
// schedules one, UpdateLink moves it (or deletes it when ExpiresAt is
// cleared), DeleteLink deletes it.
//
// Times are passed in by the caller (the scheduler's clock) rather than read
// by the store, so that leases, due times and error times all come from one
// clock.
type AlarmStore interface {
	// ClaimAlarms claims up to limit alarms, earliest due first, that are
	// due at now (scheduled or retrying with DueAt <= now) or whose lease
	// expired (running with LeaseExpiresAt <= now), in one statement: each
	// becomes running, leased to owner until now+lease, with Attempt and
	// LeaseSeq incremented. Taking over an expired lease records an error
	// for the attempt that lost it. Concurrent callers never claim the same
	// alarm.
	ClaimAlarms(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]Alarm, error)
	// ExpireLinks re-reads the links in one transaction and returns those
	// whose ExpiresAt is at or before now, with ExpiredAt set to now unless
	// it was already set for the current ExpiresAt. Links that were deleted,
	// whose expiry was cleared or moved past now, are left out. Calling it
	// again changes nothing.
	ExpireLinks(ctx context.Context, linkIDs []int64, now time.Time) ([]Link, error)
	// CompleteAlarms marks done the alarms whose claim is still the given
	// lease, and returns how many were. The others were taken over, moved
	// or deleted meanwhile and are left alone.
	CompleteAlarms(ctx context.Context, leases []AlarmLease, now time.Time) (int, error)
	// FailAlarms records failed runs in one statement: each alarm whose
	// claim is still the failure's Lease gets the error appended to its
	// errors and becomes retrying at NextDue, or dead. It returns the ids
	// of the alarms it changed; the others were taken over, moved or
	// deleted meanwhile and are left alone.
	FailAlarms(ctx context.Context, failures []AlarmFailure) ([]int64, error)
	// NextAlarmDue returns the earliest time at which an alarm becomes
	// claimable: the due time of a scheduled or retrying alarm, or the lease
	// expiry of a running one. ok is false when there is none.
	NextAlarmDue(ctx context.Context) (due time.Time, ok bool, err error)
	// ListAlarms returns up to limit of the tenant's alarms in state (""
	// for every state), earliest due first. A limit <= 0 means 100; at most
	// 1000 are returned.
	ListAlarms(ctx context.Context, tenantID int64, state AlarmState, limit int) ([]Alarm, error)
	// RetryAlarm replays the tenant's dead alarm: it becomes scheduled at
	// now with Attempt 0, keeping its errors. Another tenant's or an unknown
	// alarm answers ENotFound; an alarm that is not dead EConflict.
	RetryAlarm(ctx context.Context, tenantID, alarmID int64, now time.Time) (Alarm, error)
}

// AlarmStateFor is the state a link's alarm starts in when the link is
// written with an ExpiresAt: done if ExpiredAt already records that expiry
// (an imported link that expired before), scheduled otherwise. The stores
// use it so that both backends decide alike.
func AlarmStateFor(l *Link) AlarmState {
	if l.ExpiresAt != nil && l.ExpiredAt != nil && !l.ExpiredAt.Before(*l.ExpiresAt) {
		return AlarmDone
	}
	return AlarmScheduled
}

// Bounds of ListAlarms' limit, and of ListDeliveries'.
const (
	DefaultAlarmPage = 100
	MaxAlarmPage     = 1000
)

// CompareAlarmsDue orders alarms earliest due first, then by id: the order
// of ClaimAlarms and ListAlarms.
func CompareAlarmsDue(a, b Alarm) int {
	if c := a.DueAt.Compare(b.DueAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// CheckClaim refuses a claim (of alarms or deliveries) without an owner or
// with a lease or limit that is not positive: a caller bug.
func CheckClaim(owner string, lease time.Duration, limit int) error {
	if owner == "" || limit <= 0 || lease <= 0 {
		return fmt.Errorf("owner %q, lease %v, limit %d: need an owner and positive lease and limit", owner, lease, limit)
	}
	return nil
}

// CheckAlarmFilter refuses an unknown state filter of ListAlarms; "" (every
// state) passes.
func CheckAlarmFilter(state AlarmState) error {
	if state != "" && !state.Valid() {
		return InvalidField("state", fmt.Sprintf("unknown alarm state %q", state))
	}
	return nil
}

// AlarmNotDead is RetryAlarm's conflict: only a dead alarm is replayed.
func AlarmNotDead(id int64, state AlarmState) *Error {
	return Errorf(EConflict, "alarm %d is %s, not dead: only a dead alarm can be retried", id, state)
}

// Next is the state a failure leaves its alarm in, and when it is due
// again: dead and never, or retrying at NextDue.
func (f *AlarmFailure) Next() (AlarmState, *time.Time) {
	if f.Dead {
		return AlarmDead, nil
	}
	next := f.NextDue
	return AlarmRetrying, &next
}

// AlarmErrorTime is how an AlarmError's time is kept in the stored errors
// JSON: RFC 3339 in UTC, to the microsecond, formatted here rather than by
// the database, whose text form depends on its session (PostgreSQL's
// TimeZone).
func AlarmErrorTime(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
}

// DecodeAlarmErrors reads the stored errors JSON of an alarm: never nil,
// times in UTC.
func DecodeAlarmErrors(b []byte) ([]AlarmError, error) {
	errs := []AlarmError{}
	if err := json.Unmarshal(b, &errs); err != nil {
		return nil, fmt.Errorf("decode errors: %w", err)
	}
	for i := range errs {
		errs[i].At = errs[i].At.UTC()
	}
	if errs == nil {
		errs = []AlarmError{}
	}
	return errs, nil
}
