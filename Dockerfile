# syntax=docker/dockerfile:1
# Builds the apf-operator image with a Docker engine: the same files as `make image` (which needs
# no Docker), because both come from hack/image: /apf-operator (static, -trimpath), its SPDX SBOM
# at /sbom/apf-operator.spdx.json, /etc/passwd and /etc/group with nonroot (65532), and /tmp.
#   docker build -t ghcr.io/apf-operator/apf-operator:v0.1.0 --build-arg VERSION=v0.1.0 \
#     --build-arg REVISION=$(git rev-parse HEAD) --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) .
# `apf-operator version` in the image prints VERSION, REVISION and SOURCE_DATE_EPOCH's date.
#   docker buildx build --platform linux/amd64,linux/arm64 ...   (cross-compiled, no emulation)

# The builder runs on the build machine's platform and cross-compiles for the target's.
FROM --platform=$BUILDPLATFORM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ARG REVISION=""
ARG SOURCE_DATE_EPOCH=0
WORKDIR /workspace

# Download modules first so that source changes do not invalidate this layer.
COPY go.mod go.sum ./
COPY hack/image/go.mod hack/image/go.sum hack/image/
RUN go mod download && cd hack/image && go mod download

COPY . .
RUN cd hack/image && go run . rootfs --repo /workspace --out /rootfs \
    --platform ${TARGETOS:-linux}/${TARGETARCH} --version ${VERSION} --revision "${REVISION}" --source-date-epoch ${SOURCE_DATE_EPOCH}

FROM scratch
ARG VERSION=dev
ARG REVISION=""
COPY --from=builder /rootfs/ /
USER 65532:65532
ENTRYPOINT ["/apf-operator"]
LABEL org.opencontainers.image.title="apf-operator" \
      org.opencontainers.image.description="Kubernetes operator for API Priority and Fairness configuration" \
      org.opencontainers.image.source="https://github.com/apf-operator/apf-operator" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
