package awsapp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relay"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Connections pushes to the connections of an API Gateway WebSocket API:
// POST {Endpoint}/@connections/{id} with the data as the body, SigV4-signed
// for the service execute-api. It speaks the documented wire protocol
// itself with the core SDK's signer: the apigatewaymanagementapi module
// is one operation of it, and is not in this build's module proxy.
type Connections struct {
	// Endpoint is https://{api-id}.execute-api.{region}.amazonaws.com/{stage}.
	Endpoint    string
	Region      string
	Credentials aws.CredentialsProvider
	HTTP        *http.Client // http.DefaultClient when nil
	Now         func() time.Time
}

// Push implements relay.Pusher: 200 is done, 410 Gone is relay.ErrGone,
// 429 and 5xx are retryable (vp.KindUnavailable), anything else (403: a
// missing ManageConnections grant) is an error the outbox retries and
// eventually dead-letters.
func (c *Connections) Push(ctx context.Context, connectionID string, data []byte) error {
	const op = "pacerelle.push"
	if len(data) > relay.MaxPushBytes {
		return outbox.Permanent(vp.Errorf(op, vp.KindTooLarge, "data", "is %d bytes, over the WebSocket frame limit of %d", len(data), relay.MaxPushBytes))
	}
	u := strings.TrimSuffix(c.Endpoint, "/") + "/@connections/" + url.PathEscape(connectionID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(data))
	if err != nil {
		return outbox.Permanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return vp.Wrap(op, vp.KindUnavailable, fmt.Errorf("credentials: %w", err))
	}
	sum := sha256.Sum256(data)
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "execute-api", c.Region, now()); err != nil {
		return outbox.Permanent(err)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return vp.Wrap(op, vp.KindUnavailable, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	switch {
	case resp.StatusCode == http.StatusOK:
		return nil
	case resp.StatusCode == http.StatusGone:
		return relay.ErrGone
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return vp.Wrap(op, vp.KindUnavailable, fmt.Errorf("@connections answered %d: %s", resp.StatusCode, body))
	}
	return fmt.Errorf("%s: @connections answered %d: %s", op, resp.StatusCode, body)
}

// WSFunc is the handler of an API Gateway WebSocket API's Lambda
// integration.
type WSFunc func(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error)

// DoorbellHandler answers the Pacerelle WebSocket API's routes. $connect
// is authorised here, in its integration, rather than by a Lambda
// authorizer: the check is the relay's own (an agent token, or a device
// credential whose hash is in the table), a refusal (any non-2xx answer)
// rejects the handshake just the same, and one function spares a second
// cold start on the connect path. $disconnect deletes the connection's
// rows; $default answers a ping with the inbox head — a two-way route
// (route response), since a push from $connect is refused and the client
// must learn the head of a fresh connection.
func (a *App) DoorbellHandler() WSFunc {
	return func(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		rc := ev.RequestContext
		start := time.Now()
		var resp events.APIGatewayProxyResponse
		var err error
		switch rc.RouteKey {
		case "$connect":
			h := http.Header{}
			for k, vs := range ev.MultiValueHeaders {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			for k, v := range ev.Headers {
				if h.Get(k) == "" {
					h.Set(k, v)
				}
			}
			var status int
			status, err = a.Relay.Connect(ctx, h, ev.QueryStringParameters, rc.ConnectionID)
			resp = events.APIGatewayProxyResponse{StatusCode: status}
			if status < 500 {
				err = nil // a refusal is an answer, not a failure of the function
			}
		case "$disconnect":
			err = a.Relay.Disconnect(ctx, rc.ConnectionID)
			resp = events.APIGatewayProxyResponse{StatusCode: http.StatusOK}
			if err != nil { // best effort: the TTL and the next ring's 410 clean up
				a.Log.WarnContext(ctx, "pacerelle disconnect", "connection", rc.ConnectionID, "err", err)
				err = nil
			}
		default:
			var b []byte
			b, err = a.Relay.Ping(ctx, rc.ConnectionID)
			switch {
			case err == nil:
				resp = events.APIGatewayProxyResponse{StatusCode: http.StatusOK, Body: string(b)}
			case vp.IsKind(err, vp.KindNotFound):
				resp, err = events.APIGatewayProxyResponse{StatusCode: http.StatusGone, Body: `{"seq":-1,"error":"unknown connection; reconnect"}`}, nil
			}
		}
		level := slog.LevelInfo
		if err != nil {
			level = slog.LevelError
			resp = events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError}
		}
		a.Log.Log(ctx, level, "websocket", "route", rc.RouteKey, "status", resp.StatusCode, "ms", time.Since(start).Milliseconds(), "err", err)
		return resp, nil
	}
}
