package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// maxAPIAttempts bounds the retries of one API call answered 429: the admin
// API limits each token to 20 requests per second (burst 40).
const maxAPIAttempts = 20

// api sends one admin API request with the instance's token and decodes a
// 2xx JSON answer into out (nil: discard). A 429 is retried after its
// Retry-After.
func (in *instance) api(ctx context.Context, method, path string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, in.base+path, bytes.NewReader(payload))
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		req.Header.Set("Authorization", "Bearer "+in.token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := in.b.client.Do(req)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("%s %s: read answer: %w", method, path, err)
		}
		if resp.StatusCode == http.StatusTooManyRequests && attempt < maxAPIAttempts {
			wait := time.Second
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = time.Duration(s) * time.Second
			}
			select {
			case <-time.After(wait):
				continue
			case <-ctx.Done():
				return fmt.Errorf("%s %s: %w", method, path, ctx.Err())
			}
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
		return nil
	}
}

// createLinks creates links through the API (--target), a few at a time:
// the rate limit, not the concurrency, bounds how fast this goes.
func (in *instance) createLinks(ctx context.Context, links []benchLink) error {
	const parallel = 4
	in.b.log.Info("creating links through the API", "links", len(links),
		"at_least", (time.Duration(len(links)/20) * time.Second).String())
	jobs := make(chan benchLink)
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for l := range jobs {
				if err := in.api(ctx, http.MethodPost, "/api/v1/links", map[string]any{"slug": l.slug, "url": l.url}, nil); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var err error
feed:
	for _, l := range links {
		select {
		case jobs <- l:
		case err = <-errs:
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err != nil {
		return err
	}
	return <-errs // nil once closed and empty
}

// linkListJSON is a page of GET /api/v1/links.
type linkListJSON struct {
	Links []struct {
		Slug   string `json:"slug"`
		Clicks int64  `json:"clicks"`
	} `json:"links"`
	NextCursor string `json:"next_cursor"`
}

// apiClicks returns the flushed click totals (the links' `clicks`) of the
// given slugs, paging through the tenant's links newest first until every
// slug is found.
func (in *instance) apiClicks(ctx context.Context, links []benchLink) (map[string]int64, error) {
	want := make(map[string]bool, len(links))
	for _, l := range links {
		want[l.slug] = true
	}
	clicks := make(map[string]int64, len(links))
	cursor := ""
	for {
		var page linkListJSON
		path := "/api/v1/links?limit=1000"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := in.api(ctx, http.MethodGet, path, nil, &page); err != nil {
			return nil, err
		}
		for _, l := range page.Links {
			if want[l.Slug] {
				clicks[l.Slug] = l.Clicks
			}
		}
		if len(clicks) == len(want) || page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(clicks) != len(want) {
		return nil, fmt.Errorf("list links: %d of the %d links not found", len(want)-len(clicks), len(want))
	}
	return clicks, nil
}

// statsJSON is the answer of GET /api/v1/links/{slug}/stats.
type statsJSON struct {
	Total   int64 `json:"total"`
	Buckets []struct {
		Start time.Time `json:"start"`
		Count int64     `json:"count"`
	} `json:"buckets"`
}

// minuteBuckets returns the link's per-minute counts in [from, to), the
// minutes without clicks left out.
func (in *instance) minuteBuckets(ctx context.Context, slug string, from, to time.Time) (map[time.Time]int64, error) {
	q := url.Values{}
	q.Set("interval", "minute")
	q.Set("from", from.UTC().Format(time.RFC3339))
	q.Set("to", to.UTC().Format(time.RFC3339))
	var st statsJSON
	if err := in.api(ctx, http.MethodGet, "/api/v1/links/"+slug+"/stats?"+q.Encode(), nil, &st); err != nil {
		return nil, err
	}
	out := make(map[time.Time]int64)
	for _, bk := range st.Buckets {
		if bk.Count > 0 {
			out[bk.Start] = bk.Count
		}
	}
	return out, nil
}
