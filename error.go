package linkforge

import (
	"errors"
	"fmt"
)

// Application error codes: the code member of every problem answer (schema
// Problem in web/openapi.json), and the one list of them. They are mapped to
// HTTP statuses in exactly one place, the web server's error handler; package
// client keeps a copy for programs that do not import the server (checked
// against this list by its tests).
const (
	EConflict      = "conflict"       // 409: the slug is taken
	EInternal      = "internal"       // 500: a bug or an outage; details are logged, not shown
	EInvalid       = "invalid"        // 400: bad input; nothing was written
	ENotFound      = "not_found"      // 404: absent, or another tenant's
	EUnauthorized  = "unauthorized"   // 401: no token, or an unknown or revoked one
	EGone          = "gone"           // 410: expired, or its click limit is reached
	ETooLarge      = "too_large"      // 413: request body over the limit
	ERateLimited   = "rate_limited"   // 429: too many requests for this token
	EUnavailable   = "unavailable"    // 503: the database cannot be reached
	EQuotaExceeded = "quota_exceeded" // 403: a tenant quota (max_links, webhooks) is reached
	EForbidden     = "forbidden"      // 403: the caller's role lacks the operation
	EBlockedTarget = "blocked_target" // 422: a target URL's host is on the operator's blocklist
	EUnsafeTarget  = "unsafe_target"  // 422: the operator's threat filter (--threat-dns) flags a target URL's host

	// Codes of the HTTP layer itself, about the request rather than the
	// resource.
	EMethodNotAllowed     = "method_not_allowed"     // 405: the Allow header lists the route's methods
	EUnsupportedMediaType = "unsupported_media_type" // 415: the body's Content-Type is not one the route reads
	ERequestTimeout       = "request_timeout"        // 408: the body did not arrive within the server's read timeout
)

// FieldError names one field of the input and what is wrong with it.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// Error is LinkForge's application error. Message is safe to show to the
// caller; the wrapped Err is for logs only.
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the code and a formatted caller-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidField returns an EInvalid error naming one field.
func InvalidField(field, detail string) *Error {
	return &Error{Code: EInvalid, Message: "invalid " + field + ": " + detail,
		Fields: []FieldError{{Field: field, Detail: detail}}}
}

// ErrorCode returns the code of the first *Error in err's chain, EInternal
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the caller-safe message of err's *Error, or a generic
// one for unknown errors, whose text may hold internals.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
