// Command infra is the CDK app of VantagePeers on AWS: one CustomerStack
// per customer, each an isolated deployment (its own table, search,
// queues, functions and HTTP API). cdk.json at the repository root runs it;
// the Makefile's synth and deploy targets pass the context:
//
//	customer          required: lower-case letters, digits and '-' (stack VantagePeers-<customer>)
//	region            default CDK_DEFAULT_REGION, else us-east-1
//	account           default CDK_DEFAULT_ACCOUNT (environment-agnostic when unset)
//	domain            custom domain for the HTTP API (needs certificateArn)
//	certificateArn    ACM certificate of domain, in the stack's region
//	embedding         bedrock (default) | openai | local
//	openaiBaseUrl     with embedding=openai (the API key goes in the secret the stack creates)
//	searchTier        opensearch-domain-small (default) | opensearch-domain-medium | opensearch-serverless
//	masterTokenHash   SHA-256 (hex) of a master token you keep; default: the stack generates the token in Secrets Manager
//	alarmEmail        subscribed to the alarm topic
//	clerkIssuer, clerkAudience, allowedExtIds   the Clerk exchange (POST /issueBearerFromClerk), as for the embedded server
//	githubSecretPrefix  tenant t's GitHub credentials are the secret <prefix>t (default vantagepeers/VantagePeers-<customer>/github/)
//	deployKeySecretPrefix  a monitored Convex deployment of tenant t reads its deploy key from the secret <prefix>t/<deployKeyEnvVar> (default vantagepeers/VantagePeers-<customer>/deploy-keys/)
//	tenantLogGroups   the CloudWatch Logs log groups each tenant may read, JSON {"<tenant>": ["<name>" or "<prefix>*"]} (default none)
//	monitoredLogGroups  the default tenant's log groups, comma-separated (the former, tenant-less setting)
//	egressAllowHosts  hosts, IPs or CIDRs (comma-separated) that tenants' deployment URLs and OAuth client metadata URLs may reach although not public, http too (default none: public https only)
//	logRetentionDays  default 30
//	deletionProtection  default true (table, search domain and secrets are retained on stack deletion either way)
//	lambdaDir         default <repo>/dist/lambda (make lambdas)
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	props, err := propsFromContext(app)
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
	NewCustomerStack(app, StackName(props.Customer), props)
	app.Synth(nil)
}

// propsFromContext reads the stack's parameters from the CDK context (-c).
func propsFromContext(app awscdk.App) (*CustomerProps, error) {
	ctx := func(k string) string {
		if v, ok := app.Node().TryGetContext(jsii.String(k)).(string); ok {
			return v
		}
		return ""
	}
	p := &CustomerProps{
		Customer:        ctx("customer"),
		Domain:          ctx("domain"),
		CertificateArn:  ctx("certificateArn"),
		Embedding:       ctx("embedding"),
		OpenAIBaseURL:   ctx("openaiBaseUrl"),
		SearchTier:      SearchTier(ctx("searchTier")),
		MasterTokenHash: ctx("masterTokenHash"),
		AlarmEmail:      ctx("alarmEmail"),
		ClerkIssuer:     ctx("clerkIssuer"),
		ClerkAudience:   ctx("clerkAudience"),
		AllowedExtIDs:   ctx("allowedExtIds"),
		LambdaDir:       ctx("lambdaDir"),
	}
	p.GitHubSecretPrefix = ctx("githubSecretPrefix")
	p.DeployKeySecretPrefix = ctx("deployKeySecretPrefix")
	p.EgressAllowHosts = ctx("egressAllowHosts")
	// -c gives a string, comma-separated; cdk.json may give a list.
	switch v := app.Node().TryGetContext(jsii.String("monitoredLogGroups")).(type) {
	case nil:
	case string:
		p.MonitoredLogGroups = awsenv.SplitList(v)
	case []any:
		for _, g := range v {
			s, ok := g.(string)
			if !ok {
				return nil, fmt.Errorf("monitoredLogGroups: %v is not a log group name", g)
			}
			p.MonitoredLogGroups = append(p.MonitoredLogGroups, s)
		}
	default:
		return nil, fmt.Errorf("monitoredLogGroups: %v is not a comma-separated list of log group names", v)
	}
	switch v := app.Node().TryGetContext(jsii.String("tenantLogGroups")).(type) {
	case nil:
	case string: // -c tenantLogGroups='{"acme":["/aws/lambda/acme-*"]}'
		if err := json.Unmarshal([]byte(v), &p.TenantLogGroups); err != nil {
			return nil, fmt.Errorf(`tenantLogGroups: %q is not JSON {"<tenant>": ["<log group>" or "<prefix>*"]}: %v`, v, err)
		}
	case map[string]any: // cdk.json
		b, _ := json.Marshal(v)
		if err := json.Unmarshal(b, &p.TenantLogGroups); err != nil {
			return nil, fmt.Errorf(`tenantLogGroups: %v is not {"<tenant>": ["<log group>" or "<prefix>*"]}: %v`, v, err)
		}
	default:
		return nil, fmt.Errorf(`tenantLogGroups: %v is not JSON {"<tenant>": ["<log group>" or "<prefix>*"]}`, v)
	}
	region := firstOf(ctx("region"), os.Getenv("CDK_DEFAULT_REGION"), "us-east-1")
	account := firstOf(ctx("account"), os.Getenv("CDK_DEFAULT_ACCOUNT"))
	p.Env = &awscdk.Environment{Region: jsii.String(region)}
	if account != "" {
		p.Env.Account = jsii.String(account)
	}
	if v := ctx("logRetentionDays"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("logRetentionDays: %q is not a number of days", v)
		}
		p.LogRetentionDays = n
	}
	if v := ctx("deletionProtection"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("deletionProtection: %q is not true or false", v)
		}
		p.DeletionProtection = &b
	}
	if p.LambdaDir == "" {
		root, err := repoRoot()
		if err != nil {
			return nil, err
		}
		p.LambdaDir = filepath.Join(root, "dist", "lambda")
	}
	return p, p.Validate()
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// repoRoot is the folder holding cdk.json, at or above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "cdk.json")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("cdk.json not found above the working directory: pass -c lambdaDir=<dir>")
		}
		dir = parent
	}
}
