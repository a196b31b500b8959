package oauth

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ResourcePath is the protected resource: the MCP endpoint.
const ResourcePath = "/mcp"

// protectedResource serves RFC 9728 metadata, at the root well-known URL
// and at its /mcp-suffixed form (path-aware discovery).
func (s *Server) protectedResource(w http.ResponseWriter, r *http.Request) {
	base := s.baseURL(r)
	writeJSON(w, http.StatusOK, oauthex.ProtectedResourceMetadata{
		Resource:               base + ResourcePath,
		AuthorizationServers:   []string{base},
		ScopesSupported:        []string{ScopeMCP},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "VantagePeers",
	})
}

// authServerMeta is RFC 8414 metadata. (oauthex.AuthServerMeta always
// writes jwks_uri, which this server has none of, so it gets its own type.)
type authServerMeta struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssSupported bool     `json:"authorization_response_iss_parameter_supported"`
	UILocalesSupported                []string `json:"ui_locales_supported"`
}

var authMethods = []string{"client_secret_basic", "client_secret_post", "none"}

func (s *Server) authServerMeta(w http.ResponseWriter, r *http.Request) {
	base := s.baseURL(r)
	writeJSON(w, http.StatusOK, authServerMeta{
		Issuer:                            base,
		AuthorizationEndpoint:             base + "/oauth/authorize",
		TokenEndpoint:                     base + "/oauth/token",
		RegistrationEndpoint:              base + "/oauth/register",
		RevocationEndpoint:                base + "/oauth/revoke",
		ScopesSupported:                   []string{ScopeMCP},
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{grantCode, grantRefresh, grantClientCredentials},
		TokenEndpointAuthMethodsSupported: authMethods,
		RevocationEndpointAuthMethods:     authMethods,
		CodeChallengeMethodsSupported:     []string{"S256"},
		ClientIDMetadataDocumentSupported: true,
		AuthorizationResponseIssSupported: true,
		UILocalesSupported:                []string{"en", "fr"},
	})
}
