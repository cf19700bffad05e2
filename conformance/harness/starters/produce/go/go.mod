// A kafka-conformance producer adapter: edit library.go to call your Kafka client library's
// producer. Standard library only, so it builds offline; add your library with `go get`.
module kafka-producer-adapter

go 1.21
