// A kafka-conformance adapter: edit library.go to call your Kafka client library.
// Standard library only, so it builds offline; add your library with `go get`.
module kafka-adapter

go 1.21
