package main

// The UTM builder's commands (linkforge utm-template list|add|delete,
// linkforge stats campaigns): clients of a running server's admin API, as
// the link commands. A link's own utm is set by link create and update
// (--utm-source, ...: linkrouting.go).

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkforge/linkforge/client"
)

// utmExtra registers the flags of a utm-template or stats command
// (action: list, add, delete, campaigns) and reads them.
func utmExtra(action string) func(fs *pflag.FlagSet) func(*invocation, func(flagSpec) (string, string)) error {
	return func(fs *pflag.FlagSet) func(*invocation, func(flagSpec) (string, string)) error {
		jsonOut := fs.Bool("json", false, "print the API's JSON instead of a table")
		str := map[string]*string{}
		switch action {
		case "add":
			for _, f := range routingFieldFlags {
				if slices.Contains(utmFlags, f.name) {
					str[f.name] = fs.String(f.name, "", strings.Split(f.usage, " (")[0])
				}
			}
		case "campaigns":
			str["from"] = fs.String("from", "", "RFC 3339 time, a date (midnight UTC) or a duration ago (24h); default: 24 h ago")
			str["to"] = fs.String("to", "", "as --from; default: now")
			str["traffic"] = fs.String("traffic", "", "human or automated clicks only (default: both)")
		}
		return func(inv *invocation, value func(flagSpec) (string, string)) error {
			o := &inv.link
			o.json = *jsonOut
			o.set = map[string]bool{}
			fs.VisitAll(func(f *pflag.Flag) {
				if f.Changed {
					o.set[f.Name] = true
				}
			})
			name := inv.cmd.name
			if err := o.connect(name, value); err != nil {
				return err
			}
			switch action {
			case "add":
				o.utm = client.UTM{Source: *str["utm-source"], Medium: *str["utm-medium"], Campaign: *str["utm-campaign"],
					Term: *str["utm-term"], Content: *str["utm-content"]}
				if o.utm == (client.UTM{}) {
					return usagef("%s: give at least one of --utm-source, --utm-medium, --utm-campaign, --utm-term and --utm-content", name)
				}
			case "campaigns":
				o.campaigns.Traffic = *str["traffic"]
				now := time.Now()
				for _, f := range []struct {
					name string
					dst  *time.Time
				}{{"from", &o.campaigns.From}, {"to", &o.campaigns.To}} {
					if o.set[f.name] {
						var err error
						if *f.dst, err = parseCLITime(name, f.name, *str[f.name], now, false); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}
	}
}

func (a *app) utmTemplateList(inv invocation) int {
	list, err := inv.link.client.UTMTemplates(a.ctx)
	if err != nil {
		return a.apiFailed("cannot list UTM templates", err)
	}
	if inv.link.json {
		return a.printJSON(map[string]any{"templates": list})
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSOURCE\tMEDIUM\tCAMPAIGN\tTERM\tCONTENT")
	for _, t := range list {
		u := t.UTM
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, orDash(u.Source), orDash(u.Medium), orDash(u.Campaign),
			orDash(u.Term), orDash(u.Content))
	}
	if err := tw.Flush(); err != nil {
		return a.fail("cannot print UTM templates", err)
	}
	return exitOK
}

func (a *app) utmTemplateAdd(inv invocation) int {
	t, err := inv.link.client.CreateUTMTemplate(a.ctx, inv.args[0], inv.link.utm)
	if err != nil {
		return a.apiFailed("cannot add UTM template", err)
	}
	if inv.link.json {
		return a.printJSON(t)
	}
	fmt.Fprintf(a.stdout, "UTM template %s added: id %s\n", t.Name, t.ID)
	return exitOK
}

func (a *app) utmTemplateDelete(inv invocation) int {
	if err := inv.link.client.DeleteUTMTemplate(a.ctx, inv.args[0]); err != nil {
		return a.apiFailed("cannot delete UTM template", err)
	}
	return a.printDeleted(inv, map[string]any{"id": inv.args[0]}, "UTM template "+inv.args[0]+" deleted")
}

func (a *app) statsCampaigns(inv invocation) int {
	rows, err := inv.link.client.Campaigns(a.ctx, inv.link.campaigns)
	if err != nil {
		return a.apiFailed("cannot read campaigns", err)
	}
	if inv.link.json {
		return a.printJSON(map[string]any{"campaigns": rows})
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CAMPAIGN\tSOURCE\tMEDIUM\tLINKS\tCLICKS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", r.Campaign, orDash(r.Source), orDash(r.Medium), r.Links, r.Clicks)
	}
	if err := tw.Flush(); err != nil {
		return a.fail("cannot print campaigns", err)
	}
	return exitOK
}
