package linkforge

import "crypto/rand"

const slugAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// SlugLength is the length of generated slugs: 62^7 ≈ 3.5e12 slugs, so that a
// collision (retried by the caller) stays rare up to billions of links.
const SlugLength = 7

// NewSlug returns SlugLength random base62 characters from crypto/rand,
// without modulo bias.
func NewSlug() string {
	var out [SlugLength]byte
	var buf [16]byte
	n := 0
	for n < SlugLength {
		rand.Read(buf[:])
		for _, c := range buf {
			// 248 = 4*62: values at or above it would favour the first letters.
			if c >= 248 {
				continue
			}
			out[n] = slugAlphabet[c%62]
			n++
			if n == SlugLength {
				break
			}
		}
	}
	return string(out[:])
}
