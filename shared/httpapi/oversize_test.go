package httpapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/httpapi"
)

// oversize sends one request with a body of size bytes over its own TCP
// connection — with Content-Length, or chunked — and returns the status
// and body the client read, or the error it got instead. A streaming
// client reads the answer while it uploads; otherwise it sends the whole
// body first and reads after. Either way a write that fails (the server
// closed the connection on an unread body: a reset) is an error, as it is
// for most HTTP clients (Python's, Node's), which then never read the
// answer.
func oversize(t *testing.T, host, authz string, size int, chunked, streaming bool) (int, string, error) {
	t.Helper()
	conn, err := net.Dial("tcp", host)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	var head strings.Builder
	fmt.Fprintf(&head, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", host)
	if authz != "" {
		fmt.Fprintf(&head, "Authorization: %s\r\n", authz)
	}
	if chunked {
		head.WriteString("Transfer-Encoding: chunked\r\n\r\n")
	} else {
		fmt.Fprintf(&head, "Content-Length: %d\r\n\r\n", size)
	}
	wrote := make(chan error, 1)
	send := func() {
		var err error
		defer func() { wrote <- err }()
		if _, err = conn.Write([]byte(head.String())); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for left := size; left > 0; {
			n := min(left, len(chunk))
			if chunked {
				_, err = fmt.Fprintf(conn, "%x\r\n%s\r\n", n, chunk[:n])
			} else {
				_, err = conn.Write(chunk[:n])
			}
			if err != nil {
				return
			}
			left -= n
		}
		if chunked {
			_, err = conn.Write([]byte("0\r\n\r\n"))
		}
	}
	if streaming {
		go send()
	} else {
		send()
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, "", err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err == nil {
		if werr := <-wrote; werr != nil {
			err = fmt.Errorf("sending the body: %w", werr)
		}
	}
	return res.StatusCode, string(b), err
}

// TestOversizeBodiesAlwaysGet413: 111 bodies over the limit — sizes from
// one byte over to almost four times it, with Content-Length and chunked,
// from clients that read while they send and clients that send first,
// over real TCP connections — each get their 413 and its JSON-RPC error,
// never a connection reset; then the same through net/http's client.
func TestOversizeBodiesAlwaysGet413(t *testing.T) {
	f := start(t)
	u, _ := url.Parse(f.url)
	limit := httpapi.MaxRequestBytes
	sizes := []int{limit + 1, limit + 2, limit + 4096, 2 * limit, 4*limit - 1}
	spread := 106
	if testing.Short() {
		spread = 20 // the race pass: the detector makes each 4–16 MiB call slow; the normal run makes all 111 × 2
	}
	for i := range spread {
		sizes = append(sizes, limit+1+(i*37_813)%(3*limit-2)) // spread over (limit, 4*limit)
	}
	failures := 0
	for i, size := range sizes {
		chunked, streaming := i%2 == 1, i%4 < 2
		status, body, err := oversize(t, u.Host, "Bearer "+f.alice, size, chunked, streaming)
		if err != nil || status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "over the limit of") || !strings.Contains(body, `"code":-32600`) {
			failures++
			t.Errorf("call %d (%d bytes, chunked %v, streaming %v): status %d, err %v, body %.120s", i, size, chunked, streaming, status, err, body)
		}
	}
	// net/http's client, with Content-Length and chunked (a body of unknown
	// length): it writes the body while it waits for the answer, and a
	// write cut by the server races with reading that answer.
	for i, size := range sizes {
		var body io.Reader = bytes.NewReader(bytes.Repeat([]byte("y"), size))
		if i%2 == 1 {
			body = io.MultiReader(body) // hides the length: chunked
		}
		req, _ := http.NewRequest("POST", f.url+"/mcp", body)
		req.Header.Set("Authorization", "Bearer "+f.alice)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			failures++
			t.Errorf("net/http client, call %d (%d bytes, chunked %v): %v", i, size, i%2 == 1, err)
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			failures++
			t.Errorf("net/http client, call %d (%d bytes): %d", i, size, res.StatusCode)
		}
	}
	t.Logf("%d of %d oversize calls did not read their 413", failures, 2*len(sizes))
}

// TestRefusedBodiesAreReadNotReset: a large body sent without a token is
// answered 401, and the client reads that answer instead of a reset.
func TestRefusedBodiesAreReadNotReset(t *testing.T) {
	f := start(t)
	u, _ := url.Parse(f.url)
	for i := range 20 {
		size := (1 + i%4) << 20
		status, body, err := oversize(t, u.Host, "", size, i%2 == 0, i%4 < 2)
		if err != nil || status != http.StatusUnauthorized || !strings.Contains(body, "invalid_token") {
			t.Errorf("call %d (%d bytes): status %d, err %v, body %.120s", i, size, status, err, body)
		}
	}
}
