package main

// The QR commands: linkforge link qr (the code's image, to a file), qr
// logo set|delete and qr defaults (the tenant's or a domain's branding).
// Clients of a running server's admin API, as the link commands.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/linkforge/linkforge/client"
)

// qrOptions are the parsed flags of the QR commands.
type qrOptions struct {
	image    client.QROptions // link qr
	out      string           // link qr: the file ("-": stdout)
	domain   string           // qr logo, qr defaults: the domain's (""; the tenant's)
	defaults map[string]string
}

// qrLookFlags are the look's flags of link qr and qr defaults.
var qrLookFlags = []struct{ name, arg, usage string }{
	{"fg", "COLOUR", "module colour, #rgb or #rrggbb (dark on light, contrast at least 3:1)"},
	{"bg", "COLOUR", "background colour, #rgb or #rrggbb"},
	{"ec", "LEVEL", "error correction: L, M, Q or H (H with a logo)"},
	{"margin", "N", "quiet zone in modules, 0 to 16"},
}

// qrFlagArgs are the placeholders of the QR commands' flags, for the help.
var qrFlagArgs = map[string]string{"fg": "COLOUR", "bg": "COLOUR", "ec": "LEVEL", "margin": "N", "out": "FILE", "size": "PIXELS", "format": "FORMAT", "domain": "HOST"}

// qrExtra registers the flags of a QR command on fs and returns their
// check: action is "image" (link qr), "logo" or "defaults".
func qrExtra(action string) func(fs *pflag.FlagSet) func(*invocation, func(flagSpec) (string, string)) error {
	return func(fs *pflag.FlagSet) func(*invocation, func(flagSpec) (string, string)) error {
		var jsonOut *bool
		if action != "image" {
			jsonOut = fs.Bool("json", false, "print the API's JSON")
		}
		str := map[string]*string{}
		look := action == "image" || action == "defaults"
		if look {
			for _, f := range qrLookFlags {
				usage := f.usage
				if action == "defaults" {
					usage += "; none: unset"
				}
				str[f.name] = fs.String(f.name, "", usage)
			}
		}
		switch action {
		case "image":
			str["format"] = fs.String("format", "", "png (default) or svg")
			str["size"] = fs.String("size", "", "width and height in pixels, 64 to 2048 (default 256)")
			str["out"] = fs.String("out", "", "the file to write (- : stdout); required")
			str["domain"] = fs.String("domain", "", "the link's domain (default: the tenant's default)")
		default:
			str["domain"] = fs.String("domain", "", "a domain's instead of the tenant's (an owner's)")
		}
		return func(inv *invocation, value func(flagSpec) (string, string)) error {
			o := &inv.link
			o.json = jsonOut != nil && *jsonOut
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
			q := &o.qr
			q.domain = *str["domain"]
			if action != "image" && q.domain == "" && o.set["domain"] {
				return usagef("%s: --domain needs a host", name)
			}
			if !look {
				return nil
			}
			if action == "defaults" {
				q.defaults = map[string]string{}
				for _, f := range qrLookFlags {
					if o.set[f.name] {
						q.defaults[f.name] = *str[f.name]
					}
				}
				if m, ok := q.defaults["margin"]; ok && m != "none" {
					if _, err := o.intFlag(name, "margin", m, 0); err != nil {
						return err
					}
				}
				return nil
			}
			q.out = *str["out"]
			if q.out == "" {
				return usagef("%s: --out FILE is required (- for stdout)", name)
			}
			img := &q.image
			img.Format, img.FG, img.BG, img.EC, img.Domain = *str["format"], *str["fg"], *str["bg"], *str["ec"], q.domain
			var err error
			if img.Size, err = o.intFlag(name, "size", *str["size"], 1); err != nil {
				return err
			}
			if o.set["margin"] {
				m, err := o.intFlag(name, "margin", *str["margin"], 0)
				if err != nil {
					return err
				}
				img.Margin = &m
			}
			return nil
		}
	}
}

// linkQR writes the link's QR code image to --out.
func (a *app) linkQR(inv invocation) int {
	q := inv.link.qr
	img, ct, err := inv.link.client.QR(a.ctx, inv.args[0], q.image)
	if err != nil {
		return a.apiFailed("cannot get QR code", err)
	}
	if q.out == "-" {
		if _, err := a.stdout.Write(img); err != nil {
			return a.fail("cannot write QR code", err)
		}
		return exitOK
	}
	if err := os.WriteFile(q.out, img, 0o644); err != nil { //nolint:gosec // G306: an image to print or publish, not a secret
		return a.fail("cannot write QR code", err)
	}
	fmt.Fprintf(a.stderr, "wrote %s (%s, %d bytes)\n", q.out, ct, len(img))
	return exitOK
}

// logoType is the media type of a logo file: by its first bytes, PNG's
// signature, else SVG (the server checks either).
func logoType(b []byte) string {
	if bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		return "image/png"
	}
	return "image/svg+xml"
}

func (a *app) qrLogoSet(inv invocation) int {
	path := inv.args[0]
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return a.fail("cannot read logo", err)
	}
	c, host := inv.link.client, inv.link.qr.domain
	if host == "" {
		err = c.SetQRLogo(a.ctx, logoType(b), b)
	} else {
		err = c.SetDomainQRLogo(a.ctx, host, logoType(b), b)
	}
	if err != nil {
		return a.apiFailed("cannot set QR logo", err)
	}
	if inv.link.json {
		return a.printJSON(map[string]any{"logo": path, "type": logoType(b), "bytes": len(b)})
	}
	fmt.Fprintf(a.stdout, "QR logo set: %s (%s, %d bytes)\n", path, logoType(b), len(b))
	return exitOK
}

func (a *app) qrLogoDelete(inv invocation) int {
	c, host := inv.link.client, inv.link.qr.domain
	var err error
	if host == "" {
		err = c.DeleteQRLogo(a.ctx)
	} else {
		err = c.DeleteDomainQRLogo(a.ctx, host)
	}
	if err != nil {
		return a.apiFailed("cannot delete QR logo", err)
	}
	return a.printDeleted(inv, map[string]any{}, "QR logo removed")
}

// qrDefaults prints the defaults; with look flags it first changes those
// (the others stay as they are: read, changed, written back).
func (a *app) qrDefaults(inv invocation) int {
	c, q := inv.link.client, inv.link.qr
	get := func() (client.QRDefaults, error) {
		if q.domain == "" {
			return c.QRDefaults(a.ctx)
		}
		return c.DomainQRDefaults(a.ctx, q.domain)
	}
	d, err := get()
	if err != nil {
		return a.apiFailed("cannot get QR defaults", err)
	}
	if len(q.defaults) > 0 {
		for name, v := range q.defaults {
			var p *string
			if v != "none" {
				p = &v
			}
			switch name {
			case "fg":
				d.FG = p
			case "bg":
				d.BG = p
			case "ec":
				d.EC = p
			case "margin":
				d.Margin = nil
				if p != nil {
					m, _ := strconv.Atoi(v) // checked by qrExtra
					d.Margin = &m
				}
			}
		}
		if q.domain == "" {
			d, err = c.SetQRDefaults(a.ctx, d)
		} else {
			d, err = c.SetDomainQRDefaults(a.ctx, q.domain, d)
		}
		if err != nil {
			return a.apiFailed("cannot set QR defaults", err)
		}
	}
	if inv.link.json {
		return a.printJSON(d)
	}
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	margin := "-"
	if d.Margin != nil {
		margin = strconv.Itoa(*d.Margin)
	}
	fmt.Fprintf(a.stdout, "fg %s\nbg %s\nec %s\nmargin %s\nlogo %s\n", str(d.FG), str(d.BG), str(d.EC), margin, strings.TrimPrefix(str(d.LogoType), "image/"))
	return exitOK
}
