package main

// The routing flags of link create and update: redirect code, query
// forwarding, rules, A/B variants and the social preview card. They are
// shaped for scripts: a rule fits one argument (--rule), a long rule list
// is a JSON file (--rules-file, the API's own "rules" array), and the
// server's validation stays the only one, so the CLI cannot disagree
// with the API about what a valid rule is.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/linkforge/linkforge/client"
)

// routingFieldFlags are the string flags of the routing fields.
var routingFieldFlags = []struct{ name, arg, usage string }{
	{"redirect-status", "CODE", "the redirect's code: 302 (default), 307, 301 or 308 (301 and 308 are cached by browsers: repeat clicks may never reach the server)"},
	{"rules-file", "FILE", `the rules as the API's JSON array ([{"conditions":[{"type":"country","value":"DE"}],"url":"..."}]); - for stdin`},
	{"og-title", "TEXT", "the title of the card link previews show"},
	{"og-description", "TEXT", "the description of the card"},
	{"og-image-url", "URL", "the image of the card: absolute http or https"},
	{"utm-source", "TEXT", "utm_source added to the targets at redirect (a target's own is kept); up to 100 characters"},
	{"utm-medium", "TEXT", "utm_medium, as --utm-source"},
	{"utm-campaign", "TEXT", "utm_campaign, as --utm-source (stats campaigns groups by it)"},
	{"utm-term", "TEXT", "utm_term, as --utm-source"},
	{"utm-content", "TEXT", "utm_content, as --utm-source (update: the --utm-* flags replace the link's utm)"},
}

// utmFlags are the --utm-* flags, in the order of client.UTM's fields.
var utmFlags = []string{"utm-source", "utm-medium", "utm-campaign", "utm-term", "utm-content"}

// routingClearable are the routing fields update --clear removes.
var routingClearable = []string{"redirect-status", "forward-query", "rules", "variants", "og", "utm"}

// routingFlags holds the parsed routing flags until the check.
type routingFlags struct {
	str          map[string]*string
	rules        *[]string
	variants     *[]string
	forwardQuery *bool
}

// addRoutingFlags registers the routing flags of create and update.
func addRoutingFlags(fs *pflag.FlagSet) *routingFlags {
	r := &routingFlags{str: map[string]*string{}}
	for _, f := range routingFieldFlags {
		r.str[f.name] = fs.String(f.name, "", f.usage)
	}
	r.rules = fs.StringArray("rule", nil, "a rule, 'TYPE=VALUE[,TYPE=VALUE]... -> URL'; repeat for several, in order (update: replaces the rules)")
	r.variants = fs.StringArray("variant", nil, "an A/B variant, URL=WEIGHT (1..100); repeat for each, 2 to 10 (update: replaces them)")
	r.forwardQuery = fs.Bool("forward-query", false, "add the request's query string to the target's (a key in both keeps the request's)")
	return r
}

// routing reads the routing flags into a client.Routing; nil when none
// was given. stdin serves --rules-file -.
func (r *routingFlags) routing(cmd string, set map[string]bool, stdin io.Reader) (*client.Routing, error) {
	var out client.Routing
	given := false
	if set["redirect-status"] {
		code, err := strconv.Atoi(*r.str["redirect-status"])
		if err != nil {
			return nil, usagef("%s: invalid --redirect-status %q: want 301, 302, 307 or 308", cmd, *r.str["redirect-status"])
		}
		out.RedirectStatus, given = code, true
	}
	if set["forward-query"] {
		out.ForwardQuery, given = client.Ptr(*r.forwardQuery), true
	}
	if set["rule"] && set["rules-file"] {
		return nil, usagef("%s: --rule and --rules-file both give the rules: choose one", cmd)
	}
	if set["rule"] {
		out.Rules = make([]client.Rule, 0, len(*r.rules))
		for _, s := range *r.rules {
			rule, err := parseRule(s)
			if err != nil {
				return nil, usagef("%s: invalid --rule %q: %v", cmd, s, err)
			}
			out.Rules = append(out.Rules, rule)
		}
		given = true
	}
	if set["rules-file"] {
		rules, err := readRulesFile(*r.str["rules-file"], stdin)
		if err != nil {
			return nil, usagef("%s: invalid --rules-file %q: %v", cmd, *r.str["rules-file"], err)
		}
		out.Rules, given = rules, true
	}
	if set["variant"] {
		out.Variants = make([]client.Variant, 0, len(*r.variants))
		for _, s := range *r.variants {
			v, err := parseVariant(s)
			if err != nil {
				return nil, usagef("%s: invalid --variant %q: %v", cmd, s, err)
			}
			out.Variants = append(out.Variants, v)
		}
		given = true
	}
	if set["og-title"] || set["og-description"] || set["og-image-url"] {
		out.OG = &client.OG{Title: *r.str["og-title"], Description: *r.str["og-description"], ImageURL: *r.str["og-image-url"]}
		given = true
	}
	if slices.ContainsFunc(utmFlags, func(f string) bool { return set[f] }) {
		s := r.str
		out.UTM = &client.UTM{Source: *s["utm-source"], Medium: *s["utm-medium"], Campaign: *s["utm-campaign"],
			Term: *s["utm-term"], Content: *s["utm-content"]}
		given = true
	}
	if !given {
		return nil, nil
	}
	return &out, nil
}

// parseRule reads 'TYPE=VALUE[,TYPE=VALUE]... -> URL'. A condition's
// value is everything after its first '=', so query=key=value works; a
// value with a comma needs --rules-file.
func parseRule(s string) (client.Rule, error) {
	conds, target, ok := strings.Cut(s, "->")
	target = strings.TrimSpace(target)
	if !ok || target == "" {
		return client.Rule{}, fmt.Errorf("want 'TYPE=VALUE[,TYPE=VALUE]... -> URL'")
	}
	rule := client.Rule{URL: target, Conditions: []client.Condition{}}
	for _, c := range strings.Split(conds, ",") {
		typ, value, ok := strings.Cut(strings.TrimSpace(c), "=")
		if !ok || typ == "" {
			return client.Rule{}, fmt.Errorf("condition %q: want TYPE=VALUE (device=mobile, language=de, query=utm_source=mail)", strings.TrimSpace(c))
		}
		rule.Conditions = append(rule.Conditions, client.Condition{Type: strings.TrimSpace(typ), Value: strings.TrimSpace(value)})
	}
	return rule, nil
}

// parseVariant reads URL=WEIGHT; the weight is after the last '=', since
// a URL's query has '=' of its own.
func parseVariant(s string) (client.Variant, error) {
	i := strings.LastIndexByte(s, '=')
	if i <= 0 {
		return client.Variant{}, fmt.Errorf("want URL=WEIGHT (https://example.com/a=50)")
	}
	w, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return client.Variant{}, fmt.Errorf("weight %q: want a whole number from 1 to 100", s[i+1:])
	}
	return client.Variant{URL: s[:i], Weight: w}, nil
}

// readRulesFile reads a JSON array of rules from path (- for stdin).
func readRulesFile(path string, stdin io.Reader) ([]client.Rule, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
	} else {
		b, err = os.ReadFile(path) //nolint:gosec // G304: the path is the operator's own flag
	}
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	var rules []client.Rule
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rules); err != nil {
		return nil, fmt.Errorf("want a JSON array of rules: %w", err)
	}
	if rules == nil {
		rules = []client.Rule{}
	}
	return rules, nil
}

// clearRouting sets the --clear of a routing field; false when f is not
// one.
func clearRouting(c *client.RoutingClear, f string) bool {
	switch f {
	case "redirect-status":
		c.RedirectStatus = true
	case "forward-query":
		c.ForwardQuery = true
	case "rules":
		c.Rules = true
	case "variants":
		c.Variants = true
	case "og":
		c.OG = true
	case "utm":
		c.UTM = true
	default:
		return false
	}
	return true
}

// routingSetBy tells whether a flag sets the routing field f, which
// --clear f would contradict.
func routingSetBy(f string, set map[string]bool) bool {
	switch f {
	case "rules":
		return set["rule"] || set["rules-file"]
	case "variants":
		return set["variant"]
	case "og":
		return set["og-title"] || set["og-description"] || set["og-image-url"]
	case "utm":
		return slices.ContainsFunc(utmFlags, func(f string) bool { return set[f] })
	}
	return set[f]
}

// routingRows are the routing fields as printLink's rows.
func routingRows(l client.Link) [][2]string {
	rules := make([]string, 0, len(l.Rules))
	for _, r := range l.Rules {
		conds := make([]string, 0, len(r.Conditions))
		for _, c := range r.Conditions {
			conds = append(conds, c.Type+"="+c.Value)
		}
		rules = append(rules, strings.Join(conds, ",")+" -> "+r.URL)
	}
	variants := make([]string, 0, len(l.Variants))
	for _, v := range l.Variants {
		variants = append(variants, v.URL+"="+strconv.Itoa(v.Weight))
	}
	og := "-"
	if l.OG != nil {
		og = orDash(l.OG.Title)
	}
	status := "302"
	if l.RedirectStatus != 0 {
		status = strconv.Itoa(l.RedirectStatus)
	}
	utm := "-"
	if u := l.UTM; u != nil {
		var pairs []string
		for _, p := range [][2]string{{"source", u.Source}, {"medium", u.Medium}, {"campaign", u.Campaign}, {"term", u.Term}, {"content", u.Content}} {
			if p[1] != "" {
				pairs = append(pairs, p[0]+"="+p[1])
			}
		}
		utm = strings.Join(pairs, " ")
	}
	return [][2]string{{"redirect_status", status}, {"forward_query", strconv.FormatBool(l.ForwardQuery)},
		{"rules", orDash(strings.Join(rules, "; "))}, {"variants", orDash(strings.Join(variants, " "))}, {"og_title", og},
		{"utm", utm}}
}

// checkRoutingFlags reads the routing flags of create and update into
// the request, with update's --clear of routing fields; an update that
// changes nothing at all is refused here, after every field is known.
func checkRoutingFlags(inv *invocation, action string, r *routingFlags, clear []string) error {
	o, name := &inv.link, inv.cmd.name
	routing, err := r.routing(name, o.set, os.Stdin)
	if err != nil {
		return err
	}
	if action == "create" {
		if routing != nil {
			o.newLink.Routing = *routing
		}
		return nil
	}
	u := &o.update
	u.Routing = routing
	for _, f := range clear {
		if !clearRouting(&u.ClearRouting, f) {
			continue // a field of checkLinkFields
		}
		if routingSetBy(f, o.set) {
			return usagef("%s: --clear %s and a flag that sets it: choose one", name, f)
		}
	}
	if b, _ := json.Marshal(u); string(b) == "{}" {
		return usagef("%s: nothing to change: give a field flag (--url, --tag, ...) or --clear FIELD", name)
	}
	return nil
}
