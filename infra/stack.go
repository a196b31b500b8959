package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchserverless"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchservice"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
)

// SearchTier chooses how the search index (BM25 + k-NN) runs.
type SearchTier string

// Search tiers.
const (
	// One t3.small.search data node, 10 GB gp3: the cheapest always-on
	// option, for a team's first months.
	SearchDomainSmall SearchTier = "opensearch-domain-small"
	// Two m6g.large.search data nodes in two Availability Zones, 20 GB gp3
	// each: survives the loss of a zone.
	SearchDomainMedium SearchTier = "opensearch-domain-medium"
	// An OpenSearch Serverless vector-search collection with standby
	// replicas: no nodes to size, a minimum of 2 OCUs billed.
	SearchServerless SearchTier = "opensearch-serverless"
)

// Functions are the Lambda functions, by name (functions/<name>), from
// the one table of them (awsenv.Functions).
var Functions = awsenv.FunctionNames()

// CustomerProps parameterises one customer's stack.
type CustomerProps struct {
	awscdk.StackProps
	// Customer names the stack and its resources: lower-case letters,
	// digits and '-', 2 to 20 characters, starting with a letter.
	Customer string
	// Domain, with CertificateArn, serves the API on a custom domain
	// (point a CNAME at the ApiDomainTarget output).
	Domain         string
	CertificateArn string
	// Embedding is bedrock (default: Amazon Titan Text Embeddings v2),
	// openai (any OpenAI-compatible endpoint at OpenAIBaseURL; its key
	// goes in the secret the stack creates) or local (model-free).
	Embedding     string
	OpenAIBaseURL string
	// SearchTier defaults to SearchDomainSmall.
	SearchTier SearchTier
	// MasterTokenHash is the SHA-256 (64 hex) of a master token you keep
	// yourself; the functions get the hash in their environment. When
	// empty the stack generates a master token in Secrets Manager (read it
	// with the command in the MasterTokenCommand output).
	MasterTokenHash string
	// AlarmEmail, when set, is subscribed to the alarm topic.
	AlarmEmail string
	// ClerkIssuer, ClerkAudience and AllowedExtIDs (comma-separated)
	// configure the Clerk exchange of the oauth function.
	ClerkIssuer, ClerkAudience, AllowedExtIDs string
	// LogRetentionDays of the functions' logs (default 30).
	LogRetentionDays int
	// DeletionProtection of the table (default true). When on, the table,
	// the search domain and the secrets are also retained if the stack is
	// deleted.
	DeletionProtection *bool
	// GitHubSecretPrefix names the tenants' GitHub credentials: tenant t's
	// are the Secrets Manager secret <prefix><t>, whose SecretString is
	// JSON {"webhookSecret": "…", "token": "…"} (default
	// vantagepeers/<stack name>/github/). The stack creates the default
	// tenant's, empty; the functions that read GitHub credentials may read
	// every secret under the prefix, and no other.
	GitHubSecretPrefix string
	// DeployKeySecretPrefix names the monitored Convex deployments' deploy
	// keys, each a secret of its tenant: the one a deployment of tenant t
	// names by its deployKeyEnvVar (VP_DEPLOY_KEY_MYAPP) is the Secrets
	// Manager secret <prefix><t>/VP_DEPLOY_KEY_MYAPP, whose SecretString
	// is the key itself (default vantagepeers/<stack name>/deploy-keys/).
	// You create them; the functions that run the error monitor may read
	// the secrets <prefix>*/VP_DEPLOY_KEY_*, and no other. It may neither
	// start nor be started by GitHubSecretPrefix, so that each kind of
	// secret has its own readers.
	DeployKeySecretPrefix string
	// TenantLogGroups maps each tenant to the CloudWatch Logs log groups,
	// in the stack's account and region, that its deployments may name:
	// a group's name, or a prefix followed by '*'. The functions that run
	// the error monitor may FilterLogEvents on these groups alone (their
	// union: IAM cannot tell tenants apart inside a function), and the
	// mapping goes to the functions (awsenv.EnvTenantLogGroups), which
	// refuse a tenant's deployment naming a group not its own. None by
	// default: then no role may read any log group.
	TenantLogGroups map[string][]string
	// MonitoredLogGroups is the former, tenant-less list: now the groups
	// of the default tenant, added to TenantLogGroups["default"].
	MonitoredLogGroups []string
	// EgressAllowHosts is the operator's allow-list of the egress policy
	// (awsenv.EnvEgressAllowHosts): comma-separated hosts, IPs or CIDRs
	// that a tenant's deploymentUrl or an OAuth client's metadata URL may
	// reach although not public (a deployment in the VPC, say), over http
	// too. It goes to the functions that fetch such URLs
	// (EgressFunctions). Empty (the default): public https only.
	EgressAllowHosts string
	// LambdaDir holds <function>.zip (make lambdas).
	LambdaDir string
}

var (
	customerRE = regexp.MustCompile(`^[a-z][a-z0-9-]{1,19}$`)
	// A secret name's characters; the prefix ends with "/" so that its
	// wildcard cannot reach the secrets of another prefix it starts.
	secretPrefixRE = regexp.MustCompile(`^[A-Za-z0-9/_+=.@-]{1,200}/$`)
	// A CloudWatch Logs log group name (CreateLogGroup's pattern), or a
	// non-empty prefix of one followed by '*': no other '*' or '?', so that
	// an ARN built from one names that group, or the groups of that
	// prefix, alone.
	logGroupRE = regexp.MustCompile(`^[A-Za-z0-9_/.#-]{1,512}$|^[A-Za-z0-9_/.#-]{1,511}\*$`)
	// A tenant id (vp.ValidTenant).
	tenantRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
)

// validSecretPrefix checks a prefix of secret names.
func validSecretPrefix(context, prefix, example string) error {
	if !secretPrefixRE.MatchString(prefix) || strings.Contains(prefix, "//") {
		return fmt.Errorf("%s %q: use up to 200 letters, digits and /_+=.@-, ending with '/' (for example %s)", context, prefix, example)
	}
	return nil
}

// Validate checks the props and fills the defaults.
func (p *CustomerProps) Validate() error {
	if !customerRE.MatchString(p.Customer) {
		return fmt.Errorf("customer %q: use 2-20 lower-case letters, digits or '-', starting with a letter (for example -c customer=acme)", p.Customer)
	}
	switch p.Embedding {
	case "":
		p.Embedding = awsenv.EmbedderBedrock
	case awsenv.EmbedderBedrock, awsenv.EmbedderLocal, awsenv.EmbedderConcept:
	case awsenv.EmbedderOpenAI:
		if p.OpenAIBaseURL == "" {
			return fmt.Errorf("embedding=openai needs openaiBaseUrl (for example https://api.openai.com/v1)")
		}
	default:
		return fmt.Errorf("embedding %q: use bedrock, openai, concept or local", p.Embedding)
	}
	switch p.SearchTier {
	case "":
		p.SearchTier = SearchDomainSmall
	case SearchDomainSmall, SearchDomainMedium, SearchServerless:
	default:
		return fmt.Errorf("searchTier %q: use %s, %s or %s", p.SearchTier, SearchDomainSmall, SearchDomainMedium, SearchServerless)
	}
	if (p.Domain == "") != (p.CertificateArn == "") {
		return fmt.Errorf("domain and certificateArn go together (the certificate must cover the domain, in the stack's region)")
	}
	if p.MasterTokenHash != "" && !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(p.MasterTokenHash) {
		return fmt.Errorf("masterTokenHash must be the SHA-256 of the master token as 64 lower-case hex characters")
	}
	if p.GitHubSecretPrefix == "" {
		p.GitHubSecretPrefix = "vantagepeers/" + StackName(p.Customer) + "/github/"
	}
	if err := validSecretPrefix("githubSecretPrefix", p.GitHubSecretPrefix, "vantagepeers/acme/github/"); err != nil {
		return err
	}
	if p.DeployKeySecretPrefix == "" {
		p.DeployKeySecretPrefix = "vantagepeers/" + StackName(p.Customer) + "/deploy-keys/"
	}
	if err := validSecretPrefix("deployKeySecretPrefix", p.DeployKeySecretPrefix, "vantagepeers/acme/deploy-keys/"); err != nil {
		return err
	}
	if strings.HasPrefix(p.DeployKeySecretPrefix, p.GitHubSecretPrefix) || strings.HasPrefix(p.GitHubSecretPrefix, p.DeployKeySecretPrefix) {
		return fmt.Errorf("deployKeySecretPrefix %q and githubSecretPrefix %q overlap: the readers of one would read the other's secrets", p.DeployKeySecretPrefix, p.GitHubSecretPrefix)
	}
	if err := p.validLogGroups(); err != nil {
		return err
	}
	p.EgressAllowHosts = strings.TrimSpace(p.EgressAllowHosts)
	if _, err := egress.ParseAllow(p.EgressAllowHosts); err != nil {
		// The functions would refuse to start on it: say so at synth.
		return fmt.Errorf("egressAllowHosts: %v (comma-separated host names, IPs or CIDRs, e.g. 10.0.0.0/16,logs.internal.example)", err)
	}
	if p.LogRetentionDays == 0 {
		p.LogRetentionDays = 30
	}
	if p.DeletionProtection == nil {
		p.DeletionProtection = jsii.Bool(true)
	}
	if p.LambdaDir == "" {
		return fmt.Errorf("LambdaDir is required (run make lambdas)")
	}
	return nil
}

// StackName is the CloudFormation stack of a customer.
func StackName(customer string) string { return "VantagePeers-" + customer }

// CustomerStack is one customer's isolated deployment.
type CustomerStack struct {
	awscdk.Stack
	Table       awsdynamodb.Table
	Queue       awssqs.Queue
	DeadLetters awssqs.Queue
	Functions   map[string]awslambda.Function
	API         awsapigatewayv2.HttpApi
	BaseURL     *string
	// WebSocket is Pacerelle's doorbell API (pacerelle.go).
	WebSocket      awsapigatewayv2.WebSocketApi
	WebSocketStage awsapigatewayv2.WebSocketStage
}

// fnSpec is a function's size, from awsenv.Functions.
type fnSpec struct {
	memory  float64
	timeout awscdk.Duration
}

func specs() map[string]fnSpec {
	out := map[string]fnSpec{}
	for _, f := range awsenv.Functions() {
		out[f.Name] = fnSpec{float64(f.MemoryMB), awscdk.Duration_Seconds(jsii.Number(f.Timeout.Seconds()))}
	}
	return out
}

// StoreItemActions and StoreQueryActions are the DynamoDB actions of the
// store adapter (shared/store/dynamo): conditional UpdateItem/DeleteItem,
// TransactWriteItems of updates, deletes and condition checks, GetItem, and
// Query on the table and its indexes. Nothing scans; nothing else is granted.
var (
	StoreItemActions  = []string{"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
	StoreQueryActions = []string{"dynamodb:Query"}
	SearchHTTPActions = []string{"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"}
	// SearchIndexerActions are the scheduler's (and the webhooks function's,
	// which creates tasks from GitHub deliveries): it checks and creates the
	// index and its pipeline at start (HEAD, PUT), indexes the tasks it
	// creates and backfills the keyword index (POST _bulk), and reads the
	// backfill markers (POST _search). It never GETs a mapping or DELETEs.
	SearchIndexerActions = []string{"es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut"}
)

// NewCustomerStack defines the stack.
func NewCustomerStack(scope constructs.Construct, id string, p *CustomerProps) *CustomerStack {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	stack := awscdk.NewStack(scope, &id, &p.StackProps)
	awscdk.Tags_Of(stack).Add(jsii.String("vantagepeers:customer"), jsii.String(p.Customer), nil)
	s := &CustomerStack{Stack: stack, Functions: map[string]awslambda.Function{}}
	protect := *p.DeletionProtection
	keep := awscdk.RemovalPolicy_DESTROY
	if protect {
		keep = awscdk.RemovalPolicy_RETAIN
	}
	name := "vp-" + p.Customer

	// ---- DynamoDB: the single table, exactly as the store creates it ----
	s.Table = newTable(stack, name, protect, keep)

	// ---- SQS: embedding jobs and their dead letters ----
	s.DeadLetters = awssqs.NewQueue(stack, jsii.String("EmbedDeadLetters"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	embedTimeout := specs()[awsenv.FuncEmbedder].timeout
	s.Queue = awssqs.NewQueue(stack, jsii.String("EmbedJobs"), &awssqs.QueueProps{
		// AWS recommends six times the consumer's timeout.
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(6 * *embedTimeout.ToSeconds(nil))),
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(4)),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		// The SQS adapter's MaxAttempts (5): after five deliveries a job
		// goes to the dead letters, and the alarm below fires.
		DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: s.DeadLetters, MaxReceiveCount: jsii.Number(5)},
	})

	// ---- secrets: the master token and the signing keys ----
	keys := awssecretsmanager.NewSecret(stack, jsii.String("SigningKeys"), &awssecretsmanager.SecretProps{
		Description:          jsii.String("VantagePeers " + p.Customer + ": server signing keys (JSON, each 32 bytes as 64 hex)"),
		GenerateSecretString: hex64Generator(jsii.String(`{}`), jsii.String("cursor")),
		RemovalPolicy:        keep,
	})
	var master awssecretsmanager.Secret
	if p.MasterTokenHash == "" {
		master = awssecretsmanager.NewSecret(stack, jsii.String("MasterToken"), &awssecretsmanager.SecretProps{
			Description:          jsii.String("VantagePeers " + p.Customer + ": the master (admin) bearer token"),
			GenerateSecretString: hex64Generator(nil, nil),
			RemovalPolicy:        keep,
		})
	}
	var openAIKey awssecretsmanager.Secret
	if p.Embedding == awsenv.EmbedderOpenAI {
		openAIKey = awssecretsmanager.NewSecret(stack, jsii.String("OpenAIKey"), &awssecretsmanager.SecretProps{
			Description:   jsii.String("VantagePeers " + p.Customer + ": API key of the OpenAI-compatible embeddings endpoint (put the key here)"),
			RemovalPolicy: keep,
		})
	}

	// ---- the HTTP API (routes are added once the functions exist) ----
	apiProps := &awsapigatewayv2.HttpApiProps{
		ApiName:     jsii.String(name),
		Description: jsii.String("VantagePeers " + p.Customer + ": MCP (Streamable HTTP), OAuth and GitHub webhooks"),
		CorsPreflight: &awsapigatewayv2.CorsPreflightOptions{
			AllowOrigins: jsii.Strings("*"),
			AllowMethods: &[]awsapigatewayv2.CorsHttpMethod{awsapigatewayv2.CorsHttpMethod_GET, awsapigatewayv2.CorsHttpMethod_POST,
				awsapigatewayv2.CorsHttpMethod_DELETE, awsapigatewayv2.CorsHttpMethod_OPTIONS},
			AllowHeaders:  jsii.Strings("authorization", "content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id", "x-vp-tool-profile", "x-vp-tenant"),
			ExposeHeaders: jsii.Strings("mcp-session-id", "www-authenticate"),
			MaxAge:        awscdk.Duration_Hours(jsii.Number(1)),
		},
	}
	var domain awsapigatewayv2.DomainName
	if p.Domain != "" {
		domain = awsapigatewayv2.NewDomainName(stack, jsii.String("Domain"), &awsapigatewayv2.DomainNameProps{
			DomainName:  jsii.String(p.Domain),
			Certificate: awscertificatemanager.Certificate_FromCertificateArn(stack, jsii.String("Certificate"), jsii.String(p.CertificateArn)),
		})
		apiProps.DefaultDomainMapping = &awsapigatewayv2.DomainMappingOptions{DomainName: domain}
	}
	s.API = awsapigatewayv2.NewHttpApi(stack, jsii.String("Api"), apiProps)
	s.BaseURL = s.API.ApiEndpoint()
	if p.Domain != "" {
		s.BaseURL = jsii.String("https://" + p.Domain)
	}

	// ---- search ----
	srch := newSearch(stack, name, p.SearchTier, keep)

	// ---- functions ----
	logDays := retention(p.LogRetentionDays)
	for _, fn := range Functions {
		spec := specs()[fn]
		logs := awslogs.NewLogGroup(stack, jsii.String(title(fn)+"Logs"), &awslogs.LogGroupProps{
			Retention:     logDays,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		env := map[string]*string{
			awsenv.EnvTable:    s.Table.TableName(),
			awsenv.EnvLogLevel: jsii.String("info"),
		}
		s.Functions[fn] = awslambda.NewFunction(stack, jsii.String(title(fn)+"Function"), &awslambda.FunctionProps{
			Description:  jsii.String("VantagePeers " + p.Customer + ": " + fn),
			Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
			Architecture: awslambda.Architecture_ARM_64(),
			Handler:      jsii.String("bootstrap"),
			Code:         awslambda.Code_FromAsset(jsii.String(filepath.Join(p.LambdaDir, fn+".zip")), nil),
			MemorySize:   jsii.Number(spec.memory),
			Timeout:      spec.timeout,
			Environment:  &env,
			LogGroup:     logs,
		})
	}
	mcp, oauth := s.Functions[awsenv.FuncMCP], s.Functions[awsenv.FuncOAuth]
	embedder, scheduler := s.Functions[awsenv.FuncEmbedder], s.Functions[awsenv.FuncScheduler]
	webhooks := s.Functions[awsenv.FuncWebhooks]

	// Every function uses the store; each gets exactly its actions.
	for _, fn := range Functions {
		grantStore(s.Functions[fn], s.Table)
	}
	// Bearer tokens: the master token (its hash is what they need).
	for _, fn := range []awslambda.Function{mcp, oauth, s.Functions[awsenv.FuncDoorbell]} {
		if master != nil {
			fn.AddEnvironment(jsii.String(awsenv.EnvMasterSecret), master.SecretArn(), nil)
			grantSecret(fn, "MasterToken", master)
		} else {
			// A hash of 32 random bytes: nothing to hide, nothing to fetch.
			fn.AddEnvironment(jsii.String(awsenv.EnvMasterHash), jsii.String(p.MasterTokenHash), nil)
		}
		fn.AddEnvironment(jsii.String(awsenv.EnvPublicBaseURL), s.BaseURL, nil)
	}
	for k, v := range map[string]string{awsenv.EnvClerkIssuer: p.ClerkIssuer, awsenv.EnvClerkAudience: p.ClerkAudience, awsenv.EnvAllowedExtIDs: p.AllowedExtIDs} {
		if v != "" {
			oauth.AddEnvironment(jsii.String(k), jsii.String(v), nil)
		}
	}
	if p.EgressAllowHosts != "" {
		for _, fn := range EgressFunctions {
			s.Functions[fn].AddEnvironment(jsii.String(awsenv.EnvEgressAllowHosts), jsii.String(p.EgressAllowHosts), nil)
		}
	}
	// List cursors are minted and checked by the mcp function only.
	mcp.AddEnvironment(jsii.String(awsenv.EnvKeysSecret), keys.SecretArn(), nil)
	grantSecret(mcp, "SigningKeys", keys)
	// Memory: the search index, the embedder and the embedding queue.
	for _, fn := range []awslambda.Function{mcp, embedder} {
		fn.AddEnvironment(jsii.String(awsenv.EnvQueueURL), s.Queue.QueueUrl(), nil)
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: jsii.String("EnqueueEmbedJobs"), Actions: jsii.Strings("sqs:SendMessage"),
			Resources: &[]*string{s.Queue.QueueArn()},
		}))
		srch.grant(fn, SearchHTTPActions)
		fn.AddEnvironment(jsii.String(awsenv.EnvEmbedder), jsii.String(p.Embedding), nil)
		switch p.Embedding {
		case awsenv.EmbedderBedrock:
			fn.AddEnvironment(jsii.String(awsenv.EnvBedrockModel), jsii.String(awsenv.DefaultBedrockModel), nil)
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid: jsii.String("Embeddings"), Actions: jsii.Strings("bedrock:InvokeModel"),
				Resources: jsii.Strings(fmt.Sprintf("arn:%s:bedrock:%s::foundation-model/%s",
					*stack.Partition(), *stack.Region(), awsenv.DefaultBedrockModel)),
			}))
		case awsenv.EmbedderOpenAI:
			fn.AddEnvironment(jsii.String(awsenv.EnvOpenAIBaseURL), jsii.String(p.OpenAIBaseURL), nil)
			fn.AddEnvironment(jsii.String(awsenv.EnvOpenAIKeySecret), openAIKey.SecretArn(), nil)
			grantSecret(fn, "Embeddings", openAIKey)
		}
	}
	// The scheduler creates tasks (recurring templates) that keyword search
	// must find, and backfills the keyword index: the index, not memory.
	// The webhooks function creates tasks from GitHub deliveries: the same.
	srch.grant(scheduler, SearchIndexerActions)
	srch.grant(webhooks, SearchIndexerActions)
	srch.finish()
	ghDefault := s.wireGitHub(p, keep)
	s.wireErrorMonitor(p)
	s.wirePacerelle(p)
	// The embedder drains the queue, reporting failed items only.
	embedder.AddEventSource(awslambdaeventsources.NewSqsEventSource(s.Queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(10),
		MaxBatchingWindow:       awscdk.Duration_Seconds(jsii.Number(1)),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(5),
	}))
	// One rule a cron job of the catalogue (awsenv.Schedules, generated from
	// jobs.Catalogue), its event naming the job: each job is retried on its
	// own, and a job's schedule is exactly its catalogue entry's. The event
	// keeps the shape of a scheduled event, its time the scheduled minute.
	for _, sc := range awsenv.Schedules() {
		awsevents.NewRule(stack, jsii.String(title(routeID(sc.Job))+"Schedule"), &awsevents.RuleProps{
			Description: jsii.String("VantagePeers " + p.Customer + ": job " + sc.Job + " (" + sc.Cron + " UTC)"),
			Schedule:    awsevents.Schedule_Expression(jsii.String(sc.EventBridge)),
			Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(s.Functions[sc.Function], &awseventstargets.LambdaFunctionProps{
				Event: awsevents.RuleTargetInput_FromObject(map[string]any{
					"version": "0", "detail-type": "Scheduled Event", "source": "aws.events",
					"time": awsevents.EventField_Time(), "detail": map[string]any{"job": sc.Job},
				}),
				RetryAttempts: jsii.Number(2),
				MaxEventAge:   awscdk.Duration_Minutes(jsii.Number(5)),
			})},
		})
	}

	// ---- routes: the route table (awsenv.Routes, generated from httpapi.Routes) ----
	for _, r := range awsenv.Routes() {
		methods := []awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_ANY}
		if len(r.Methods) > 0 {
			methods = methods[:0]
			for _, m := range r.Methods {
				methods = append(methods, awsapigatewayv2.HttpMethod(m))
			}
		}
		fn := s.Functions[r.Function]
		s.API.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path: jsii.String(r.Path), Methods: &methods,
			Integration: awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(title(*fn.Node().Id())+routeID(r.Path)), fn, nil),
		})
	}

	// ---- alarms ----
	topic := awssns.NewTopic(stack, jsii.String("Alarms"), &awssns.TopicProps{DisplayName: jsii.String("VantagePeers " + p.Customer + " alarms")})
	if p.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(p.AlarmEmail), nil))
	}
	alarm := func(id string, m awscloudwatch.IMetric, what string) {
		a := awscloudwatch.NewAlarm(stack, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("VantagePeers " + p.Customer + ": " + what),
			Metric:             m,
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		a.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
	}
	five := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}
	for _, fn := range Functions {
		f := s.Functions[fn]
		alarm(title(fn)+"Errors", f.MetricErrors(five), "the "+fn+" function failed (errors in 5 minutes)")
		alarm(title(fn)+"Throttles", f.MetricThrottles(five), "the "+fn+" function was throttled")
	}
	alarm("EmbedDeadLetterAlarm", s.DeadLetters.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
		Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Maximum"),
	}), "embedding jobs reached the dead-letter queue (they failed 5 times; their memories stay text-searchable)")
	s.toolCallAlarms(p, topic)

	// ---- outputs ----
	out := func(id, desc string, v *string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: v, Description: jsii.String(desc)})
	}
	out("McpUrl", "MCP endpoint (Streamable HTTP): the URL to give Claude.ai, Claude Code and other MCP clients",
		awscdk.Fn_Join(jsii.String(""), &[]*string{s.BaseURL, jsii.String("/mcp")}))
	out("OAuthMetadataUrl", "OAuth authorization server metadata (RFC 8414)",
		awscdk.Fn_Join(jsii.String(""), &[]*string{s.BaseURL, jsii.String("/.well-known/oauth-authorization-server")}))
	out("HealthUrl", "Health check", awscdk.Fn_Join(jsii.String(""), &[]*string{s.BaseURL, jsii.String("/health")}))
	out("TableName", "DynamoDB table", s.Table.TableName())
	if master != nil {
		out("MasterTokenCommand", "Prints the master (admin) token",
			awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("aws secretsmanager get-secret-value --query SecretString --output text --secret-id "), master.SecretArn()}))
	}
	s.integrationOutputs(p, ghDefault, out)
	if domain != nil {
		out("ApiDomainTarget", "Point a CNAME for "+p.Domain+" at this name", domain.RegionalDomainName())
	}
	return s
}

// newTable is the store's table: the key schema, the four GSIs and the
// billing mode come from dynamo.TableInput, the very definition the store
// creates locally, so the deployed table cannot drift from it.
func newTable(stack awscdk.Stack, name string, protect bool, keep awscdk.RemovalPolicy) awsdynamodb.Table {
	in := dynamo.TableInput(name)
	types := map[string]awsdynamodb.AttributeType{}
	for _, a := range in.AttributeDefinitions {
		types[*a.AttributeName] = attrType(string(a.AttributeType))
	}
	keyOf := func(ks []dynamoKey) (pk, sk *awsdynamodb.Attribute) {
		for _, k := range ks {
			attr := &awsdynamodb.Attribute{Name: jsii.String(k.name), Type: types[k.name]}
			if k.hash {
				pk = attr
			} else {
				sk = attr
			}
		}
		return pk, sk
	}
	pk, sk := keyOf(keysOf(in.KeySchema))
	billing := awsdynamodb.BillingMode_PAY_PER_REQUEST
	if in.BillingMode != "PAY_PER_REQUEST" {
		panic("dynamo.TableInput is not on-demand: update infra/stack.go")
	}
	t := awsdynamodb.NewTable(stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey:        pk,
		SortKey:             sk,
		BillingMode:         billing,
		TimeToLiveAttribute: jsii.String(dynamo.AttrTTL),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		DeletionProtection: jsii.Bool(protect),
		Encryption:         awsdynamodb.TableEncryption_AWS_MANAGED,
		RemovalPolicy:      keep,
	})
	for _, g := range in.GlobalSecondaryIndexes {
		gpk, gsk := keyOf(keysOf(g.KeySchema))
		if string(g.Projection.ProjectionType) != "ALL" {
			panic("dynamo.TableInput projects an index other than ALL: update infra/stack.go")
		}
		t.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      g.IndexName,
			PartitionKey:   gpk,
			SortKey:        gsk,
			ProjectionType: awsdynamodb.ProjectionType_ALL,
		})
	}
	return t
}

type dynamoKey struct {
	name string
	hash bool
}

func keysOf(ks []ddbtypes.KeySchemaElement) []dynamoKey {
	out := make([]dynamoKey, 0, len(ks))
	for _, k := range ks {
		out = append(out, dynamoKey{name: *k.AttributeName, hash: k.KeyType == ddbtypes.KeyTypeHash})
	}
	return out
}

func attrType(t string) awsdynamodb.AttributeType {
	switch t {
	case "S":
		return awsdynamodb.AttributeType_STRING
	case "N":
		return awsdynamodb.AttributeType_NUMBER
	case "B":
		return awsdynamodb.AttributeType_BINARY
	}
	panic("unknown DynamoDB attribute type " + t)
}

// grantStore allows the store adapter's actions on the table (items) and on
// the table and its indexes (queries).
func grantStore(fn awslambda.Function, t awsdynamodb.Table) {
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("StoreItems"), Actions: jsii.Strings(StoreItemActions...),
		Resources: &[]*string{t.TableArn()},
	}))
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("StoreQueries"), Actions: jsii.Strings(StoreQueryActions...),
		Resources: &[]*string{t.TableArn(), awscdk.Fn_Join(jsii.String(""), &[]*string{t.TableArn(), jsii.String("/index/*")})},
	}))
}

func grantSecret(fn awslambda.Function, sid string, s awssecretsmanager.Secret) {
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String(sid), Actions: jsii.Strings("secretsmanager:GetSecretValue"),
		Resources: &[]*string{s.SecretArn()},
	}))
}

// hex64Generator generates 64 characters of [0-9a-f] (32 random bytes in
// hex), as a JSON key of template or as the whole secret.
func hex64Generator(template, key *string) *awssecretsmanager.SecretStringGenerator {
	return &awssecretsmanager.SecretStringGenerator{
		SecretStringTemplate: template,
		GenerateStringKey:    key,
		PasswordLength:       jsii.Number(64),
		ExcludeUppercase:     jsii.Bool(true),
		ExcludePunctuation:   jsii.Bool(true),
		IncludeSpace:         jsii.Bool(false),
		ExcludeCharacters:    jsii.String("ghijklmnopqrstuvwxyz"),
	}
}

// searchIndex is the index of the chosen tier: grant gives a function
// access to it (and its endpoint) — on a domain, the HTTP actions given;
// finish completes what depends on every grant (the serverless data access
// policy).
type searchIndex struct {
	grant  func(fn awslambda.Function, domainActions []string)
	finish func()
}

func newSearch(stack awscdk.Stack, name string, tier SearchTier, keep awscdk.RemovalPolicy) searchIndex {
	if tier == SearchServerless {
		return newServerless(stack, name)
	}
	capacity := &awsopensearchservice.CapacityConfig{
		DataNodes: jsii.Number(1), DataNodeInstanceType: jsii.String("t3.small.search"),
		MultiAzWithStandbyEnabled: jsii.Bool(false),
	}
	ebs := &awsopensearchservice.EbsOptions{VolumeSize: jsii.Number(10), VolumeType: awsec2.EbsDeviceVolumeType_GP3}
	var zones *awsopensearchservice.ZoneAwarenessConfig
	if tier == SearchDomainMedium {
		capacity = &awsopensearchservice.CapacityConfig{
			DataNodes: jsii.Number(2), DataNodeInstanceType: jsii.String("m6g.large.search"),
			MultiAzWithStandbyEnabled: jsii.Bool(false),
		}
		ebs.VolumeSize = jsii.Number(20)
		zones = &awsopensearchservice.ZoneAwarenessConfig{Enabled: jsii.Bool(true), AvailabilityZoneCount: jsii.Number(2)}
	}
	d := awsopensearchservice.NewDomain(stack, jsii.String("Search"), &awsopensearchservice.DomainProps{
		DomainName:           jsii.String(name),
		Version:              awsopensearchservice.EngineVersion_OPENSEARCH_2_19(),
		Capacity:             capacity,
		Ebs:                  ebs,
		ZoneAwareness:        zones,
		EncryptionAtRest:     &awsopensearchservice.EncryptionAtRestOptions{Enabled: jsii.Bool(true)},
		NodeToNodeEncryption: jsii.Bool(true),
		EnforceHttps:         jsii.Bool(true),
		TlsSecurityPolicy:    awsopensearchservice.TLSSecurityPolicy_TLS_1_2,
		RemovalPolicy:        keep,
		// Access is IAM: requests are SigV4-signed by the functions' roles,
		// each allowed by its own identity policy (no open access policy).
	})
	return searchIndex{
		finish: func() {},
		grant: func(fn awslambda.Function, actions []string) {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid: jsii.String("Search"), Actions: jsii.Strings(actions...),
				Resources: &[]*string{d.DomainArn(), awscdk.Fn_Join(jsii.String(""), &[]*string{d.DomainArn(), jsii.String("/*")})},
			}))
			fn.AddEnvironment(jsii.String(awsenv.EnvSearchEndpoint), awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("https://"), d.DomainEndpoint()}), nil)
			fn.AddEnvironment(jsii.String(awsenv.EnvSearchService), jsii.String("es"), nil)
			// A replica needs a second node to live on.
			fn.AddEnvironment(jsii.String(awsenv.EnvSearchReplicas), jsii.String(fmt.Sprint(*capacity.DataNodes-1)), nil)
		},
	}
}

// newServerless is a vector-search collection with its encryption, network
// and data access policies; the data access policy names the roles of the
// functions granted.
func newServerless(stack awscdk.Stack, name string) searchIndex {
	enc := awsopensearchserverless.NewCfnSecurityPolicy(stack, jsii.String("SearchEncryption"), &awsopensearchserverless.CfnSecurityPolicyProps{
		Name: jsii.String(name + "-enc"), Type: jsii.String("encryption"),
		Policy: stack.ToJsonString(map[string]any{
			"Rules":       []any{map[string]any{"ResourceType": "collection", "Resource": []string{"collection/" + name}}},
			"AWSOwnedKey": true,
		}, nil),
	})
	net := awsopensearchserverless.NewCfnSecurityPolicy(stack, jsii.String("SearchNetwork"), &awsopensearchserverless.CfnSecurityPolicyProps{
		Name: jsii.String(name + "-net"), Type: jsii.String("network"),
		// Lambda functions outside a VPC reach the collection over its
		// public HTTPS endpoint; every request is SigV4-signed and checked
		// against the data access policy.
		Policy: stack.ToJsonString([]any{map[string]any{
			"Rules":           []any{map[string]any{"ResourceType": "collection", "Resource": []string{"collection/" + name}}},
			"AllowFromPublic": true,
		}}, nil),
	})
	coll := awsopensearchserverless.NewCfnCollection(stack, jsii.String("Search"), &awsopensearchserverless.CfnCollectionProps{
		Name: jsii.String(name), Type: jsii.String("VECTORSEARCH"), StandbyReplicas: jsii.String("ENABLED"),
	})
	coll.AddResourceDependency(enc, nil)
	coll.AddResourceDependency(net, nil)
	var principals []*string
	return searchIndex{
		// Serverless has one IAM action for the data plane; what a role may
		// do there is the data access policy's, whose rules every role
		// granted shares: index creation and description (Bootstrap, which
		// each of them runs), documents read and written, and
		// aoss:UpdateIndex, which only the memory service's vector mapping
		// uses. A rule of its own would withhold that one permission from
		// the scheduler, at the risk of refusing its Bootstrap in a way no
		// test here can see.
		grant: func(fn awslambda.Function, _ []string) {
			principals = append(principals, fn.Role().RoleArn())
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid: jsii.String("Search"), Actions: jsii.Strings("aoss:APIAccessAll"),
				Resources: &[]*string{coll.AttrArn()},
			}))
			fn.AddEnvironment(jsii.String(awsenv.EnvSearchEndpoint), coll.AttrCollectionEndpoint(), nil)
			fn.AddEnvironment(jsii.String(awsenv.EnvSearchService), jsii.String("aoss"), nil)
		},
		finish: func() {
			awsopensearchserverless.NewCfnAccessPolicy(stack, jsii.String("SearchAccess"), &awsopensearchserverless.CfnAccessPolicyProps{
				Name: jsii.String(name + "-data"), Type: jsii.String("data"),
				Policy: stack.ToJsonString([]any{map[string]any{
					"Rules": []any{
						map[string]any{"ResourceType": "index", "Resource": []string{"index/" + name + "/*"},
							"Permission": []string{"aoss:CreateIndex", "aoss:DescribeIndex", "aoss:UpdateIndex", "aoss:ReadDocument", "aoss:WriteDocument"}},
						map[string]any{"ResourceType": "collection", "Resource": []string{"collection/" + name},
							"Permission": []string{"aoss:DescribeCollectionItems"}},
					},
					"Principal": principals,
				}}, nil),
			})
		},
	}
}

func retention(days int) awslogs.RetentionDays {
	switch {
	case days <= 1:
		return awslogs.RetentionDays_ONE_DAY
	case days <= 7:
		return awslogs.RetentionDays_ONE_WEEK
	case days <= 14:
		return awslogs.RetentionDays_TWO_WEEKS
	case days <= 30:
		return awslogs.RetentionDays_ONE_MONTH
	case days <= 90:
		return awslogs.RetentionDays_THREE_MONTHS
	case days <= 180:
		return awslogs.RetentionDays_SIX_MONTHS
	case days <= 365:
		return awslogs.RetentionDays_ONE_YEAR
	}
	return awslogs.RetentionDays_TWO_YEARS
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// routeID turns a route path into a construct id fragment.
func routeID(path string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '.' || r == '{' || r == '}' || r == '+' || r == '-' }) {
		b.WriteString(title(part))
	}
	return b.String()
}
