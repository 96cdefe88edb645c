module github.com/apf-operator/apf-operator/hack/image

go 1.26.0

require (
	github.com/google/go-containerregistry v0.22.1
	github.com/spdx/tools-golang v0.5.7
)

require (
	github.com/anchore/go-struct-converter v0.1.0 // indirect
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	golang.org/x/sync v0.22.0 // indirect
)
