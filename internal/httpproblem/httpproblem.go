// Package httpproblem renders application errors (*linkforge.Error) as
// RFC 9457 problem details, with the HTTP status of their code. It is
// apart from web because the CLI prints the same objects: `linkforge
// import` answers with the summary POST /api/v1/import answers, whose
// failed lines are problems.
package httpproblem

import (
	"errors"
	"net/http"

	"github.com/linkforge/linkforge"
)

// Problem is an RFC 9457 problem details object. Code is an extension
// member: the application error code (linkforge.EInvalid, ...), stable for
// programs, where Title is for people.
type Problem struct {
	Type   string                 `json:"type"`
	Title  string                 `json:"title"`
	Status int                    `json:"status"`
	Detail string                 `json:"detail,omitempty"`
	Code   string                 `json:"code,omitempty"`
	Errors []linkforge.FieldError `json:"errors,omitempty"`
}

// Status maps an application error code to its HTTP status. This is the
// one place where that mapping lives. Every EInvalid is a 400, whether the
// body is malformed or well-formed but semantically wrong: one status for
// "fix your input", with the field named in errors.
func Status(code string) int {
	switch code {
	case linkforge.EInvalid:
		return http.StatusBadRequest
	case linkforge.EBlockedTarget, linkforge.EUnsafeTarget:
		return http.StatusUnprocessableEntity
	case linkforge.ENotFound:
		return http.StatusNotFound
	case linkforge.EConflict:
		return http.StatusConflict
	case linkforge.EUnauthorized:
		return http.StatusUnauthorized
	case linkforge.EGone:
		return http.StatusGone
	case linkforge.EQuotaExceeded, linkforge.EForbidden:
		return http.StatusForbidden
	case linkforge.ETooLarge:
		return http.StatusRequestEntityTooLarge
	case linkforge.EMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case linkforge.EUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case linkforge.ERequestTimeout:
		return http.StatusRequestTimeout
	case linkforge.ERateLimited:
		return http.StatusTooManyRequests
	case linkforge.EUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// Of is the problem a single request would answer for err, an
// application error, with its caller-safe message and fields.
func Of(err error) Problem {
	p := Problem{Type: "about:blank", Code: linkforge.ErrorCode(err), Detail: linkforge.ErrorMessage(err)}
	var ae *linkforge.Error
	if errors.As(err, &ae) {
		p.Errors = ae.Fields
	}
	p.Status = Status(p.Code)
	p.Title = http.StatusText(p.Status)
	return p
}
