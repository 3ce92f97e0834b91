package expiry

import "context"

// InfoFrom returns the Info of the alarm run that called the hook with ctx.
func InfoFrom(ctx context.Context) (Info, bool) {
	i, ok := ctx.Value(infoKey{}).(Info)
	return i, ok
}
