#!/bin/sh
# refresh.sh brings classify/patterns/isbot.txt up to the newest isbot
# release on the npm registry (or the version given as $1) and regenerates
# classify/bots_gen.go. Run it from anywhere; it needs npm, tar and go.
# Review the diff and run the corpus test before committing:
#   go test -run 'TestAutomated|TestCorpus' ./classify/
set -eu
here=$(cd "$(dirname "$0")" && pwd)
spec="isbot@${1:-latest}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
tgz=$(npm pack --silent "$spec")
version=$(npm view --silent "$spec" version)
tar xzf "$tgz" package/index.js package/LICENSE
cp package/LICENSE "$here/LICENSE.isbot"
cd "$here/.."
go run ./patterns/gen.go -extract "$tmp/package/index.js" -version "$version" -list patterns/isbot.txt
go generate ./
