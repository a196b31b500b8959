// Package awsenv names the configuration shared by the Lambda functions
// (shared/awsapp) and the CDK stack that sets it (infra/): environment
// variables, function names, embedding providers. It has no dependencies,
// so the CDK module can import it without compiling the functions.
package awsenv

import "strings"

// The functions, as named in functions/<name> and in the CDK stack.
const (
	FuncMCP       = "mcp"
	FuncOAuth     = "oauth"
	FuncEmbedder  = "embedder"
	FuncScheduler = "scheduler"
	FuncWebhooks  = "webhooks"
	// FuncDoorbell serves the Pacerelle WebSocket API's routes ($connect,
	// $disconnect, $default).
	FuncDoorbell = "doorbell"
)

// Environment variables read by awsapp.ConfigFromEnv. The CDK stack (infra/) sets
// them; the tests set the *_ENDPOINT ones to local stand-ins and pass the
// secrets directly.
const (
	EnvTable            = "VP_TABLE"             // DynamoDB table (required)
	EnvDynamoDBEndpoint = "VP_DYNAMODB_ENDPOINT" // tests: DynamoDB Local
	EnvRegion           = "AWS_REGION"           // set by Lambda
	EnvQueueURL         = "VP_EMBED_QUEUE_URL"   // SQS queue of embedding jobs
	EnvSQSEndpoint      = "VP_SQS_ENDPOINT"      // tests: fauxqs
	EnvSearchEndpoint   = "VP_OPENSEARCH_ENDPOINT"
	EnvSearchService    = "VP_OPENSEARCH_SERVICE"  // "es" (domain, default) or "aoss" (serverless)
	EnvSearchReplicas   = "VP_OPENSEARCH_REPLICAS" // replicas of the index (default 1; 0 on a one-node domain)
	EnvEmbedder         = "VP_EMBEDDER"            // local (default) | concept | bedrock | openai; the embedded server: local-concept-v1 (default) | local-hash-v1
	EnvBedrockModel     = "VP_BEDROCK_MODEL"       // default amazon.titan-embed-text-v2:0
	EnvOpenAIBaseURL    = "VP_OPENAI_BASE_URL"
	EnvOpenAIModel      = "VP_OPENAI_MODEL"
	EnvOpenAIKeySecret  = "VP_OPENAI_API_KEY_SECRET" // Secrets Manager id of the API key
	// The master token, one of: the id of a Secrets Manager secret holding
	// the token itself (64 hex; the CDK stack generates it), hashed at
	// start and then forgotten; or its SHA-256 in hex, given directly (a
	// hash of 32 random bytes reveals nothing: the function configuration
	// may hold it).
	EnvMasterSecret = "VP_MASTER_TOKEN_SECRET"
	EnvMasterHash   = "VP_MASTER_TOKEN_SHA256"
	// Server signing keys: a Secrets Manager secret whose SecretString is
	// JSON {"cursor": "<64 hex>", ...}, or the cursor key directly (tests).
	EnvKeysSecret    = "VP_KEYS_SECRET"
	EnvCursorKey     = "VP_CURSOR_KEY"
	EnvPublicBaseURL = "VP_PUBLIC_BASE_URL"
	// The Clerk exchange (POST /issueBearerFromClerk), as for the embedded
	// binary.
	EnvClerkIssuer   = "CLERK_JWT_ISSUER_DOMAIN"
	EnvClerkAudience = "VP_CLERK_AUDIENCE"
	EnvAllowedExtIDs = "VP_ALLOWED_EXT_IDS"
	EnvLogLevel      = "VP_LOG_LEVEL"
	EnvToolProfile   = "VP_TOOL_PROFILE"
	// EnvEmitUIMarkers: "1" or "true" appends UI markers (platform spec
	// §15.3) to the text of the tools that have one.
	EnvEmitUIMarkers = "VP_EMIT_UI_MARKERS"
	// GitHub: each tenant's webhook secret and token live in the Secrets
	// Manager secret <prefix><tenant> as JSON {"webhookSecret","token"};
	// the API URL is for GitHub Enterprise Server (and tests); trusted
	// lists the author associations whose issues start a mission
	// (default OWNER,MEMBER,COLLABORATOR). The embedded binary reads the
	// last two as well.
	EnvGitHubSecretPrefix = "VP_GITHUB_SECRET_PREFIX"
	EnvGitHubAPIURL       = "VP_GITHUB_API_URL"
	EnvGitHubTrusted      = "VP_GITHUB_TRUSTED"
	// The error monitor: on AWS, a Convex deployment's deploy key is a
	// secret of its tenant, the Secrets Manager secret
	// <prefix><tenant>/<deployKeyEnvVar> (for example
	// <prefix>acme/VP_DEPLOY_KEY_MYAPP), whose SecretString is the key
	// itself.
	EnvDeployKeySecretPrefix = "VP_DEPLOY_KEY_SECRET_PREFIX"
	// EnvTenantLogGroups is the CloudWatch Logs log groups each tenant's
	// deployments may read, JSON {"<tenant>": ["<name>" or "<prefix>*"]}
	// (the stack's tenantLogGroups context, from which the IAM policy of
	// logs:FilterLogEvents is derived too). Unset: no tenant may name any.
	EnvTenantLogGroups = "VP_TENANT_LOG_GROUPS"
)

// Abuse limits of the endpoints open to all (the embedded binary reads
// them as well). EnvTrustedProxies: comma-separated CIDRs or addresses of
// the proxies in front whose X-Forwarded-For is believed for the source
// address (unset: none; behind API Gateway alone the source IP it reports
// is used and nothing needs setting). EnvOAuthRegisterPerMinute: client
// registrations per source address and minute (default 10).
// EnvOAuthMaxPendingClients: clients that have not completed an
// authorization, at most (default 1000); they expire after 24 hours.
const (
	EnvTrustedProxies         = "VP_TRUSTED_PROXIES"
	EnvOAuthRegisterPerMinute = "VP_OAUTH_REGISTER_PER_MINUTE"
	EnvOAuthMaxPendingClients = "VP_OAUTH_MAX_PENDING_CLIENTS"
)

// EnvWaitMaxMs bounds a wait_for_activity call on AWS, in milliseconds
// (default DefaultWaitMaxMs, 100 to 25000): a Lambda that waits is billed
// for the wait, and polls the table while it does.
const (
	EnvWaitMaxMs     = "VP_WAIT_MAX_MS"
	DefaultWaitMaxMs = 10_000
)

// EnvSecretsManagerEndpoint points the functions' Secrets Manager client
// elsewhere (tests: a fake of its JSON 1.1 protocol), like
// EnvDynamoDBEndpoint. The SDK's own AWS_ENDPOINT_URL_SECRETS_MANAGER is
// not honoured here: only config.LoadDefaultConfig's sources carry it to a
// client, and the functions build their SDK configuration by hand (for
// the cold start).
const EnvSecretsManagerEndpoint = "VP_SECRETSMANAGER_ENDPOINT"

// EnvPacerelleConnections is the management endpoint of the Pacerelle
// WebSocket API, https://{api-id}.execute-api.{region}.amazonaws.com/{stage},
// to which the functions marked Function.Pushes POST rings
// (@connections/{id}). Unset: no ring is pushed (a deployment without the
// WebSocket API; clients then poll).
const EnvPacerelleConnections = "VP_PACERELLE_CONNECTIONS_URL"

// EnvEgressAllowHosts is the operator's allow-list of the egress policy
// (shared/egress, whose EnvAllowHosts it equals): comma-separated host
// names, IPs or CIDRs that a tenant's deploymentUrl or a client metadata
// URL may reach although not public, over http too. Unset: public https
// only.
const EnvEgressAllowHosts = "VP_EGRESS_ALLOW_HOSTS"

// DefaultTenant is the tenant of a single-tenant deployment, whose GitHub
// deliveries come to /webhooks/github (vp.DefaultTenant).
const DefaultTenant = "default"

// Embedder providers.
const (
	// EmbedderLocal is local-hash-v1 (embed/local), offline.
	EmbedderLocal = "local"
	// EmbedderConcept is local-concept-v1 (embed/concept), offline with
	// WordNet's concepts.
	EmbedderConcept = "concept"
	EmbedderBedrock = "bedrock"
	EmbedderOpenAI  = "openai"
)

// DefaultBedrockModel is Amazon Titan Text Embeddings v2.
const DefaultBedrockModel = "amazon.titan-embed-text-v2:0"

// DefaultOpenAIModel is the seed's embedding model.
const DefaultOpenAIModel = "text-embedding-3-small"

// SplitList splits a comma-separated variable, dropping empty entries;
// nil when there are none.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// On reports whether a flag variable such as EnvEmitUIMarkers is set:
// "1" or "true" (any case, surrounding spaces ignored).
func On(v string) bool {
	v = strings.TrimSpace(v)
	return v == "1" || strings.EqualFold(v, "true")
}
