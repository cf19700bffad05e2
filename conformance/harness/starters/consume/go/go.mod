// A kafka-conformance consumer adapter: edit library.go to run your Kafka client library's
// consumer. Standard library only, so it builds offline; add your library with `go get`.
module kafka-consumer-adapter

go 1.21
