package awsapp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	osgo "github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
	"github.com/opensearch-project/opensearch-go/v4/signer/awsv2"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/embed/bedrock"
	"github.com/vantagepeers/vantagepeers/shared/embed/concept"
	"github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/embed/openai"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	sqsqueue "github.com/vantagepeers/vantagepeers/shared/queue/sqs"
	"github.com/vantagepeers/vantagepeers/shared/search/opensearch"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
)

// The functions, as named in functions/<name> and in the CDK stack.
const (
	FuncMCP       = awsenv.FuncMCP
	FuncOAuth     = awsenv.FuncOAuth
	FuncEmbedder  = awsenv.FuncEmbedder
	FuncScheduler = awsenv.FuncScheduler
	FuncWebhooks  = awsenv.FuncWebhooks
	FuncDoorbell  = awsenv.FuncDoorbell
)

// needs says what a function builds at start. Least privilege follows from
// it: a function only reads the secrets and builds the clients it needs,
// and the CDK stack grants it only those (infra/).
type needs struct {
	master bool // the master token (Secrets Manager): functions that check bearer tokens
	keys   bool // the signing keys (Secrets Manager): functions that mint or check list cursors
	coord  bool // the coordination service
	memory bool // the memory service (search index, embedder, queue)
	// search: the search index without the memory service, when one is
	// configured: the scheduler creates tasks (recurring templates) that
	// keyword search must find, and backfills the coordination index.
	search bool
	// relay: the Pacerelle relay — its HTTP API (mcp), its WebSocket
	// routes (doorbell), its ring job (where an outbox is).
	relay bool
}

var functionNeeds = map[string]needs{
	FuncMCP:       {master: true, keys: true, coord: true, memory: true, relay: true},
	FuncOAuth:     {master: true},
	FuncEmbedder:  {memory: true},
	FuncScheduler: {coord: true, search: true, relay: true},
	// GitHub deliveries become issues, missions and tasks (the coordination
	// services), and the tasks must be found by keyword search, as the
	// scheduler's; no bearer token or list cursor is checked here.
	FuncWebhooks: {coord: true, search: true},
	// $connect checks agent tokens (the master token's hash) and device
	// credentials (the table).
	FuncDoorbell: {master: true, relay: true},
}

// Options configures Load. Only Function is required.
type Options struct {
	Function string
	Version  string
	// Getenv reads the configuration (os.Getenv when nil).
	Getenv func(string) string
	// Secrets resolves Secrets Manager secrets (the AWS client when nil).
	Secrets Secrets
	// AWS is the SDK configuration (from the Lambda environment when nil).
	AWS *aws.Config
	// LogOutput receives the JSON logs (os.Stdout when nil).
	LogOutput io.Writer
	Now       func() time.Time
	// ErrorSources makes the error monitor's log sources, on the function
	// that runs it (ErrorMonitorSources); others leave it nil.
	ErrorSources func(a *App) map[string]source.Source
	// Concept makes the WordNet concept embedder, on the functions that
	// embed (ConceptEmbedder); others leave it nil and link no table.
	Concept func() embed.Embedder
}

// processStart is (nearly) when the process started: package variables are
// initialised before main runs.
var processStart = time.Now()

// App is one function's service graph, built once per container.
type App struct {
	Function string
	Version  string
	Config   Config
	Log      *slog.Logger
	Started  time.Time
	AWS      aws.Config

	Store *dynamo.Store
	Keys  Keys
	// Services are what the composition root (shared/app.Build) made for
	// this function's needs: nil fields for the groups it does not build.
	*vpapp.Services

	loaded  time.Time             // when Load returned
	concept func() embed.Embedder // Options.Concept
}

// Load reads the configuration, resolves the secrets the function needs and
// builds its clients and services. It makes no call to DynamoDB, SQS or
// OpenSearch; only Secrets Manager is read, once.
func Load(ctx context.Context, o Options) (*App, error) {
	began := time.Now()
	nd, ok := functionNeeds[o.Function]
	if !ok {
		return nil, fmt.Errorf("awsapp: unknown function %q", o.Function)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.LogOutput == nil {
		o.LogOutput = os.Stdout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	cfg, err := ConfigFromEnv(o.Getenv)
	if err != nil {
		return nil, err
	}
	a := &App{Function: o.Function, Version: o.Version, Config: cfg, Started: o.Now(), concept: o.Concept,
		Log: NewLogger(o.LogOutput, cfg.LogLevel, o.Function)}
	if o.AWS != nil {
		a.AWS = *o.AWS
	} else {
		if a.AWS, err = lambdaAWSConfig(o.Getenv, cfg.Region); err != nil {
			return nil, err
		}
	}
	if o.Secrets == nil {
		o.Secrets = NewAWSSecrets(a.AWS, cfg.SecretsManagerEndpoint)
	}

	ddb := dynamodb.NewFromConfig(a.AWS, func(do *dynamodb.Options) {
		if cfg.DynamoDBEndpoint != "" {
			do.BaseEndpoint = aws.String(cfg.DynamoDBEndpoint)
			do.DisableValidateResponseChecksum = true // DynamoDB Local
		}
	})
	if a.Store, err = dynamo.New(ctx, dynamo.Options{Client: ddb, Table: cfg.Table, Now: o.Now}); err != nil {
		return nil, err
	}

	// The master token and the signing keys are two Secrets Manager reads,
	// and the search index is checked (created on first use): make them at
	// once (a round trip each, on the cold start's path).
	var idx *opensearch.Index
	if nd.memory || nd.search {
		if idx, err = a.newIndex(); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	var hashErr, keysErr error
	if idx != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Search is a derived view: without it messages, tasks and the
			// scheduler still work, and the index bootstraps on its next use.
			if err := idx.Bootstrap(ctx); err != nil {
				a.Log.Error("the search index is unavailable at start: searches and indexing fail until it answers (retried on use)",
					"endpoint", a.Config.SearchEndpoint, "err", err)
			}
		}()
	}
	var hash *[32]byte
	if nd.master {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h [32]byte
			if h, hashErr = a.masterHash(ctx, o.Secrets); hashErr == nil {
				hash = &h
			}
		}()
	}
	if nd.keys {
		wg.Add(1)
		go func() { defer wg.Done(); a.Keys, keysErr = a.keys(ctx, o.Secrets) }()
	} else {
		// This function never mints or checks a cursor, but the services
		// want a signer: give it a key nobody else holds.
		a.Keys.Cursor = make([]byte, 32)
		_, _ = rand.Read(a.Keys.Cursor)
	}
	wg.Wait()
	if err := errors.Join(hashErr, keysErr); err != nil {
		return nil, err
	}
	signer, err := listing.NewSigner(a.Keys.Cursor)
	if err != nil {
		return nil, err
	}
	ports, err := a.ports(ctx, nd, o, idx, signer, hash)
	if err != nil {
		return nil, err
	}
	if a.Services, err = vpapp.Build(ctx, ports); err != nil {
		return nil, err
	}
	a.Log.Info("container ready", "version", o.Version, "table", cfg.Table, "memory", a.Memory != nil, "searchIndex", idx != nil,
		"embedder", cfg.Embedder, "initMs", time.Since(began).Milliseconds(), "sinceProcessStartMs", time.Since(processStart).Milliseconds())
	a.loaded = time.Now()
	return a, nil
}

// lambdaAWSConfig is the SDK configuration Lambda gives every function in
// its environment: the region and the execution role's credentials, valid
// for the life of the execution environment. It replaces the SDK's config
// package, whose default chain (profiles, SSO, STS, IMDS) is dead code in
// Lambda and whose package initialisation cost ~5 ms of every cold start.
func lambdaAWSConfig(getenv func(string) string, region string) (aws.Config, error) {
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return aws.Config{}, errors.New("awsapp: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set " +
			"(Lambda sets them from the function's execution role)")
	}
	return aws.Config{
		Region:      region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN"))),
	}, nil
}

func (a *App) masterHash(ctx context.Context, s Secrets) ([32]byte, error) {
	var hash [32]byte
	c := a.Config
	h := c.MasterHash
	switch {
	case h != "":
	case c.MasterSecret != "":
		v, err := s.Secret(ctx, c.MasterSecret)
		if err != nil {
			return hash, fmt.Errorf("awsapp: reading the master token (%s=%s): %w", awsenv.EnvMasterSecret, c.MasterSecret, err)
		}
		if !auth.ValidSecret(v) {
			return hash, fmt.Errorf("awsapp: the secret %s must hold the master token as 64 lower-case hex characters", c.MasterSecret)
		}
		return auth.Hash(v), nil
	default:
		// Without a master token only stored tokens work; that is a
		// valid, if unusual, deployment.
		a.Log.Warn("no master token configured", "set", awsenv.EnvMasterSecret)
		return hash, nil
	}
	_, _ = hex.Decode(hash[:], []byte(h))
	return hash, nil
}

func (a *App) keys(ctx context.Context, s Secrets) (Keys, error) {
	switch {
	case a.Config.CursorKey != "":
		k, _ := hex.DecodeString(a.Config.CursorKey)
		return Keys{Cursor: k}, nil
	case a.Config.KeysSecret != "":
		v, err := s.Secret(ctx, a.Config.KeysSecret)
		if err != nil {
			return Keys{}, fmt.Errorf("awsapp: reading the signing keys (%s=%s): %w", awsenv.EnvKeysSecret, a.Config.KeysSecret, err)
		}
		return ParseKeys(v)
	}
	// Like the embedded binary: the key lives in the table, created by the
	// first function that needs it.
	k, err := auth.EnsureKey(ctx, a.Store, "cursor")
	if err != nil {
		return Keys{}, fmt.Errorf("awsapp: cursor key from the table: %w", err)
	}
	return Keys{Cursor: k}, nil
}

// memoryPorts are the embedder and the embedding queue. With no search
// endpoint configured the mcp function serves without memory tools; the
// embedder function cannot run.
func (a *App) memoryPorts(ctx context.Context, secrets Secrets, idx *opensearch.Index, p *vpapp.Ports) error {
	cfg := a.Config
	if idx == nil {
		if a.Function == FuncEmbedder {
			return fmt.Errorf("awsapp: the embedder needs a search index: set %s", awsenv.EnvSearchEndpoint)
		}
		a.Log.Warn("memory tools disabled: no search index configured", "set", awsenv.EnvSearchEndpoint)
		return nil
	}
	emb, err := a.newEmbedder(ctx, secrets)
	if err != nil {
		return err
	}
	if cfg.QueueURL == "" {
		return fmt.Errorf("awsapp: %s is required with a search index (embedding jobs go there)", awsenv.EnvQueueURL)
	}
	client := awssqs.NewFromConfig(a.AWS, func(so *awssqs.Options) {
		if cfg.SQSEndpoint != "" {
			so.BaseEndpoint = aws.String(cfg.SQSEndpoint)
		}
	})
	q, err := sqsqueue.New(sqsqueue.Options{Client: client, QueueURL: cfg.QueueURL})
	if err != nil {
		return err
	}
	p.Embedder, p.Queue = emb, q
	return nil
}

// newIndex returns the OpenSearch index (requests SigV4-signed with the
// function's credentials), or nil when no endpoint is configured. It makes
// no call: see bootstrapIndex.
func (a *App) newIndex() (*opensearch.Index, error) {
	c := a.Config
	if c.SearchEndpoint == "" {
		return nil, nil
	}
	signer, err := awsv2.NewSignerWithService(a.AWS, c.SearchService)
	if err != nil {
		return nil, fmt.Errorf("awsapp: OpenSearch signer: %w", err)
	}
	client, err := opensearchapi.NewClient(opensearchapi.Config{Client: osgo.Config{
		Addresses: []string{c.SearchEndpoint}, Signer: signer,
	}})
	if err != nil {
		return nil, fmt.Errorf("awsapp: %s: %w", awsenv.EnvSearchEndpoint, err)
	}
	replicas := c.SearchReplicas
	if replicas == 0 {
		replicas = -1 // the adapter reads 0 as its default
	}
	return opensearch.New(opensearch.Options{Client: client, Replicas: replicas})
}

// ConceptEmbedder links the WordNet concept embedder (0.8 MB of table) into
// a function that embeds — mcp (queries) and embedder (memories) — so that
// VP_EMBEDDER=concept works there; the others never embed and, without
// it, link no table.
func ConceptEmbedder(o *Options) {
	o.Concept = func() embed.Embedder { return concept.New(concept.Options{}) }
}

// newEmbedder returns the configured embedder.
func (a *App) newEmbedder(ctx context.Context, secrets Secrets) (embed.Embedder, error) {
	c := a.Config
	switch c.Embedder {
	case awsenv.EmbedderConcept:
		if a.concept == nil {
			return nil, fmt.Errorf("awsapp: %s=%s: the %s function's main does not pass awsapp.ConceptEmbedder to MustLoad", awsenv.EnvEmbedder, c.Embedder, a.Function)
		}
		return a.concept(), nil
	case awsenv.EmbedderBedrock:
		return bedrock.New(bedrock.Options{Client: bedrockruntime.NewFromConfig(a.AWS), Model: c.BedrockModel})
	case awsenv.EmbedderOpenAI:
		var key string
		if c.OpenAIKeyID != "" {
			v, err := secrets.Secret(ctx, c.OpenAIKeyID)
			if err != nil {
				return nil, fmt.Errorf("awsapp: reading the embeddings API key (%s=%s): %w", awsenv.EnvOpenAIKeySecret, c.OpenAIKeyID, err)
			}
			key = strings.TrimSpace(v)
		}
		return openai.New(openai.Options{BaseURL: c.OpenAIBaseURL, APIKey: key, Model: c.OpenAIModel})
	}
	return local.New(local.Options{}), nil
}

// MustLoad is Load for a main: configuration from the environment, AWS
// clients, logs on stdout. A configuration error is logged as JSON and
// ends the process, which Lambda reports as an init error.
func MustLoad(function, version string, opts ...func(*Options)) *App {
	tuneGC(os.Getenv)
	o := Options{Function: function, Version: version}
	for _, opt := range opts {
		opt(&o)
	}
	a, err := Load(context.Background(), o)
	if err != nil {
		NewLogger(os.Stdout, slog.LevelInfo, function).Error("init failed", "err", err)
		os.Exit(1)
	}
	return a
}
