package main

// The integrations' grants and outputs: GitHub credentials (webhooks and
// the scheduler) and the error monitor's deploy keys and log groups (the
// scheduler), each given only to the functions the function table marks.

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

// secretsUnder is the ARN pattern of every secret under prefix.
func secretsUnder(stack awscdk.Stack, prefix string) string {
	return fmt.Sprintf("arn:%s:secretsmanager:%s:%s:secret:%s*", *stack.Partition(), *stack.Region(), *stack.Account(), prefix)
}

// wireGitHub: tenant t's GitHub credentials are the secret <prefix>t.
// The functions that read them (awsenv.Function.GitHub: webhooks, for
// the signatures; the scheduler, whose outbox job posts the issue
// comments and whose PR monitor reads pull requests) get the prefix and
// GetSecretValue on the secrets under it, no other function. The
// default tenant's (deliveries to /webhooks/github) is created here
// with a generated webhook secret and no token: give GitHub the former
// (GitHubCredentialsCommand prints it), then set the token with
//
//	aws secretsmanager put-secret-value --secret-id <prefix>default \
//	  --secret-string '{"webhookSecret":"<as printed>","token":"<token>"}'
//
// (GitHubTokenCommand). Another tenant t: create-secret --name <prefix>t
// with the same JSON, its hook on /webhooks/github/t. The name is fixed
// (the functions derive it), so a stack cannot be created again under
// the same prefix while a retained secret of an old one, or one in its
// recovery window, holds it: pass another githubSecretPrefix.
func (s *CustomerStack) wireGitHub(p *CustomerProps, keep awscdk.RemovalPolicy) awssecretsmanager.Secret {
	stack := s.Stack
	ghPrefix := p.GitHubSecretPrefix
	ghDefault := awssecretsmanager.NewSecret(stack, jsii.String("GitHubDefaultCredentials"), &awssecretsmanager.SecretProps{
		SecretName: jsii.String(ghPrefix + awsenv.DefaultTenant),
		Description: jsii.String("VantagePeers " + p.Customer + ": GitHub credentials of the tenant " + awsenv.DefaultTenant +
			`, JSON {"webhookSecret": "...", "token": "..."} (put the token here)`),
		GenerateSecretString: hex64Generator(jsii.String(`{"token":""}`), jsii.String("webhookSecret")),
		RemovalPolicy:        keep,
	})
	ghSecrets := secretsUnder(stack, ghPrefix)
	for _, f := range awsenv.Functions() {
		if !f.GitHub {
			continue
		}
		fn := s.Functions[f.Name]
		fn.AddEnvironment(jsii.String(awsenv.EnvGitHubSecretPrefix), jsii.String(ghPrefix), nil)
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: jsii.String("GitHubCredentials"), Actions: jsii.Strings("secretsmanager:GetSecretValue"),
			Resources: jsii.Strings(ghSecrets),
		}))
	}
	return ghDefault
}

// wireErrorMonitor: deploy keys and log groups.
// The functions that run the error-monitor job (awsenv.Function.ErrorMonitor:
// the scheduler) get the deploy-key prefix and GetSecretValue on the
// secrets <prefix>*/VP_DEPLOY_KEY_* alone; a Convex deployment of tenant
// t whose deployKeyEnvVar is VP_DEPLOY_KEY_MYAPP has its key in
// <prefix>t/VP_DEPLOY_KEY_MYAPP, which you create:
//
//	aws secretsmanager create-secret --name <prefix>t/VP_DEPLOY_KEY_MYAPP --secret-string '<deploy key>'
//
// (DeployKeyCommand). They may also FilterLogEvents on each log group
// of TenantLogGroups (all tenants'), by its ARN with the trailing :* —
// the form CloudWatch Logs documents for IAM policies of every action
// but the tagging ones — and, with none, on none: no statement at all.
// The mapping itself goes to them and to the mcp function
// (awsenv.EnvTenantLogGroups), whose add_deployment and scans refuse a
// tenant's deployment naming another's group.
func (s *CustomerStack) wireErrorMonitor(p *CustomerProps) {
	stack := s.Stack
	dkPrefix := p.DeployKeySecretPrefix
	dkSecrets := secretsUnder(stack, dkPrefix+"*/VP_DEPLOY_KEY_")
	var patterns []string
	for _, gs := range p.TenantLogGroups {
		patterns = append(patterns, gs...)
	}
	slices.Sort(patterns)
	var logGroups []string
	for _, g := range slices.Compact(patterns) {
		logGroups = append(logGroups, fmt.Sprintf("arn:%s:logs:%s:%s:log-group:%s:*", *stack.Partition(), *stack.Region(), *stack.Account(), g))
	}
	mapping := ""
	if len(p.TenantLogGroups) > 0 {
		b, _ := json.Marshal(p.TenantLogGroups) // sorted keys: a stable template
		mapping = string(b)
	}
	for _, f := range awsenv.Functions() {
		fn := s.Functions[f.Name]
		if mapping != "" && (f.ErrorMonitor || f.Name == awsenv.FuncMCP) {
			fn.AddEnvironment(jsii.String(awsenv.EnvTenantLogGroups), jsii.String(mapping), nil)
		}
		if !f.ErrorMonitor {
			continue
		}
		fn.AddEnvironment(jsii.String(awsenv.EnvDeployKeySecretPrefix), jsii.String(dkPrefix), nil)
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: jsii.String("DeployKeys"), Actions: jsii.Strings("secretsmanager:GetSecretValue"),
			Resources: jsii.Strings(dkSecrets),
		}))
		if len(logGroups) > 0 {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid: jsii.String("MonitoredLogs"), Actions: jsii.Strings("logs:FilterLogEvents"),
				Resources: jsii.Strings(logGroups...),
			}))
		}
	}
}

// integrationOutputs are the outputs that say how to set the integrations up.
func (s *CustomerStack) integrationOutputs(p *CustomerProps, ghDefault awssecretsmanager.Secret, out func(id, desc string, v *string)) {
	out("GitHubWebhookUrl", "GitHub webhook payload URL of the tenant "+awsenv.DefaultTenant+" (content type application/json; another tenant t: /webhooks/github/t)",
		awscdk.Fn_Join(jsii.String(""), &[]*string{s.BaseURL, jsii.String("/webhooks/github")}))
	out("GitHubSecretPrefix", "Tenant t's GitHub credentials are the secret <prefix>t: JSON {\"webhookSecret\", \"token\"}", jsii.String(p.GitHubSecretPrefix))
	out("GitHubCredentialsCommand", "Prints the GitHub credentials of the tenant "+awsenv.DefaultTenant+" (the webhook secret to give GitHub)",
		awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("aws secretsmanager get-secret-value --query SecretString --output text --secret-id "), ghDefault.SecretArn()}))
	out("GitHubTokenCommand", "Sets the GitHub token of the tenant "+awsenv.DefaultTenant+" (keep the webhook secret GitHubCredentialsCommand printed)",
		awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("aws secretsmanager put-secret-value --secret-id "), ghDefault.SecretArn(),
			jsii.String(` --secret-string '{"webhookSecret":"<as printed>","token":"<a token that may comment on issues and read pull requests>"}'`)}))
	out("DeployKeySecretPrefix", "A monitored Convex deployment's deploy key is a secret of its tenant t, <prefix>t/<deployKeyEnvVar> (VP_DEPLOY_KEY_*), its SecretString the key itself", jsii.String(p.DeployKeySecretPrefix))
	out("DeployKeyCommand", "Stores the deploy key of a Convex deployment of the tenant "+awsenv.DefaultTenant+" whose deployKeyEnvVar is VP_DEPLOY_KEY_MYAPP (tenant t: "+p.DeployKeySecretPrefix+"t/…)",
		jsii.String("aws secretsmanager create-secret --name "+p.DeployKeySecretPrefix+awsenv.DefaultTenant+"/VP_DEPLOY_KEY_MYAPP --secret-string '<deploy key>'"))
}
