package linkcounter

import "github.com/linkforge/linkforge/classify"

// previewAgents are the fragments IsPreviewAgent looks for: the list lives
// in package classify (classify.PreviewAgents), beside the rest of the
// User-Agent work, so that the redirect's memo of per-agent answers
// (classify.LookupAgent) covers the preview check too.
var previewAgents = classify.PreviewAgents[:]

// IsPreviewAgent reports whether userAgent belongs to a link-preview fetcher
// or a search crawler (see classify.PreviewAgents). Such requests are
// redirected like any other but not counted as clicks; the web handler
// reports them with Counter.Skipped(linkforge.SkipPreview). It does not
// allocate. It is classify.IsPreviewAgent, kept here for callers that have
// no classify import; the redirect path asks classify.LookupAgent, which
// remembers the answer per agent.
func IsPreviewAgent(userAgent string) bool { return classify.IsPreviewAgent(userAgent) }
