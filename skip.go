package linkforge

// Skip reasons: why a redirect was answered without counting a click. The
// web handler reports them to a counter that keeps a metric of such
// redirects (redirect.SkipRecorder); they are that metric's label values.
const (
	SkipHead    = "head"    // a HEAD request
	SkipPreview = "preview" // a link-preview fetcher or a crawler (classify.IsPreviewAgent)
)
