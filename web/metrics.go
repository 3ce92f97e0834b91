package web

import (
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/promreg"
)

// httpMetrics holds the request counter and latency histogram. Their
// children are looked up in a copy-on-write map rather than through
// WithLabelValues, which formats the status and hashes the labels on every
// call: the redirect path then observes a request without allocating or
// taking a lock.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	mu       sync.Mutex // serializes additions to children
	children atomic.Pointer[map[metricKey]metricChild]
}

type metricKey struct {
	route, method string
	status        int
}

type metricChild struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_http_requests_total",
			Help: "HTTP requests answered, by route template, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "linkforge_http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by route template and method.",
			// A warm redirect takes microseconds; the admin API milliseconds.
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method"}),
	}
	var err error
	if m.requests, err = promreg.Register(reg, m.requests); err != nil {
		return nil, err
	}
	if m.duration, err = promreg.Register(reg, m.duration); err != nil {
		return nil, err
	}
	empty := map[metricKey]metricChild{}
	m.children.Store(&empty)
	return m, nil
}

// observe counts one answered request. d < 0 counts it without a latency
// (requests echo's router answers by itself, whose start is unknown).
func (m *httpMetrics) observe(route, method string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	k := metricKey{route: route, method: knownMethod(method), status: status}
	ch, ok := (*m.children.Load())[k]
	if !ok {
		ch = m.add(k)
	}
	ch.requests.Inc()
	if d >= 0 {
		ch.duration.Observe(d.Seconds())
	}
}

func (m *httpMetrics) add(k metricKey) metricChild {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.children.Load()
	if ch, ok := old[k]; ok {
		return ch
	}
	ch := metricChild{
		requests: m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status)),
		duration: m.duration.WithLabelValues(k.route, k.method),
	}
	next := make(map[metricKey]metricChild, len(old)+1)
	for kk, v := range old {
		next[kk] = v
	}
	next[k] = ch
	m.children.Store(&next)
	return ch
}

// knownMethod bounds the method label: a client may send any token as a
// method, and each would otherwise become a time series.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

var nosniff = []string{"nosniff"}

// epoch is a time with a monotonic reading: time.Since(epoch) reads only
// the monotonic clock, where time.Now reads the wall clock too, which a
// latency does not need (a clock read is tens of nanoseconds of a
// redirect's few microseconds).
var epoch = time.Now()

// instrument wraps every route's handler, once, at registration: it sets
// X-Content-Type-Options, turns a panic into a 500, answers the handler's
// error through writeError, and observes the request in the metrics under
// its route template (never the raw path, whose slugs are unbounded).
func (s *Server) instrument(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Since(epoch) // the real clock on purpose: latency, not link time
		resp := c.Response()
		resp.Header()["X-Content-Type-Options"] = nosniff
		defer func() {
			if r := recover(); r != nil {
				if err, ok := r.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(r)
				}
				s.logger.Error("handler panicked", "error", fmt.Sprint(r),
					"method", c.Request().Method, "route", c.Path(), "stack", string(debug.Stack()))
				s.writeProblem(c, problem{Status: http.StatusInternalServerError,
					Code: linkforge.EInternal, Detail: "internal error"})
			}
			s.metrics.observe(c.Path(), c.Request().Method, resp.Status, time.Since(epoch)-start)
		}()
		if err := h(c); err != nil {
			s.writeError(c, err)
		}
		return nil
	}
}

// routerError is echo's HTTPErrorHandler. It only sees what echo's router
// answers without a handler of ours (405 Method Not Allowed): it answers
// through the same writeError and counts the request.
func (s *Server) routerError(err error, c echo.Context) {
	c.Response().Header()["X-Content-Type-Options"] = nosniff
	s.writeError(c, err)
	s.metrics.observe(c.Path(), c.Request().Method, c.Response().Status, -1)
}
