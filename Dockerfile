# syntax=docker/dockerfile:1
# Builds the apf-operator image: one static binary on a distroless, non-root base.
#   docker build -t ghcr.io/apf-operator/apf-operator:dev .

FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
WORKDIR /workspace

# Download modules first so that source changes do not invalidate this layer.
COPY go.mod go.sum ./
RUN go mod download

COPY . .
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /apf-operator .

FROM gcr.io/distroless/static:nonroot
COPY --from=builder /apf-operator /apf-operator
USER 65532:65532
ENTRYPOINT ["/apf-operator"]
