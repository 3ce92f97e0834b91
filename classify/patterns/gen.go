//go:build ignore

// Command gen turns isbot's User-Agent patterns (patterns/isbot.txt, one
// JavaScript regular expression a line, vendored from the npm package
// "isbot", Unlicense) into classify/bots_gen.go, which the package compiles
// once at start-up.
//
// isbot's patterns are JavaScript regular expressions; Go's regexp (RE2) has
// no lookaround. Each pattern of the form (?<!A|B)core(?!C) is split here
// into its core, which RE2 compiles, a list of literal strings that must not
// end just before a match (the lookbehind) and an expression that must not
// match just after it (the lookahead): the runtime checks both around every
// match of the core. A lookaround anywhere else fails the generation, so a
// refresh that brings one in is noticed rather than silently mistranslated.
//
// For each pattern it also extracts a literal that every match contains (the
// longest literal of the top-level concatenation), so that the runtime
// scans the header once for all literals and runs an expression only when
// its literal is present.
//
// Usage (from classify/, see patterns/refresh.sh):
//
//	go run ./patterns/gen.go                       # isbot.txt -> bots_gen.go
//	go run ./patterns/gen.go -extract index.js     # isbot's index.js -> isbot.txt
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
)

func main() {
	extract := flag.String("extract", "", "isbot's index.js: write its patterns to -list instead of generating Go")
	version := flag.String("version", "", "with -extract: the isbot version, recorded in the list's first line")
	list := flag.String("list", "patterns/isbot.txt", "the pattern list")
	out := flag.String("o", "bots_gen.go", "the Go file to write")
	flag.Parse()
	if *extract != "" {
		if err := extractList(*extract, *version, *list); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := generate(*list, *out); err != nil {
		log.Fatal(err)
	}
}

// extractList reads the pattern isbot's build compiles (the string literal
// assigned to fullPattern) and writes its alternatives one a line.
func extractList(jsPath, version, listPath string) error {
	js, err := os.ReadFile(jsPath)
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`(?m)^var fullPattern = ("(?:[^"\\]|\\.)*");`).FindSubmatch(js)
	if m == nil {
		return fmt.Errorf("%s: no fullPattern literal", jsPath)
	}
	full, err := strconv.Unquote(string(m[1]))
	if err != nil {
		return fmt.Errorf("%s: fullPattern: %w", jsPath, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# isbot %s (npm), Unlicense: see LICENSE.isbot. Regenerate with refresh.sh.\n", version)
	for _, p := range splitTop(full) {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	return os.WriteFile(listPath, b.Bytes(), 0o644)
}

// splitTop splits a regular expression at its top-level alternations.
func splitTop(re string) []string {
	var out []string
	depth, start, inClass := 0, 0, false
	for i := 0; i < len(re); i++ {
		switch c := re[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			out = append(out, re[start:i])
			start = i + 1
		}
	}
	return append(out, re[start:])
}

type pattern struct {
	src, core, lit, notAfter string
	pure                     bool
	notBefore                []string
	// Byte sets that let the runtime skip the expression: the bytes a
	// match may start with when it is anchored at the start, end with when
	// anchored at the end, and consist of when anchored at both.
	first, last, only *byteSet
	// For an expression anchored at the start that ends in a choice of
	// single bytes or the end of the text ("(?:,|$)"): the bytes a match
	// consists of, and those single bytes.
	span, ends *byteSet
}

// byteSet is a set of bytes, as the runtime's [4]uint64.
type byteSet [4]uint64

func (s *byteSet) add(lo, hi rune) {
	if lo > 255 {
		return
	}
	hi = min(hi, 255)
	for c := lo; c <= hi; c++ {
		s[c/64] |= 1 << (c % 64)
	}
}

// addRune adds r's bytes: itself when ASCII, else every byte that can be
// part of a multi-byte rune (a superset is safe: it only skips less).
func (s *byteSet) addRune(r rune) {
	if r < 128 {
		s.add(r, r)
		return
	}
	s.add(128, 255)
}

// addClass adds the bytes of a character class's ranges (lo, hi pairs).
func (s *byteSet) addClass(ranges []rune) {
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo < 128 {
			s.add(lo, min(hi, 127))
		}
		if hi >= 128 {
			s.add(128, 255)
		}
	}
}

func (s *byteSet) union(o byteSet) {
	for i := range s {
		s[i] |= o[i]
	}
}

func (s *byteSet) String() string {
	return fmt.Sprintf("&[4]uint64{%#x, %#x, %#x, %#x}", s[0], s[1], s[2], s[3])
}

func generate(listPath, outPath string) error {
	f, err := os.Open(listPath)
	if err != nil {
		return err
	}
	defer f.Close()
	var pats []pattern
	var header string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if header == "" {
				header = strings.TrimSpace(strings.TrimPrefix(line, "#"))
			}
			continue
		}
		if line == "" {
			continue
		}
		p, err := convert(line)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", listPath, line, err)
		}
		pats = append(pats, p)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by patterns/gen.go from patterns/isbot.txt; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package classify\n\n// botSource is where botPatterns come from: %s\nconst botSource = %q\n\n", header, header)
	b.WriteString("var botPatterns = [...]botPattern{\n")
	for _, p := range pats {
		fmt.Fprintf(&b, "\t{src: %q, lit: %q, pure: %v, core: %q", p.src, p.lit, p.pure, p.core)
		if len(p.notBefore) > 0 {
			fmt.Fprintf(&b, ", notBefore: %#v", p.notBefore)
		}
		if p.notAfter != "" {
			fmt.Fprintf(&b, ", notAfter: %q", p.notAfter)
		}
		for _, f := range []struct {
			name string
			set  *byteSet
		}{{"first", p.first}, {"last", p.last}, {"only", p.only}, {"span", p.span}, {"ends", p.ends}} {
			if f.set != nil {
				fmt.Fprintf(&b, ", %s: %s", f.name, f.set)
			}
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return err
	}
	return os.WriteFile(outPath, src, 0o644)
}

// convert translates one JavaScript pattern into RE2 terms.
func convert(src string) (pattern, error) {
	p := pattern{src: src}
	core := src
	if strings.HasPrefix(core, "(?<!") {
		end := groupEnd(core, 0)
		if end < 0 {
			return p, fmt.Errorf("unbalanced lookbehind")
		}
		for _, alt := range strings.Split(core[4:end], "|") {
			if regexp.QuoteMeta(alt) != alt {
				return p, fmt.Errorf("lookbehind alternative %q is not a literal", alt)
			}
			p.notBefore = append(p.notBefore, alt)
		}
		core = core[end+1:]
	}
	if i := strings.LastIndex(core, "(?!"); i >= 0 && groupEnd(core, i) == len(core)-1 {
		p.notAfter = fixClass(core[i+3 : len(core)-1])
		core = core[:i]
	}
	if strings.Contains(core, "(?<") || strings.Contains(core, "(?=") || strings.Contains(core, "(?!") {
		return p, fmt.Errorf("lookaround inside the pattern: not translatable to RE2")
	}
	p.core = fixClass(core)
	if _, err := regexp.Compile(p.core); err != nil {
		return p, err
	}
	if p.notAfter != "" {
		if _, err := regexp.Compile("^(?:" + p.notAfter + ")"); err != nil {
			return p, err
		}
	}
	re, err := syntax.Parse(p.core, syntax.Perl)
	if err != nil {
		return p, err
	}
	p.lit, p.pure = literal(re)
	p.pure = p.pure && p.notBefore == nil && p.notAfter == ""
	if !p.pure {
		p.first, p.last, p.only = anchorSets(re)
		p.span, p.ends = endChoice(re)
	}
	if strings.ToLower(p.lit) != p.lit {
		return p, fmt.Errorf("literal %q is not lower case (the header is lowered before matching)", p.lit)
	}
	return p, nil
}

// groupEnd returns the index of the parenthesis closing the group opened at
// s[start], or -1.
func groupEnd(s string, start int) int {
	depth, inClass := 0, false
	for i := start; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// fixClass escapes a hyphen that follows a class escape inside a character
// class ([\w\d-.]): JavaScript reads it as a literal hyphen, RE2 as an
// invalid range.
func fixClass(s string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			if inClass && strings.IndexByte("wdsWDS", s[i]) >= 0 && i+2 < len(s) && s[i+1] == '-' && s[i+2] != ']' {
				b.WriteString(`\-`)
				i++
			}
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		}
	}
	return b.String()
}

// literal returns a literal every match of re contains, the longest of its
// top-level concatenation, and whether re is that literal alone.
func literal(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return "", false
		}
		return string(re.Rune), true
	case syntax.OpCapture:
		lit, _ := literal(re.Sub[0])
		return lit, false
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 && len(string(sub.Rune)) > len(best) {
				best = string(sub.Rune)
			}
		}
		return best, false
	}
	return "", false
}

// anchorSets returns, for an expression anchored at the start of the text,
// the bytes a match can begin with; anchored at the end, those it can end
// with; anchored at both, those it can consist of. nil means no such bound.
// A rune past ASCII adds every byte from 0x80 up: a header byte outside a
// set means no match, so a set may be too large, never too small.
func anchorSets(re *syntax.Regexp) (first, last, only *byteSet) {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return nil, nil, nil
	}
	subs := re.Sub
	start := subs[0].Op == syntax.OpBeginText
	end := subs[len(subs)-1].Op == syntax.OpEndText
	if start {
		subs = subs[1:]
	}
	if end {
		subs = subs[:len(subs)-1]
	}
	body := &syntax.Regexp{Op: syntax.OpConcat, Sub: subs}
	if start {
		if s, nullable, ok := edge(body, true); ok && !nullable {
			first = &s
		}
	}
	if end {
		if s, nullable, ok := edge(body, false); ok && !nullable {
			last = &s
		}
	}
	if start && end {
		var s byteSet
		if bytesOf(body, &s) {
			only = &s
		}
	}
	return first, last, only
}

// edge returns the bytes a match of re can begin (front) or end with,
// whether re matches the empty string, and false when it cannot tell.
func edge(re *syntax.Regexp, front bool) (set byteSet, nullable, ok bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return set, true, true
	case syntax.OpLiteral:
		if len(re.Rune) == 0 || re.Flags&syntax.FoldCase != 0 {
			return set, false, false
		}
		r := re.Rune[0]
		if !front {
			r = re.Rune[len(re.Rune)-1]
		}
		set.addRune(r)
		return set, false, true
	case syntax.OpCharClass:
		set.addClass(re.Rune)
		return set, false, true
	case syntax.OpCapture:
		return edge(re.Sub[0], front)
	case syntax.OpStar, syntax.OpQuest:
		s, _, ok := edge(re.Sub[0], front)
		return s, true, ok
	case syntax.OpPlus:
		return edge(re.Sub[0], front)
	case syntax.OpRepeat:
		s, n, ok := edge(re.Sub[0], front)
		return s, n || re.Min == 0, ok
	case syntax.OpAlternate:
		nullable = false
		for _, sub := range re.Sub {
			s, n, ok := edge(sub, front)
			if !ok {
				return set, false, false
			}
			set.union(s)
			nullable = nullable || n
		}
		return set, nullable, true
	case syntax.OpConcat:
		subs := slices.Clone(re.Sub)
		if !front {
			slices.Reverse(subs)
		}
		for _, sub := range subs {
			s, n, ok := edge(sub, front)
			if !ok {
				return set, false, false
			}
			set.union(s)
			if !n {
				return set, false, true
			}
		}
		return set, true, true
	}
	return set, false, false
}

func one(r rune) byteSet {
	var s byteSet
	s.add(r, r)
	return s
}

// bytesOf adds to s every byte a match of re can contain, and reports false
// when it cannot tell (any character, a case-folded literal).
func bytesOf(re *syntax.Regexp, s *byteSet) bool {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return false
		}
		for _, r := range re.Rune {
			s.addRune(r)
		}
		return true
	case syntax.OpCharClass:
		s.addClass(re.Rune)
		return true
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpEndText:
		return true
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat,
		syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !bytesOf(sub, s) {
				return false
			}
		}
		return true
	}
	return false
}

// endChoice returns, for an expression anchored at the start whose last
// part is a choice of single bytes or the end of the text, the bytes a
// match can consist of and those single bytes: a match then lies in the
// header's longest prefix of span bytes and, unless that prefix is the
// whole header, ends with one of ends inside it.
func endChoice(re *syntax.Regexp) (span, ends *byteSet) {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText {
		return nil, nil
	}
	last := re.Sub[len(re.Sub)-1]
	if last.Op != syntax.OpAlternate {
		return nil, nil
	}
	var e byteSet
	eot := false
	for _, alt := range last.Sub {
		switch {
		case alt.Op == syntax.OpEndText:
			eot = true
		case alt.Op == syntax.OpLiteral && len(alt.Rune) == 1 && alt.Rune[0] < 128 && alt.Flags&syntax.FoldCase == 0:
			e.add(alt.Rune[0], alt.Rune[0])
		case alt.Op == syntax.OpCharClass:
			e.addClass(alt.Rune)
		default:
			return nil, nil
		}
	}
	var sp byteSet
	if !eot || !bytesOf(&syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[1:]}, &sp) {
		return nil, nil
	}
	return &sp, &e
}
