# syntax=docker/dockerfile:1

# LinkForge image: a static binary on distroless, running as a non-root user.
#   docker build -t linkforge .
# A release image is stamped as scripts/release stamps its binaries:
#   docker build -t linkforge:v0.4.0 --build-arg VERSION=v0.4.0 \
#     --build-arg COMMIT=$(git rev-parse HEAD) --build-arg DATE=$(git log -1 --format=%cI) .
#   docker run -p 8080:8080 -v linkforge-data:/data linkforge
# docker-compose.yml runs two nodes of it on one PostgreSQL.

# Base images are pinned by digest, the tag beside it saying what the image
# is: a rebuild gets the same bytes, and moving to a newer image is a
# reviewed commit, not a side effect of a rebuild. To bump one, read the
# multi-platform index digest of the tag and replace the pin:
#   docker buildx imagetools inspect golang:1.26 | grep -m1 Digest
#   docker buildx imagetools inspect gcr.io/distroless/static-debian12:nonroot | grep -m1 Digest
# (or `crane digest IMAGE:TAG`). TestContainerLint (cmd/linkforge) checks
# that every FROM is pinned this way.
FROM golang:1.26@sha256:3aff6657219a4d9c14e27fb1d8976c49c29fddb70ba835014f477e1c70636647 AS build
WORKDIR /src
# Dependencies first, so that a code change does not download them again.
# The Go client is a module of its own, which the CLI requires (replace
# ./client): go mod download reads its go.mod too.
COPY go.mod go.sum ./
COPY client/go.mod client/go.sum ./client/
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# Pure Go (modernc SQLite, pgx): CGO off gives a static binary that runs on
# distroless/static. The same flags as scripts/release (TestReleaseBuildsAlike);
# without the build args, `linkforge version` says devel.
ARG VERSION=""
ARG COMMIT=""
ARG DATE=""
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" \
      -o /out/linkforge ./cmd/linkforge
# The data dir must exist and belong to the runtime user before a volume is
# mounted on it: a new named volume copies its owner and mode.
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot@sha256:d093aa3e30dbadd3efe1310db061a14da60299baff8450a17fe0ccc514a16639
COPY --from=build /out/linkforge /linkforge
COPY --from=build --chown=65532:65532 /out/data /data
# The node journal (and the SQLite database when no database URL is given).
VOLUME /data
ENV LINKFORGE_DATA_DIR=/data \
    LINKFORGE_ADDR=:8080
EXPOSE 8080
USER 65532:65532
# distroless has no shell or curl: the binary probes itself.
HEALTHCHECK --interval=10s --timeout=6s --start-period=30s --retries=3 CMD ["/linkforge", "healthcheck"]
ENTRYPOINT ["/linkforge"]
CMD ["serve"]
