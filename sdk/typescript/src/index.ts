// The hand-written layer over the generated client (schema.ts, from
// web/openapi.json by openapi-typescript; calls by openapi-fetch). It adds
// only what the generated one does awkwardly: the token, problems as a
// typed error, waiting out Retry-After on 429 and 503, cursor pagination
// as an async iterator, and the live feed (a WebSocket, which the document
// describes only in prose). Every operation stays reachable, fully typed,
// through `api`.
import createClient, { type Client } from "openapi-fetch";
import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

export type Link = components["schemas"]["Link"];
export type LinkCreate = components["schemas"]["LinkCreate"];
export type LinkPatch = components["schemas"]["LinkPatch"];
export type LinkList = components["schemas"]["LinkList"];
export type Stats = components["schemas"]["Stats"];
export type Problem = components["schemas"]["Problem"];
export type FieldError = components["schemas"]["FieldError"];
export type ProblemCode = NonNullable<Problem["code"]>;
/** The filters and sort of GET /api/v1/links, without the cursor. */
export type LinkQuery = Omit<NonNullable<operations["listLinks"]["parameters"]["query"]>, "cursor">;

/**
 * A problem+json answer (RFC 9457) as an error: the server's fields, and
 * Retry-After in seconds when the server sent one (429).
 */
export class ProblemError extends Error {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly code?: ProblemCode;
  /** Field errors: which JSON member or query parameter, and why. */
  readonly errors: FieldError[];
  readonly retryAfter?: number;
  readonly response: Response;

  constructor(problem: Problem, response: Response) {
    super(problem.detail ? `${problem.title}: ${problem.detail}` : problem.title);
    this.name = "ProblemError";
    this.type = problem.type;
    this.title = problem.title;
    this.status = problem.status;
    this.detail = problem.detail;
    this.code = problem.code;
    this.errors = problem.errors ?? [];
    this.retryAfter = retryAfterSeconds(response);
    this.response = response;
  }
}

/** Options of {@link createLinkForge}. */
export interface Options {
  /** The server's public URL, e.g. http://127.0.0.1:8080 (no /api/v1). */
  baseUrl: string;
  /** An API token (`linkforge token create`). */
  token: string;
  /**
   * How many times a 429 or 503 is sent again after waiting its
   * Retry-After (1 s when absent), as the Go client does. Default 3; 0
   * answers the first refusal.
   */
  maxRetries?: number;
  /** A longer Retry-After (seconds) is not waited out but thrown. Default 30. */
  maxRetryAfter?: number;
  /** The wait between tries (for tests, or to log); default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** The fetch to use; default globalThis.fetch. */
  fetch?: (input: Request) => Promise<Response>;
}

/** The SDK: the generated client and the helpers around it. */
export interface LinkForge {
  /** The generated client: every operation of the OpenAPI document. */
  api: Client<paths>;
  /** Every link matching the query, across all pages, each once. */
  links(query?: LinkQuery): AsyncGenerator<Link, void, undefined>;
  /** The pages of GET /api/v1/links, following next_cursor to the end. */
  linkPages(query?: LinkQuery): AsyncGenerator<LinkList, void, undefined>;
  /**
   * Follows the live feed (GET /api/v1/live, a WebSocket) until the signal
   * aborts or the server closes it; resolves with the close code. One
   * connection, no reconnect: messages sent while disconnected are lost,
   * so reconnect with backoff and reload the list and stats (and do not
   * reconnect after 4001, a revoked token).
   */
  live(onMessage: (message: LiveMessage) => void, options?: LiveOptions): Promise<LiveClose>;
}

/** A message of the live feed (docs/dashboard.md, "The live feed"). */
export type LiveMessage =
  | { type: "clicks"; link: string; bucket: string; count: number; human?: number; total?: number }
  | { type: "expired"; link: string; at: string }
  | { type: "link"; op: "created" | "updated"; link: Link }
  | { type: "link"; op: "deleted"; link: { id: string; slug: string } };

/** Options of {@link LinkForge.live}. */
export interface LiveOptions {
  /** Closes the feed (code 1000). */
  signal?: AbortSignal;
  /** Called once the feed is open: load the state the messages update. */
  onOpen?: () => void;
  /**
   * The WebSocket class; default globalThis.WebSocket (browsers, Node.js
   * 22, Node.js 20 with --experimental-websocket).
   */
  WebSocket?: new (url: string, protocols?: string[]) => WebSocket;
}

/** How the live feed ended. */
export interface LiveClose {
  code: number;
  reason: string;
}

/** Creates the SDK for one server and token. */
export function createLinkForge(options: Options): LinkForge {
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { Authorization: `Bearer ${options.token}` },
    fetch: retryingFetch(options),
  });
  async function* linkPages(query: LinkQuery = {}): AsyncGenerator<LinkList, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await unwrap(api.GET("/api/v1/links", { params: { query: { ...query, cursor } } }));
      yield page;
      cursor = page.next_cursor || undefined;
    } while (cursor !== undefined);
  }
  async function* links(query: LinkQuery = {}): AsyncGenerator<Link, void, undefined> {
    for await (const page of linkPages(query)) {
      yield* page.links;
    }
  }
  function live(onMessage: (message: LiveMessage) => void, liveOptions: LiveOptions = {}): Promise<LiveClose> {
    const Socket = liveOptions.WebSocket ?? globalThis.WebSocket;
    if (Socket === undefined) {
      return Promise.reject(new Error("no WebSocket: pass one in LiveOptions (Node.js 20: --experimental-websocket)"));
    }
    if (liveOptions.signal?.aborted) {
      return Promise.resolve({ code: 1000, reason: "aborted before it opened" });
    }
    const url = `${options.baseUrl.replace(/\/+$/, "").replace(/^http/, "ws")}/api/v1/live`;
    return new Promise((resolve, reject) => {
      // The subprotocols carry the token: a browser's WebSocket cannot set
      // an Authorization header, and the server takes both.
      const ws = new Socket(url, ["linkforge.v1", `bearer.${options.token}`]);
      let opened = false;
      const abort = () => ws.close(1000);
      liveOptions.signal?.addEventListener("abort", abort, { once: true });
      ws.addEventListener("open", () => {
        opened = true;
        liveOptions.onOpen?.();
      });
      ws.addEventListener("message", (ev: MessageEvent) => {
        if (typeof ev.data === "string") {
          onMessage(JSON.parse(ev.data) as LiveMessage);
        }
      });
      const refused = (how: string) => {
        liveOptions.signal?.removeEventListener("abort", abort);
        reject(new Error(`the live feed was refused (${how}): check the URL, the token and the rate limit`));
      };
      // A refused handshake is an error event; Node.js 20's WebSocket sends
      // no close event after it, so it settles the promise here.
      ws.addEventListener("error", () => {
        if (!opened) {
          refused("handshake failed");
        }
      });
      ws.addEventListener("close", (ev: CloseEvent) => {
        liveOptions.signal?.removeEventListener("abort", abort);
        if (opened) {
          resolve({ code: ev.code, reason: ev.reason });
        } else {
          refused(`close ${ev.code}`);
        }
      });
    });
  }
  return { api, links, linkPages, live };
}

/** The result shape of every call of the generated client. */
type Result = { data?: unknown; error?: unknown; response: Response };
/** The data of a call's success branch (undefined for a 204). */
export type DataOf<R> = R extends { data: infer D; error?: never } ? D : never;

/**
 * The data of a call of the generated client, or a {@link ProblemError}
 * when the server answered a problem (any other failure: an Error with the
 * status). A 204 resolves to undefined.
 *
 *     const link = await unwrap(lf.api.POST("/api/v1/links", { body: { url } }));
 */
export async function unwrap<R extends Result>(call: Promise<R>): Promise<DataOf<R>> {
  const result = await call;
  if (result.response.ok) {
    return result.data as DataOf<R>;
  }
  if (isProblem(result.error)) {
    throw new ProblemError(result.error, result.response);
  }
  throw new Error(`${result.response.status} ${result.response.statusText} from ${result.response.url}`);
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== "object" || body === null) {
    return false;
  }
  const p = body as Record<string, unknown>;
  return typeof p.type === "string" && typeof p.title === "string" && typeof p.status === "number";
}

// retryAfterSeconds reads Retry-After as the server sends it: whole seconds.
// (An HTTP date is allowed by RFC 9110 but LinkForge never sends one.)
function retryAfterSeconds(response: Response): number | undefined {
  const raw = response.headers.get("Retry-After");
  if (raw === null || !/^\d+$/.test(raw.trim())) {
    return undefined;
  }
  return Number(raw.trim());
}

// retryingFetch sends a request again after Retry-After on a 429 or 503:
// the admin API's rate limit is per token, and a burst (a bulk script) is
// refused for about a second; a 503 is a database that is briefly away.
// The request is cloned before each try because a sent body is consumed.
function retryingFetch(options: Options): (input: Request) => Promise<Response> {
  const send = options.fetch ?? ((input: Request) => globalThis.fetch(input));
  const maxRetries = options.maxRetries ?? 3;
  const maxWait = options.maxRetryAfter ?? 30;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  return async (request: Request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await send(attempt < maxRetries ? request.clone() : request);
      if (attempt >= maxRetries || (response.status !== 429 && response.status !== 503)) {
        return response;
      }
      const wait = retryAfterSeconds(response) ?? 1;
      if (wait > maxWait) {
        return response;
      }
      // The refused answer's body is not read: release its connection.
      await response.body?.cancel();
      await sleep(wait * 1000);
    }
  };
}
