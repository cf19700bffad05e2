// Package adaptercommon is the protocol plumbing shared by the kit's Go adapters
// (adapters/franz-go, adapters/sarama; docs/adapter-protocol.md): the command dispatch and
// stdin handling (Run, this file), the canonical document (document.go) and Java's lenient
// UTF-8 decoding of header keys (javautf8.go). It has no dependencies; the adapters require it
// through `replace kafkaconformance.local/adaptercommon => ../go-common` in their go.mod and
// list it in adapter.toml's `shared` (part of their build hash).
package adaptercommon

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Obj is a JSON object of the canonical document (encoding/json writes its keys sorted).
type Obj = map[string]any

// Run is an adapter's main: `capabilities` prints capabilities(), `decode --as memory|file`
// reads stdin whole and prints decode(input, mode); each as one JSON line on stdout; `serve`
// answers framed requests until EOF (Serve). A usage error or an unreadable stdin exits 2, a
// document that cannot be encoded exits 1.
func Run(capabilities func() Obj, decode func(in []byte, mode string) Obj) {
	args := os.Args[1:]
	var out any
	switch {
	case len(args) == 1 && args[0] == "serve":
		os.Exit(Serve(os.Stdin, os.Stdout, decode))
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

// Serve is the persistent mode: requests (1 byte mode, 0 memory or 1 file, a 4-byte big-endian
// length, the input) until EOF, each answered with a 4-byte big-endian length and the JSON
// document. A library panic ends the process, as in one-shot mode: the kit reports it as the
// adapter's crash for that input and starts a new server.
func Serve(in io.Reader, out io.Writer, decode func(in []byte, mode string) Obj) int {
	r, w := bufio.NewReader(in), bufio.NewWriter(out)
	head := make([]byte, 5)
	for {
		if _, err := io.ReadFull(r, head); err != nil {
			if err == io.EOF {
				return 0
			}
			fmt.Fprintln(os.Stderr, "serve: reading a request:", err)
			return 2
		}
		mode := map[byte]string{0: "memory", 1: "file"}[head[0]]
		if mode == "" {
			fmt.Fprintln(os.Stderr, "serve: bad mode byte", head[0])
			return 2
		}
		data := make([]byte, binary.BigEndian.Uint32(head[1:]))
		if _, err := io.ReadFull(r, data); err != nil {
			fmt.Fprintln(os.Stderr, "serve: input cut short:", err)
			return 2
		}
		doc, err := json.Marshal(decode(data, mode))
		if err != nil {
			fmt.Fprintln(os.Stderr, "adapter: encoding:", err)
			return 1
		}
		size := make([]byte, 4)
		binary.BigEndian.PutUint32(size, uint32(len(doc)))
		w.Write(size)
		w.Write(doc)
		if err := w.Flush(); err != nil {
			return 0 // the kit went away
		}
	}
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
