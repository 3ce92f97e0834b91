package porting

import (
	"io"

	"github.com/linkforge/linkforge"
)

// MaxRecordBytes bounds one record of a file: a CSV row (its quoted line
// breaks included) or a JSON array element, 1 MiB. No valid link comes
// near it (a URL is at most 4 KiB); the parsers buffer a record whole, so
// without it one record of the size of the body would be held several
// times over.
const MaxRecordBytes = 1 << 20

// recordLimit is the reader between a body and its parser that keeps a
// record within MaxRecordBytes. The parser marks where each record starts
// (its reader's InputOffset); a read asked for past mark+max means the
// record is not over yet and is too large, and ends the file with an
// ETooLarge error (the parser cannot find where the record would end
// without reading it). Reads are cut so that they never pass mark+max+1:
// whatever the parser buffers ahead also counts, so its buffers stay
// within the cap too.
type recordLimit struct {
	r    io.Reader
	max  int64
	n    int64 // bytes read so far
	mark int64 // the offset where the current record starts
}

func newRecordLimit(r io.Reader) *recordLimit {
	return &recordLimit{r: r, max: MaxRecordBytes}
}

// start marks the offset of the next record, as its parser counts.
func (l *recordLimit) start(offset int64) { l.mark = offset }

func (l *recordLimit) Read(p []byte) (int, error) {
	room := l.mark + l.max + 1 - l.n
	if room <= 0 {
		return 0, errRecordTooLarge
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

var errRecordTooLarge = linkforge.Errorf(linkforge.ETooLarge,
	"a record (a CSV row or a JSON element) is over %d KiB", MaxRecordBytes>>10)
