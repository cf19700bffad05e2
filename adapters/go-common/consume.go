package adaptercommon

// The consumer side of the adapter protocol (docs/adapter-protocol.md, "The consumer side")
// for the Go adapters: the arguments, the kafka-conformance/consume/1 document and the
// command dispatch. What an adapter keeps: its library's consumer loop and records.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
)

// ConsumeArgs are the arguments of `consume`.
type ConsumeArgs struct {
	Bootstrap, Topic, From, Isolation string
	Partition                         int
	TimeoutMs                         int
}

// ParseConsume reads the arguments after `consume`.
func ParseConsume(argv []string) (ConsumeArgs, error) {
	var a ConsumeArgs
	fs := flag.NewFlagSet("consume", flag.ContinueOnError)
	fs.StringVar(&a.Bootstrap, "bootstrap", "", "")
	fs.StringVar(&a.Topic, "topic", "", "")
	fs.IntVar(&a.Partition, "partition", 0, "")
	fs.StringVar(&a.From, "from", "earliest", "")
	fs.StringVar(&a.Isolation, "isolation", "read_uncommitted", "")
	fs.IntVar(&a.TimeoutMs, "timeout-ms", 20000, "")
	if err := fs.Parse(argv); err != nil {
		return a, err
	}
	if a.Bootstrap == "" || a.Topic == "" {
		return a, errors.New("--bootstrap and --topic are required")
	}
	if a.Isolation != "read_uncommitted" && a.Isolation != "read_committed" {
		return a, fmt.Errorf("bad --isolation %q", a.Isolation)
	}
	return a, nil
}

// ConsumeDocument is the document of the records delivered and the error (nil: none).
func ConsumeDocument(records []Obj, err Obj) Obj {
	if records == nil {
		records = []Obj{}
	}
	var e any
	if err != nil {
		e = err
	}
	return Obj{"format": "kafka-conformance/consume/1", "records": records, "error": e}
}

// ConsumeError is the error object of a library error named class.
func ConsumeError(class string, err error) Obj {
	return Obj{"class": class, "message": err.Error()}
}

// TimeoutError is the error object of a consumer that reached neither the end nor an error.
func TimeoutError(ms int) Obj {
	return Obj{"class": "timeout",
		"message": fmt.Sprintf("the position did not reach the end offset in %d ms", ms)}
}

// InnermostType is the Go type of the innermost error err wraps.
func InnermostType(err error) string {
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return fmt.Sprintf("%T", err)
		}
		err = inner
	}
}

// RunConsumer is a consumer adapter's main: `capabilities` or `consume ARGS`, one JSON line.
func RunConsumer(capabilities func() Obj, consume func(ConsumeArgs) Obj) {
	argv := os.Args[1:]
	var out Obj
	switch {
	case len(argv) == 1 && argv[0] == "capabilities":
		out = capabilities()
	case len(argv) >= 1 && argv[0] == "consume":
		a, err := ParseConsume(argv[1:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "consumer:", err)
			os.Exit(2)
		}
		out = consume(a)
	default:
		fmt.Fprintln(os.Stderr, "usage: consumer capabilities | consume --bootstrap H:P --topic T "+
			"--partition P --from OFFSET|earliest [--isolation L] [--timeout-ms N]")
		os.Exit(2)
	}
	b, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer: encoding:", err)
		os.Exit(1)
	}
	os.Stdout.Write(append(b, '\n'))
	os.Exit(0)
}
