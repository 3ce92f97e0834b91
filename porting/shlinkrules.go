package porting

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
)

// shlinkRule is one of Shlink's redirect rules: tried by priority (1
// first), its conditions all holding.
type shlinkRule struct {
	LongURL    string `json:"longUrl"`
	Priority   int    `json:"priority"`
	Conditions []struct {
		Type       string  `json:"type"`
		MatchKey   *string `json:"matchKey"`
		MatchValue string  `json:"matchValue"`
	} `json:"conditions"`
}

// shlinkRules maps a short URL's redirectRules (the array, or the
// redirect-rules answer holding it) to LinkForge rules, in priority order.
// A rule with a condition LinkForge cannot express is left out whole, as
// a note: without that condition it would catch visitors Shlink never
// sent there. fe are the errors that fail the line (not rules at all).
func shlinkRules(raw json.RawMessage) (rules []linkforge.Rule, fe, notes []linkforge.FieldError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	var list []shlinkRule
	if err := json.Unmarshal(raw, &list); err != nil {
		var answer struct {
			RedirectRules []shlinkRule `json:"redirectRules"`
		}
		if json.Unmarshal(raw, &answer) != nil {
			return nil, []linkforge.FieldError{{Field: "redirectRules", Detail: "must be an array of Shlink redirect rules " +
				`({"longUrl","priority","conditions"}) or the redirect-rules answer holding one`}}, nil
		}
		list = answer.RedirectRules
	}
	order := make([]int, len(list)) // indexes of list, by priority
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return list[a].Priority - list[b].Priority })
	for _, i := range order {
		name := fmt.Sprintf("redirectRules[%d]", i)
		r := list[i]
		if len(r.Conditions) == 0 {
			// Shlink never matches a rule without conditions.
			notes = append(notes, linkforge.FieldError{Field: name + ".conditions", Detail: "is empty: Shlink never applies such a rule; not imported"})
			continue
		}
		rule := linkforge.Rule{URL: r.LongURL}
		var why *linkforge.FieldError
		for j, c := range r.Conditions {
			key := ""
			if c.MatchKey != nil {
				key = *c.MatchKey
			}
			cond, detail := shlinkCondition(c.Type, key, c.MatchValue)
			if detail != "" {
				why = &linkforge.FieldError{Field: fmt.Sprintf("%s.conditions[%d]", name, j), Detail: detail + "; the rule was not imported"}
				break
			}
			rule.Conditions = append(rule.Conditions, cond)
		}
		switch {
		case why != nil:
			notes = append(notes, *why)
		case len(rules) == linkforge.MaxRules:
			notes = append(notes, linkforge.FieldError{Field: name, Detail: fmt.Sprintf("is past LinkForge's %d rules per link; not imported", linkforge.MaxRules)})
		default:
			rules = append(rules, rule)
		}
	}
	return rules, nil, notes
}

// shlinkDevices are Shlink's device values and the LinkForge condition
// each one is.
var shlinkDevices = map[string]linkforge.Condition{
	"android":  {Type: linkforge.CondOS, Value: classify.OSAndroid},
	"ios":      {Type: linkforge.CondOS, Value: classify.OSiOS},
	"desktop":  {Type: linkforge.CondDevice, Value: classify.DeviceDesktop},
	"mobile":   {Type: linkforge.CondDevice, Value: classify.DeviceMobile},
	"windows":  {Type: linkforge.CondOS, Value: classify.OSWindows},
	"macos":    {Type: linkforge.CondOS, Value: classify.OSMacOS},
	"linux":    {Type: linkforge.CondOS, Value: classify.OSLinux},
	"chromeos": {Type: linkforge.CondOS, Value: classify.OSChromeOS},
}

// shlinkCondition maps one Shlink condition, or says why it cannot be.
func shlinkCondition(typ, key, value string) (linkforge.Condition, string) {
	value = strings.TrimSpace(value)
	switch typ {
	case "device":
		if c, ok := shlinkDevices[strings.ToLower(value)]; ok {
			return c, ""
		}
		return linkforge.Condition{}, fmt.Sprintf("device %q has no LinkForge equivalent", truncate(value, 40))
	case "language":
		return linkforge.Condition{Type: linkforge.CondLanguage, Value: strings.ReplaceAll(value, "_", "-")}, ""
	case "query-param":
		return linkforge.Condition{Type: linkforge.CondQuery, Value: key + "=" + value}, ""
	case "any-value-query-param":
		// Shlink keeps the key in matchValue for the key-only types.
		return linkforge.Condition{Type: linkforge.CondQuery, Value: value}, ""
	case "valueless-query-param":
		return linkforge.Condition{Type: linkforge.CondQuery, Value: value + "="}, ""
	case "ip-address":
		if v, ok := shlinkIP(value); ok {
			return linkforge.Condition{Type: linkforge.CondIP, Value: v}, ""
		}
		return linkforge.Condition{}, fmt.Sprintf("ip-address %q is a wildcard pattern LinkForge cannot write as a CIDR", truncate(value, 40))
	case "geolocation-country-code":
		return linkforge.Condition{Type: linkforge.CondCountry, Value: strings.ToUpper(value)}, ""
	case "before-date", "after-date":
		t, err := parseTime(value)
		if err != nil {
			return linkforge.Condition{}, typ + " " + err.Error()
		}
		ct := linkforge.CondBefore
		if typ == "after-date" {
			ct = linkforge.CondAfter
		}
		return linkforge.Condition{Type: ct, Value: t.Format(time.RFC3339)}, ""
	case "browser":
		for _, b := range classify.Browsers {
			if strings.EqualFold(b, value) {
				return linkforge.Condition{Type: linkforge.CondBrowser, Value: b}, ""
			}
		}
		return linkforge.Condition{}, fmt.Sprintf("browser %q is not one LinkForge tells apart", truncate(value, 40))
	case "geolocation-city-name":
		return linkforge.Condition{}, "LinkForge has no city condition (its analytics stop at the country)"
	}
	return linkforge.Condition{}, fmt.Sprintf("condition type %q has no LinkForge equivalent", truncate(typ, 40))
}

// shlinkIP reads Shlink's ip-address value: an address, a CIDR, or an
// IPv4 wildcard pattern whose '*' are the trailing octets (11.22.*.*),
// which is the CIDR 11.22.0.0/16. A '*' before a number has no CIDR.
func shlinkIP(v string) (string, bool) {
	if !strings.Contains(v, "*") {
		return v, true // checked as any ip condition
	}
	octets := strings.Split(v, ".")
	if len(octets) != 4 {
		return "", false
	}
	fixed := 0
	for fixed < 4 && octets[fixed] != "*" {
		fixed++
	}
	var b [4]byte
	for i, o := range octets {
		if i >= fixed {
			if o != "*" {
				return "", false
			}
			continue
		}
		n, err := strconv.ParseUint(o, 10, 8)
		if err != nil {
			return "", false
		}
		b[i] = byte(n)
	}
	return netip.PrefixFrom(netip.AddrFrom4(b), fixed*8).String(), true
}
