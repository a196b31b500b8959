package awsapp

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// Secrets resolves configuration that does not travel in environment
// variables. Load calls it once per container. Tests pass StaticSecrets.
type Secrets interface {
	// Parameter returns the value of an SSM parameter (decrypted).
	Parameter(ctx context.Context, name string) (string, error)
	// Secret returns the SecretString of a Secrets Manager secret.
	Secret(ctx context.Context, id string) (string, error)
}

// AWSSecrets reads SSM Parameter Store and Secrets Manager.
type AWSSecrets struct {
	SSM            *ssm.Client
	SecretsManager *secretsmanager.Client
}

// NewAWSSecrets returns Secrets over cfg's credentials and region.
func NewAWSSecrets(cfg aws.Config) *AWSSecrets {
	return &AWSSecrets{SSM: ssm.NewFromConfig(cfg), SecretsManager: secretsmanager.NewFromConfig(cfg)}
}

// Parameter implements Secrets.
func (s *AWSSecrets) Parameter(ctx context.Context, name string) (string, error) {
	out, err := s.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: &name, WithDecryption: aws.Bool(true)})
	if err != nil {
		return "", err
	}
	if out.Parameter == nil {
		return "", fmt.Errorf("parameter %s has no value", name)
	}
	return aws.ToString(out.Parameter.Value), nil
}

// Secret implements Secrets.
func (s *AWSSecrets) Secret(ctx context.Context, id string) (string, error) {
	out, err := s.SecretsManager.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &id})
	if err != nil {
		return "", err
	}
	if out.SecretString == nil {
		return "", fmt.Errorf("secret %s has no SecretString", id)
	}
	return *out.SecretString, nil
}

// StaticSecrets serves parameters and secrets from maps (tests, or a
// deployment that puts everything in the environment).
type StaticSecrets struct {
	Parameters map[string]string
	Secrets    map[string]string
}

// Parameter implements Secrets.
func (s StaticSecrets) Parameter(_ context.Context, name string) (string, error) {
	if v, ok := s.Parameters[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("parameter %s not found", name)
}

// Secret implements Secrets.
func (s StaticSecrets) Secret(_ context.Context, id string) (string, error) {
	if v, ok := s.Secrets[id]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %s not found", id)
}

// Keys are the server's signing keys, each 32 bytes.
type Keys struct {
	// Cursor signs list cursors (shared/listing). Every function that
	// mints or checks cursors must hold the same key.
	Cursor []byte
	// OAuth signs what the OAuth server signs (shared/oauth), when set.
	OAuth []byte
}

// keysJSON is the SecretString of the keys secret: each key 64 hex
// characters (the CDK stack generates them).
type keysJSON struct {
	Cursor string `json:"cursor"`
	OAuth  string `json:"oauth"`
}

// ParseKeys decodes the keys secret. The cursor key is required.
func ParseKeys(secret string) (Keys, error) {
	var j keysJSON
	if err := json.Unmarshal([]byte(secret), &j); err != nil {
		return Keys{}, fmt.Errorf("the keys secret is not JSON {\"cursor\": \"<64 hex>\"}: %w", err)
	}
	var k Keys
	var err error
	if k.Cursor, err = key32("cursor", j.Cursor); err != nil {
		return Keys{}, err
	}
	if j.OAuth != "" {
		if k.OAuth, err = key32("oauth", j.OAuth); err != nil {
			return Keys{}, err
		}
	}
	return k, nil
}

func key32(name, h string) ([]byte, error) {
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("the keys secret's %q must be 32 bytes as 64 hex characters", name)
	}
	return b, nil
}
