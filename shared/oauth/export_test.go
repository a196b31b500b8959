package oauth

// ClientKey exposes the store key of a client to the tests.
var ClientKey = clientKey
