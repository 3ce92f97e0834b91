package rules

import (
	"unsafe"

	"github.com/linkforge/linkforge"
)

// Bytes estimates the memory r keeps: its structures and the strings they
// hold. A link with many rules, variants and long URLs compiles to a few
// hundred kilobytes (301 such links took 69 MB), so that the link cache
// bounds itself by these bytes rather than by a count of links. 0 for nil.
func (r *Routes) Bytes() int {
	if r == nil {
		return 0
	}
	n := int(unsafe.Sizeof(*r)) + r.url.bytes()
	for i := range r.rules {
		rl := &r.rules[i]
		n += int(unsafe.Sizeof(*rl)) + rl.to.bytes() + cap(rl.conds)*int(unsafe.Sizeof(cond{}))
		for _, c := range rl.conds {
			// A query condition's key and value are cut from one string:
			// both keep all of it.
			n += len(c.str) + len(c.val)
		}
	}
	if r.devices != nil {
		n += int(unsafe.Sizeof(*r.devices))
		for _, t := range r.devices {
			if t != nil {
				n += int(unsafe.Sizeof(*t)) + t.bytes()
			}
		}
	}
	n += cap(r.variants) * int(unsafe.Sizeof(variant{}))
	for i := range r.variants {
		n += r.variants[i].to.bytes()
	}
	if r.og != nil {
		n += int(unsafe.Sizeof(linkforge.OG{})) + len(r.og.Title) + len(r.og.Description) + len(r.og.ImageURL)
	}
	return n
}

// bytes is what t keeps beyond its own struct: the Location value's slice
// and strings (the raw URL's only when it is another string).
func (t *target) bytes() int {
	n := len(t.raw)
	if len(t.loc) == 1 {
		n += int(unsafe.Sizeof(""))
		if unsafe.StringData(t.loc[0]) != unsafe.StringData(t.raw) { //nolint:gosec // G103: compares two pointers, dereferences none
			n += len(t.loc[0])
		}
	}
	n += cap(t.utm) * int(unsafe.Sizeof(""))
	for _, p := range t.utm {
		n += len(p)
	}
	return n
}
