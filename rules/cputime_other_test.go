//go:build !unix

package rules

import "time"

// processCPU is unknown here: the benchmark reports wall time only.
func processCPU() time.Duration { return 0 }
