package clicklog

// WriteLegacyJournal is writeLegacyJournal for the external tests
// (clicklog_test), which drive the counter over an imported journal.
var WriteLegacyJournal = writeLegacyJournal
