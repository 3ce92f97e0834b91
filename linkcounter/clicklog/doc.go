// Package clicklog is a node's click journal: the click counts the node has
// acknowledged and not yet flushed (or not yet purged), held in memory and
// made durable by an append-only, checksummed log in the data dir. Package
// linkcounter is its one user: its actors, group commits, flushes and
// limits decide what to write; this package decides how it is kept, and
// gives it back after a crash (docs/adr/014-click-log.md).
//
// # Why a log
//
// A counted redirect answers only once its click is durable. A SQLite
// journal made that a transaction per group commit and took most of the
// server's CPU; a log makes it one write, and at SyncEveryCommit one
// fdatasync, per group commit, however many clicks joined it. The truth
// while the process runs is the state in memory; the log only has to
// rebuild it.
//
// # Files
//
// In dataDir/clicklog (0700, files 0600):
//
//	NNNNNNNNNNNNNNNNNNNN.log   segments, appended to in sequence order;
//	                           only the newest is ever written
//	snap-NNNNNNNNNNNNNNNNNNNN  the state at the start of segment N: every
//	                           segment below N is in it
//
// and dataDir/journal.db.lock (LockName), the lock of the open journal.
// Segments are preallocated (zero-filled and synced before use), so that a
// commit's fdatasync writes the record's pages and never the file's size
// or block map; a closed segment is cut to its records. A compactor, off
// the commit path, folds closed segments into a new snapshot once they
// outgrow the last one.
//
// # Format
//
// A frame is a uint32 little-endian payload length, the payload's CRC32C
// (Castagnoli), and the payload: a version byte, flags, the record's
// distinct dimension values once each, then sections of varints (link ids
// and buckets delta-coded): increments, dimension increments, flush marks,
// dimension marks, drops and hour marks (format.go). A click adds one cell
// per public dimension under its traffic, (dimension, traffic, value), the
// row the flush stores, and its minute's automated part; frames of
// versions 1 to 3 (23 cells a click) and 4 (no source dimension) are
// converted as they are replayed (oldformat.go). Marks are absolute and
// only ever raise a row's flushed count, so a replayed or older mark is
// harmless. A snapshot is the same frames, applied to an empty state: one
// format, one decoder, and one function that changes the state
// (logState.apply), at commit and at replay alike, so that a replayed log
// gives exactly the state its commits gave.
//
// # Recovery
//
// Open replays the newest snapshot and the segments from its sequence on.
// A bad frame (torn, or a checksum mismatch) at the end of the newest
// segment is what a crash mid-write leaves: the segment is cut there, with
// a warning. Anywhere else it is damage, and Open refuses to start rather
// than count on from a state it cannot rebuild. A SQLite journal left by
// the previous release (dataDir/journal.db) is imported into the first
// snapshot on first open, then renamed journal.db.migrated.
package clicklog
