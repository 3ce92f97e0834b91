package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
)

// The durable reference holds each GET's 302 for a group commit that is
// on disk (a record in the gate's file), lets HEAD through uncommitted, and
// group-commits concurrent GETs rather than one record each.
func TestDurableGate(t *testing.T) {
	g, err := newDurableGate(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	srv := httptest.NewServer(newGatedReferenceServer(testRoutes, g).Handler)
	defer srv.Close()
	client := noFollow(srv.Client())

	const gets = 64
	var wg sync.WaitGroup
	statuses := make([]int, gets)
	for i := range gets {
		wg.Go(func() {
			resp, _ := mustRequest(t, client, http.MethodGet, srv.URL+"/hot")
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusFound {
			t.Fatalf("GET %d: status %d, want 302", i, s)
		}
	}
	if n := g.acked.Load(); n != gets {
		t.Errorf("GETs released by commits: %d, want %d", n, gets)
	}
	commits := g.commits.Load()
	if commits < 1 || commits > gets {
		t.Errorf("commits for %d GETs: %d", gets, commits)
	}
	t.Logf("%d GETs in %d group commits", gets, commits)
	data, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatal(err)
	}
	if records := bytes.Count(data, []byte{1}); int64(records) != commits {
		t.Errorf("records in the gate's file: %d, want one per commit (%d)", records, commits)
	}

	resp, _ := mustRequest(t, client, http.MethodHead, srv.URL+"/hot")
	if resp.StatusCode != http.StatusFound || g.commits.Load() != commits {
		t.Errorf("HEAD: status %d, commits %d → %d: want 302 and no commit", resp.StatusCode, commits, g.commits.Load())
	}
	resp, _ = mustRequest(t, client, http.MethodGet, srv.URL+"/nope")
	if resp.StatusCode != http.StatusNotFound || g.commits.Load() != commits {
		t.Errorf("GET of an unknown slug: status %d, commits %d → %d: want 404 and no commit", resp.StatusCode, commits, g.commits.Load())
	}
}

// A commit that cannot be written answers 503: the gate never lets a 302
// out for a record that is not on disk.
func TestDurableGateWriteFails(t *testing.T) {
	g, err := newDurableGate(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	ro, err := os.Open(g.path) // read-only: every write fails
	if err != nil {
		t.Fatal(err)
	}
	g.f.Close()
	g.f = ro // before any request: the committer reads it after the first wake
	srv := httptest.NewServer(newGatedReferenceServer(testRoutes, g).Handler)
	defer srv.Close()
	resp, _ := mustRequest(t, noFollow(srv.Client()), http.MethodGet, srv.URL+"/hot")
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("GET with a failing commit: status %d, want 503", resp.StatusCode)
	}
	if n := g.acked.Load(); n != 0 {
		t.Errorf("GETs acknowledged by failed commits: %d, want 0", n)
	}
}
