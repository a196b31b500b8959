package httpapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/httpapi"
)

// post sends a JSON-RPC body as token and returns the status, the
// Retry-After header and the body.
func post(t *testing.T, f fixture, authz, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", authz)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Retry-After"), string(b)
}

const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	f := start(t)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEARER"} {
		status, _, body := post(t, f, scheme+" "+f.alice, toolsList)
		if status != 200 || !strings.Contains(body, `"tools"`) {
			t.Errorf("%s: %d %.200s", scheme, status, body)
		}
	}
}

// dripper opens a request whose body arrives a byte every interval, as a
// slow-loris client sends it, and returns the connection.
func dripper(t *testing.T, f fixture, secret string, interval time.Duration) net.Conn {
	t.Helper()
	u, _ := url.Parse(f.url)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	body := toolsList
	head := "POST /mcp HTTP/1.1\r\nHost: " + u.Host + "\r\nAuthorization: Bearer " + secret +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	go func() {
		for i := 0; i < len(body); i++ {
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
			time.Sleep(interval)
		}
	}()
	return conn
}

// TestDrippedBodyIsCutOff: a client that drips its body is answered 408
// when the body read timeout passes, and its connection is closed.
func TestDrippedBodyIsCutOff(t *testing.T) {
	f := start(t, func(o *httpapi.Options) { o.BodyReadTimeout = 300 * time.Millisecond })
	conn := dripper(t, f, f.alice, 100*time.Millisecond) // ~5 s for the whole body
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a dripping body: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if took := time.Since(start); res.StatusCode != http.StatusRequestTimeout || took > 3*time.Second || !strings.Contains(string(b), "did not arrive in time") {
		t.Fatalf("after %v: %d %s", took, res.StatusCode, b)
	}
	if n, err := conn.Read(make([]byte, 1)); err == nil {
		t.Errorf("the connection stays open after the refusal (read %d bytes)", n)
	}
	// A prompt client on the same server is unaffected, also after the
	// deadline would have passed on a kept-alive connection.
	for range 2 {
		if status, _, body := post(t, f, "Bearer "+f.alice, toolsList); status != 200 {
			t.Fatalf("prompt request: %d %.200s", status, body)
		}
		time.Sleep(400 * time.Millisecond)
	}
}

// TestConcurrentRequestsPerTokenAreCapped: past the cap a token's request
// is refused 429 with Retry-After and the limit; another token is not
// affected, and the slots come back when the requests end.
func TestConcurrentRequestsPerTokenAreCapped(t *testing.T) {
	f := start(t, func(o *httpapi.Options) {
		o.MaxConcurrentPerToken = 2
		o.BodyReadTimeout = 700 * time.Millisecond
	})
	for range 2 {
		dripper(t, f, f.alice, 200*time.Millisecond)
	}
	time.Sleep(150 * time.Millisecond) // both are in flight
	status, retry, body := post(t, f, "Bearer "+f.alice, toolsList)
	if status != http.StatusTooManyRequests || retry == "" || !strings.Contains(body, "2 requests in flight") || !strings.Contains(body, "limit") {
		t.Fatalf("third concurrent request: %d Retry-After %q %s", status, retry, body)
	}
	if status, _, body := post(t, f, "Bearer "+f.master, toolsList); status != 200 {
		t.Fatalf("another token: %d %.200s", status, body)
	}
	time.Sleep(time.Second) // the drips time out and give their slots back
	if status, _, body := post(t, f, "Bearer "+f.alice, toolsList); status != 200 {
		t.Fatalf("after the slots came back: %d %.200s", status, body)
	}
}

// TestDeepRequestNamesTheArgument: a 10,000-deep argument is refused as
// too deep, naming the argument — not as "not valid JSON".
func TestDeepRequestNamesTheArgument(t *testing.T) {
	f := start(t)
	for _, depth := range []int{100, 5_000, 10_000, 20_000} {
		args := `{"channel":"bob","content":"x","deep":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
		status, _, body := post(t, f, "Bearer "+f.alice, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_message","arguments":`+args+`}}`)
		var rpc struct {
			ID    any `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &rpc); err != nil || status != 400 || rpc.Error.Code != -32602 || rpc.ID != float64(7) ||
			!strings.Contains(rpc.Error.Message, `argument "deep"`) || !strings.Contains(rpc.Error.Message, "limit of 64 levels") {
			t.Errorf("depth %d: %d %.300s", depth, status, body)
		}
	}
	// Deep outside the arguments: named by path.
	status, _, body := post(t, f, "Bearer "+f.alice, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":`+strings.Repeat("[", 10_001)+strings.Repeat("]", 10_001)+`}}`)
	if status != 400 || !strings.Contains(body, "-32600") || !strings.Contains(body, `params.x`) || !strings.Contains(body, "deeper than the limit") {
		t.Errorf("deep params: %d %.300s", status, body)
	}
}

// TestLoneSurrogateOverHTTP: the raw arguments reach the tool-level check
// unchanged over Streamable HTTP, so an escaped lone surrogate is refused
// naming the field rather than stored as U+FFFD.
func TestLoneSurrogateOverHTTP(t *testing.T) {
	f := start(t)
	status, _, body := post(t, f, "Bearer "+f.alice,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"set_summary","arguments":{"instanceId":"a1","summary":"before\ud800after"}}}`)
	if status != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "summary") || !strings.Contains(body, "surrogate") {
		t.Fatalf("%d %.300s", status, body)
	}
}
