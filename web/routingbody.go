package web

import (
	"strings"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/rules"
)

// The routing members of the link bodies (schemas Rules, Variants and OG),
// read by package rules so that the API and the JSON import take the same
// documents.

// routingFields lists rules.Fields for the error messages (a constant,
// so that the field lists stay constants; TestRoutingFieldsListed checks it).
const routingFields = "redirect_status, forward_query, rules, variants, og, utm"

// routing reads m into l when it is a routing member, reporting whether it
// was one.
func (fe *fieldErrors) routing(m member, l *linkforge.Link) bool {
	if !rules.IsField(m.name) {
		return false
	}
	*fe = append(*fe, rules.DecodeField(m.name, m.value, l)...)
	return true
}

// routingValues checks the routing values of a new link, once their types
// were right.
func (fe *fieldErrors) routingValues(l *linkforge.Link, selfHosts, schemes []string) {
	for _, f := range *fe {
		if rules.IsField(strings.SplitN(f.Field, "[", 2)[0]) {
			return // its shape is wrong already
		}
	}
	*fe = append(*fe, rules.ValidateRoutingFor(l, selfHosts, schemes)...)
}

// decodeRouting type-checks the routing member m of a PATCH and keeps it
// for apply, reporting whether it was one. Its values are validated with
// the merged link.
func (p *linkPatch) decodeRouting(fe *fieldErrors, m member) bool {
	var scratch linkforge.Link
	if !fe.routing(m, &scratch) {
		return false
	}
	p.routing = append(p.routing, m)
	return true
}

// applyRouting sets l's routing fields from the PATCH's members.
func (p *linkPatch) applyRouting(l *linkforge.Link) {
	for _, m := range p.routing {
		rules.DecodeField(m.name, m.value, l)
	}
}
