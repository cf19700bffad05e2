// Package adaptercommon is the protocol plumbing shared by the kit's Go adapters
// (adapters/franz-go, adapters/sarama; docs/adapter-protocol.md): the command dispatch and
// stdin handling (Run, this file), the canonical document (document.go) and Java's lenient
// UTF-8 decoding of header keys (javautf8.go). It has no dependencies; the adapters require it
// through `replace kafkaconformance.local/adaptercommon => ../go-common` in their go.mod and
// list it in adapter.toml's `shared` (part of their build hash).
package adaptercommon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Obj is a JSON object of the canonical document (encoding/json writes its keys sorted).
type Obj = map[string]any

// Run is an adapter's main: `capabilities` prints capabilities(), `decode --as memory|file`
// reads stdin whole and prints decode(input, mode); each as one JSON line on stdout. A usage
// error or an unreadable stdin exits 2, a document that cannot be encoded exits 1.
func Run(capabilities func() Obj, decode func(in []byte, mode string) Obj) {
	args := os.Args[1:]
	var out any
	switch {
	case len(args) == 1 && args[0] == "capabilities":
		out = capabilities()
	case len(args) == 3 && args[0] == "decode" && args[1] == "--as" &&
		(args[2] == "memory" || args[2] == "file"):
		in, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "adapter: reading stdin:", err)
			os.Exit(2)
		}
		out = decode(in, args[2])
	default:
		fmt.Fprintln(os.Stderr, "usage: adapter capabilities | decode --as memory|file")
		os.Exit(2)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "adapter: encoding:", err)
		os.Exit(1)
	}
	os.Stdout.Write(buf.Bytes())
}

// LibraryVersion is the version of module path linked into this binary (its go.mod
// requirement, also when replaced by a local copy), or "" if it is not a dependency.
func LibraryVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return ""
}
