package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/linkforge/linkforge/client"
)

// exampleServer starts a LinkForge server on a fresh SQLite database, with
// tenant acme and a token of it, for the examples; yours runs elsewhere.
func exampleServer(live bool) (srv *server, stop func()) {
	env := newExampleT()
	return newServer(env, serverOpts{live: live}), env.close
}

func ExampleClient_CreateLink() {
	srv, stop := exampleServer(false)
	defer stop()
	ctx := context.Background()

	c, err := client.New(srv.URL, srv.Token) // e.g. "https://sho.rt", os.Getenv("LINKFORGE_TOKEN")
	if err != nil {
		log.Fatal(err)
	}
	link, err := c.CreateLink(ctx, client.NewLink{
		URL:       "https://example.com/spring-sale",
		Slug:      "spring",
		Tags:      []string{"launch"},
		MaxClicks: client.Ptr(int64(1000)),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(link.ShortURL, link.Tags, *link.MaxClicks)

	// A problem answer is a *client.Error: the status, the code for
	// programs, the title and detail for people, the fields at fault.
	_, err = c.CreateLink(ctx, client.NewLink{URL: "https://example.com/other", Slug: "spring"})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code, apiErr.Fields[0].Field)
	}
	// Output:
	// http://lf.test:8080/spring [launch] 1000
	// 409 conflict slug
}

func ExampleClient_Links() {
	srv, stop := exampleServer(false)
	defer stop()
	ctx := context.Background()
	c, _ := client.New(srv.URL, srv.Token)
	for _, slug := range []string{"docs", "blog", "shop", "jobs"} {
		if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/" + slug, Slug: slug, Tags: []string{"site"}}); err != nil {
			log.Fatal(err)
		}
	}

	// Links fetches page after page (here two links a page) as the loop
	// goes on.
	for link, err := range c.Links(ctx, client.ListOptions{Tags: []string{"site"}, Sort: "slug", Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(link.Slug, link.URL)
	}
	// Output:
	// blog https://example.com/blog
	// docs https://example.com/docs
	// jobs https://example.com/jobs
	// shop https://example.com/shop
}

func ExampleClient_LinkStats() {
	srv, stop := exampleServer(false)
	defer stop()
	ctx := context.Background()
	c, _ := client.New(srv.URL, srv.Token)
	if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: "promo"}); err != nil {
		log.Fatal(err)
	}
	// Visitors click; the server counts and flushes the clicks (here at
	// once).
	srv.click("promo", "https://news.example.org/")
	srv.click("promo", "https://news.example.org/")
	srv.click("promo", "")
	srv.flush()

	stats, err := c.LinkStats(ctx, "promo", client.StatsOptions{Interval: "hour", From: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("total", stats.Total)

	refs, err := c.LinkBreakdown(ctx, "promo", client.DimReferrer, client.RangeOptions{Limit: 5})
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range refs.Values {
		fmt.Println(v.Value, v.Count)
	}
	// Output:
	// total 3
	// news.example.org 2
	// direct 1
}

func ExampleClient_Subscribe() {
	srv, stop := exampleServer(true)
	defer stop()
	c, _ := client.New(srv.URL, srv.Token)
	if _, err := c.CreateLink(context.Background(), client.NewLink{URL: "https://example.com/", Slug: "live"}); err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clicks := make(chan struct{})
	var stopVisitors sync.Once
	visitorsDone := make(chan struct{})
	go func() { // visitors
		defer close(visitorsDone)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-clicks:
				return
			case <-tick.C:
				srv.click("live", "")
			}
		}
	}()
	// Subscribe blocks, reconnecting with backoff, until ctx ends or the
	// token is revoked.
	seen := false // fn is called from one goroutine
	err := c.Subscribe(ctx, func(ev client.LiveEvent) {
		switch {
		case ev.Type == client.LiveConnected:
			fmt.Println("connected") // also after each reconnection: reload state here
		case ev.Type == client.LiveClicks && !seen:
			seen = true
			fmt.Println("clicks on", ev.Slug)
			stopVisitors.Do(func() { close(clicks) })
			cancel()
		}
	})
	fmt.Println(errors.Is(err, context.Canceled))
	// A click may be in flight when the feed's first delta arrives: the
	// server stops only after the visitors have.
	stopVisitors.Do(func() { close(clicks) })
	<-visitorsDone
	// Output:
	// connected
	// clicks on live
	// true
}
