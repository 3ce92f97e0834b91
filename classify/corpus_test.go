package classify

import (
	"bufio"
	"os"
	"testing"
)

// TestCorpus classifies the labelled corpus of testdata/corpus (see its
// SOURCES.md), reports the error both ways and bounds it: at most 1 % of
// browsers counted automated (a person lost from the human count is the
// worse error), at most 5 % of programs counted human.
func TestCorpus(t *testing.T) {
	for _, tc := range []struct {
		file      string
		automated bool
		minLines  int
		maxError  float64
	}{
		{"testdata/corpus/browsers.txt", false, 300, 0.01},
		{"testdata/corpus/automated.txt", true, 300, 0.05},
	} {
		agents := readLines(t, tc.file)
		if len(agents) < tc.minLines {
			t.Fatalf("%s: %d agents, want at least %d", tc.file, len(agents), tc.minLines)
		}
		wrong := 0
		for _, ua := range agents {
			if IsAutomatedAgent(ua) != tc.automated {
				wrong++
				t.Logf("%s: misclassified: %q", tc.file, ua)
			}
		}
		rate := float64(wrong) / float64(len(agents))
		t.Logf("%s: %d of %d misclassified (%.2f %%, bound %.0f %%)", tc.file, wrong, len(agents), 100*rate, 100*tc.maxError)
		if rate > tc.maxError {
			t.Errorf("%s: %.2f %% misclassified, more than %.0f %%", tc.file, 100*rate, 100*tc.maxError)
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
