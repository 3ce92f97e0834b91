package password

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

var cheap = Params{Memory: 64, Time: 1, Threads: 1}

func TestHashVerify(t *testing.T) {
	h, err := Hash("s3cret", cheap)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Errorf("hash %q is not the PHC string of the parameters", h)
	}
	if ok, err := Verify(h, "s3cret"); !ok || err != nil {
		t.Errorf("Verify(right) = %v, %v", ok, err)
	}
	for _, wrong := range []string{"", "s3cre", "s3cret ", "S3cret"} {
		if ok, err := Verify(h, wrong); ok || err != nil {
			t.Errorf("Verify(%q) = %v, %v; want false, nil", wrong, ok, err)
		}
	}
	// A fresh salt every time: equal passwords have different hashes.
	if h2, _ := Hash("s3cret", cheap); h2 == h {
		t.Error("two hashes of one password are equal")
	}
	// The default parameters are what the PHC string names.
	d, err := Hash("x", DefaultParams)
	if err != nil || !strings.HasPrefix(d, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("default hash = %q, %v", d, err)
	}
}

func TestVerifyMalformed(t *testing.T) {
	good, _ := Hash("pw", cheap)
	parts := strings.Split(good, "$")
	with := func(i int, v string) string {
		p := append([]string{}, parts...)
		p[i] = v
		return strings.Join(p, "$")
	}
	tests := map[string]string{
		"empty":           "",
		"bcrypt":          "$2a$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
		"argon2i":         with(1, "argon2i"),
		"old version":     with(2, "v=16"),
		"no parameters":   with(3, ""),
		"memory too big":  with(3, "m=4194304,t=1,p=1"),
		"time zero":       with(3, "m=64,t=0,p=1"),
		"time too big":    with(3, "m=64,t=100,p=1"),
		"threads zero":    with(3, "m=64,t=1,p=0"),
		"salt not base64": with(4, "!!!"),
		"salt short":      with(4, "YWJj"),
		"key short":       with(5, "YWJj"),
		"missing part":    strings.Join(parts[:5], "$"),
		"extra part":      good + "$x",
	}
	for name, h := range tests {
		t.Run(name, func(t *testing.T) {
			ok, err := Verify(h, "pw")
			if ok || !errors.Is(err, ErrMalformed) {
				t.Errorf("Verify(%q) = %v, %v; want false, ErrMalformed", h, ok, err)
			}
		})
	}
}

func FuzzVerify(f *testing.F) {
	good, _ := Hash("pw", cheap)
	f.Add(good, "pw")
	f.Add("$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5", "x")
	f.Fuzz(func(t *testing.T, hash, pw string) {
		ok, err := Verify(hash, pw)
		if ok && err != nil {
			t.Fatalf("Verify = true with error %v", err)
		}
	})
}

func TestLimiterSlidingWindow(t *testing.T) {
	l := NewLimiter(3, time.Minute, 100)
	k := KeyFor(1, netip.MustParseAddr("192.0.2.1"))
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		if _, ok := l.Begin(k, t0.Add(time.Duration(i)*10*time.Second)); !ok {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	// Failures at 0, 10 and 20 s: at 30 s the fourth is refused until
	// the first leaves the window at 60 s.
	wait, ok := l.Begin(k, t0.Add(30*time.Second))
	if ok || wait != 30*time.Second {
		t.Fatalf("4th attempt: ok %v, wait %v; want refused for 30s", ok, wait)
	}
	// Another link, another client: their own counts.
	if _, ok := l.Begin(KeyFor(2, netip.MustParseAddr("192.0.2.1")), t0.Add(30*time.Second)); !ok {
		t.Error("another link was refused")
	}
	if _, ok := l.Begin(KeyFor(1, netip.MustParseAddr("192.0.2.2")), t0.Add(30*time.Second)); !ok {
		t.Error("another client was refused")
	}
	if _, ok := l.Begin(k, t0.Add(59*time.Second)); ok {
		t.Error("refusal ended before the first failure left the window")
	}
	if _, ok := l.Begin(k, t0.Add(60*time.Second)); !ok {
		t.Error("still refused once the first failure left the window")
	}
}

func TestLimiterSucceeded(t *testing.T) {
	l := NewLimiter(2, time.Minute, 100)
	k := KeyFor(1, netip.MustParseAddr("2001:db8::1"))
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	l.Begin(k, t0)                      // a failure
	l.Begin(k, t0.Add(time.Second))     // right:
	l.Succeeded(k, t0.Add(time.Second)) // taken back
	l.Begin(k, t0.Add(2*time.Second))   // a second failure
	if _, ok := l.Begin(k, t0.Add(3*time.Second)); ok {
		t.Error("2 failures of 2 allowed, and a third attempt was taken: the success reset or was counted wrongly")
	}
	// A success does not reset the failures before it.
	l2 := NewLimiter(2, time.Minute, 100)
	l2.Begin(k, t0)
	l2.Begin(k, t0.Add(time.Second))
	l2.Succeeded(k, t0.Add(time.Second))
	l2.Begin(k, t0.Add(2*time.Second))
	l2.Succeeded(k, t0.Add(2*time.Second))
	if _, ok := l2.Begin(k, t0.Add(3*time.Second)); !ok {
		t.Error("1 failure of 2, and the next attempt was refused")
	}
}

func TestKeyFor(t *testing.T) {
	a := KeyFor(7, netip.MustParseAddr("2001:db8:1:2:aaaa::1"))
	b := KeyFor(7, netip.MustParseAddr("2001:db8:1:2:bbbb::9"))
	c := KeyFor(7, netip.MustParseAddr("2001:db8:1:3::1"))
	if a != b {
		t.Errorf("two addresses of one /64 are different keys: %v, %v", a, b)
	}
	if a == c {
		t.Error("two /64s are one key")
	}
	if KeyFor(7, netip.MustParseAddr("::ffff:192.0.2.1")) != KeyFor(7, netip.MustParseAddr("192.0.2.1")) {
		t.Error("an IPv4-mapped address is not its IPv4 address")
	}
	if KeyFor(7, netip.MustParseAddr("192.0.2.1")) == KeyFor(7, netip.MustParseAddr("192.0.2.2")) {
		t.Error("two IPv4 addresses are one key")
	}
}

func TestLimiterBounded(t *testing.T) {
	l := NewLimiter(10, time.Minute, 50)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range 1000 {
		l.Begin(KeyFor(int64(i), netip.MustParseAddr("192.0.2.1")), now)
	}
	if n := l.Len(); n != 50 {
		t.Errorf("Len = %d after 1000 keys, want the bound 50", n)
	}
}

// BenchmarkVerifyDefault is the cost of one password check (and of one
// hash) with DefaultParams.
func BenchmarkVerifyDefault(b *testing.B) {
	h, err := Hash("correct horse battery staple", DefaultParams)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := Verify(h, "correct horse battery staple"); !ok {
			b.Fatal("no match")
		}
	}
}
