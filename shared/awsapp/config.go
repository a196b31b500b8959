// Package awsapp is the AWS wiring shared by the Lambda entry points in
// functions/{mcp,oauth,embedder,scheduler}: configuration from environment
// variables and from Secrets Manager, AWS clients, the service graph
// (DynamoDB store, tokens, coordination, memory), JSON logs carrying the
// Lambda request id, and the event handlers (API Gateway HTTP API payload
// v2, SQS batches, EventBridge schedules).
//
// Everything here is built once per container, in Load, when the Lambda
// runtime starts the process: never per request. The domain packages know
// nothing of it.
package awsapp

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
)

// Config is what a function needs to build its clients and services.
type Config struct {
	Table            string
	DynamoDBEndpoint string
	Region           string

	QueueURL    string
	SQSEndpoint string

	SecretsManagerEndpoint string

	SearchEndpoint string
	SearchService  string
	SearchReplicas int

	Embedder      string
	BedrockModel  string
	OpenAIBaseURL string
	OpenAIModel   string
	OpenAIKeyID   string

	MasterHash   string // 64 hex
	MasterSecret string
	KeysSecret   string
	CursorKey    string // 64 hex

	PublicBaseURL string
	ClerkIssuer   string
	ClerkAudience string
	AllowedExtIDs []string
	LogLevel      slog.Level
	ToolProfile   string
	EmitUIMarkers bool // VP_EMIT_UI_MARKERS

	GitHubSecretPrefix string
	GitHubAPIURL       string
	GitHubTrusted      []string

	DeployKeySecretPrefix string
	// TenantLogGroups are the log groups each tenant may name
	// (VP_TENANT_LOG_GROUPS).
	TenantLogGroups map[string][]string

	PacerelleConnections string // the WebSocket API's management endpoint

	// EgressAllow is the egress policy's allow-list (EnvEgressAllowHosts).
	EgressAllow egress.Allow
	// Abuse limits (VP_TRUSTED_PROXIES, VP_OAUTH_REGISTER_PER_MINUTE,
	// VP_OAUTH_MAX_PENDING_CLIENTS); zero: the defaults.
	TrustedProxies    []netip.Prefix
	RegisterPerMinute int
	MaxPendingClients int
	// WaitMax bounds a wait_for_activity call (EnvWaitMaxMs).
	WaitMax time.Duration
}

// ConfigFromEnv reads the configuration; getenv is os.Getenv in the
// Lambdas and a map in tests. It checks shapes only: secrets are resolved by
// Load.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	c := Config{
		Table:            get(awsenv.EnvTable),
		DynamoDBEndpoint: get(awsenv.EnvDynamoDBEndpoint),
		Region:           get(awsenv.EnvRegion),
		QueueURL:         get(awsenv.EnvQueueURL),
		SQSEndpoint:      get(awsenv.EnvSQSEndpoint),
		SearchEndpoint:   get(awsenv.EnvSearchEndpoint),
		SearchService:    get(awsenv.EnvSearchService),
		Embedder:         get(awsenv.EnvEmbedder),
		BedrockModel:     get(awsenv.EnvBedrockModel),
		OpenAIBaseURL:    get(awsenv.EnvOpenAIBaseURL),
		OpenAIModel:      get(awsenv.EnvOpenAIModel),
		OpenAIKeyID:      get(awsenv.EnvOpenAIKeySecret),
		MasterHash:       strings.ToLower(get(awsenv.EnvMasterHash)),
		MasterSecret:     get(awsenv.EnvMasterSecret),
		KeysSecret:       get(awsenv.EnvKeysSecret),
		CursorKey:        strings.ToLower(get(awsenv.EnvCursorKey)),
		PublicBaseURL:    get(awsenv.EnvPublicBaseURL),
		ClerkIssuer:      get(awsenv.EnvClerkIssuer),
		ClerkAudience:    get(awsenv.EnvClerkAudience),
		ToolProfile:      get(awsenv.EnvToolProfile),
		EmitUIMarkers:    awsenv.On(get(awsenv.EnvEmitUIMarkers)),

		SecretsManagerEndpoint: get(awsenv.EnvSecretsManagerEndpoint),

		GitHubSecretPrefix: get(awsenv.EnvGitHubSecretPrefix),
		GitHubAPIURL:       get(awsenv.EnvGitHubAPIURL),
		GitHubTrusted:      awsenv.SplitList(get(awsenv.EnvGitHubTrusted)),

		DeployKeySecretPrefix: get(awsenv.EnvDeployKeySecretPrefix),
		PacerelleConnections:  strings.TrimSuffix(get(awsenv.EnvPacerelleConnections), "/"),
	}
	var errs []error
	bad := func(env, msg string) { errs = append(errs, fmt.Errorf("%s: %s", env, msg)) }
	if c.Table == "" {
		bad(awsenv.EnvTable, "the DynamoDB table name is required")
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if lvl := get(awsenv.EnvLogLevel); lvl != "" {
		if err := c.LogLevel.UnmarshalText([]byte(lvl)); err != nil {
			bad(awsenv.EnvLogLevel, fmt.Sprintf("%q is not one of debug, info, warn, error", lvl))
		}
	}
	if v := get(awsenv.EnvTrustedProxies); v != "" {
		ps, err := ratelimit.ParsePrefixes(v)
		if err != nil {
			bad(awsenv.EnvTrustedProxies, err.Error())
		}
		c.TrustedProxies = ps
	}
	for _, n := range []struct {
		env string
		to  *int
	}{{awsenv.EnvOAuthRegisterPerMinute, &c.RegisterPerMinute}, {awsenv.EnvOAuthMaxPendingClients, &c.MaxPendingClients}} {
		if v := get(n.env); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i < 1 || i > 1_000_000 {
				bad(n.env, fmt.Sprintf("%q is not a number from 1 to 1000000", v))
			}
			*n.to = i
		}
	}
	c.WaitMax = awsenv.DefaultWaitMaxMs * time.Millisecond
	if v := get(awsenv.EnvWaitMaxMs); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 100 || ms > 25_000 {
			bad(awsenv.EnvWaitMaxMs, fmt.Sprintf("%q is not a number of milliseconds from 100 to 25000", v))
		}
		c.WaitMax = time.Duration(ms) * time.Millisecond
	}
	c.SearchReplicas = 1
	if v := get(awsenv.EnvSearchReplicas); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 5 {
			bad(awsenv.EnvSearchReplicas, fmt.Sprintf("%q is not a number of replicas from 0 to 5", v))
		}
		c.SearchReplicas = n
	}
	switch c.SearchService {
	case "":
		c.SearchService = "es"
	case "es", "aoss":
	default:
		bad(awsenv.EnvSearchService, fmt.Sprintf("%q is not one of es (OpenSearch domain), aoss (OpenSearch Serverless)", c.SearchService))
	}
	switch c.Embedder {
	case "":
		c.Embedder = awsenv.EmbedderLocal
	case awsenv.EmbedderLocal, awsenv.EmbedderConcept, awsenv.EmbedderBedrock, awsenv.EmbedderOpenAI:
	default:
		bad(awsenv.EnvEmbedder, fmt.Sprintf("%q is not one of local, concept, bedrock, openai", c.Embedder))
	}
	if c.BedrockModel == "" {
		c.BedrockModel = awsenv.DefaultBedrockModel
	}
	if c.OpenAIModel == "" {
		c.OpenAIModel = awsenv.DefaultOpenAIModel
	}
	if c.Embedder == awsenv.EmbedderOpenAI && c.OpenAIBaseURL == "" {
		bad(awsenv.EnvOpenAIBaseURL, "the OpenAI-compatible endpoint is required with "+awsenv.EnvEmbedder+"=openai")
	}
	c.AllowedExtIDs = awsenv.SplitList(get(awsenv.EnvAllowedExtIDs))
	if c.MasterHash != "" && !isHex32(c.MasterHash) {
		bad(awsenv.EnvMasterHash, "must be the SHA-256 of the master token as 64 hex characters")
	}
	if c.CursorKey != "" && !isHex32(c.CursorKey) {
		bad(awsenv.EnvCursorKey, "must be 32 random bytes as 64 hex characters")
	}
	var err error
	if c.EgressAllow, err = egress.ParseAllow(get(awsenv.EnvEgressAllowHosts)); err != nil {
		errs = append(errs, err)
	}
	if v := get(awsenv.EnvTenantLogGroups); v != "" {
		groups, err := ParseTenantLogGroups(v)
		if err != nil {
			bad(awsenv.EnvTenantLogGroups, err.Error())
		}
		c.TenantLogGroups = groups
	}
	if u := c.PacerelleConnections; u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		bad(awsenv.EnvPacerelleConnections, "must be the WebSocket API's https:// management endpoint (https://{api-id}.execute-api.{region}.amazonaws.com/{stage})")
	}
	return c, errors.Join(errs...)
}

func isHex32(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}
