// The SDK against a live LinkForge server: LINKFORGE_URL and LINKFORGE_TOKEN
// (an owner token) name it. .ci/sdk-typescript starts one on loopback with a
// short --flush-interval (the stats test waits for a click's flush) and a
// finite --rate-limit (the 429 test exhausts a fresh token's bucket).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createLinkForge, ProblemError, unwrap, type Link, type LiveMessage } from "../src/index.js";

const baseUrl = process.env.LINKFORGE_URL ?? "";
const token = process.env.LINKFORGE_TOKEN ?? "";
if (!baseUrl || !token) {
  throw new Error("set LINKFORGE_URL and LINKFORGE_TOKEN to a running server and an owner token of it (see README.md)");
}

// One run's links are told apart by a tag and a slug prefix, so that a
// server that keeps its data between runs does not change the counts.
const run = randomBytes(4).toString("hex");
const tag = `sdk-${run}`;
const lf = createLinkForge({ baseUrl, token });

async function create(slug: string, url = "https://example.com/" + slug): Promise<Link> {
  return unwrap(lf.api.POST("/api/v1/links", { body: { url, slug, tags: [tag] } }));
}

async function problemOf(call: Promise<unknown>): Promise<ProblemError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof ProblemError, `not a ProblemError: ${String(err)}`);
    return err;
  }
  assert.fail("the call succeeded; a problem was expected");
}

describe("links", () => {
  const slugs = [1, 2, 3, 4, 5].map((i) => `sdk-${run}-${i}`);

  before(async () => {
    for (const slug of slugs) {
      const link = await create(slug);
      assert.equal(link.slug, slug);
      assert.equal(link.url, `https://example.com/${slug}`);
      assert.deepEqual(link.tags, [tag]);
      assert.equal(link.clicks, 0);
    }
  });

  after(async () => {
    for (const slug of slugs.slice(1)) {
      await unwrap(lf.api.DELETE("/api/v1/links/{slug}", { params: { path: { slug } } }));
    }
  });

  test("list with cursors across pages", async () => {
    const pages = [];
    for await (const page of lf.linkPages({ tag: [tag], limit: 2, sort: "created" })) {
      pages.push(page);
    }
    assert.deepEqual(
      pages.map((p) => p.links.length),
      [2, 2, 1],
    );
    assert.ok(pages[0]?.next_cursor && pages[1]?.next_cursor, "a full page has a next_cursor");
    assert.equal(pages[2]?.next_cursor, "");
    const listed: string[] = [];
    for await (const link of lf.links({ tag: [tag], limit: 2 })) {
      listed.push(link.slug);
    }
    assert.deepEqual([...listed].sort(), [...slugs].sort());
  });

  test("update", async () => {
    const slug = slugs[1] ?? "";
    const link = await unwrap(
      lf.api.PATCH("/api/v1/links/{slug}", {
        params: { path: { slug } },
        body: { url: "https://example.org/updated", title: "Updated" },
      }),
    );
    assert.equal(link.url, "https://example.org/updated");
    assert.equal(link.title, "Updated");
    const read = await unwrap(lf.api.GET("/api/v1/links/{slug}", { params: { path: { slug } } }));
    assert.equal(read.url, "https://example.org/updated");
  });

  test("stats count a click", async () => {
    const slug = slugs[2] ?? "";
    const click = await fetch(`${baseUrl}/${slug}`, { redirect: "manual" });
    assert.equal(click.status, 302);
    assert.equal(click.headers.get("Location"), `https://example.com/${slug}`);
    // The click reaches the rollup at the server's next flush.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const stats = await unwrap(lf.api.GET("/api/v1/links/{slug}/stats", { params: { path: { slug } } }));
      if (stats.total === 1) {
        assert.equal((stats.human ?? 0) + (stats.automated ?? 0) + (stats.imported ?? 0), 1);
        break;
      }
      assert.equal(stats.total, 0);
      assert.ok(Date.now() < deadline, "the click was not counted within 30 s (is --flush-interval short?)");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  test("delete, then a 404 problem", async () => {
    const slug = slugs[0] ?? "";
    const gone = await unwrap(lf.api.DELETE("/api/v1/links/{slug}", { params: { path: { slug } } }));
    assert.equal(gone, undefined);
    const p = await problemOf(unwrap(lf.api.GET("/api/v1/links/{slug}", { params: { path: { slug } } })));
    assert.equal(p.status, 404);
    assert.equal(p.code, "not_found");
    assert.equal(p.response.headers.get("Content-Type"), "application/problem+json");
  });
});

describe("problems", () => {
  test("invalid input has field errors", async () => {
    const p = await problemOf(
      unwrap(lf.api.POST("/api/v1/links", { body: { url: "not a url", slug: "no spaces allowed" } })),
    );
    assert.equal(p.status, 400);
    assert.equal(p.code, "invalid");
    assert.equal(typeof p.type, "string");
    assert.ok(p.title.length > 0);
    const fields = p.errors.map((e) => e.field).sort();
    assert.deepEqual(fields, ["slug", "url"]);
    for (const e of p.errors) {
      assert.ok(e.detail.length > 0, `field ${e.field} has no detail`);
    }
  });

  test("a taken slug is a conflict", async () => {
    const slug = `sdk-${run}-taken`;
    await create(slug);
    const p = await problemOf(create(slug));
    assert.equal(p.status, 409);
    assert.equal(p.code, "conflict");
    await unwrap(lf.api.DELETE("/api/v1/links/{slug}", { params: { path: { slug } } }));
  });
});

describe("live feed", () => {
  test("a create arrives on the feed", { timeout: 60_000 }, async () => {
    const slug = `sdk-${run}-live`;
    const stop = new AbortController();
    let created: Promise<Link> | undefined;
    let message: LiveMessage | undefined;
    await lf.live(
      (m) => {
        if (m.type === "link" && m.link.slug === slug) {
          message = m;
          stop.abort();
        }
      },
      { signal: stop.signal, onOpen: () => (created = create(slug)) },
    );
    const link = await created;
    assert.ok(message?.type === "link" && message.op === "created", JSON.stringify(message));
    assert.equal(message.link.slug, slug);
    assert.equal(message.link.id, link?.id);
    await unwrap(lf.api.DELETE("/api/v1/links/{slug}", { params: { path: { slug } } }));
  });
});

describe("live feed refused", () => {
  test("an unknown token's feed rejects", { timeout: 60_000 }, async () => {
    const stranger = createLinkForge({ baseUrl, token: "lf_" + "A".repeat(43) });
    await assert.rejects(
      stranger.live(() => assert.fail("a message on a refused feed")),
      /the live feed was refused/,
    );
  });
});

describe("rate limit", () => {
  let limited = "";
  let id = "";

  before(async () => {
    // A token of its own: the limit is per token, so the other tests'
    // bucket is not drained.
    const made = await unwrap(lf.api.POST("/api/v1/tokens", { body: { name: `sdk-${run}`, role: "editor" } }));
    assert.ok(made.token?.startsWith("lf_"));
    limited = made.token ?? "";
    id = made.id;
  });

  after(async () => {
    await unwrap(lf.api.DELETE("/api/v1/tokens/{id}", { params: { path: { id } } }));
    const slug = `sdk-${run}-retried`;
    await unwrap(lf.api.DELETE("/api/v1/links/{slug}", { params: { path: { slug } } }));
  });

  test("a 429 carries Retry-After, and is waited out", async () => {
    const noRetry = createLinkForge({ baseUrl, token: limited, maxRetries: 0 });
    let p: ProblemError | undefined;
    for (let i = 0; i < 5000 && p === undefined; i++) {
      try {
        await unwrap(noRetry.api.GET("/api/v1/me"));
      } catch (err) {
        assert.ok(err instanceof ProblemError, String(err));
        p = err;
      }
    }
    assert.ok(p, "no 429 in 5000 requests: does the server run with --rate-limit 0?");
    assert.equal(p.status, 429);
    assert.equal(p.code, "rate_limited");
    assert.ok(p.retryAfter !== undefined && p.retryAfter >= 1, `Retry-After ${String(p.retryAfter)}`);

    // A Retry-After over maxRetryAfter is not waited out.
    const impatient = createLinkForge({
      baseUrl,
      token: limited,
      maxRetryAfter: 0,
      sleep: () => assert.fail("slept past maxRetryAfter"),
    });
    const refused = await problemOf(unwrap(impatient.api.GET("/api/v1/me")));
    assert.equal(refused.status, 429);

    // The same token with retries: the SDK waits Retry-After, then sends
    // the request again, body and all.
    const waits: number[] = [];
    const retrying = createLinkForge({
      baseUrl,
      token: limited,
      maxRetries: 3,
      sleep: (ms) => {
        waits.push(ms);
        return new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    const slug = `sdk-${run}-retried`;
    const link = await unwrap(
      retrying.api.POST("/api/v1/links", { body: { url: "https://example.com/retried", slug, tags: [tag] } }),
    );
    assert.equal(link.slug, slug);
    assert.equal(link.url, "https://example.com/retried");
    assert.ok(waits.length >= 1, "the first try was not refused");
    assert.ok(waits.every((ms) => ms >= 1000 && ms % 1000 === 0), `waits ${waits.join(",")}`);
  });
});
