package client

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzDecodeLive: any frame of the feed decodes or is refused, never
// panics; a decoded clicks message keeps its slug and counts.
func FuzzDecodeLive(f *testing.F) {
	for _, s := range []string{
		`{"type":"clicks","link":"abc","bucket":"2026-11-30T08:01:00Z","count":42,"total":1234}`,
		`{"type":"expired","link":"abc","at":"2026-11-30T08:01:00Z"}`,
		`{"type":"link","op":"created","link":{"slug":"abc","url":"https://example.com/","tags":[]}}`,
		`{"type":"link","op":"deleted","link":{"id":"7","slug":"abc"}}`,
		`{"type":"clicks","link":7}`,
		`[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := decodeLive(data)
		if err != nil {
			return
		}
		if !bytes.Equal(ev.Raw, data) {
			t.Errorf("Raw %q, want the frame %q", ev.Raw, data)
		}
		if ev.Link != nil && ev.Slug != ev.Link.Slug {
			t.Errorf("Slug %q, Link.Slug %q", ev.Slug, ev.Link.Slug)
		}
	})
}

func TestDecodeLive(t *testing.T) {
	ev, err := decodeLive([]byte(`{"type":"clicks","link":"abc","bucket":"2026-11-30T08:01:00Z","count":42,"total":1234}`))
	if err != nil || ev.Type != LiveClicks || ev.Slug != "abc" || ev.Count != 42 || ev.Total == nil || *ev.Total != 1234 ||
		!ev.Bucket.Equal(time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)) || ev.Link != nil {
		t.Errorf("clicks: %+v, %v", ev, err)
	}
	ev, err = decodeLive([]byte(`{"type":"link","op":"updated","link":{"slug":"abc","url":"https://example.com/"}}`))
	if err != nil || ev.Type != LiveLink || ev.Op != "updated" || ev.Slug != "abc" || ev.Link == nil || ev.Link.URL != "https://example.com/" {
		t.Errorf("link: %+v, %v", ev, err)
	}
}

// FuzzReadError: any answer body and Retry-After becomes an *Error with
// the answer's status, whatever the document claims.
func FuzzReadError(f *testing.F) {
	f.Add(409, "application/problem+json", `{"type":"about:blank","title":"Conflict","status":409,"code":"conflict","errors":[{"field":"slug","detail":"taken"}]}`, "")
	f.Add(429, "application/problem+json", `{"title":"Too Many Requests","status":200}`, "3")
	f.Add(503, "text/html", `<html>`, "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add(500, "application/json", `{"status":"x"}`, "-1")
	f.Fuzz(func(t *testing.T, status int, contentType, body, retryAfter string) {
		if status < 100 || status > 999 {
			return
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		resp.Header.Set("Content-Type", contentType)
		resp.Header.Set("Retry-After", retryAfter)
		e := readError(resp, http.MethodGet, "/api/v1/x")
		if e.Status != status || e.RetryAfter < 0 || e.Error() == "" {
			t.Errorf("readError = %+v", e)
		}
	})
}
