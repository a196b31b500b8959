package local

// QueryTerms exposes queryTerms to the tests.
var QueryTerms = queryTerms
