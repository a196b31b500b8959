package app

import (
	"strconv"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/embed/concept"
	"github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// DefaultLocalEmbedder is the offline embedder of the embedded server.
const DefaultLocalEmbedder = concept.Version

// maxLocalDim bounds the dimension of an offline embedder: vectors are
// stored and compared in full, and beyond this more dimensions only cost.
const maxLocalDim = 4096

// LocalEmbedder returns the offline embedder of that name, optionally with
// its dimension ("local-concept-v1", "local-hash-v1/384"); empty is
// DefaultLocalEmbedder. VP_EMBEDDER's values on AWS, "concept" and
// "local", name the same two, so that one variable means one thing. Changing it changes the vectors' embedder name, so
// the memory service re-embeds every memory (memory.EnsureEmbedder).
func LocalEmbedder(name string) (embed.Embedder, error) {
	const op, field = "embedder", "embedder"
	if name == "" {
		name = DefaultLocalEmbedder
	}
	base, d, hasDim := strings.Cut(name, "/")
	dim := 0
	if hasDim {
		n, err := strconv.Atoi(d)
		if err != nil || n < 16 || n > maxLocalDim {
			return nil, vp.Errorf(op, vp.KindInvalid, field, "%q: the dimension after / must be a number from 16 to %d", name, maxLocalDim)
		}
		dim = n
	}
	switch base {
	case concept.Version, awsenv.EmbedderConcept:
		return concept.New(concept.Options{Dim: dim}), nil
	case local.Version, awsenv.EmbedderLocal:
		return local.New(local.Options{Dim: dim}), nil
	}
	return nil, vp.Errorf(op, vp.KindInvalid, field, "%q is not an offline embedder: use one of %s (optionally with /dimension)", name, concept.Version+", "+local.Version)
}
