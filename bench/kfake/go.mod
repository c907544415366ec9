module mockbroker/bench/kfake

go 1.26.0

// kfake's own go.mod asks for franz-go v1.21.7, but its newest source calls kversion API
// (EachSupportedFeature) first released in franz-go v1.22; the newest franz-go and kmsg, which the
// franz-go conformance driver also pins, are required here.

require github.com/twmb/franz-go/pkg/kfake v0.0.0-20260918054303-01f206a7e32c

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/twmb/franz-go v1.22.3 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
)
