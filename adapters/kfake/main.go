// Command kfake serves franz-go's in-memory fake Kafka cluster (pkg/kfake)
// as a one-broker cluster on a fixed loopback port, so that
// `kafka-conformance check-broker` can judge it like any other broker.
//
// Usage:
//
//	kfake --port N [--host 127.0.0.1] [--kafka-version 3.9]
//
// Once the broker listens, one line "kfake listening on HOST:PORT" is printed
// on stdout. The process runs until SIGTERM or SIGINT (the kit stops its whole
// process group); it then closes the cluster and exits 0. Its stdin is not
// read: the kit starts it with stdin at /dev/null.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"
)

func main() {
	port := flag.Int("port", 0, "TCP port to listen on (required)")
	host := flag.String("host", "127.0.0.1", "address to listen on (also the advertised host)")
	kafkaVersion := flag.String("kafka-version", "",
		"cap the advertised API versions at this Kafka release, e.g. 3.9 (default: all kfake implements)")
	flag.Parse()

	if *port <= 0 || *port > 65535 {
		fail(2, "--port N is required (1..65535)")
	}

	opts := []kfake.Opt{
		// One broker on the given port (Ports also sets the number of brokers).
		kfake.Ports(*port),
		// kfake always listens on 127.0.0.1:port; substitute our own host.
		// The listener's address is also what Metadata advertises.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			return net.Listen(network, net.JoinHostPort(*host, strconv.Itoa(*port)))
		}),
		// CreateTopics with NumPartitions -1 gets 1 partition (kfake's default is 10).
		kfake.DefaultNumPartitions(1),
	}
	if *kafkaVersion != "" {
		v := kversion.FromString(*kafkaVersion)
		if v == nil {
			fail(2, "unknown --kafka-version %q; known: %v", *kafkaVersion, kversion.VersionStrings())
		}
		opts = append(opts, kfake.MaxVersions(v))
	}

	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		fail(1, "kfake: %v", err)
	}

	// Readiness line: the listener is bound once NewCluster returns.
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "kfake listening on %s\n", cluster.ListenAddrs()[0])
	out.Flush()

	// Stop on SIGTERM / SIGINT.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals

	cluster.Close()
	os.Exit(0)
}

// fail prints a message on stderr and exits with the given code.
func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(code)
}
