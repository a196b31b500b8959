package mcpserver

import (
	"bufio"
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CodeUnauthorized is the JSON-RPC error of a request made with a refused
// token (the implementation-defined server-error range of JSON-RPC 2.0).
const CodeUnauthorized = -32001

// RefuseStdio answers every JSON-RPC request on stdin, initialize
// included, with the reason the token was refused (MCP hosts show a
// JSON-RPC error's message), and notifications with nothing. It stands in
// for the MCP server, whose session would answer a request after a failed
// initialize with "invalid during session initialization" instead.
func RefuseStdio(ctx context.Context, stdin io.Reader, stdout io.Writer, reason string) error {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		if ctx.Err() != nil {
			return nil
		}
		msg, err := jsonrpc.DecodeMessage(sc.Bytes())
		if err != nil {
			continue // not JSON-RPC: there is no id to answer
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: CodeUnauthorized, Message: reason}})
		if err != nil {
			return err
		}
		if _, err := stdout.Write(append(out, '\n')); err != nil {
			return err
		}
	}
	return sc.Err()
}
