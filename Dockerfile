# syntax=docker/dockerfile:1
#
# browserfleet's two images, from one file:
#
#   docker build --target controller -t ghcr.io/browserfleet/browserfleet:v0.1.0 .
#   docker build --target runner     -t ghcr.io/browserfleet/runner:v0.1.0 .
#
# controller: /manager, /api and /bfkeys on distroless static, non-root.
# runner:     /usr/local/bin/runner with Debian's Chromium (and its headless
#             shell) and fonts, non-root.
#
# test/chart checks that every path and package named here exists.

# Versions of what the images are built from.
ARG GO_VERSION=1.26
ARG DEBIAN_RELEASE=bookworm
ARG DISTROLESS_IMAGE=gcr.io/distroless/static-debian12:nonroot

# ---------------------------------------------------------------- builder
FROM golang:${GO_VERSION} AS builder
ARG TARGETOS=linux
ARG TARGETARCH=amd64
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cache/ cache/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY engine/ engine/
COPY gateway/ gateway/
COPY quota/ quota/
COPY runner/ runner/
COPY runnertoken/ runnertoken/
COPY search/ search/
COPY server/ server/
COPY startlatency/ startlatency/
COPY store/ store/
COPY tracing/ tracing/
# Static binaries: the controller image has no libc.
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/manager ./cmd/api ./cmd/runner ./cmd/bfkeys

# ---------------------------------------------------------------- runner
# One per session: the runner and the browser it supervises. Runner pods run
# it with a read-only root filesystem; /tmp (HOME, Chromium's profile, its
# downloads) and /dev/shm are volumes the pod mounts (controllers/runner_pod.go).
FROM debian:${DEBIAN_RELEASE}-slim AS runner
ARG VERSION=dev
# Empty: the release's current Chromium; else a Debian version string.
# chromium-headless-shell, the headless-only build of the same release, runs
# headless sessions in less memory (docs/performance.md); the full browser
# runs the others.
ARG CHROMIUM_VERSION=
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      chromium${CHROMIUM_VERSION:+=${CHROMIUM_VERSION}} \
      chromium-headless-shell${CHROMIUM_VERSION:+=${CHROMIUM_VERSION}} \
      fonts-liberation fonts-noto-cjk fonts-noto-color-emoji \
      ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
COPY --from=builder /out/runner /usr/local/bin/runner
LABEL org.opencontainers.image.title="browserfleet runner" \
      org.opencontainers.image.source="https://github.com/browserfleet/browserfleet" \
      org.opencontainers.image.version="${VERSION}"
ENV HOME=/tmp
USER 65532:65532
WORKDIR /tmp
VOLUME ["/tmp"]
EXPOSE 8080
# tini reaps the helpers Chromium leaves behind (docs/runner.md).
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/runner"]

# ---------------------------------------------------------------- controller
# The manager and the API server; the chart picks one with its command.
FROM ${DISTROLESS_IMAGE} AS controller
ARG VERSION=dev
COPY --from=builder /out/manager /out/api /out/bfkeys /
LABEL org.opencontainers.image.title="browserfleet" \
      org.opencontainers.image.source="https://github.com/browserfleet/browserfleet" \
      org.opencontainers.image.version="${VERSION}"
USER 65532:65532
ENTRYPOINT ["/manager"]
