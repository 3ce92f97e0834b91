package main

import (
	"context"
	"fmt"
	"time"

	"github.com/linkforge/linkforge/blocklist"
)

// blocklistReload is how often the --blocklist files are checked for a
// change (their modification time and size): a feed updated by cron is
// in force within a minute.
const blocklistReload = time.Minute

// loadBlocklist reads the --blocklist files; the error names the file and
// line that cannot be parsed.
func (a *app) loadBlocklist() (*blocklist.Files, error) {
	f := blocklist.NewFiles(a.cfg.Blocklists, a.log)
	if err := f.Load(); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return f, nil
}

// startBlocklist loads the --blocklist files and the operator's entries
// of st, and reads both again every blocklistReload until the node stops:
// the operator's writes on another node are in force here within that.
func (a *app) startBlocklist(lc *lifecycle, st store) (*blocklist.Files, error) {
	f, err := a.loadBlocklist()
	if err != nil {
		return nil, err
	}
	f.UseStore(st)
	if err := f.RefreshOperator(a.ctx); err != nil {
		return nil, err
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		f.Run(blocklistReload, nil, stop)
	}()
	lc.add("blocklist", 0, func(context.Context) error {
		close(stop)
		<-done
		return nil
	})
	return f, nil
}
