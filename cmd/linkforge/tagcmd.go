package main

// The tag commands (linkforge tag rename|delete) and link rename: clients
// of a running server's admin API, as the link commands.

import "fmt"

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
	if inv.link.json {
		return a.printJSON(map[string]any{"tag": inv.args[0], "deleted": true})
	}
	fmt.Fprintf(a.stdout, "tag %s removed from its links\n", inv.args[0])
	return exitOK
}

func (a *app) linkRename(inv invocation) int {
	l, err := inv.link.client.RenameLink(a.ctx, inv.args[0], inv.args[1])
	if err != nil {
		return a.apiFailed("cannot rename link", err)
	}
	return a.printLink(inv, l)
}
