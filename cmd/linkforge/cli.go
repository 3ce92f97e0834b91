package main

// The command tree: spf13/cobra parses the command line, answers --help
// for every command and group, and writes the shell completion scripts
// (docs/adr/019-command-line.md). The flags' values are not checked by
// cobra: resolve reads them, with their environment variables and
// defaults, into an invocation, as config.go specifies.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/people"
)

func init() {
	cobra.EnableCommandSorting = false // the order of the commands table
}

// groups are the command groups: a word that only names its actions.
var groups = map[string]string{ //nolint:gosec // G101: "token" names a command group, not a credential
	"token":          "create, list or revoke",
	"user":           "add, list, remove or reset-password",
	"link":           "create, list, get, update, rename, delete, stats, qr, share, shares or unshare",
	"tag":            "rename, delete, share, shares or unshare",
	"qr":             "logo set, logo delete or defaults",
	"qr logo":        "set or delete",
	"utm-template":   "list, add or delete",
	"stats":          "campaigns",
	"tenant":         "quota or schemes set",
	"tenant schemes": "set",
	"domain":         "add, list, verify or remove",
	"operator":       "token create or token revoke",
	"operator token": "create or revoke",
}

// parseArgs turns the command line and the environment into an invocation.
// A flag given on the command line beats its environment variable, which
// beats the default. Global flags are accepted before and after the command
// name, and flags may follow positional arguments (`token revoke 3
// --data-dir X`). A help text or a completion script is returned as a
// *printed error, which is errHelp.
func parseArgs(args []string, getenv func(string) string) (invocation, error) {
	var out, errOut bytes.Buffer
	var inv *invocation
	root := newCommandTree(getenv, &out, &errOut, func(i invocation) { inv = &i })
	root.SetArgs(longFlags(args))
	err := root.Execute()
	var ue *usageError
	switch {
	case err == nil && inv == nil:
		return invocation{}, &printed{text: out.String(), stderr: errOut.String()}
	case err == nil:
		return *inv, nil
	case errors.Is(err, errVersion), errors.As(err, &ue):
		return invocation{}, err
	}
	// pflag's words; the Go flag package's, which users and scripts know.
	msg := strings.Replace(err.Error(), "unknown flag: ", "flag provided but not defined: ", 1)
	return invocation{}, usagef("%s", strings.TrimSpace(msg))
}

// printed is a text cobra wrote instead of running a command: a help, a
// completion script, completion candidates.
type printed struct{ text, stderr string }

func (p *printed) Error() string        { return "help requested" }
func (p *printed) Is(target error) bool { return target == errHelp }

// singleDashLong is a long flag typed with one dash (-addr :9090), which
// Go's flag package, and so earlier versions of this command, accepted.
var singleDashLong = regexp.MustCompile(`^-[A-Za-z][A-Za-z0-9-]*(=.*)?$`)

// valuedBools are the boolean flags that used to take a value: the
// scripts that say `--webhook-allow-private true` keep working.
var valuedBools = map[string]bool{"--webhook-allow-private": true}

// noValue are the flags that take no value (booleans): after any other
// flag without "=", the next argument is its value, whatever it looks like
// (--sort -created).
var noValue = map[string]bool{"force": true, "webhook-allow-private": true, "admin-on-domains": true, "json": true, "all": true,
	"robots-allow": true, "operator": true,
	"empty": true, versionFlag: true, "help": true, "allow-public-subdomains": true}

// longFlags rewrites -name to --name, up to "--": pflag reads -addr as the
// shorthands -a -d -d -r. A valuedBools flag followed by true or false
// takes it as its value.
func longFlags(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if singleDashLong.MatchString(a) && a != "-h" { // -h: the one shorthand
			a = "-" + a
		}
		if valuedBools[a] && i+1 < len(args) && (args[i+1] == "true" || args[i+1] == "false") {
			a += "=" + args[i+1]
			i++
		}
		out = append(out, a)
		if name, ok := strings.CutPrefix(a, "--"); ok && name != "" && !strings.Contains(name, "=") && !noValue[name] && i+1 < len(args) {
			i++
			out = append(out, args[i]) // the flag's value, as it is
		}
	}
	return out
}

// newCommandTree builds the cobra commands of the commands table. Each
// command's run hands its resolved invocation to found instead of running
// it: parseArgs returns it, run runs it.
func newCommandTree(getenv func(string) string, out, errOut io.Writer, found func(invocation)) *cobra.Command {
	root := &cobra.Command{
		Use:               "linkforge",
		Short:             "LinkForge: a self-hosted link shortener",
		SilenceErrors:     true,
		SilenceUsage:      true,
		TraverseChildren:  true, // a command's flags only after its name, as before
		DisableAutoGenTag: true,
		// Without subcommand: serve, which takes no argument; so an
		// argument is a mistyped command.
		Args: func(cc *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cc.SuggestionsFor(args[0]); len(s) > 0 {
				msg += " (did you mean " + strings.Join(s, " or ") + "?)"
			}
			return usagef("%s", msg)
		},
	}
	// Before the completion command is made: it keeps the writer it
	// finds then.
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	pf := root.PersistentFlags()
	pf.SortFlags = false
	addFlags(pf, globalFlags)
	pf.Bool(versionFlag, false, "print the version and exit")

	subs := map[string]*cobra.Command{}
	for name, actions := range groups {
		g := &cobra.Command{Use: name, Short: "actions: " + actions, Args: cobra.ArbitraryArgs,
			// An unknown action's flags are not the group's: the error
			// is the action (tenant nuke --tenant acme).
			FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
			RunE: func(_ *cobra.Command, args []string) error {
				if len(args) == 0 {
					return usagef("%s: missing action (%s)", name, actions)
				}
				return usagef("unknown command %q", name+" "+args[0])
			}}
		subs[name] = g
	}
	for _, c := range commands {
		if c.name == "completion" {
			continue
		}
		cc := leafCommand(c, getenv, found)
		if c.name == "serve" {
			// The default command: `linkforge --addr :9090` serves.
			root.RunE = cc.RunE
		}
		parent, action, ok := strings.Cut(c.name, " ")
		if !ok {
			root.AddCommand(cc)
			continue
		}
		if sub, leaf, deeper := strings.Cut(action, " "); deeper {
			// A group in a group (operator token create).
			parent, action = parent+" "+sub, leaf
		}
		cc.Use = action
		attachGroup(root, subs, parent)
		subs[parent].AddCommand(cc)
	}
	addCompletion(root)
	completeValues(root)

	builtin := root.HelpFunc()
	root.SetHelpFunc(func(cc *cobra.Command, _ []string) {
		w := cc.OutOrStdout()
		switch path := strings.TrimPrefix(cc.CommandPath(), "linkforge"); {
		case cc == root:
			printUsage(w)
		case groups[strings.TrimSpace(path)] != "":
			printGroupUsage(w, strings.TrimSpace(path))
		case lookupCommand(strings.TrimSpace(path)) != nil && lookupCommand(strings.TrimSpace(path)).run != nil:
			printCommandUsage(w, lookupCommand(strings.TrimSpace(path)), cc)
		default:
			builtin(cc, nil) // completion and help
		}
	})
	return root
}

// attachGroup adds the group command name (and the group it is in, for a
// name of two words) to the tree, once.
func attachGroup(root *cobra.Command, subs map[string]*cobra.Command, name string) {
	if subs[name].Parent() != nil {
		return
	}
	outer, inner, nested := strings.Cut(name, " ")
	if !nested {
		root.AddCommand(subs[name])
		return
	}
	subs[name].Use = inner
	attachGroup(root, subs, outer)
	subs[outer].AddCommand(subs[name])
}

// leafCommand is the cobra command of c.
func leafCommand(c *command, getenv func(string) string, found func(invocation)) *cobra.Command {
	cc := &cobra.Command{Use: c.name, Short: c.summary, Args: cobra.ArbitraryArgs}
	if c.name == "version" {
		// A question about the binary needs no valid configuration.
		cc.RunE = func(*cobra.Command, []string) error { return errVersion }
		return cc
	}
	fs := cc.Flags()
	fs.SortFlags = false
	addFlags(fs, c.flags)
	var checkExtra func(*invocation, func(flagSpec) (string, string)) error
	if c.extra != nil {
		checkExtra = c.extra(fs)
	}
	cc.RunE = func(cc *cobra.Command, positional []string) error {
		inv, err := resolve(c, cc.Flags(), positional, getenv, checkExtra)
		if err != nil {
			return err
		}
		found(inv)
		return nil
	}
	return cc
}

// addFlags registers specs as string flags (booleans as booleans). Values
// are converted and validated by resolve, once we know whether they came
// from the command line, the environment or the defaults.
func addFlags(fs *pflag.FlagSet, specs []flagSpec) {
	for _, f := range specs {
		if boolFlags[f.name] {
			fs.Bool(f.name, f.def == "true", f.usage)
			continue
		}
		if repeatFlags[f.name] {
			fs.StringArray(f.name, nil, f.usage)
			continue
		}
		fs.String(f.name, f.def, f.usage)
	}
}

// resolve checks a parsed command line of c into an invocation.
func resolve(c *command, fs *pflag.FlagSet, positional []string, getenv func(string) string,
	checkExtra func(*invocation, func(flagSpec) (string, string)) error) (invocation, error) {
	set := map[string]string{} // flags given on the command line, by name
	// Changed, not Visit: the global flags given before the command name
	// were parsed by the root's flag set, which shares the flags.
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			set[f.Name] = f.Value.String()
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				set[f.Name] = strings.Join(sv.GetSlice(), "\n")
			}
		}
	})
	if set[versionFlag] == "true" {
		return invocation{}, errVersion
	}
	if len(positional) != c.nargs {
		if c.nargs == 0 {
			return invocation{}, usagef("%s: unexpected argument %q", c.name, positional[0])
		}
		return invocation{}, usagef("%s: want %d argument(s), got %d (usage: %s)", c.name, c.nargs, len(positional), c.synopsis)
	}

	// value resolves one flag; source names where the value came from, so
	// that an error points at the flag or at the environment variable.
	value := func(f flagSpec) (v, source string) {
		if v, ok := set[f.name]; ok {
			return v, "--" + f.name
		}
		if v := getenv(f.env()); v != "" {
			return v, f.env()
		}
		return f.def, "default of --" + f.name
	}

	inv := invocation{cmd: c, args: positional}
	var err error
	if inv.cfg, err = buildConfig(value); err != nil {
		return invocation{}, err
	}
	for _, f := range c.flags {
		if err := resolveFlag(&inv, f, value); err != nil {
			return invocation{}, err
		}
	}
	if checkExtra != nil {
		if err := checkExtra(&inv, value); err != nil {
			return invocation{}, err
		}
	}
	return inv, nil
}

// resolveFlag checks one of the command's own environment-backed flags.
func resolveFlag(inv *invocation, f flagSpec, value func(flagSpec) (string, string)) error {
	v, source := value(f)
	name := inv.cmd.name
	var err error
	switch f.name {
	case tenantFlag.name:
		if v == "" {
			return usagef("%s: --tenant is required (or %s)", name, f.env())
		}
		if err := checkLabel(v); err != nil {
			return usagef("invalid %s %q: %v", source, v, err)
		}
		inv.tenant = v
	case nameFlag.name:
		if err := checkLabel(v); v != "" && err != nil {
			return usagef("invalid %s %q: %v", source, v, err)
		}
		inv.name = v
	case emailFlag.name:
		if v == "" {
			break // required by the commands themselves, with their own message
		}
		if inv.email, err = people.CheckEmail(v); err != nil {
			return usagef("invalid %s %q: want an email address", source, v)
		}
	case roleFlag.name:
		if inv.role = linkforge.Role(v); !inv.role.Valid() {
			return usagef("invalid %s %q: want owner, editor or viewer", source, v)
		}
	case formatFlag.name:
		inv.format, err = checkFormat(name, v, source)
	case outFlag.name, forceFlag.name, fromFlag.name:
		err = parseBackupFlag(inv, f, v, source)
	case operatorFlag.name:
		if inv.operator, err = strconv.ParseBool(v); err != nil {
			return usagef("invalid %s %q: want true or false", source, v)
		}
	case aasaFlag.name:
		inv.aasa, err = readDocument(v, source)
	case assetLinksFlag.name:
		inv.assetLinks, err = readDocument(v, source)
	case maxLinksFlag.name:
		inv.quota.MaxLinks, err = parseLimit(v, source)
	case maxClicksFlag.name:
		inv.quota.MaxClicksPerMonth, err = parseLimit(v, source)
	}
	return err
}

// addCompletion adds cobra's completion command, limited to the shells
// the contract names, with a usage error for any other.
func addCompletion(root *cobra.Command) {
	root.CompletionOptions.DisableDescriptions = false
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Short = lookupCommand("completion").summary
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("completion: missing shell (bash, zsh or fish)")
			}
			return usagef("completion: unknown shell %q: want bash, zsh or fish", args[0])
		}
		for _, sh := range c.Commands() {
			if sh.Name() == "powershell" {
				c.RemoveCommand(sh)
			}
		}
	}
}

// flagValues are the values of the flags that take one of a few, for
// completion.
var flagValues = map[string][]string{
	"log-format": {"json", "text"}, "log-level": {"debug", "info", "warn", "error"}, "journal-sync": {"full", "normal"},
	"format": {"csv", "json", "yourls", "shlink", "bitly"}, "state": {"active", "expired", "all"},
	"sort": {"-created", "created", "-clicks", "clicks", "slug"}, "interval": {"minute", "hour", "day"},
	"by": dimensions, "clear": clearable, "role": {"owner", "editor", "viewer"},
}

// completeValues registers flagValues with every command that has the flag.
func completeValues(c *cobra.Command) {
	flags := c.LocalNonPersistentFlags()
	if !c.HasParent() {
		flags = c.PersistentFlags()
	}
	flags.VisitAll(func(f *pflag.Flag) {
		if values, ok := flagValues[f.Name]; ok {
			// Only fails for an unknown flag or one registered twice.
			_ = c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
		}
	})
	for _, sub := range c.Commands() {
		completeValues(sub)
	}
}

// printUsage writes the main help text: the commands, then every flag
// with its environment variable and default. Its Commands section is
// docs/cli.md's, and its flag tables are that page's configuration
// reference (TestDocsCLICommandsMatchHelp, TestDocsCLIFlagsMatchHelp).
func printUsage(w io.Writer) {
	fmt.Fprint(w, "LinkForge: a self-hosted link shortener.\n\nUsage:\n  linkforge [COMMAND] [FLAGS]\n\nCommands:\n")
	printCommandList(w, commands)
	fmt.Fprint(w, "\nRun 'linkforge COMMAND --help' for a command's own usage and flags.\n"+
		"Flags go before or after the command. Each has an environment variable;\n"+
		"a flag on the command line beats the variable, which beats the default.\n"+
		"A boolean flag alone means true (--force); --force=false turns it off.\n"+
		"--version prints the version and exits.\n\n")
	printFlags(w, globalFlags)
	fmt.Fprint(w, "\nToken, import and export flags:\n\n")
	printFlags(w, []flagSpec{tenantFlag, nameFlag, roleFlag, emailFlag, operatorFlag, formatFlag})
	fmt.Fprint(w, "\nBackup and restore flags:\n\n")
	printFlags(w, []flagSpec{outFlag, forceFlag, fromFlag})
	fmt.Fprint(w, "\nTenant quota flags:\n\n")
	printFlags(w, []flagSpec{maxLinksFlag, maxClicksFlag})
	fmt.Fprint(w, "\nDomain flags:\n\n")
	printFlags(w, []flagSpec{aasaFlag, assetLinksFlag})
	printLinkUsage(w)
}

// printCommandList writes each command's synopsis, its summary indented
// below it.
func printCommandList(w io.Writer, cmds []*command) {
	for _, c := range cmds {
		fmt.Fprintf(w, "  %s\n      %s\n", c.synopsis, c.summary)
	}
}

// printGroupUsage is the help of a command group: its actions.
func printGroupUsage(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage:\n  linkforge %s ACTION [FLAGS]\n\nActions:\n", group)
	var cmds []*command
	for _, c := range commands {
		if strings.HasPrefix(c.name, group+" ") {
			cmds = append(cmds, c)
		}
	}
	printCommandList(w, cmds)
	fmt.Fprintf(w, "\nRun 'linkforge %s ACTION --help' for an action's flags.\n", group)
}

// printCommandUsage is one command's help: its synopsis, summary and own
// flags, then the global flags by name.
func printCommandUsage(w io.Writer, c *command, cc *cobra.Command) {
	// "linkforge [serve]": its own help is asked as linkforge serve.
	synopsis := strings.Replace(c.synopsis, "[serve]", "serve", 1)
	fmt.Fprintf(w, "Usage:\n  %s\n\n%s.\n", synopsis, capitalize(c.summary))
	specs := map[string]flagSpec{}
	for _, f := range c.flags {
		specs[f.name] = f
	}
	skip := map[string]bool{"help": true, versionFlag: true}
	for _, f := range globalFlags {
		skip[f.name] = true
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := false
	cc.Flags().VisitAll(func(f *pflag.Flag) {
		if skip[f.Name] {
			return
		}
		if !header {
			fmt.Fprint(tw, "\nFlags:\n\n  FLAG\tENVIRONMENT\tDEFAULT\tMEANING\n")
			header = true
		}
		spec, ok := specs[f.Name]
		env, def, arg := "-", f.DefValue, flagArgs[f.Name]
		if ok {
			env, def, arg = spec.env(), spec.def, spec.arg
		}
		if def == "" || def == "[]" {
			def = `""`
		}
		if f.Value.Type() == "bool" {
			arg = ""
		} else if arg == "" {
			arg = "VALUE"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", strings.TrimSpace("--"+f.Name+" "+arg), env, def, f.Usage)
	})
	tw.Flush()
	if c.name == "serve" {
		// The global flags are the server's configuration: in full.
		fmt.Fprint(w, "\nFlags:\n\n")
		printFlags(w, globalFlags)
		return
	}
	var global []string
	for _, f := range globalFlags {
		global = append(global, "--"+f.name)
	}
	fmt.Fprintf(w, "\nGlobal flags (see linkforge --help): %s.\n", strings.Join(global, ", "))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// printFlags writes specs as a table with their environment variables.
func printFlags(w io.Writer, specs []flagSpec) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  FLAG\tENVIRONMENT\tDEFAULT\tMEANING")
	for _, f := range specs {
		def := f.def
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", strings.TrimSpace("--"+f.name+" "+f.arg), f.env(), def, f.usage)
	}
	tw.Flush()
}
