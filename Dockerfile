# syntax=docker/dockerfile:1

# LinkForge image: a static binary on distroless, running as a non-root user.
#   docker build -t linkforge .
#   docker run -p 8080:8080 -v linkforge-data:/data linkforge
# docker-compose.yml runs two nodes of it on one PostgreSQL.

FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so that a code change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# Pure Go (modernc SQLite, pgx): CGO off gives a static binary that runs on
# distroless/static.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/linkforge ./cmd/linkforge
# The data dir must exist and belong to the runtime user before a volume is
# mounted on it: a new named volume copies its owner and mode.
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
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
