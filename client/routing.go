package client

// Condition is one test of a Rule: Type is device, os, browser, language,
// country, query, ip, before or after (see the API's Condition schema).
type Condition struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Rule sends a click to URL when all its conditions hold; a link's rules
// are tried in order, the first match wins.
type Rule struct {
	Conditions []Condition `json:"conditions"`
	URL        string      `json:"url"`
}

// Variant is one arm of a link's A/B test, chosen with probability Weight
// (1..100) over the sum of the weights.
type Variant struct {
	URL    string `json:"url"`
	Weight int    `json:"weight"`
}

// OG is a link's social preview card.
type OG struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	ImageURL    string `json:"image_url,omitempty"`
}

// Routing is the routing part of a NewLink or a LinkUpdate: nil or zero
// fields are not sent. RedirectStatus 301 and 308 are cached by browsers,
// whose repeat clicks may then never reach the server (not counted, not
// routed).
type Routing struct {
	RedirectStatus int       `json:"redirect_status,omitempty"`
	ForwardQuery   *bool     `json:"forward_query,omitempty"`
	Rules          []Rule    `json:"rules,omitempty"`
	Variants       []Variant `json:"variants,omitempty"`
	OG             *OG       `json:"og,omitempty"`
	// UTM is appended to the link's targets (utm.go); in a LinkUpdate a
	// zero UTM clears it, as ClearRouting.UTM does.
	UTM *UTM `json:"utm,omitempty"`
}

// set adds r's set members to a PATCH body; clear lists the routing
// members to send as null (removed).
func (r *Routing) set(m map[string]any, clear RoutingClear) {
	if r != nil {
		if r.RedirectStatus != 0 {
			m["redirect_status"] = r.RedirectStatus
		}
		if r.ForwardQuery != nil {
			m["forward_query"] = *r.ForwardQuery
		}
		if r.Rules != nil {
			m["rules"] = r.Rules
		}
		if r.Variants != nil {
			m["variants"] = r.Variants
		}
		if r.OG != nil {
			m["og"] = r.OG
		}
		if r.UTM != nil {
			m["utm"] = r.UTM
		}
	}
	for key, on := range map[string]bool{"redirect_status": clear.RedirectStatus, "forward_query": clear.ForwardQuery,
		"rules": clear.Rules, "variants": clear.Variants, "og": clear.OG, "utm": clear.UTM} {
		if on {
			m[key] = nil
		}
	}
}

// RoutingClear names the routing fields a LinkUpdate removes.
type RoutingClear struct {
	RedirectStatus, ForwardQuery, Rules, Variants, OG, UTM bool
}
