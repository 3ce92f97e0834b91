package links

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkforge/linkforge"
)

const (
	// bulkChunk is the number of links stored per transaction: a bad item
	// never rolls back the others (a taken slug inserts nothing), and a
	// chunk keeps SQLite's single writer for tens of milliseconds, not
	// the whole batch.
	bulkChunk = 250
	// BulkHashWorkers is how many of one batch's passwords are hashed at
	// once. The hash slots are shared by every request of every tenant
	// and served in arrival order: a batch that queued all of its (up to
	// 1,000) hashes at once would make every create behind it wait for
	// all of them. With two at a time, concurrent batches and single
	// creates take turns.
	BulkHashWorkers = 2
)

// Result is the outcome of one link of CreateMany: Err is nil and Link
// the stored link, or Err says why it was not stored, as Create would
// have said it.
type Result struct {
	Link linkforge.Link
	Err  error
}

// bulkItem is one link of a batch on its way to the store.
type bulkItem struct {
	index     int
	link      linkforge.Link
	password  string
	generated bool // the slug is the service's: regenerated on a collision
}

// CreateMany creates the links of a batch, answering each, in order, as
// Create would: a slug taken by anyone, or by an earlier link of the
// batch, is an EConflict of that link alone. The links are stored
// bulkChunk at a time, one transaction each; a chunk's failure is the
// same error for each of its links, while the earlier chunks stay stored.
// progress, if set, is called after each password hashed and each chunk
// stored (web pushes its write deadline on). An error, which stores
// nothing, is a password hash that failed (ctx ended, or hashing is
// broken).
func (s *Service) CreateMany(ctx context.Context, batch []NewLink, progress func()) ([]Result, error) {
	if progress == nil {
		progress = func() {}
	}
	results := make([]Result, len(batch))
	items, taken := s.bulkItems(ctx, batch, results)
	if err := s.hashBulkPasswords(ctx, items, progress); err != nil {
		return nil, err
	}
	var earliest *time.Time
	for start := 0; start < len(items); start += bulkChunk {
		chunk := items[start:min(start+bulkChunk, len(items))]
		for _, l := range s.storeChunk(ctx, chunk, taken, results) {
			s.written(linkforge.LinkCreated, l)
			if e := l.ExpiresAt; e != nil && (earliest == nil || e.Before(*earliest)) {
				earliest = e
			}
		}
		progress()
	}
	// The scheduler only needs the earliest new due time: it re-reads
	// the others when it wakes.
	s.reschedule(earliest)
	return results, nil
}

// bulkItems answers the batch's repeated explicit slugs in results and
// returns the other links, with a slug generated for those without one,
// and the batch's slugs.
func (s *Service) bulkItems(ctx context.Context, batch []NewLink, results []Result) ([]bulkItem, map[string]bool) {
	var (
		items []bulkItem
		taken = make(map[string]bool, len(batch)) // the batch's slugs
	)
	for i, nl := range batch {
		it := bulkItem{index: i, link: nl.Link, password: nl.Password}
		if err := linkforge.CheckTargets(&it.link, s.targets); err != nil {
			results[i].Err = err
			continue
		}
		if s.threats != nil {
			if err := s.threats.CheckNew(ctx, &it.link); err != nil {
				results[i].Err = err
				continue
			}
		}
		if slug := it.link.Slug; slug != "" {
			if taken[slug] {
				results[i].Err = slugTaken(slug, nil)
				continue
			}
			taken[slug] = true
		}
		items = append(items, it)
	}
	for i := range items {
		if items[i].link.Slug == "" {
			items[i].generated = true
			items[i].link.Slug = newBatchSlug(taken)
		}
	}
	return items, taken
}

// storeChunk stores a chunk of items, answering each in results, and
// returns the links created. A generated slug that collides gets a new
// one, none of taken (the batch's slugs), as Create does, up to
// slugAttempts tries.
func (s *Service) storeChunk(ctx context.Context, pending []bulkItem, taken map[string]bool, results []Result) []linkforge.Link {
	var created []linkforge.Link
	for attempt := 1; len(pending) > 0; attempt++ {
		links := make([]linkforge.Link, len(pending))
		for k, it := range pending {
			links[k] = it.link
		}
		stored, err := s.store.CreateLinks(ctx, links)
		if err != nil {
			// The chunk's transaction rolled back: none of its links
			// exists. One error, the same value, for the chunk.
			failed := fmt.Errorf("bulk create links: %d links: %w", len(links), err)
			for _, it := range pending {
				results[it.index].Err = failed
			}
			return created
		}
		var retry []bulkItem
		for k, it := range pending {
			r := stored[k]
			switch {
			case r.Err == nil:
				results[it.index] = Result{Link: r.Link}
				created = append(created, r.Link)
			case linkforge.ErrorCode(r.Err) == linkforge.EConflict && it.generated && attempt < slugAttempts:
				it.link.Slug = newBatchSlug(taken)
				retry = append(retry, it)
			case linkforge.ErrorCode(r.Err) == linkforge.EConflict && !it.generated:
				results[it.index].Err = slugTaken(it.link.Slug, r.Err)
			default:
				results[it.index].Err = fmt.Errorf("bulk create links: %w", r.Err)
			}
		}
		pending = retry
	}
	return created
}

// hashBulkPasswords hashes the passwords of items, BulkHashWorkers at a
// time, calling progress after each: a batch of a thousand password links
// takes longer to hash than a server's write timeout.
func (s *Service) hashBulkPasswords(ctx context.Context, items []bulkItem, progress func()) error {
	var todo []*bulkItem
	for i := range items {
		if items[i].password != "" {
			todo = append(todo, &items[i])
		}
	}
	var (
		wg     sync.WaitGroup
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		werr   error
	)
	for range min(BulkHashWorkers, len(todo)) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(todo) {
					return
				}
				it := todo[i]
				h, err := s.hash(ctx, it.password)
				it.password = ""
				if err != nil {
					failed.Store(true)
					mu.Lock()
					werr = errors.Join(werr, err)
					mu.Unlock()
					return
				}
				it.link.PasswordHash = h
				progress()
			}
		})
	}
	wg.Wait()
	if werr != nil {
		// Either way, no link of the batch is stored.
		return fmt.Errorf("bulk create links: hash passwords: %w", werr)
	}
	return nil
}

// newBatchSlug returns a generated slug that taken does not hold, and
// records it.
func newBatchSlug(taken map[string]bool) string {
	for {
		s := linkforge.NewSlug()
		if !taken[s] {
			taken[s] = true
			return s
		}
	}
}
