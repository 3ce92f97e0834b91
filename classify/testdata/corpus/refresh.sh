#!/bin/sh
# refresh.sh rebuilds the labelled corpus from the npm registry (newest
# releases): browsers.txt from user-agents (Intoli, BSD-2-Clause: the
# distinct headers of its sample of real visitors) and top-user-agents
# (microlink, MIT: the most common browser headers), automated.txt from the
# example instances of crawler-user-agents (MIT). Needs npm, node and tar.
# Then: go test -run TestCorpus -v ./classify/
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
for p in user-agents top-user-agents crawler-user-agents; do
	mkdir "$p"
	tar xzf "$(npm pack --silent "$p")" -C "$p"
done
cp user-agents/package/LICENSE "$here/LICENSE.user-agents"
cp top-user-agents/package/LICENSE.md "$here/LICENSE.top-user-agents"
cp crawler-user-agents/package/LICENSE "$here/LICENSE.crawler-user-agents"
node -e '
const fs = require("fs");
const uniq = (a) => [...new Set(a.filter((s) => s && !s.includes("\n")))].sort();
const ua = JSON.parse(fs.readFileSync("user-agents/package/dist/user-agents.json"));
const top = JSON.parse(fs.readFileSync("top-user-agents/package/src/index.json"));
const bots = JSON.parse(fs.readFileSync("crawler-user-agents/package/crawler-user-agents.json"));
fs.writeFileSync(process.argv[1] + "/browsers.txt", uniq([...ua.map((x) => x.userAgent), ...top]).join("\n") + "\n");
fs.writeFileSync(process.argv[1] + "/automated.txt", uniq(bots.flatMap((x) => x.instances || [])).join("\n") + "\n");
' "$here"
