package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/linkforge/linkforge"
)

// A refused import file is named by its fields even when the error that
// says so comes wrapped (as the importer's errors do), not only bare.
func TestFileProblemNamesFieldsOfWrappedError(t *testing.T) {
	bad := linkforge.InvalidField("header", "no url column")
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"bare", bad},
		{"wrapped", fmt.Errorf("read csv: %w", bad)},
		{"joined", errors.Join(errors.New("line 1"), bad)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := fileProblem(tt.err), "header: no url column"; got != want {
				t.Errorf("fileProblem = %q, want %q", got, want)
			}
		})
	}
}
