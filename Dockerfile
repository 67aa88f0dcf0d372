# syntax=docker/dockerfile:1
#
# clickrecon: a static binary in a distroless image, run as non-root.
#
#   docker build -t clickrecon:$(git describe --tags --always) \
#     --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run --rm clickrecon:... version
#
# The default image writes reports to a folder or to s3:// only. For
# gs:// (Google Cloud Storage) and azblob:// (Azure Blob Storage), build
# the full variant, which adds their drivers (about 30 MB of binary):
#   docker build --build-arg TAGS="gcs azblob" -t clickrecon:...-full .
#
# For reproducible builds, pin the base images by digest as well
# (golang:1.26.8-bookworm@sha256:..., see `docker buildx imagetools inspect`).

# The build runs on the builder's own platform and cross-compiles: with
# CGO_ENABLED=0 (SQLite is modernc.org/sqlite, pure Go) no C toolchain is
# needed, so a multi-platform build (--platform linux/amd64,linux/arm64)
# needs no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26.8-bookworm AS build
WORKDIR /src

# The Go in the image must be the one go.mod asks for: never download
# another toolchain during a build.
ENV GOTOOLCHAIN=local CGO_ENABLED=0

# No `go mod download` layer: it would fetch every module go.mod lists,
# the optional drivers' SDKs included (about 500 MB of Google Cloud
# libraries). The build fetches only the modules it links, into a cache
# mount that keeps them between builds.
COPY . .
ARG VERSION=dev
ARG COMMIT=none
# Build tags of the optional report drivers: "gcs", "azblob", or both.
ARG TAGS=""
ARG TARGETOS TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -buildvcs=false -tags "${TAGS}" \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/clickrecon ./cmd/clickrecon

# static-debian12 has CA certificates and /etc/passwd, and nothing else: no
# shell, no package manager. Its nonroot tag runs as 65532:65532.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG COMMIT=none
LABEL org.opencontainers.image.title="clickrecon" \
      org.opencontainers.image.description="Reconciles Elido click analytics with your own click store, day by day" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"

COPY --from=build /out/clickrecon /clickrecon
# The reference schemas, the set-up SQL and the job's migrations of the
# release, for users who apply them by hand. The image has no shell and no
# tar, so kubectl cp cannot fetch them; copy them out of a container that
# is created and never started:
#   docker create --name clickrecon-sql IMAGE
#   docker cp clickrecon-sql:/sql ./sql && docker rm clickrecon-sql
# The binary embeds the same files (embed.go): migrate and the demo do not
# read these.
COPY sql/ /sql/

USER 65532:65532
ENTRYPOINT ["/clickrecon"]
CMD ["run"]
