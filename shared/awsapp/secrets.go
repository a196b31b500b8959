package awsapp

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// Secrets resolves configuration that does not travel in environment
// variables. Load calls it once per container, for several secrets at once
// (implementations must be safe for concurrent use). Tests pass
// StaticSecrets.
//
// (Secrets Manager only: the SSM client's package alone adds about 11 ms
// to every cold start, at init, whether it is called or not.)
type Secrets interface {
	// Secret returns the SecretString of a Secrets Manager secret.
	Secret(ctx context.Context, id string) (string, error)
}

// AWSSecrets reads Secrets Manager.
type AWSSecrets struct {
	SecretsManager *secretsmanager.Client
}

// NewAWSSecrets returns Secrets over cfg's credentials and region, at
// endpoint when it is not empty (tests: a fake of Secrets Manager).
func NewAWSSecrets(cfg aws.Config, endpoint string) *AWSSecrets {
	return &AWSSecrets{SecretsManager: secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})}
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

// StaticSecrets serves secrets from a map, by id (tests).
type StaticSecrets map[string]string

// Secret implements Secrets.
func (s StaticSecrets) Secret(_ context.Context, id string) (string, error) {
	if v, ok := s[id]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %s: %w", id, ErrSecretNotFound)
}

// ErrSecretNotFound is the error of a secret that does not exist.
var ErrSecretNotFound = errors.New("not found")

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
