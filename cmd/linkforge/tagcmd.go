package main

// The tag commands (linkforge tag rename|delete|share|shares|unshare),
// link rename, link share|shares|unshare and tenant schemes set: clients
// of a running server's admin API, as the link commands.

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/linkforge/linkforge/client"
)

func (a *app) tagRename(inv invocation) int {
	tc, err := inv.link.client.RenameTag(a.ctx, inv.args[0], inv.args[1])
	if err != nil {
		return a.apiFailed("cannot rename tag", err)
	}
	if inv.link.json {
		return a.printJSON(tc)
	}
	fmt.Fprintf(a.stdout, "tag %s renamed %s: %d links carry it\n", inv.args[0], tc.Tag, tc.Links)
	return exitOK
}

func (a *app) tagDelete(inv invocation) int {
	if err := inv.link.client.DeleteTag(a.ctx, inv.args[0]); err != nil {
		return a.apiFailed("cannot delete tag", err)
	}
	return a.printDeleted(inv, map[string]any{"tag": inv.args[0]}, "tag "+inv.args[0]+" removed from its links")
}

func (a *app) linkRename(inv invocation) int {
	l, err := inv.link.client.RenameLink(a.ctx, inv.args[0], inv.args[1])
	if err != nil {
		return a.apiFailed("cannot rename link", err)
	}
	return a.printLink(inv, l)
}

func (a *app) linkShare(inv invocation) int {
	sh, err := inv.link.client.CreateLinkShare(a.ctx, inv.args[0], inv.link.share)
	return a.printShare(inv, sh, err)
}

func (a *app) tagShare(inv invocation) int {
	sh, err := inv.link.client.CreateTagShare(a.ctx, inv.args[0], inv.link.share)
	return a.printShare(inv, sh, err)
}

// printShare prints a share made: its URL alone (one line, for scripts),
// or the API's JSON.
func (a *app) printShare(inv invocation, sh client.Share, err error) int {
	if err != nil {
		return a.apiFailed("cannot share", err)
	}
	if inv.link.json {
		return a.printJSON(sh)
	}
	fmt.Fprintln(a.stdout, sh.URL)
	return exitOK
}

func (a *app) linkShares(inv invocation) int {
	list, err := inv.link.client.LinkShares(a.ctx, inv.args[0])
	return a.printShares(inv, list, err)
}

func (a *app) tagShares(inv invocation) int {
	list, err := inv.link.client.TagShares(a.ctx, inv.args[0])
	return a.printShares(inv, list, err)
}

// printShares prints the shares listed: a table, or the API's JSON. The
// API has no URL to give (the server keeps its hash), and a listing must
// not look as if it had one: the table names a share by its id.
func (a *app) printShares(inv invocation, list []client.Share, err error) int {
	if err != nil {
		return a.apiFailed("cannot list shares", err)
	}
	if inv.link.json {
		if list == nil {
			list = []client.Share{}
		}
		return a.printJSON(map[string]any{"shares": list})
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tEXPIRES\tPASSWORD")
	for _, sh := range list {
		password := "no"
		if sh.HasPassword {
			password = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sh.ID, sh.CreatedAt.UTC().Format(time.RFC3339), timeOrDash(sh.ExpiresAt), password)
	}
	if err := tw.Flush(); err != nil {
		return a.fail("cannot print shares", err)
	}
	return exitOK
}

func (a *app) linkUnshare(inv invocation) int {
	slug, id := inv.args[0], inv.args[1]
	if err := inv.link.client.DeleteLinkShare(a.ctx, slug, id); err != nil {
		return a.apiFailed("cannot delete share", err)
	}
	return a.printDeleted(inv, map[string]any{"slug": slug, "id": id}, "share "+id+" of link "+slug+" deleted")
}

func (a *app) tagUnshare(inv invocation) int {
	tag, id := inv.args[0], inv.args[1]
	if err := inv.link.client.DeleteTagShare(a.ctx, tag, id); err != nil {
		return a.apiFailed("cannot delete share", err)
	}
	return a.printDeleted(inv, map[string]any{"tag": tag, "id": id}, "share "+id+" of tag "+tag+" deleted")
}

// tenantSchemesSet sets the token's tenant's extra target schemes: a
// comma-separated list, or none.
func (a *app) tenantSchemesSet(inv invocation) int {
	var schemes []string
	if arg := strings.TrimSpace(inv.args[0]); arg != "none" && arg != "" {
		for _, s := range strings.Split(arg, ",") {
			schemes = append(schemes, strings.TrimSpace(s))
		}
	}
	t, err := inv.link.client.SetTargetSchemes(a.ctx, schemes)
	if err != nil {
		return a.apiFailed("cannot set target schemes", err)
	}
	if inv.link.json {
		return a.printJSON(t)
	}
	if len(t.TargetSchemes) == 0 {
		fmt.Fprintf(a.stdout, "tenant %s: link targets use http and https only\n", t.Name)
		return exitOK
	}
	fmt.Fprintf(a.stdout, "tenant %s: link targets may also use %s\n", t.Name, strings.Join(t.TargetSchemes, ", "))
	return exitOK
}
