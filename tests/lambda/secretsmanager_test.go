package lambda_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
)

// fakeSecretsManager is Secrets Manager's GetSecretValue as its JSON 1.1
// protocol has it: POST / with Content-Type application/x-amz-json-1.1,
// X-Amz-Target secretsmanager.GetSecretValue, a SigV4 Authorization for
// the secretsmanager service and body {"SecretId": name or ARN}; the
// answer {"ARN","Name","SecretString","VersionId","VersionStages",
// "CreatedDate"}, or a 400 whose body's __type names the error
// (ResourceNotFoundException for an unknown secret). Only GetSecretValue
// is served: any other target is an UnknownOperationException.
type fakeSecretsManager struct {
	*httptest.Server
	region, account string

	mu      sync.Mutex
	secrets map[string]fakeSecret // by name
	reads   []string              // the SecretIds asked for, in order
}

type fakeSecret struct {
	arn, value, version string
	created             time.Time
}

func newFakeSecretsManager(t testing.TB, region, account string) *fakeSecretsManager {
	t.Helper()
	f := &fakeSecretsManager{region: region, account: account, secrets: map[string]fakeSecret{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// put creates the secret name with its SecretString (or gives it a new
// version) and returns its ARN, which ends in "-" and six random
// characters, as Secrets Manager's do.
func (f *fakeSecretsManager) put(name, value string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.secrets[name]
	if !ok {
		s = fakeSecret{arn: fmt.Sprintf("arn:aws:secretsmanager:%s:%s:secret:%s-%s", f.region, f.account, name, randomString(6)),
			created: time.Now()}
	}
	s.value, s.version = value, uuid()
	f.secrets[name] = s
	return s.arn
}

// read returns the SecretIds GetSecretValue was asked for.
func (f *fakeSecretsManager) read() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reads...)
}

// credentialScope is SigV4's Credential=<key>/<date>/<region>/<service>/aws4_request.
var credentialScope = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=[^/,]+/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$`)

func (f *fakeSecretsManager) serve(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-Requestid", uuid())
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		fail(http.StatusNotFound, "UnknownOperationException", "")
		return
	}
	m := credentialScope.FindStringSubmatch(r.Header.Get("Authorization"))
	switch {
	case r.Header.Get("Authorization") == "":
		fail(http.StatusBadRequest, "MissingAuthenticationTokenException", "Missing Authentication Token")
		return
	case m == nil || r.Header.Get("X-Amz-Date") == "":
		fail(http.StatusBadRequest, "IncompleteSignatureException", "Authorization header requires Credential, SignedHeaders and Signature")
		return
	case m[2] != "secretsmanager" || m[1] != f.region:
		fail(http.StatusBadRequest, "InvalidSignatureException",
			fmt.Sprintf("Credential should be scoped to a valid region and service: got %s/%s, want %s/secretsmanager", m[1], m[2], f.region))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		fail(http.StatusBadRequest, "SerializationException", "Content-Type "+ct+" is not application/x-amz-json-1.1")
		return
	}
	if target := r.Header.Get("X-Amz-Target"); target != "secretsmanager.GetSecretValue" {
		fail(http.StatusBadRequest, "UnknownOperationException", "")
		return
	}
	var in struct {
		SecretID     *string `json:"SecretId"`
		VersionID    *string `json:"VersionId"`
		VersionStage *string `json:"VersionStage"`
	}
	b, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		fail(http.StatusBadRequest, "SerializationException", "the body is not JSON")
		return
	}
	if in.SecretID == nil || *in.SecretID == "" {
		fail(http.StatusBadRequest, "ValidationException", "1 validation error detected: Value null at 'secretId' failed to satisfy constraint: Member must not be null")
		return
	}
	f.mu.Lock()
	f.reads = append(f.reads, *in.SecretID)
	s, ok := f.secrets[*in.SecretID]
	name := *in.SecretID
	if !ok { // by ARN
		for n, x := range f.secrets {
			if x.arn == *in.SecretID {
				s, ok, name = x, true, n
			}
		}
	}
	f.mu.Unlock()
	stage := "AWSCURRENT"
	switch {
	case !ok:
		fail(http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	case in.VersionID != nil && *in.VersionID != s.version, in.VersionStage != nil && *in.VersionStage != stage:
		fail(http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret value for VersionId or VersionStage.")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", uuid())
	_ = json.NewEncoder(w).Encode(map[string]any{
		"ARN": s.arn, "Name": name, "SecretString": s.value, "VersionId": s.version,
		"VersionStages": []string{stage}, "CreatedDate": float64(s.created.UnixMilli()) / 1000,
	})
}

func uuid() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func randomString(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

// TestFakeSecretsManagerAnswersTheSDK: the fake speaks the protocol the
// SDK's Secrets Manager client (awsapp.AWSSecrets, at the endpoint
// VP_SECRETSMANAGER_ENDPOINT gives the functions) sends and reads: a
// secret by name and by ARN, and a missing one as the SDK's
// ResourceNotFoundException, which GitHubCredentials reads as "no
// credentials" rather than as Secrets Manager failing.
func TestFakeSecretsManagerAnswersTheSDK(t *testing.T) {
	f := newFakeSecretsManager(t, "us-east-1", "123456789012")
	arn := f.put("vp/test/github/acme", `{"webhookSecret":"w","token":"ghs_t"}`)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	sm := awsapp.NewAWSSecrets(cfg, f.URL)
	ctx := context.Background()
	for _, id := range []string{"vp/test/github/acme", arn} {
		if v, err := sm.Secret(ctx, id); err != nil || v != `{"webhookSecret":"w","token":"ghs_t"}` {
			t.Errorf("Secret(%s) = %q, %v", id, v, err)
		}
	}
	_, err := sm.Secret(ctx, "vp/test/github/nobody")
	var nf *smtypes.ResourceNotFoundException
	if !errors.As(err, &nf) || !strings.Contains(nf.ErrorMessage(), "can't find the specified secret") {
		t.Errorf("a missing secret: %v (%T), want ResourceNotFoundException", err, err)
	}
	creds := &awsapp.GitHubCredentials{Secrets: sm, Prefix: "vp/test/github/"}
	if c, err := creds.Credentials(ctx, "acme"); err != nil || c.WebhookSecret != "w" || c.Token != "ghs_t" {
		t.Errorf("acme's credentials: %+v, %v", c, err)
	}
	if c, err := creds.Credentials(ctx, "nobody"); err != nil || c.WebhookSecret != "" || c.Token != "" {
		t.Errorf("a tenant without a secret: %+v, %v; want none and no error", c, err)
	}
	// Signed for another service or region: refused, as AWS would.
	other := awsapp.NewAWSSecrets(aws.Config{Region: "eu-west-1", Credentials: cfg.Credentials}, f.URL)
	if _, err := other.Secret(ctx, "vp/test/github/acme"); err == nil || !strings.Contains(err.Error(), "InvalidSignatureException") {
		t.Errorf("signed for eu-west-1: %v, want InvalidSignatureException", err)
	}
	if got := f.read(); len(got) != 5 { // the refused request is not read
		t.Errorf("reads %v", got)
	}
}
