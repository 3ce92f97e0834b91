package main

import (
	"os"
	"os/user"

	"github.com/linkforge/linkforge"
)

// cliWriters are the commands that write the store directly: their writes
// are the CLI's in the audit log, under the operating-system user that ran
// them. The link commands are clients of the API: their writes are their
// token's. serve is not here: the server's own writes (expiry, clicks)
// have no actor, and the requests it serves carry theirs.
var cliWriters = map[string]bool{"token create": true, "token revoke": true, "import": true, "tenant quota": true,
	"user add": true, "user remove": true, "user reset-password": true,
	"domain add": true, "domain verify": true, "domain remove": true, "operator token create": true, "operator token revoke": true}

// cliActor is the actor of a CLI write.
func cliActor() linkforge.Actor {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "cli"
	}
	return linkforge.Actor{Type: linkforge.ActorCLI, Name: name}
}
